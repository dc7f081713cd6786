/**
 * Statistics for per-instance scores: seeded bootstrap confidence intervals for a mean, paired
 * bootstrap intervals and paired permutation tests for a difference between two cells over the
 * same instances, and Holm's step-down correction for multiple comparisons.
 *
 * Everything is deterministic given the seed, so summaries and reports are byte-identical across
 * reruns. Non-finite values (NaN: a metric that does not apply to an instance) are left out before
 * any computation and the N reported is the count that remained.
 *
 * @example
 * import { Statistics } from "@cupid-lab/scorers"
 * Statistics.bootstrapMean([0.5, 1, 0], { seed: 7 }) // { n: 3, mean: 0.5, ci95: [lo, hi] }
 */
import { Random } from "@cupid-lab/core"

/** The seeded generator every statistic here draws from; floats in [0, 1). */
export const rng = (seed: number): (() => number) => Random.mulberry32((seed >>> 0) ^ 0x9e3779b9)

export const finite = (xs: ReadonlyArray<number>): Array<number> => xs.filter((x) => Number.isFinite(x))

export const mean = (xs: ReadonlyArray<number>): number => {
  if (xs.length === 0) return NaN
  let s = 0
  for (const x of xs) s += x
  return s / xs.length
}

/** Linear-interpolated quantile of sorted values (type 7, as numpy's default). */
export const quantile = (sorted: ArrayLike<number>, q: number): number => {
  if (sorted.length === 0) return NaN
  const h = (sorted.length - 1) * q
  const lo = Math.floor(h)
  const hi = Math.ceil(h)
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!)
}

export interface Estimate {
  readonly n: number
  readonly mean: number
  /** Percentile bootstrap 95% interval; [mean, mean] when n < 2. */
  readonly ci95: readonly [number, number]
}

export interface BootstrapOptions {
  readonly seed: number
  readonly resamples?: number
}

/** Mean with a percentile-bootstrap 95% CI. */
export const bootstrapMean = (values: ReadonlyArray<number>, options: BootstrapOptions): Estimate => {
  const xs = finite(values)
  const m = mean(xs)
  if (xs.length < 2) return { n: xs.length, mean: m, ci95: [m, m] }
  const B = options.resamples ?? 1000
  const next = rng(options.seed)
  const means = new Float64Array(B)
  for (let b = 0; b < B; b++) {
    let s = 0
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(next() * xs.length)]!
    means[b] = s / xs.length
  }
  means.sort()
  return { n: xs.length, mean: m, ci95: [quantile(means, 0.025), quantile(means, 0.975)] }
}

/**
 * Ratio of sums (micro average) with a bootstrap CI over instances: resamples (num, den) pairs.
 * Pairs where either part is not finite are left out.
 */
export const bootstrapRatio = (
  nums: ReadonlyArray<number>,
  dens: ReadonlyArray<number>,
  options: BootstrapOptions
): Estimate => {
  const pairs: Array<[number, number]> = []
  for (let i = 0; i < nums.length; i++) {
    if (Number.isFinite(nums[i]) && Number.isFinite(dens[i])) pairs.push([nums[i]!, dens[i]!])
  }
  const ratio = (idx: (i: number) => number) => {
    let a = 0, b = 0
    for (let i = 0; i < pairs.length; i++) {
      const p = pairs[idx(i)]!
      a += p[0]
      b += p[1]
    }
    return b === 0 ? NaN : a / b
  }
  const m = ratio((i) => i)
  if (pairs.length < 2) return { n: pairs.length, mean: m, ci95: [m, m] }
  const B = options.resamples ?? 1000
  const next = rng(options.seed)
  const stats: Array<number> = []
  for (let b = 0; b < B; b++) {
    const r = ratio(() => Math.floor(next() * pairs.length))
    if (Number.isFinite(r)) stats.push(r)
  }
  stats.sort((x, y) => x - y)
  return { n: pairs.length, mean: m, ci95: [quantile(stats, 0.025), quantile(stats, 0.975)] }
}

/** Per-instance counts of a pooled ratio: the ratio of a set of instances is sum(num) / sum(den). */
export interface RatioCounts {
  readonly num: ArrayLike<number>
  readonly den: ArrayLike<number>
}

