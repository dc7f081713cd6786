/**
 * A metric by the mean position of the relevant sessions (fixed-width bins, the paper's recency
 * analysis) and by history length (equal-size bins of approximate tokens), aggregated as everywhere.
 *
 * @example
 * Bins.recency(metric, summary.cells, Columns.index(run.rows))?.bins.map((b) => b.label) // ["1–<3", ...]
 */
import { Paired } from "@cupid-lab/scorers"
import { type ResultLine, Columns } from "@cupid-lab/results"

import * as Slices from "./Slices.js"

export interface Bin {
  readonly label: string
  readonly instances: number
  /** Per cell id. */
  readonly values: ReadonlyMap<string, { readonly n: number; readonly value: number }>
}

export interface Binned {
  readonly metric: ResultLine.MetricDescription
  readonly by: "relevant position" | "history tokens"
  readonly bins: ReadonlyArray<Bin>
}

/** Fixed-width bins over positions 1..sessions (width about a quarter of the history, at least 1). */
const positionBins = (maxSessions: number) => {
  const width = Math.max(1, Math.round(maxSessions / 4))
  return Array.from({ length: Math.ceil(maxSessions / width) }, (_, i) => {
    const lo = 1 + i * width,
      hi = lo + width,
      last = hi > maxSessions
    return { lo, hi: last ? maxSessions + 1e-9 : hi, label: last ? `${lo}–${maxSessions}` : `${lo}–<${hi}` }
  })
}

const binned = (
  metric: ResultLine.MetricDescription,
  by: Binned["by"],
  groups: ReadonlyArray<{ readonly label: string; readonly ids: ArrayLike<number> }>,
  cells: ReadonlyArray<ResultLine.CellSummary>,
  idx: Columns.Index
): Binned => {
  // over every instance, in the index's order: a bin's instance numbers are its rows
  const columns = cells.map((c) => [c.id, Columns.sliceOf(idx, c.id, "all")(metric)] as const)
  const bins = groups
    .filter((g) => g.ids.length > 0)
    .map((g) => ({
      label: g.label,
      instances: g.ids.length,
      values: new Map(columns.map(([id, column]) => [id, Paired.value(column, g.ids)]))
    }))
  return { metric, by, bins }
}

export const recency = (
  metric: ResultLine.MetricDescription,
  cells: ReadonlyArray<ResultLine.CellSummary>,
  idx: Columns.Index
): Binned | undefined => {
  const withPos = idx.instances.map((r, k) => [r, k] as const).filter(([r]) => r.meta.relevantMeanPosition !== null)
  if (withPos.length === 0) return undefined
  const maxSessions = Math.max(...idx.instances.map((r) => r.meta.sessions))
  const groups = positionBins(maxSessions).map((b) => ({
    ...b,
    ids: withPos
      .filter(([r]) => r.meta.relevantMeanPosition! >= b.lo && r.meta.relevantMeanPosition! < b.hi)
      .map(([, k]) => k)
  }))
  return binned(metric, "relevant position", groups, cells, idx)
}

/**
 * Equal-size bins (by rank of history tokens, ties broken by instance id) of the instances some cell
 * has a value of the metric on (not the questions without evidence, for a retrieval metric):
 * quartiles when there are enough instances.
 */
export const history = (
  metric: ResultLine.MetricDescription,
  cells: ReadonlyArray<ResultLine.CellSummary>,
  idx: Columns.Index
): Binned | undefined => {
  const valued = Slices.valuedAt(idx, cells, metric)
  const sorted = idx.instances
    .filter((_, k) => valued(k))
    .sort(
      (a, b) =>
        a.meta.historyTokens - b.meta.historyTokens || (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0)
    )
  if (sorted.length === 0) return undefined
  const k = Math.min(4, sorted.length)
  const groups = Array.from({ length: k }, (_, i) => {
    const part = sorted.slice(Math.floor((i * sorted.length) / k), Math.floor(((i + 1) * sorted.length) / k))
    return {
      label: `${part[0]!.meta.historyTokens}–${part[part.length - 1]!.meta.historyTokens}`,
      ids: Columns.numbers(
        idx,
        part.map((r) => r.instance)
      )
    }
  })
  return binned(metric, "history tokens", groups, cells, idx)
}
