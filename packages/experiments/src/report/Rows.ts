/**
 * Result rows indexed for paired work: per cell, the rows scored ok by instance id; columns of a
 * score key over a fixed instance list (NaN where absent); the instances two cells share.
 *
 * @example
 * import * as Rows from "@cupid-lab/experiments/report/Rows"
 * const idx = Rows.index(run.rows)
 * const ids = Rows.sharedInstances(idx, a, b, "all") // instance numbers
 * Rows.columnsOf(idx, a, ids)(metric) // Paired.Columns of the metric
 */
import { Paired } from "@cupid-lab/scorers"
import type { MetricDescription, Slice } from "../ResultLine.js"
import type { Row } from "./RunDir.js"

/** One metric of one cell as typed columns over the cell's ok rows (in the order of `Index.ok`). */
interface MetricColumns {
  readonly values: Float64Array
  readonly num: Float64Array
  readonly den: Float64Array
}

/** A cell's ok rows as columns: each instance's row (by instance number, -1 when none), and each metric's columns, built once when first asked for. */
interface CellColumns {
  readonly slot: Int32Array
  readonly metric: (name: string) => MetricColumns
}

/** Per-cell index of ok rows by instance, plus every row in file order. */
export interface Index {
  readonly ok: ReadonlyMap<string, ReadonlyMap<string, Row>>
  readonly rows: ReadonlyMap<string, ReadonlyArray<Row>>
  /** Instance ids in first-seen order, with their rows' meta (an instance property). */
  readonly instances: ReadonlyArray<Row>
  /** Each instance's number: its position in {@link instances}. */
  readonly number: ReadonlyMap<string, number>
  /** The cell's ok rows as columns (undefined for a cell without rows). */
  readonly columns: (cell: string) => CellColumns | undefined
}

const metricColumns = (rows: ReadonlyArray<Row>, name: string): MetricColumns => {
  const values = new Float64Array(rows.length), num = new Float64Array(rows.length), den = new Float64Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const v = rows[i]!.scores[name]
    if (typeof v === "number") {
      values[i] = v
      num[i] = NaN
      den[i] = NaN
    } else {
      values[i] = NaN
      num[i] = v?.num ?? NaN
      den[i] = v?.den ?? NaN
    }
  }
  return { values, num, den }
}

const cellColumns = (okRows: ReadonlyMap<string, Row>, number: ReadonlyMap<string, number>): CellColumns => {
  const rows = [...okRows.values()]
  const slot = new Int32Array(number.size).fill(-1)
  rows.forEach((r, i) => (slot[number.get(r.instance)!] = i))
  const byMetric = new Map<string, MetricColumns>()
  return {
    slot,
    metric: (name) => {
      let m = byMetric.get(name)
      if (m === undefined) byMetric.set(name, (m = metricColumns(rows, name)))
      return m
    }
  }
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
  const columns = new Map<string, CellColumns>()
  const instances = [...seen.values()]
  const number = new Map<string, number>()
  instances.forEach((r, i) => number.set(r.instance, i))
  return {
    ok,
    rows: byCell,
    instances,
    number,
    columns: (id) => {
      let c = columns.get(id)
      if (c === undefined) {
        const okRows = ok.get(id)
        if (okRows === undefined) return undefined
        columns.set(id, (c = cellColumns(okRows, number)))
      }
      return c
    }
  }
}

/** The numbers of instance ids in an index (-1 for an id it does not hold). */
export const numbers = (idx: Index, ids: ReadonlyArray<string>): Int32Array => Int32Array.from(ids, (id) => idx.number.get(id) ?? -1)

const gather = (from: Float64Array, at: Int32Array): Float64Array => {
  const out = new Float64Array(at.length)
  for (let i = 0; i < at.length; i++) out[i] = at[i]! < 0 ? NaN : from[at[i]!]!
  return out
}

/**
 * A metric's per-instance data for one cell over a fixed list of instance numbers (see
 * {@link numbers}; NaN where the cell has no ok row), typed by its aggregate, for {@link Paired}.
 * The rows are looked up once; each metric is then gathered from the cell's columns.
 */
export const columnsOf = (
  idx: Index,
  cell: string,
  instances: ArrayLike<number>
): ((metric: Pick<MetricDescription, "name" | "aggregate">) => Paired.Columns) => {
  const c = idx.columns(cell)
  const at = new Int32Array(instances.length)
  for (let i = 0; i < at.length; i++) {
    const k = instances[i]!
    at[i] = c === undefined || k < 0 ? -1 : c.slot[k]!
  }
  const column = (name: string): MetricColumns => c?.metric(name) ?? { values: new Float64Array(0), num: new Float64Array(0), den: new Float64Array(0) }
  const counts = (name: string): Paired.RatioColumns => {
    const m = column(name)
    return { num: gather(m.num, at), den: gather(m.den, at) }
  }
  return (metric) => {
    const agg = metric.aggregate
    switch (agg._tag) {
      case "Mean":
        return Paired.mean(gather(column(metric.name).values, at))
      case "Ratio": {
        const r = counts(metric.name)
        return Paired.ratio(r.num, r.den)
      }
      case "F1":
        return Paired.f1(counts(agg.precision), counts(agg.recall))
    }
  }
}

/** Numbers of the instances of `slice` scored ok in both cells, in the index's instance order. */
export const sharedInstances = (idx: Index, a: string, b: string, slice: Slice): Int32Array => {
  const ca = idx.columns(a), cb = idx.columns(b)
  if (ca === undefined || cb === undefined) return new Int32Array(0)
  const out = new Int32Array(idx.instances.length)
  let n = 0
  for (let k = 0; k < idx.instances.length; k++) {
    if (ca.slot[k]! >= 0 && cb.slot[k]! >= 0 && (slice === "all" || idx.instances[k]!.type === slice)) out[n++] = k
  }
  return out.slice(0, n)
}

/** Ids of the instances of `slice` scored ok in both cells, in the order of `a` (cells of two runs). */
export const sharedIds = (
  a: ReadonlyMap<string, Row> | undefined,
  b: ReadonlyMap<string, Row> | undefined,
  slice: Slice
): Array<string> => {
  if (a === undefined || b === undefined) return []
  const out: Array<string> = []
  for (const [id, r] of a) if ((slice === "all" || r.type === slice) && b.has(id)) out.push(id)
  return out
}
