/**
 * Statistics for per-instance scores: seeded bootstrap confidence intervals for a mean, paired
 * bootstrap intervals and paired permutation tests for a difference between two cells over the
 * same instances, and Holm's step-down correction for multiple comparisons.
 *
 * Everything is deterministic given the seed, so summaries and reports are byte-identical across
 * reruns. Resample b draws the n indices floor(rng() * n), as the textbook bootstrap does; the
 * draws of one (seed, n, resamples) are kept as row bit masks and shared by every column of that
 * size, and column sums over them come from subset-sum tables (internal/Resampling). Sign-flip
 * p-values enumerate all 2^n patterns when n <= 20 (exact), else draw 32 flips per random word. Non-finite values (NaN: a metric that does not apply to an instance) are left out before
 * any computation and the N reported is the count that remained.
 *
 * @example
 * import { Statistics } from "@cupid-lab/scorers"
 * Statistics.bootstrapMean([0.5, 1, 0], { seed: 7 }) // { n: 3, mean: 0.5, ci95: [lo, hi] }
 */
import { Random } from "@cupid-lab/core"
import * as Asymptotic from "./internal/Asymptotic.js"
import * as Clustered from "./internal/Clustered.js"
import * as Resampling from "./internal/Resampling.js"

/** The seeded generator every statistic here draws from; floats in [0, 1). */
export const rng = (seed: number): (() => number) => Random.mulberry32(Resampling.mix(seed))

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
  /** Percentile bootstrap 95% interval; [NaN, NaN] (none) for fewer than two rows or clusters. */
  readonly ci95: readonly [number, number]
}

export interface BootstrapOptions {
  readonly seed: number
  readonly resamples?: number
  /**
   * From this many rows on, the interval is the large-sample one (delta method: estimate +-
   * 1.96 standard errors) instead of a bootstrap, which then costs O(resamples x n) per metric
   * for no visible change (default: always bootstrap).
   */
  readonly largeSample?: number
}

/**
 * Where rows come in clusters (the instances of one persona share their sessions): `clusters[i]`
 * is row i's cluster. When some cluster has two or more usable rows, the interval resamples
 * clusters, a cluster's rows together (the estimate and `n`, the rows, are unchanged).
 */
export interface Clustering {
  readonly clusters?: ArrayLike<number>
}

/** A pooled statistic's estimate with the clusters resampled, or undefined when no cluster has two usable rows. */
const clustered = (
  columns: ReadonlyArray<ArrayLike<number>>,
  statistic: (sums: ArrayLike<number>) => number,
  smooth: Asymptotic.Smooth,
  options: BootstrapOptions & Clustering
): Estimate | undefined => {
  if (options.clusters === undefined) return undefined
  const g = Clustered.group(columns, undefined, options.clusters)
  if (g.largest < 2) return undefined
  const { clusters: _clusters, ...plain } = options
  return { ...bootstrapPooled(g.sums, statistic, smooth, plain), n: g.rows }
}

/** Instances needed on each side of the mean influence for a large-sample interval (else bootstrap). */
export const largeSampleMinTail = Asymptotic.minTail

const isLarge = (n: number, options: BootstrapOptions): boolean =>
  options.largeSample !== undefined && n >= options.largeSample

/** Mean with a percentile-bootstrap 95% CI. */
export const bootstrapMean = (values: ArrayLike<number>, options: BootstrapOptions & Clustering): Estimate => {
  // A mean is the ratio of the summed values to the summed row counts, which clusters resample.
  const byCluster = clustered(
    [values, Float64Array.from({ length: values.length }, () => 1)],
    (t) => ratio(t[0]!, t[1]!),
    Asymptotic.ratio,
    options
  )
  if (byCluster !== undefined) return byCluster
  const xs = Resampling.finiteRows([values])[0]!
  const n = xs.length
  let s = 0
  for (let i = 0; i < n; i++) s += xs[i]!
  const m = n === 0 ? NaN : s / n
  // One value has no interval: NaN bounds, which reports show as n/a.
  if (n < 2) return { n, mean: m, ci95: [NaN, NaN] }
  const normal = isLarge(n, options) ? Asymptotic.interval(Asymptotic.mean, [xs], [s], n) : undefined
  if (normal !== undefined) return { n, mean: m, ci95: normal }
  const B = options.resamples ?? 1000
  const means = Resampling.resampledSums(Resampling.resamplePlan(options.seed, n, B), xs, new Float64Array(B))
  for (let b = 0; b < B; b++) means[b] = means[b]! / n
  return { n, mean: m, ci95: Resampling.interval(means) }
}

