/**
 * A metric's value, bootstrap interval and paired comparison between two cells, for every way a
 * metric aggregates over instances: a mean of per-instance values, a pooled ratio
 * (sum num / sum den, a micro average), or the F1 of two pooled ratios. The metric's data is a
 * typed {@link Columns} value; rows of two cells are paired by index.
 *
 * - A row takes part only when every value the metric needs is finite (in both cells, for a
 *   comparison); `n` counts those rows.
 * - The comparison's interval is a paired bootstrap (the same resampled rows for both cells).
 * - Its p-value comes from a two-sided paired permutation test: a sign flip of the per-row
 *   difference for a mean, a swap of the two cells' counts of the row for a pooled statistic.
 *   Rows equal in both cells change no pattern's statistic and are left out of the patterns. When
 *   at most 20 rows differ (2^20, about a million, sign patterns; or 2^rows <= permutations)
 *   all 2^n are enumerated and p is exact (`test: "exact"`): that costs no more than the random
 *   patterns it replaces, and removes the Monte-Carlo error where it matters most, at small n
 *   whose smallest p is 2 / 2^n. Otherwise `permutations` random patterns are drawn, 32 flips
 *   from each random 32-bit word, and p = (extreme + 1) / (permutations + 1) (`"monte-carlo"`).
 * - Clusters (`clusters`: a cluster id per row, e.g. the persona of each instance): when some cluster
 *   has several usable rows, the rows of a cluster move together. The bootstrap resamples clusters
 *   with replacement and the permutation test swaps (for a mean: flips the sign of) a cluster's
 *   summed differences, so p counts 2^clusters patterns. A metric becomes a pooled statistic of
 *   cluster sums: a mean is sum(values) / sum(rows) over the clusters drawn, which equals the mean
 *   of the rows. `n` still counts rows; `clusters` says how many clusters moved.
 * - Everything is seeded: every test of one seed and one n sees the same resamples and the same
 *   sign patterns, so results are identical across runs, and a longer Monte-Carlo run extends a
 *   shorter one.
 *
 * @example
 * import { Paired } from "@cupid-lab/scorers"
 * const a = Paired.mean([0.2, 0.5, NaN, 0.9]), b = Paired.mean([0.4, 0.5, 0.7, 1])
 * Paired.value(b) // { n: 4, value: 0.65 }
 * const c = Paired.compare(a, b, { seed: 7, resamples: 1000, permutations: 2000 })
 * c.n // 3: the row with NaN is left out
 * c.delta // (0.2 + 0 + 0.1) / 3, metric(b) - metric(a); c.ci95, c.p, c.test === "exact"
 */
import * as Asymptotic from "./internal/Asymptotic.js"
import { finish, largeOf } from "./internal/Comparisons.js"
import { clustersOf, interval, prepare, shape, sum } from "./internal/Prepared.js"
import * as Resampling from "./internal/Resampling.js"
import * as Statistics from "./Statistics.js"

/** Per-instance counts of a pooled ratio: sum(num) / sum(den) over a set of instances. */
export type RatioColumns = Statistics.RatioCounts

/** Per-instance values; the metric is their mean. NaN: the metric does not apply to the instance. */
export interface Mean {
  readonly _tag: "Mean"
  readonly values: ArrayLike<number>
}

/** Per-instance counts; the metric is sum(num) / sum(den). */
export interface Ratio extends RatioColumns {
  readonly _tag: "Ratio"
}

/** The harmonic mean of two pooled ratios (micro F1). */
export interface F1 {
  readonly _tag: "F1"
  readonly precision: RatioColumns
  readonly recall: RatioColumns
}

export type Columns = Mean | Ratio | F1

export const mean = (values: ArrayLike<number>): Mean => ({ _tag: "Mean", values })
export const ratio = (num: ArrayLike<number>, den: ArrayLike<number>): Ratio => ({ _tag: "Ratio", num, den })
export const f1 = (precision: RatioColumns, recall: RatioColumns): F1 => ({ _tag: "F1", precision, recall })

/**
 * The metric's value over some rows (default: all), aggregated as the summary aggregates it.
 * `n` counts the rows where every value the metric needs is finite.
 */
