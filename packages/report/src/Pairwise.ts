/**
 * Every cell against every other, as IR toolkits compare runs: per headline metric and slice, a
 * paired test between every two cells (exact p up to 20 differing instances, else its normal
 * approximation; p-values only), Holm-corrected as one family, and the cells each cell beats.
 *
 * @example
 * const pw = Pairwise.compute(summary, idx, metrics)
 * pw.slices[0].beats.get("retrieval.recall")?.get(cellId) // [2, 5]: the numbers of the cells it beats
 */
import { Paired, type Statistics } from "@cupid-lab/scorers"
import { type ResultLine, Columns } from "@cupid-lab/results"

import * as Slices from "./Slices.js"

/** The level below which an adjusted p counts as significant. */
export const level = 0.05

/**
 * A slice where no difference can reach significance: its largest paired n (personas where
 * clustered), the n that could, and the family's multiplier of the smallest p.
 */
export interface TooSmall {
  readonly n: number
  readonly needed: number
  readonly tests: number
  readonly correction: Statistics.Correction
  readonly clustered?: boolean
}

export interface SliceResult {
  readonly slice: Slices.Slice
  /** metric name -> cell id -> numbers (1-based, in the run's cell order) of the cells it beats. */
  readonly beats: ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<number>>>
  readonly tooSmall: TooSmall | undefined
}

export interface Pairwise {
  /** Cell k is numbered k + 1. */
  readonly cells: ReadonlyArray<ResultLine.CellSummary>
  readonly metrics: ReadonlyArray<ResultLine.MetricDescription>
  readonly slices: ReadonlyArray<SliceResult>
  /** Tests with a p-value. */
  readonly tests: number
  readonly forms: { readonly exact: number; readonly normal: number; readonly monteCarlo: number }
}

/** The smallest n whose smallest exact p (2 / 2^n), times a family of `m` tests, is below {@link level}. */
export const neededN = (m: number): number => {
  let n = 1
  while (2 ** (1 - n) * m >= level) n++
  return n
}

/** Set when a family of `tests` over at most n paired instances can have no significant test. */
export const tooSmall = (
  n: number,
  tests: number,
  correction: Statistics.Correction = "holm"
): TooSmall | undefined => {
  const needed = neededN(tests)
  return tests > 0 && n <= Paired.exactUpTo && n < needed ? { n, needed, tests, correction } : undefined
}

/** How many of these instances both cells scored ok. */
const sharedCount = (
  ca: Columns.CellColumns | undefined,
  cb: Columns.CellColumns | undefined,
  numbers: Int32Array
): number =>
  ca === undefined || cb === undefined
    ? 0
    : numbers.reduce((n, k) => (ca.slot[k]! >= 0 && cb.slot[k]! >= 0 ? n + 1 : n), 0)

/** True when a difference (b - a) favours b in the metric's direction. */
export const better = (m: Pick<ResultLine.MetricDescription, "direction">, delta: number): boolean =>
  m.direction === "lower" ? delta < 0 : delta > 0

/** The index of the best finite value in the metric's direction (the first of equals), or -1. */
export const bestIndex = (
  values: ReadonlyArray<number | null | undefined>,
  m: Pick<ResultLine.MetricDescription, "direction">
): number =>
  values.reduce<number>((best, v, i) => {
    if (v === null || v === undefined || !Number.isFinite(v)) return best
    return best < 0 || better(m, v - values[best]!) ? i : best
  }, -1)

export const compute = (
  summary: ResultLine.Summary,
  idx: Columns.Index,
  metrics: ReadonlyArray<ResultLine.MetricDescription>,
  options: { readonly seed: number; readonly resamples: number; readonly permutations?: number }
): Pairwise => {
  const cells = summary.cells
  const slices = Slices.of(summary)
  const numbers = slices.map((slice) => Columns.sliceNumbers(idx, slice))
  // A cell's columns are NaN where it has no ok line: a test's usable rows are the instances both cells scored.
  const plan = cells.flatMap((ca, i) =>
    cells.slice(i + 1).flatMap((cb, d) =>
      slices.flatMap((slice, s) => {
        const n = sharedCount(idx.columns(ca.id), idx.columns(cb.id), numbers[s]!)
        const a = Columns.sliceOf(idx, ca.id, slice),
          b = Columns.sliceOf(idx, cb.id, slice)
        return metrics.map((metric) => ({ i, j: i + 1 + d, metric, slice, n, test: { a: a(metric), b: b(metric) } }))
      })
    )
  )
  const family = Paired.family(
    plan.map((t) => t.test),
    {
      ...options,
      // Beyond exact enumeration, the normal approximation: a family this size would need millions
      // of random permutations per test to resolve Holm's smallest thresholds.
      largeSample: Paired.exactUpTo + 1,
      minVarying: Paired.exactUpTo + 1,
      intervals: false
    }
  )
  const results = slices.map((slice): SliceResult => {
    const beats = new Map<string, Map<string, Array<number>>>(
      metrics.map((m) => [m.name, new Map(cells.map((c) => [c.id, []]))])
    )
    let maxN = 0
    plan.forEach((t, k) => {
      if (t.slice !== slice) return
      maxN = Math.max(maxN, t.n)
      const c = family.comparisons[k]!
      if (!(family.adjusted[k]! < level)) return
      // b - a is cell j minus cell i
      const [winner, loser] = better(t.metric, c.delta) ? [t.j, t.i] : [t.i, t.j]
      beats
        .get(t.metric.name)!
        .get(cells[winner]!.id)!
        .push(loser + 1)
    })
    for (const byCell of beats.values()) for (const list of byCell.values()) list.sort((x, y) => x - y)
    // No pair shares an instance here: there is no test to be too small for.
    return { slice, beats, tooSmall: maxN === 0 ? undefined : tooSmall(maxN, family.tests) }
  })
  const count = (form: Paired.Comparison["test"]) =>
    family.comparisons.filter((c) => Number.isFinite(c.p) && c.test === form).length
  return {
    cells,
    metrics,
    slices: results,
    tests: family.tests,
    forms: { exact: count("exact"), normal: count("normal"), monteCarlo: count("monte-carlo") }
  }
}