/** A pooled statistic of summed columns with a bootstrap CI over the rows where every column is finite. */
const bootstrapPooled = (
  columns: ReadonlyArray<ArrayLike<number>>,
  statistic: (sums: ArrayLike<number>) => number,
  smooth: Asymptotic.Smooth,
  options: BootstrapOptions
): Estimate => {
  const xs = Resampling.finiteRows(columns)
  const n = xs[0]!.length
  const totals = xs.map((x) => {
    let s = 0
    for (let i = 0; i < n; i++) s += x[i]!
    return s
  })
  const m = statistic(totals)
  // One row (or one cluster: the instances of one persona) has no interval.
  if (n < 2) return { n, mean: m, ci95: [NaN, NaN] }
  const normal = isLarge(n, options) ? Asymptotic.interval(smooth, xs, totals, n) : undefined
  if (normal !== undefined) return { n, mean: m, ci95: normal }
  const B = options.resamples ?? 1000
  const plan = Resampling.resamplePlan(options.seed, n, B)
  const sums = xs.map((x) => Resampling.resampledSums(plan, x, new Float64Array(B)))
  const one = new Float64Array(xs.length)
  const stats = new Float64Array(B)
  for (let b = 0; b < B; b++) {
    for (let c = 0; c < xs.length; c++) one[c] = sums[c]![b]!
    stats[b] = statistic(one)
  }
  return { n, mean: m, ci95: Resampling.interval(stats) }
}

/** sum(num) / sum(den); NaN when the denominator is 0. */
export const ratio = (num: number, den: number): number => (den === 0 ? NaN : num / den)

/**
 * Ratio of sums (micro average) with a bootstrap CI over instances: resamples (num, den) pairs.
 * Pairs where either part is not finite are left out; resamples whose denominator is 0 too.
 */
export const bootstrapRatio = (
  nums: ArrayLike<number>,
  dens: ArrayLike<number>,
  options: BootstrapOptions & Clustering
): Estimate => {
  const statistic = (s: ArrayLike<number>) => ratio(s[0]!, s[1]!)
  return (
    clustered([nums, dens], statistic, Asymptotic.ratio, options) ??
    bootstrapPooled([nums, dens], statistic, Asymptotic.ratio, options)
  )
}

/** Per-instance counts of a pooled ratio: the ratio of a set of instances is sum(num) / sum(den). */
export interface RatioCounts {
  readonly num: ArrayLike<number>
  readonly den: ArrayLike<number>
}

/** Harmonic mean of two ratios; 0 when both are 0, NaN when either is NaN. */
export const f1 = (p: number, r: number): number =>
  Number.isNaN(p) || Number.isNaN(r) ? NaN : p + r === 0 ? 0 : (2 * p * r) / (p + r)

/**
 * Micro F1 from per-instance counts: F1 of (sum p.num / sum p.den, sum r.num / sum r.den), with a
 * bootstrap over instances drawn exactly as {@link bootstrapRatio} draws them. Rows where any of
 * the four counts is not finite are left out.
 */
export const bootstrapF1 = (p: RatioCounts, r: RatioCounts, options: BootstrapOptions & Clustering): Estimate => {
  const columns = [p.num, p.den, r.num, r.den]
  const statistic = (s: ArrayLike<number>) => f1(ratio(s[0]!, s[1]!), ratio(s[2]!, s[3]!))
  return (
    clustered(columns, statistic, Asymptotic.f1, options) ?? bootstrapPooled(columns, statistic, Asymptotic.f1, options)
  )
}

export interface PairedComparison {
  /** Instances where both values are finite. */
  readonly n: number
  /** mean(b - a) over those instances. */
  readonly delta: number
  readonly ci95: readonly [number, number]
  /** Two-sided paired permutation (sign-flip) p-value: exact for small n, else Monte-Carlo with the +1 correction. */
  readonly p: number
}

/**
 * Compare cell `b` against baseline `a` over the same instances (`a[i]` and `b[i]` belong to the
 * same instance). The CI is a paired bootstrap of the mean difference; the p-value comes from
 * flipping the sign of each difference: all 2^n patterns when n <= 20 (or 2^n <= permutations),
 * else `permutations` random ones (default 2000).
 */
export const paired = (
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  options: BootstrapOptions & { readonly permutations?: number }
): PairedComparison => {
  const [x, y] = Resampling.finiteRows([a, b])
  const d = Float64Array.from(x!, (v, i) => y![i]! - v)
  if (d.length === 0) return { n: 0, delta: NaN, ci95: [NaN, NaN], p: NaN }
  const { spec, observed } = Resampling.meanSpec(d)
  const ci95 =
    d.length < 2 ? ([NaN, NaN] as const) : Resampling.bootstrapInterval(spec, options.seed, options.resamples ?? 1000)
  const { p } = Resampling.signFlipTest(spec, options.seed, options.permutations ?? 2000)
  return { n: d.length, delta: observed, ci95, p }
}