export const value = (columns: Columns, rows?: ArrayLike<number>): { readonly n: number; readonly value: number } => {
  const s = shape(columns)
  const xs = Resampling.finiteRows(s.columns, rows)
  const n = xs[0]!.length
  return { n, value: n === 0 ? NaN : s.statistic(xs.map(sum), n) }
}

export interface EstimateOptions extends Statistics.BootstrapOptions, Statistics.Clustering {
  /** Rows to use (default: all); `clusters` is indexed like the columns. */
  readonly rows?: ReadonlyArray<number>
}

/** The metric's value with a percentile-bootstrap 95% interval over the usable rows (clusters resampled whole). */
export const estimate = (columns: Columns, given: EstimateOptions): Statistics.Estimate => {
  const pick = (xs: ArrayLike<number>): ArrayLike<number> =>
    given.rows === undefined ? xs : given.rows.map((i) => xs[i] ?? NaN)
  const options = given.clusters === undefined ? given : { ...given, clusters: pick(given.clusters) }
  switch (columns._tag) {
    case "Mean":
      return Statistics.bootstrapMean(pick(columns.values), options)
    case "Ratio":
      return Statistics.bootstrapRatio(pick(columns.num), pick(columns.den), options)
    case "F1":
      return Statistics.bootstrapF1(
        { num: pick(columns.precision.num), den: pick(columns.precision.den) },
        { num: pick(columns.recall.num), den: pick(columns.recall.den) },
        options
      )
  }
}

export interface Options {
  readonly seed: number
  readonly resamples: number
  readonly permutations: number
  /** Rows to compare (default: all). */
  readonly rows?: ReadonlyArray<number>
  /** A cluster id per row (indexed like the columns); rows of a cluster are resampled and permuted together. */
  readonly clusters?: ArrayLike<number>
  /**
   * From this many usable rows (clusters, when clustered) on, the interval and the p-value use their large-sample (normal)
   * forms instead of resampling (default: never). See {@link Statistics.BootstrapOptions.largeSample}.
   */
  readonly largeSample?: number
}

export interface Comparison extends Statistics.PairedComparison {
  /** metric(b) - metric(a) over the usable rows. */
  readonly delta: number
  /**
   * How p was found: all sign patterns (`exact`), random ones (`monte-carlo`), the normal
   * approximation of their distribution for large n (`normal`, the interval then by the delta
   * method too); `none` when there is no usable row or the statistic is undefined (p NaN).
   */
  readonly test: "exact" | "monte-carlo" | "normal" | "none"
  /** Sign patterns p counts: 2^n when exact, the random permutations when Monte-Carlo, 0 otherwise. */
  readonly permutations: number
  /** Clusters the bootstrap and the test moved whole (absent when every row moved alone). */
  readonly clusters?: number
}

/** Rows up to which tests enumerate every sign pattern (exact p). */
export const exactUpTo = Resampling.exactUpTo

/** Instances whose swap must change the statistic for a large-sample test (else permutations). */
export const largeSampleMinVarying = Asymptotic.minVarying

/**
 * Compare metric(b) against metric(a), rows paired by index: the difference, its paired bootstrap
 * 95% interval and the two-sided permutation p-value. `a` and `b` aggregate the same way (a Mean
 * with a Mean, ...); anything else is a programming error and throws.
 */
export const compare = <C extends Columns>(a: C, b: NoInfer<C>, options: Options): Comparison => {
  const p = prepare(a, b, options.rows, options.clusters)
  if (p._tag === "None") return p.comparison
  const large = largeOf(p, options.largeSample, { interval: true, minVarying: Asymptotic.minVarying })
  if (large !== undefined) return large
  return finish(p, interval(p, options), Resampling.signFlipTest(p.spec, options.seed, options.permutations))
}

/**
 * The standard error of metric(b) - metric(a) by the delta method (sd of the per-row differences /
 * sqrt(n) for a mean; cluster-level when `clusters` groups rows), for power calculations; NaN when
 * fewer than two rows (clusters) are usable or the statistic is undefined.
 */
export const standardError = <C extends Columns>(
  a: C,
  b: NoInfer<C>,
  options: { readonly rows?: ArrayLike<number>; readonly clusters?: ArrayLike<number> } = {}
): number => {
  const p = prepare(a, b, options.rows, options.clusters)
  return p._tag === "None" ? NaN : p.se()
}

