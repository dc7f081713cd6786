/**
 * A paired comparison reduced to its spec before any resampling or permutation (Paired's engine):
 * the usable rows of both cells as compact columns, grouped by cluster when clusters are given, the
 * observed difference, its large-sample forms and its delta-method standard error.
 */
import type { Columns, Comparison } from "../Paired.js"
import * as Statistics from "../Statistics.js"
import * as Asymptotic from "./Asymptotic.js"
import * as Clustered from "./Clustered.js"
import * as Resampling from "./Resampling.js"

/** The raw columns a metric reads, and its value from their sums over n rows. */
interface Shape {
  readonly columns: ReadonlyArray<ArrayLike<number>>
  readonly statistic: (sums: ArrayLike<number>, n: number) => number
}

export const shape = (c: Columns): Shape => {
  switch (c._tag) {
    case "Mean":
      return { columns: [c.values], statistic: (s, n) => s[0]! / n }
    case "Ratio":
      return { columns: [c.num, c.den], statistic: (s) => Statistics.ratio(s[0]!, s[1]!) }
    case "F1":
      return {
        columns: [c.precision.num, c.precision.den, c.recall.num, c.recall.den],
        statistic: (s) => Statistics.f1(Statistics.ratio(s[0]!, s[1]!), Statistics.ratio(s[2]!, s[3]!))
      }
  }
}

export const sum = (x: Float64Array): number => {
  let s = 0
  for (let i = 0; i < x.length; i++) s += x[i]!
  return s
}

/** A comparison reduced to its paired spec, before any resampling or permutation. */
export type Prepared =
  | { readonly _tag: "None"; readonly comparison: Comparison }
  | {
      readonly _tag: "Spec"
      readonly spec: Resampling.PairedSpec
      readonly observed: number
      /** Usable rows (spec.n counts clusters when clustered). */
      readonly instances: number
      readonly clusters: number | undefined
      /** The delta-method standard error of the difference (cluster-level when clustered). */
      readonly se: () => number
      /** The large-sample interval and p, when they apply (see internal/Asymptotic.ts). */
      readonly normal: (
        form: NormalForm
      ) => { readonly ci95: readonly [number, number]; readonly p: number } | undefined
    }

export const smoothOf = (tag: Columns["_tag"]): Asymptotic.Smooth =>
  tag === "Mean" ? Asymptotic.mean : tag === "Ratio" ? Asymptotic.ratio : Asymptotic.f1

/** What the large-sample form must provide: an interval or not, and how many rows must differ. */
export interface NormalForm {
  readonly interval: boolean
  readonly minVarying: number
}

/** The large-sample interval and p of b - a over compact columns (a's k columns, then b's). */
const normalOf =
  (
    tag: Columns["_tag"],
    xs: ReadonlyArray<Float64Array>,
    totals: ReadonlyArray<number>,
    flipped: ReadonlyArray<Float64Array>,
    observed: number,
    n: number
  ) =>
  (form: NormalForm) => {
    const k = flipped.length
    const statistic = smoothOf(tag)
    const noInterval: readonly [number, number] = [NaN, NaN]
    const ci95 = !form.interval
      ? noInterval
      : n < 2
        ? undefined
        : Asymptotic.pairedInterval(statistic, xs.slice(0, k), xs.slice(k), totals.slice(0, k), totals.slice(k), n)
    const p = Asymptotic.swapTest(statistic, flipped, totals, observed, n, form.minVarying)
    return ci95 === undefined || p === undefined ? undefined : { ci95, p }
  }

/**
 * The two cells' columns summed per cluster, as pooled columns over clusters; undefined when no
 * cluster has more than one usable row (then the rows are the clusters).
 */
const byCluster = (a: Columns, b: Columns, rows: ArrayLike<number> | undefined, clusters: ArrayLike<number>) => {
  const g = Clustered.group([...shape(a).columns, ...shape(b).columns], rows, clusters)
  if (g.largest < 2) return undefined
  const s = g.sums
  const pair = ((): readonly [Columns, Columns] => {
    switch (a._tag) {
      case "Mean":
        return [
          { _tag: "Ratio", num: s[0]!, den: g.counts },
          { _tag: "Ratio", num: s[1]!, den: g.counts }
        ]
      case "Ratio":
        return [
          { _tag: "Ratio", num: s[0]!, den: s[1]! },
          { _tag: "Ratio", num: s[2]!, den: s[3]! }
        ]
      case "F1":
        return [
          { _tag: "F1", precision: { num: s[0]!, den: s[1]! }, recall: { num: s[2]!, den: s[3]! } },
          { _tag: "F1", precision: { num: s[4]!, den: s[5]! }, recall: { num: s[6]!, den: s[7]! } }
        ]
    }
  })()
  return { a: pair[0], b: pair[1], rows: g.rows, clusters: g.counts.length }
}