/**
 * Holm's step-down adjustment: adjusted p-values in input order (NaN stays NaN and does not count
 * towards the number of tests).
 */
export const holm = (ps: ReadonlyArray<number>): Array<number> => {
  const idx = ps
    .map((p, i) => [p, i] as const)
    .filter(([p]) => Number.isFinite(p))
    .sort((x, y) => x[0] - y[0])
  const m = idx.length
  const out = ps.map(() => NaN)
  let running = 0
  idx.forEach(([p, i], rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p))
    out[i] = running
  })
  return out
}

/**
 * How a family of p-values is adjusted for multiple comparisons: Holm's step-down (family-wise
 * error), Bonferroni (family-wise, single step), Benjamini-Hochberg's step-up (false discovery
 * rate), or none (the p-values as they are).
 */
export type Correction = "holm" | "bonferroni" | "bh" | "none"

export const corrections: ReadonlyArray<Correction> = ["holm", "bonferroni", "bh", "none"]

/** The correction's name in prose ("Holm", "Benjamini-Hochberg", ...). */
export const correctionTitle = (c: Correction): string =>
  c === "holm" ? "Holm" : c === "bonferroni" ? "Bonferroni" : c === "bh" ? "Benjamini-Hochberg" : "no correction"

/** Bonferroni: each p times the number of tests with a p-value, capped at 1 (NaN stays NaN). */
export const bonferroni = (ps: ReadonlyArray<number>): Array<number> => {
  const m = ps.filter((p) => Number.isFinite(p)).length
  return ps.map((p) => (Number.isFinite(p) ? Math.min(1, m * p) : NaN))
}

/**
 * Benjamini-Hochberg's step-up adjustment: the k-th smallest of m p-values becomes
 * min over j >= k of m p_(j) / j, capped at 1; in input order, NaN stays NaN and does not count.
 */
export const benjaminiHochberg = (ps: ReadonlyArray<number>): Array<number> => {
  const idx = ps
    .map((p, i) => [p, i] as const)
    .filter(([p]) => Number.isFinite(p))
    .sort((x, y) => x[0] - y[0])
  const m = idx.length
  const out = ps.map(() => NaN)
  let running = 1
  for (let rank = m - 1; rank >= 0; rank--) {
    const [p, i] = idx[rank]!
    running = Math.min(running, (m * p) / (rank + 1))
    out[i] = running
  }
  return out
}

/** Adjusted p-values of a family under a correction, in input order. */
export const adjust = (correction: Correction, ps: ReadonlyArray<number>): Array<number> => {
  switch (correction) {
    case "holm":
      return holm(ps)
    case "bonferroni":
      return bonferroni(ps)
    case "bh":
      return benjaminiHochberg(ps)
    case "none":
      return ps.map((p) => (Number.isFinite(p) ? p : NaN))
  }
}

/**
 * The two-sided level one test of a family must reach so that the family passes at `level` when
 * that effect is the only real one: level / m for Holm, Bonferroni and Benjamini-Hochberg (their
 * first step is the same), `level` without correction.
 */
export const perTestLevel = (correction: Correction, tests: number, level = 0.05): number =>
  correction === "none" ? level : level / Math.max(1, tests)

/** The q-quantile of the standard normal distribution (0 < q < 1), by bisection on its tail to 1e-12. */
export const normalQuantile = (q: number): number => {
  if (!(q > 0 && q < 1)) return NaN
  if (q === 0.5) return 0
  const tail = Math.min(q, 1 - q)
  // P(Z >= z) = twoSided(z) / 2, decreasing in z >= 0.
  let lo = 0,
    hi = 40
  while (hi - lo > 1e-12) {
    const mid = (lo + hi) / 2
    if (Asymptotic.twoSided(mid) / 2 > tail) lo = mid
    else hi = mid
  }
  const z = (lo + hi) / 2
  return q < 0.5 ? -z : z
}

/**
 * The minimum detectable effect of a two-sided paired test at level `alpha` with the given power
 * (default 0.8), from the normal approximation: (z_{1-alpha/2} + z_{power}) * se, where se is the
 * standard error of the difference (sd of the per-instance differences / sqrt(n) for a mean).
 *
 * @example
 * Statistics.minimumDetectable(0.01, 0.05) // (1.95996 + 0.84162) * 0.01 = 0.0280
 */
export const minimumDetectable = (se: number, alpha: number, power = 0.8): number =>
  (normalQuantile(1 - alpha / 2) + normalQuantile(power)) * se
