/**
 * Paired comparisons of one metric between two cells over the same instances, for every way a
 * metric aggregates (`MetricDescription.aggregate`):
 *
 * - `mean`: `Statistics.paired` on the per-instance values (paired bootstrap CI of the mean
 *   difference, sign-flip permutation p-value);
 * - `pooled` and `{ f1Of }` (micro averages): the statistic is recomputed from summed counts, so
 *   the bootstrap resamples instances and recomputes the pooled difference, and the permutation
 *   test swaps the two cells' counts of each instance with probability 1/2 (the paired analogue of
 *   the sign flip for a statistic that is not a mean of differences).
 *
 * Rows are paired by position: `a[i]` and `b[i]` belong to the same instance. A row takes part
 * only when every value it needs is finite in both cells; `n` counts those rows.
 *
 * @example
 * import { Paired } from "@cupid-lab/experiments/compare/Paired"
 * const columns = (key: string) => values.get(key) ?? []
 * const c = Paired.compare(metric, columnsOfA, columnsOfB, { seed: 7, resamples: 1000, permutations: 2000 })
 * c.delta // metric(b) - metric(a); c.ci95, c.p
 */
import { Statistics } from "@cupid-lab/scorers"
import type { MetricDescription } from "../ResultLine.js"

export interface Options {
  readonly seed: number
  readonly resamples: number
  readonly permutations: number
}

/** Which number of a metric's per-instance score: a Mean's value, or a Ratio's numerator or denominator. */
export type Part = "value" | "num" | "den"

/** A column of per-instance numbers a metric is computed from. */
export interface Key {
  readonly metric: string
  readonly part: Part
}

/** Per-instance numbers of a column (NaN where absent). */
export type Columns = (key: Key) => ReadonlyArray<number>

export type Comparison = Statistics.PairedComparison

const f1 = (p: number, r: number): number => (Number.isNaN(p) || Number.isNaN(r) ? NaN : p + r === 0 ? 0 : (2 * p * r) / (p + r))
const ratio = (num: number, den: number): number => (den === 0 ? NaN : num / den)

const counts = (metric: string): ReadonlyArray<Key> => [{ metric, part: "num" }, { metric, part: "den" }]

/** The columns a metric's value is computed from. */
export const keysOf = (metric: Pick<MetricDescription, "name" | "aggregate">): ReadonlyArray<Key> => {
  const agg = metric.aggregate
  switch (agg._tag) {
    case "Mean":
      return [{ metric: metric.name, part: "value" }]
    case "Ratio":
      return counts(metric.name)
    case "F1":
      return [...counts(agg.precision), ...counts(agg.recall)]
  }
}

/** The statistic of summed counts, in the order of {@link keysOf}. */
const pooledStatistic = (metric: Pick<MetricDescription, "aggregate">): ((sums: ArrayLike<number>) => number) =>
  metric.aggregate._tag === "Ratio"
    ? (s) => ratio(s[0]!, s[1]!)
    : (s) => f1(ratio(s[0]!, s[1]!), ratio(s[2]!, s[3]!))

/**
 * The metric's value over a set of rows, aggregated as the summary aggregates it (mean of
 * per-instance values, or the pooled statistic of summed counts). `n` counts the usable rows.
 */
export const value = (
  metric: Pick<MetricDescription, "name" | "aggregate">,
  columns: Columns,
  rows?: ReadonlyArray<number>
): { readonly n: number; readonly value: number } => {
  const keys = keysOf(metric)
  const cols = keys.map(columns)
  const length = Math.min(...cols.map((c) => c.length))
  const pick = rows ?? Array.from({ length }, (_, i) => i)
  const sums = keys.map(() => 0)
  let n = 0
  for (const i of pick) {
    if (!cols.every((c) => Number.isFinite(c[i]))) continue
    n++
    cols.forEach((c, k) => (sums[k]! += c[i]!))
  }
  if (n === 0) return { n, value: NaN }
  return { n, value: metric.aggregate._tag === "Mean" ? sums[0]! / n : pooledStatistic(metric)(sums) }
}