/** Permutations of the first pass of {@link family}. */
export const screening = 2000

/**
 * Number of permutations so that the smallest attainable adjusted p-value over `tests` tests is
 * about 0.025 (Holm, Bonferroni and Benjamini-Hochberg multiply the smallest p by the family size).
 */
export const permutationsFor = (tests: number): number => Math.max(screening, Math.ceil(40 * tests))

/**
 * A test is refined when its first-pass p, times its multiplier under the family's correction
 * (Holm: the number of tests whose p is at least as large; Bonferroni: the family size), or its
 * first-pass adjusted p (Benjamini-Hochberg, whose adjusted p can be below its own multiple), is
 * below this: twice the 0.05 level, a margin for the first pass's noise. The others cannot become
 * significant after the correction, whatever more permutations would say.
 */
export const refineBelow = 0.1

export interface Test {
  readonly a: Columns
  readonly b: Columns
  /** Rows to compare (default: all). */
  readonly rows?: ArrayLike<number>
  /** A cluster id per row: rows of a cluster move together (see {@link Options.clusters}). */
  readonly clusters?: ArrayLike<number>
}

export interface FamilyOptions {
  readonly seed: number
  readonly resamples: number
  /** From this many usable rows on, tests and intervals take their large-sample forms (default: never). */
  readonly largeSample?: number
  /** Compute the intervals (default true); false leaves them [NaN, NaN] when only p-values are wanted. */
  readonly intervals?: boolean
  /**
   * Rows that must differ between the two cells for the large-sample test (default
   * {@link largeSampleMinVarying}). A family of thousands of tests may lower it: its Holm
   * thresholds are beyond what any affordable number of random permutations can resolve.
   */
  readonly minVarying?: number
  /** Permutations of the refined tests (default: {@link permutationsFor} the number of testable tests). */
  readonly permutations?: number
  /** How the family's p-values are adjusted (default `holm`). */
  readonly correction?: Statistics.Correction
}

export interface Family {
  readonly comparisons: ReadonlyArray<Comparison>
  /** Adjusted p-values under {@link correction}, in test order. */
  readonly adjusted: ReadonlyArray<number>
  readonly correction: Statistics.Correction
  /** Tests with a p-value. */
  readonly tests: number
  /**
   * Permutations of the first pass and of the refined tests; tests refined; tests with an exact p;
   * tests in their large-sample form (n >= `largeSample`, of which `largeSample` is the threshold).
   */
  readonly permutations: {
    readonly screening: number
    readonly refined: number
    readonly refinedTests: number
    readonly exactTests: number
    readonly normalTests: number
    readonly largeSample?: number
  }
}

/** A test's outcome as far as a pass got, without its data. */
interface Pending {
  /** Final: a large-sample comparison or one without a test. */
  done?: Comparison
  n: number
  clusters: number | undefined
  observed: number
  flips: number
  ci95: readonly [number, number]
  result?: Resampling.TestResult
  extremes: number
}

/**
 * Run a family of paired tests with one seed and adjust them with its correction (default Holm).
 * Exact tests (small n) are enumerated once. Monte-Carlo tests first run {@link screening}
 * permutations; those that could still be significant after the correction (see {@link refineBelow}) continue the same patterns up to
 * `permutations`, so each comparison equals {@link compare} with the permutations it ended with.
 * Tests with as many rows that differ share their sign patterns (and tests of one n their resamples).
 */