/** The delta-method standard error of b - a over compact columns (a's k columns, then b's). */
const seOf =
  (tag: Columns["_tag"], xs: ReadonlyArray<Float64Array>, totals: ReadonlyArray<number>, n: number) => (): number => {
    const k = xs.length / 2
    return Asymptotic.pairedStandardError(
      smoothOf(tag),
      xs.slice(0, k),
      xs.slice(k),
      totals.slice(0, k),
      totals.slice(k),
      n
    )
  }

export const prepare = (a: Columns, b: Columns, rows?: ArrayLike<number>, clusters?: ArrayLike<number>): Prepared => {
  if (a._tag !== b._tag) throw new TypeError(`Paired: cannot compare ${a._tag} columns with ${b._tag} columns`)
  const grouped = clusters === undefined ? undefined : byCluster(a, b, rows, clusters)
  if (grouped === undefined) return prepareRows(a, b, rows)
  const p = prepareRows(grouped.a, grouped.b)
  return p._tag === "None"
    ? { _tag: "None", comparison: { ...p.comparison, n: grouped.rows, clusters: grouped.clusters } }
    : { ...p, instances: grouped.rows, clusters: grouped.clusters }
}

const prepareRows = (a: Columns, b: Columns, rows?: ArrayLike<number>): Prepared => {
  const sa = shape(a),
    sb = shape(b)
  const k = sa.columns.length
  const xs = Resampling.finiteRows([...sa.columns, ...sb.columns], rows)
  const n = xs[0]!.length
  const none = (delta: number): Prepared => ({
    _tag: "None",
    comparison: { n, delta, ci95: [NaN, NaN], p: NaN, test: "none", permutations: 0 }
  })
  if (n === 0) return none(NaN)
  const totals = xs.map(sum)
  if (a._tag === "Mean") {
    const x0 = xs[0]!,
      x1 = xs[1]!,
      d = new Float64Array(n)
    for (let i = 0; i < n; i++) d[i] = x1[i]! - x0[i]!
    const m = Resampling.meanSpec(d)
    return {
      _tag: "Spec",
      ...m,
      instances: n,
      clusters: undefined,
      se: seOf(a._tag, xs, totals, n),
      normal: normalOf(a._tag, xs, totals, [d], m.observed, n)
    }
  }
  const observed = sb.statistic(totals.slice(k), n) - sa.statistic(totals.slice(0, k), n)
  if (!Number.isFinite(observed)) return none(observed)
  const threshold = Math.abs(observed) - Resampling.tolerance
  const left = new Float64Array(k),
    right = new Float64Array(k)
  const flipped = xs.slice(0, k).map((x, c) => {
    const y = xs[k + c]!,
      d = new Float64Array(n)
    for (let i = 0; i < n; i++) d[i] = y[i]! - x[i]!
    return d
  })
  const varying = Resampling.varyingOnce(flipped)
  return {
    _tag: "Spec",
    observed,
    instances: n,
    clusters: undefined,
    se: seOf(a._tag, xs, totals, n),
    normal: normalOf(a._tag, xs, totals, flipped, observed, n),
    spec: {
      n,
      columns: xs,
      resampled: (sums) => {
        for (let c = 0; c < k; c++) {
          left[c] = sums[c]!
          right[c] = sums[k + c]!
        }
        return sb.statistic(right, n) - sa.statistic(left, n)
      },
      get flipped() {
        return varying().flipped
      },
      get flips() {
        return varying().flips
      },
      // A flipped row swaps the two cells' counts: a gains b - a of that row, b loses it.
      isExtreme: (moved) => {
        for (let c = 0; c < k; c++) {
          left[c] = totals[c]! + moved[c]!
          right[c] = totals[k + c]! - moved[c]!
        }
        return Math.abs(sb.statistic(right, n) - sa.statistic(left, n)) >= threshold
      }
    }
  }
}

export const interval = (
  p: Prepared & { readonly _tag: "Spec" },
  options: { readonly seed: number; readonly resamples: number }
): readonly [number, number] =>
  // One row (or one cluster) has no interval.
  p.spec.n < 2 ? [NaN, NaN] : Resampling.bootstrapInterval(p.spec, options.seed, options.resamples)

/** `clusters` of a clustered comparison, nothing otherwise. */
export const clustersOf = (p: { readonly clusters: number | undefined }) =>
  p.clusters === undefined ? {} : { clusters: p.clusters }