/** Rows usable for a paired test: every value the metric needs is finite in both cells. */
export const pairable = (metric: Pick<MetricDescription, "name" | "aggregate">, a: Columns, b: Columns): number => {
  const cols = [...keysOf(metric).map(a), ...keysOf(metric).map(b)]
  const length = Math.min(...cols.map((c) => c.length))
  let n = 0
  for (let i = 0; i < length; i++) if (cols.every((c) => Number.isFinite(c[i]))) n++
  return n
}

/**
 * Paired bootstrap and paired permutation test for a pooled statistic. `a` and `b` are rows of
 * counts (same length, same instance order, all finite); the statistic maps summed counts to a value.
 */
export const pairedPooled = (
  a: ReadonlyArray<ReadonlyArray<number>>,
  b: ReadonlyArray<ReadonlyArray<number>>,
  statistic: (sums: ArrayLike<number>) => number,
  options: Options
): Comparison => {
  const n = a.length
  if (n === 0) return { n: 0, delta: NaN, ci95: [NaN, NaN], p: NaN }
  const k = a[0]!.length
  // Flat rows: A, B and D = B - A, so a swap of instance i moves D[i] from B's sums to A's.
  const A = new Float64Array(n * k), B = new Float64Array(n * k), D = new Float64Array(n * k)
  const totalA = new Float64Array(k), totalB = new Float64Array(k)
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < k; c++) {
      const x = a[i]![c]!, y = b[i]![c]!
      A[i * k + c] = x
      B[i * k + c] = y
      D[i * k + c] = y - x
      totalA[c]! += x
      totalB[c]! += y
    }
  }
  const observed = statistic(totalB) - statistic(totalA)
  if (!Number.isFinite(observed)) return { n, delta: observed, ci95: [NaN, NaN], p: NaN }
  if (n < 2) return { n, delta: observed, ci95: [observed, observed], p: 1 }

  const sa = new Float64Array(k), sb = new Float64Array(k)
  const draw = Statistics.rng(options.seed)
  const boots: Array<number> = []
  for (let r = 0; r < options.resamples; r++) {
    sa.fill(0)
    sb.fill(0)
    for (let i = 0; i < n; i++) {
      const j = Math.floor(draw() * n) * k
      for (let c = 0; c < k; c++) {
        sa[c]! += A[j + c]!
        sb[c]! += B[j + c]!
      }
    }
    const d = statistic(sb) - statistic(sa)
    if (Number.isFinite(d)) boots.push(d)
  }
  boots.sort((x, y) => x - y)

  // Same stream offset as Statistics.paired, so the two tests use comparable randomness.
  const flip = Statistics.rng(options.seed ^ 0x5bd1e995)
  const moved = new Float64Array(k)
  const eps = 1e-12
  let extreme = 0
  for (let r = 0; r < options.permutations; r++) {
    moved.fill(0)
    for (let i = 0; i < n; i++) {
      if (flip() < 0.5) for (let c = 0; c < k; c++) moved[c]! += D[i * k + c]!
    }
    for (let c = 0; c < k; c++) {
      sa[c] = totalA[c]! + moved[c]!
      sb[c] = totalB[c]! - moved[c]!
    }
    if (Math.abs(statistic(sb) - statistic(sa)) >= Math.abs(observed) - eps) extreme++
  }
  return {
    n,
    delta: observed,
    ci95: [Statistics.quantile(boots, 0.025), Statistics.quantile(boots, 0.975)],
    p: (extreme + 1) / (options.permutations + 1)
  }
}

/**
 * Compare metric(b) against metric(a) over the rows `rows` (default: all), paired by position.
 */
