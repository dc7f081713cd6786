/**
 * Agreement between repeated judgments of the same items (an LLM judge asked n times per
 * response): how far the repeats spread, how well they agree (ICC(1)), and how much of a mean's
 * sampling variance comes from the judge rather than from the items.
 *
 * Items are the rows; each holds its repeats' values (non-finite values are dropped; an item with
 * fewer than two values is left out). With N items, item i judged k_i times, item mean m_i and
 * K = sum k_i, the one-way ANOVA gives
 *
 * - MSW = sum_i sum_j (y_ij - m_i)^2 / (K - N): the judge's variance around an item's mean;
 * - MSB = sum_i k_i (m_i - m)^2 / (N - 1), m the mean of all values;
 * - ICC(1) = (MSB - MSW) / (MSB + (k0 - 1) MSW), k0 = (K - sum k_i^2 / K) / (N - 1) (k0 = k when
 *   every item has k repeats): 1 when repeats always agree, about 0 when they vary as much as items do;
 * - judge share = (MSW * mean_i(1 / k_i)) / s^2(m_i), capped at 1: the variance of the mean of an
 *   item's k_i repeats that is the judge's (MSW / k_i), relative to the observed variance of the
 *   item means s^2(m_i) (N - 1 denominator), the quantity a CI of the cell's mean is built from.
 *   With equal k it is MSW / MSB.
 *
 * @example
 * import { Agreement } from "@cupid-lab/scorers"
 * const a = Agreement.of([[2, 4], [6, 6], [7, 9]])
 * a.icc // 17 / 21
 * a.judgeShare // 2 / 19
 * a.meanWithinSd // 2 * Math.SQRT2 / 3
 */

export interface Agreement {
  /** Items with at least two finite repeats (the others are left out). */
  readonly items: number
  /** Repeats per item: the smallest and the largest count. */
  readonly repeats: readonly [number, number]
  /** Mean over items of the sample standard deviation of their repeats. */
  readonly meanWithinSd: number
  /** MSW: the pooled within-item variance. */
  readonly withinVariance: number
  /** ICC(1) of the repeats (NaN with fewer than two items or no variance at all). */
  readonly icc: number
  /** The judge's share of the variance of the items' means (NaN when neither varies). */
  readonly judgeShare: number
}

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

/** Agreement of repeated judgments: one row per item, its repeats' values. */
export const of = (rows: ReadonlyArray<ReadonlyArray<number>>): Agreement => {
  const items = rows.map((r) => r.filter(Number.isFinite)).filter((r) => r.length >= 2)
  const n = items.length
  const ks = items.map((r) => r.length)
  const k = sum(ks)
  const means = items.map((r) => sum(r) / r.length)
  const grand = k === 0 ? NaN : sum(items.map(sum)) / k
  const ssw = sum(items.map((r, i) => sum(r.map((y) => (y - means[i]!) ** 2))))
  const msw = k - n > 0 ? ssw / (k - n) : NaN
  const msb = n > 1 ? sum(means.map((m, i) => ks[i]! * (m - grand) ** 2)) / (n - 1) : NaN
  const k0 = n > 1 ? (k - sum(ks.map((x) => x * x)) / k) / (n - 1) : NaN
  const iccDen = msb + (k0 - 1) * msw
  const meanOfMeans = sum(means) / n
  const s2 = n > 1 ? sum(means.map((m) => (m - meanOfMeans) ** 2)) / (n - 1) : NaN
  const judge = msw * (sum(ks.map((x) => 1 / x)) / n)
  return {
    items: n,
    repeats: n === 0 ? [0, 0] : [Math.min(...ks), Math.max(...ks)],
    meanWithinSd:
      n === 0 ? NaN : sum(items.map((r, i) => Math.sqrt(sum(r.map((y) => (y - means[i]!) ** 2)) / (r.length - 1)))) / n,
    withinVariance: msw,
    icc: n > 1 && iccDen > 0 ? (msb - msw) / iccDen : NaN,
    judgeShare: !(n > 1) ? NaN : s2 > 0 ? Math.min(1, judge / s2) : judge > 0 ? 1 : NaN
  }
}
