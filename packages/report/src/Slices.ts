/**
 * The slices a report reads a run by: all instances, then each instance type the run has, in its
 * benchmark's order ({@link order}): CUPID's instance types, LongMemEval's question types, LoCoMo's
 * categories, PrefEval's preference forms. Never a type the run has no instance of.
 *
 * @example
 * Slices.of(summary) // ["all", "single-hop", "multi-hop", "temporal", "open-domain", "adversarial"] on LoCoMo
 * Slices.get(cell, "single-hop").metrics["retrieval.recall_any@5"]
 */
import { Domain } from "@cupid-lab/core"
import type { Columns, ResultLine } from "@cupid-lab/results"

/** `all`, or an instance type of the run. */
export type Slice = string

/**
 * Each benchmark's instance types in the order its reports list them: CUPID's as the paper does,
 * LongMemEval's as its README lists `question_type`, LoCoMo's in the order its authors' evaluation
 * code prints the categories (4, 1, 2, 3, 5), PrefEval's forms as its folders. A type of none of
 * these comes after them, in alphabetical order.
 */
export const order: Readonly<Record<"cupid" | "longmemeval" | "locomo" | "prefeval", ReadonlyArray<string>>> = {
  cupid: Domain.cupidTypes,
  longmemeval: [
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "temporal-reasoning",
    "knowledge-update",
    "multi-session"
  ],
  locomo: ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial"],
  prefeval: ["explicit", "implicit-choice", "implicit-persona"]
}

const known: ReadonlyArray<string> = Object.values(order).flat()

const rank = (t: string): number => {
  const i = known.indexOf(t)
  return i < 0 ? known.length : i
}

/** Instance types in report order (see {@link order}). */
export const sorted = (types: Iterable<string>): Array<string> =>
  [...new Set(types)].sort((x, y) => rank(x) - rank(y) || (x < y ? -1 : x > y ? 1 : 0))

const empty: ResultLine.SliceSummary = { n: 0, failed: 0, metrics: {} }

/** Whether summary.json keeps the slice under `slices` (all instances, CUPID's types) rather than `types`. */
const isCupidSlice = (s: Slice): s is ResultLine.Slice => s === "all" || Domain.isCupidType(s)

/** A cell's summary of one slice; empty when the cell has none. */
export const get = (c: Pick<ResultLine.CellSummary, "slices" | "types">, s: Slice): ResultLine.SliceSummary =>
  (isCupidSlice(s) ? c.slices[s] : c.types?.[s]) ?? empty

/** A cell's estimate of a metric on one slice, if it has one. */
export const estimate = (
  c: Pick<ResultLine.CellSummary, "slices" | "types">,
  s: Slice,
  metric: string
): ResultLine.MetricEstimate | undefined => get(c, s).metrics[metric]

const memo = new WeakMap<ReadonlyArray<ResultLine.CellSummary>, ReadonlyArray<Slice>>()

/** All instances, then every type some cell scored or failed an instance of, in report order. */
export const of = (summary: Pick<ResultLine.Summary, "cells">): ReadonlyArray<Slice> => {
  const cached = memo.get(summary.cells)
  if (cached !== undefined) return cached
  const types = summary.cells.flatMap((c) =>
    [...Domain.cupidTypes, ...Object.keys(c.types ?? {})].filter((t) => get(c, t).n + get(c, t).failed > 0)
  )
  const out = ["all", ...sorted(types)]
  memo.set(summary.cells, out)
  return out
}

/** The slices on which some cell has a value of the metric (all instances always). */
export const valued = (
  cells: ReadonlyArray<Pick<ResultLine.CellSummary, "slices" | "types">>,
  slices: ReadonlyArray<Slice>,
  metric: string
): Array<Slice> =>
  slices.filter((s) => s === "all" || cells.some((c) => Number.isFinite(estimate(c, s, metric)?.mean ?? NaN)))

/** `all instances`, `changing instances`, `single-hop instances`. */
export const title = (s: Slice): string => (s === "all" ? "all instances" : `${s} instances`)

/** Lists in words: `a`, `a and b`, `a, b and c`. */
export const words = (xs: ReadonlyArray<string>): string =>
  xs.length <= 2 ? xs.join(" and ") : `${xs.slice(0, -1).join(", ")} and ${xs[xs.length - 1]}`

/**
 * The instances scored ok in some cell that no cell has a value of a metric for, per slice, with why
 * by their benchmark's account (`abstention`, `adversarial`, `unlabelled`: questions without
 * evidence), else `no relevant session`, else `other`.
 */
export interface Unscored {
  readonly metric: string
  /** Instances scored ok in some cell, per slice. */
  readonly scored: ReadonlyMap<Slice, number>
  /** Of those, the ones without a value, per slice and reason (reasons in first-seen order). */
  readonly without: ReadonlyMap<Slice, ReadonlyMap<string, number>>
}

/** Whether some cell has a value of the metric on instance k: a finite mean, or counts with a positive denominator. */
export const valuedAt = (
  idx: Columns.Index,
  cells: ReadonlyArray<Pick<ResultLine.CellSummary, "id">>,
  metric: Pick<ResultLine.MetricDescription, "name" | "aggregate">
): ((k: number) => boolean) => {
  const agg = metric.aggregate
  const parts =
    agg._tag === "Mean"
      ? [{ name: metric.name, part: "values" as const }]
      : agg._tag === "Ratio"
        ? [{ name: metric.name, part: "den" as const }]
        : [
            { name: agg.precision, part: "den" as const },
            { name: agg.recall, part: "den" as const }
          ]
  const columns = cells.flatMap((c) => {
    const cc = idx.columns(c.id)
    return cc === undefined ? [] : parts.map((p) => ({ slot: cc.slot, xs: cc.metric(p.name)[p.part], part: p.part }))
  })
  return (k) => columns.some((c) => c.slot[k]! >= 0 && (c.part === "values" ? Number.isFinite(c.xs[k]!) : c.xs[k]! > 0))
}

export const unscored = (
  idx: Columns.Index,
  cells: ReadonlyArray<Pick<ResultLine.CellSummary, "id">>,
  metric: Pick<ResultLine.MetricDescription, "name" | "aggregate">,
  slices: ReadonlyArray<Slice>
): Unscored => {
  const has = valuedAt(idx, cells, metric)
  const ok = cells.flatMap((c) => {
    const cc = idx.columns(c.id)
    return cc === undefined ? [] : [cc.slot]
  })
  const scored = new Map<Slice, number>(slices.map((s) => [s, 0]))
  const without = new Map<Slice, Map<string, number>>(slices.map((s) => [s, new Map()]))
  idx.instances.forEach((f, k) => {
    if (!ok.some((slot) => slot[k]! >= 0)) return
    const reason = f.meta.withoutEvidence ?? (f.meta.relevant.length === 0 ? "no relevant session" : "other")
    const valued = has(k)
    for (const s of ["all", f.type]) {
      const n = scored.get(s)
      if (n === undefined) continue
      scored.set(s, n + 1)
      if (!valued) without.get(s)!.set(reason, (without.get(s)!.get(reason) ?? 0) + 1)
    }
  })
  return { metric: metric.name, scored, without }
}
