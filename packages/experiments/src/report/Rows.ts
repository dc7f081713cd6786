/**
 * Result rows indexed for paired work: per cell, the rows scored ok by instance id; columns of a
 * score key over a fixed instance list (NaN where absent); the instances two cells share.
 *
 * @example
 * import * as Rows from "@cupid-lab/experiments/report/Rows"
 * const idx = Rows.index(run.rows)
 * const ids = Rows.sharedInstances(idx.ok.get(a), idx.ok.get(b), "all")
 * Rows.columnsOf(idx.ok.get(a), ids)(metric) // Paired.Columns of the metric
 */
import { Paired } from "@cupid-lab/scorers"
import type { MetricDescription, Slice } from "../ResultLine.js"
import type { Row } from "./RunDir.js"

/** Per-cell index of ok rows by instance, plus every row in file order. */
export interface Index {
  readonly ok: ReadonlyMap<string, ReadonlyMap<string, Row>>
  readonly rows: ReadonlyMap<string, ReadonlyArray<Row>>
  /** Instance ids in first-seen order, with their rows' meta (an instance property). */
  readonly instances: ReadonlyArray<Row>
}

export const index = (rows: ReadonlyArray<Row>): Index => {
  const ok = new Map<string, Map<string, Row>>()
  const byCell = new Map<string, Array<Row>>()
  const seen = new Map<string, Row>()
  let cell: string | undefined
  let list: Array<Row> = []
  let okOf: Map<string, Row> = new Map()
  for (const r of rows) {
    // Lines come grouped by cell: look the cell's containers up once per group.
    if (r.cell !== cell) {
      cell = r.cell
      list = byCell.get(cell) ?? []
      byCell.set(cell, list)
      okOf = ok.get(cell) ?? new Map<string, Row>()
      ok.set(cell, okOf)
    }
    list.push(r)
    if (!seen.has(r.instance)) seen.set(r.instance, r)
    if (r.status === "ok") okOf.set(r.instance, r)
  }
  return { ok, rows: byCell, instances: [...seen.values()] }
}

const number = (r: Row | undefined, metric: string): number => {
  const v = r?.scores[metric]
  return typeof v === "number" ? v : NaN
}

const counts = (rows: ReadonlyArray<Row | undefined>, metric: string): Paired.RatioColumns => {
  const num = new Float64Array(rows.length), den = new Float64Array(rows.length)
  rows.forEach((r, i) => {
    const v = r?.scores[metric]
    const c = v !== null && typeof v === "object" ? v : undefined
    num[i] = c?.num ?? NaN
    den[i] = c?.den ?? NaN
  })
  return { num, den }
}

/** A metric's per-instance data over a fixed instance list (NaN where absent), typed by its aggregate, for {@link Paired}. */
export const columnsOf = (
  rows: ReadonlyMap<string, Row> | undefined,
  instances: ReadonlyArray<string>
): ((metric: Pick<MetricDescription, "name" | "aggregate">) => Paired.Columns) => {
  const list = instances.map((id) => rows?.get(id))
  return (metric) => {
    const agg = metric.aggregate
    switch (agg._tag) {
      case "Mean":
        return Paired.mean(Float64Array.from(list, (r) => number(r, metric.name)))
      case "Ratio": {
        const c = counts(list, metric.name)
        return Paired.ratio(c.num, c.den)
      }
      case "F1":
        return Paired.f1(counts(list, agg.precision), counts(list, agg.recall))
    }
  }
}

/** Instances of `slice` scored ok in both cells, in the order of `a`. */
export const sharedInstances = (
  a: ReadonlyMap<string, Row> | undefined,
  b: ReadonlyMap<string, Row> | undefined,
  slice: Slice
): Array<string> => {
  if (a === undefined || b === undefined) return []
  const out: Array<string> = []
  for (const [id, r] of a) if ((slice === "all" || r.type === slice) && b.has(id)) out.push(id)
  return out
}