/** Harmonic mean of two ratios; 0 when both are 0, NaN when either is NaN. */
export const f1 = (p: number, r: number): number => (Number.isNaN(p) || Number.isNaN(r) ? NaN : p + r === 0 ? 0 : (2 * p * r) / (p + r))

/**
 * Micro F1 from per-instance counts: F1 of (sum p.num / sum p.den, sum r.num / sum r.den), with a
 * bootstrap over instances drawn exactly as {@link bootstrapRatio} draws them. Rows where any of
 * the four counts is not finite are left out.
 */
export const bootstrapF1 = (p: RatioCounts, r: RatioCounts, options: BootstrapOptions): Estimate => {
  const rows: Array<readonly [number, number, number, number]> = []
  const length = Math.min(p.num.length, p.den.length, r.num.length, r.den.length)
  for (let i = 0; i < length; i++) {
    const row = [p.num[i]!, p.den[i]!, r.num[i]!, r.den[i]!] as const
    if (row.every((x) => Number.isFinite(x))) rows.push(row)
  }
  const stat = (pick: (i: number) => number): number => {
    let pn = 0, pd = 0, rn = 0, rd = 0
    for (let i = 0; i < rows.length; i++) {
      const row = rows[pick(i)]!
      pn += row[0]
      pd += row[1]
      rn += row[2]
      rd += row[3]
    }
    return f1(pd === 0 ? NaN : pn / pd, rd === 0 ? NaN : rn / rd)
  }
  const m = stat((i) => i)
  if (rows.length < 2) return { n: rows.length, mean: m, ci95: [m, m] }
  const B = options.resamples ?? 1000
  const next = rng(options.seed)
  const stats: Array<number> = []
  for (let b = 0; b < B; b++) {
    const s = stat(() => Math.floor(next() * rows.length))
    if (Number.isFinite(s)) stats.push(s)
  }
  stats.sort((x, y) => x - y)
  return { n: rows.length, mean: m, ci95: [quantile(stats, 0.025), quantile(stats, 0.975)] }
}

export interface PairedComparison {
  /** Instances where both values are finite. */
  readonly n: number
  /** mean(b - a) over those instances. */
  readonly delta: number
  readonly ci95: readonly [number, number]
  /** Two-sided paired permutation (sign-flip) p-value, with the +1 correction. */
  readonly p: number
}

/**
 * Compare cell `b` against baseline `a` over the same instances (`a[i]` and `b[i]` belong to the
 * same instance). The CI is a paired bootstrap of the mean difference; the p-value comes from
 * randomly flipping the sign of each difference.
 */
export const paired = (
  a: ReadonlyArray<number>,
  b: ReadonlyArray<number>,
  options: BootstrapOptions & { readonly permutations?: number }
): PairedComparison => {
  const d: Array<number> = []
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (Number.isFinite(a[i]) && Number.isFinite(b[i])) d.push(b[i]! - a[i]!)
  }
  const est = bootstrapMean(d, options)
  if (d.length === 0) return { n: 0, delta: NaN, ci95: [NaN, NaN], p: NaN }
  const observed = Math.abs(est.mean)
  const P = options.permutations ?? 2000
  const next = rng(options.seed ^ 0x5bd1e995)
  let extreme = 0
  const eps = 1e-12
  for (let k = 0; k < P; k++) {
    let s = 0
    for (const x of d) s += next() < 0.5 ? -x : x
    if (Math.abs(s / d.length) >= observed - eps) extreme++
  }
  return { n: d.length, delta: est.mean, ci95: est.ci95, p: (extreme + 1) / (P + 1) }
}

/**
 * Holm's step-down adjustment: adjusted p-values in input order (NaN stays NaN and does not count
 * towards the number of tests).
 */
export const holm = (ps: ReadonlyArray<number>): Array<number> => {
  const idx = ps.map((p, i) => [p, i] as const).filter(([p]) => Number.isFinite(p)).sort((x, y) => x[0] - y[0])
  const m = idx.length
  const out = ps.map(() => NaN)
  let running = 0
  idx.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p))
    out[i] = running
  })
  return out
}
