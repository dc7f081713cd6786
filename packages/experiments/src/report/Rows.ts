/**
 * Result rows indexed for paired work: per cell, the rows scored ok by instance id; columns of a
 * score key over a fixed instance list (NaN where absent); the instances two cells share.
 *
 * @example
 * import * as Rows from "@cupid-lab/experiments/report/Rows"
 * const idx = Rows.index(run.rows)
 * const ids = Rows.sharedInstances(idx.ok.get(a), idx.ok.get(b), "all")
 * Rows.columnsOf(idx.ok.get(a), ids)("retrieval.recall") // number[]
 */
import type * as Paired from "../compare/Paired.js"
import type { Slice } from "../ResultLine.js"
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
  for (const r of rows) {
    const list = byCell.get(r.cell) ?? []
    list.push(r)
    byCell.set(r.cell, list)
    if (!seen.has(r.instance)) seen.set(r.instance, r)
    if (r.status !== "ok") continue
    const m = ok.get(r.cell) ?? new Map<string, Row>()
    m.set(r.instance, r)
    ok.set(r.cell, m)
  }
  return { ok, rows: byCell, instances: [...seen.values()] }
}

/** One number of a row's score: a Mean's value, a Ratio's numerator or denominator (NaN when absent). */
export const score = (r: Row | undefined, key: Paired.Key): number => {
  const v = r?.scores[key.metric]
  if (v === null || v === undefined) return NaN
  if (typeof v === "number") return key.part === "value" ? v : NaN
  return key.part === "num" ? v.num : key.part === "den" ? v.den : NaN
}

/** Columns over a fixed instance list, for {@link Paired}. */
export const columnsOf = (rows: ReadonlyMap<string, Row> | undefined, instances: ReadonlyArray<string>): Paired.Columns => {
  const memo = new Map<string, Array<number>>()
  return (key) => {
    const id = `${key.part} ${key.metric}`
    let c = memo.get(id)
    if (c === undefined) {
      c = instances.map((i) => score(rows?.get(i), key))
      memo.set(id, c)
    }
    return c
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