export const compare = (
  metric: Pick<MetricDescription, "name" | "aggregate">,
  a: Columns,
  b: Columns,
  options: Options,
  rows?: ReadonlyArray<number>
): Comparison => {
  const keys = keysOf(metric)
  const colsA = keys.map(a)
  const colsB = keys.map(b)
  const length = Math.min(...colsA.map((c) => c.length), ...colsB.map((c) => c.length))
  const pick = rows ?? Array.from({ length }, (_, i) => i)
  if (metric.aggregate._tag === "Mean") {
    const ca = colsA[0]!, cb = colsB[0]!
    return Statistics.paired(pick.map((i) => ca[i] ?? NaN), pick.map((i) => cb[i] ?? NaN), options)
  }
  const ra: Array<Array<number>> = []
  const rb: Array<Array<number>> = []
  for (const i of pick) {
    const x = colsA.map((c) => c[i] ?? NaN)
    const y = colsB.map((c) => c[i] ?? NaN)
    if (x.every(Number.isFinite) && y.every(Number.isFinite)) {
      ra.push(x)
      rb.push(y)
    }
  }
  return pairedPooled(ra, rb, pooledStatistic(metric), options)
}

/** Number of permutations so that the smallest attainable Holm-adjusted p-value over `tests` tests is about 0.025. */
export const permutationsFor = (tests: number): number => Math.max(screening, Math.ceil(40 * tests))

/** Permutations of the first pass of {@link family}. */
export const screening = 2000

/**
 * A test is refined when its first-pass p, times its Holm multiplier (the number of tests whose p is
 * at least as large), is below this: twice the 0.05 level, a margin for the first pass's noise.
 * The others cannot become significant after Holm, whatever more permutations would say.
 */
export const refineBelow = 0.1

export interface Test {
  readonly metric: Pick<MetricDescription, "name" | "aggregate">
  readonly a: Columns
  readonly b: Columns
}

export interface Family {
  readonly comparisons: ReadonlyArray<Comparison>
  /** Holm-adjusted p-values, in test order. */
  readonly adjusted: ReadonlyArray<number>
  /** Tests with a p-value (at least one usable pair). */
  readonly tests: number
  /** Permutations of the first pass, and of the refined tests. */
  readonly permutations: { readonly screening: number; readonly refined: number; readonly refinedTests: number }
}

/**
 * Run a family of paired tests and adjust them with Holm. Every test first runs with
 * {@link screening} permutations; the tests that could still be significant after Holm (see
 * {@link refineBelow}) run again with `permutations` (default {@link permutationsFor} the family
 * size), so that their small p-values are resolved finely enough for Holm, while the others cost
 * little. Seeds are fixed, so the outcome is deterministic.
 */
export const family = (
  tests: ReadonlyArray<Test>,
  options: { readonly seed: number; readonly resamples: number; readonly permutations?: number }
): Family => {
  const testable = tests.filter((t) => pairable(t.metric, t.a, t.b) > 0).length
  const refined = options.permutations ?? permutationsFor(testable)
  const first = Math.min(screening, refined)
  const run = (t: Test, permutations: number) => compare(t.metric, t.a, t.b, { seed: options.seed, resamples: options.resamples, permutations })
  const comparisons = tests.map((t) => run(t, first))
  const ranked = comparisons.map((c, i) => [c.p, i] as const).filter(([p]) => Number.isFinite(p)).sort((x, y) => x[0] - y[0] || x[1] - y[1])
  let refinedTests = 0
  if (refined > first) {
    ranked.forEach(([p, i], rank) => {
      if ((ranked.length - rank) * p >= refineBelow) return
      refinedTests++
      comparisons[i] = run(tests[i]!, refined)
    })
  }
  return {
    comparisons,
    adjusted: Statistics.holm(comparisons.map((c) => c.p)),
    tests: comparisons.filter((c) => Number.isFinite(c.p)).length,
    permutations: { screening: first, refined, refinedTests }
  }
}