export const family = (given: ReadonlyArray<Test>, options: FamilyOptions): Family => {
  const noInterval: readonly [number, number] = [NaN, NaN]
  const form = { interval: options.intervals !== false, minVarying: options.minVarying ?? Asymptotic.minVarying }
  // The screening pass's permutations do not depend on the family's size (permutationsFor is never below screening).
  const first = Math.min(screening, options.permutations ?? screening)
  const correction = options.correction ?? "holm"
  const prepared = given.map((t) => prepare(t.a, t.b, t.rows, t.clusters))
  const tests: Array<Pending> = []
  /** Run Monte-Carlo permutations [from, to) for some tests, those of as many rows that differ together. */
  const permute = (indices: ReadonlyArray<number>, from: number, to: number) => {
    const groups = new Map<number, { readonly indices: Array<number>; readonly specs: Array<Resampling.PairedSpec> }>()
    for (const i of indices) {
      const p = prepared[i]!
      if (p._tag !== "Spec") continue
      const g = groups.get(p.spec.flips) ?? { indices: [], specs: [] }
      g.indices.push(i)
      g.specs.push(p.spec)
      groups.set(p.spec.flips, g)
    }
    for (const g of groups.values()) {
      Resampling.monteCarloExtremes(g.specs, options.seed, from, to).forEach(
        (c, j) => (tests[g.indices[j]!]!.extremes += c)
      )
    }
  }
  const exactNow = (flips: number) => Resampling.exactFor(flips, options.permutations ?? 0)
  const screen: Array<number> = []
  prepared.forEach((p, i) => {
    if (p._tag === "None") {
      tests.push({
        done: p.comparison,
        n: p.comparison.n,
        clusters: p.comparison.clusters,
        observed: p.comparison.delta,
        flips: 0,
        ci95: noInterval,
        extremes: 0
      })
      return
    }
    const large = largeOf(p, options.largeSample, form)
    // (the rows that differ are found only for a test that resamples: a large-sample one never needs them)
    const t: Pending = {
      n: p.instances,
      clusters: p.clusters,
      observed: p.observed,
      flips: 0,
      ci95: noInterval,
      extremes: 0
    }
    tests.push(t)
    if (large !== undefined) {
      t.done = large
      return
    }
    t.flips = p.spec.flips
    t.ci95 = options.intervals === false ? noInterval : interval(p, options)
    if (exactNow(t.flips)) t.result = Resampling.exactTest(p.spec)
    else screen.push(i)
  })
  permute(screen, 0, first)
  for (const i of screen) tests[i]!.result = Resampling.monteCarloTest(tests[i]!.extremes, first)
  const testable = tests.filter((t) => t.done === undefined || t.done.n > 0).length
  const refined = options.permutations ?? permutationsFor(testable)
  // A family large enough for more permutations than 2^flips: those tests enumerate every pattern.
  tests.forEach((t, i) => {
    const p = prepared[i]!
    if (t.result?.test === "monte-carlo" && Resampling.exactFor(t.flips, refined) && p._tag === "Spec")
      t.result = Resampling.exactTest(p.spec)
  })
  const ranked = tests
    .map((t, i) => [t.result?.p ?? NaN, i] as const)
    .filter(([p]) => Number.isFinite(p))
    .sort((x, y) => x[0] - y[0] || x[1] - y[1])
  const refine: Array<number> = []
  if (refined > first) {
    const m = ranked.length
    const firstAdjusted = Statistics.adjust(
      correction,
      ranked.map(([p]) => p)
    )
    const multiplier = (rank: number) => (correction === "holm" ? m - rank : correction === "none" ? 1 : m)
    ranked.forEach(([p, i], rank) => {
      if (
        tests[i]!.result?.test === "monte-carlo" &&
        Math.min(multiplier(rank) * p, firstAdjusted[rank]!) < refineBelow
      )
        refine.push(i)
    })
  }
  refine.sort((x, y) => x - y)
  permute(refine, first, refined)
  for (const i of refine) tests[i]!.result = Resampling.monteCarloTest(tests[i]!.extremes, refined)
  const comparisons = tests.map(
    (t): Comparison =>
      t.done ?? {
        n: t.n,
        ...clustersOf(t),
        delta: t.observed,
        ci95: t.ci95,
        p: t.result!.p,
        test: t.result!.test,
        permutations: t.result!.permutations
      }
  )
  return {
    comparisons,
    adjusted: Statistics.adjust(
      correction,
      comparisons.map((c) => c.p)
    ),
    correction,
    tests: comparisons.filter((c) => Number.isFinite(c.p)).length,
    permutations: {
      screening: first,
      refined,
      refinedTests: refine.length,
      exactTests: tests.filter((t) => t.done === undefined && t.result?.test === "exact").length,
      normalTests: tests.filter((t) => t.done !== undefined && t.done.test === "normal").length,
      ...(options.largeSample !== undefined ? { largeSample: options.largeSample } : {})
    }
  }
}
