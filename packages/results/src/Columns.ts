/**
 * A run's result lines in memory, as reports read them: per cell, its ok lines as typed columns
 * over instance numbers (one `Float64Array` per metric), and the totals reports show (usage per
 * cell and model, failures, the example lines). Built once from the lines in final order.
 *
 * @example
 * Columns.sliceOf(Columns.index(rows), cellId, "all")(metric) // Paired.Columns of the metric over every instance
 */
import { Paired } from "@cupid-lab/scorers"
import { Hash } from "@cupid-lab/core"

import { Predicate, type Types } from "effect"
import type { MetricDescription, Row } from "./ResultLine.js"

/** `all`, or an instance type (CUPID's, or another benchmark's). */
type Slice = string

/** One metric of one cell over instance numbers (NaN where the cell has no ok line, or the line no such score). */
interface MetricColumns {
  readonly values: Float64Array
  readonly num: Float64Array
  readonly den: Float64Array
}

/** A cell's ok lines: each instance's position among them (-1 when none), each line's instance number, each metric's columns. */
export interface CellColumns {
  readonly slot: Int32Array
  readonly instances: Int32Array
  readonly metric: (name: string) => MetricColumns
  /** A copy derived from the columns, made once and kept with them. */
  readonly kept: (key: string, make: () => Float64Array) => Float64Array
}

/** What reports know of an instance: the facts of its first line. */
export type InstanceFacts = Pick<Row, "instance" | "personaId" | "type" | "meta">

export interface CellUsage {
  /** Lines of the cell (scored and failed). */
  readonly pairs: number
  readonly calls: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** Of the above, what the scorers spent (stage `score`). */
  readonly scoringCalls: number
  readonly scoringTokens: number
}

/** A failed line and its number (0-based). */
export type Failure = Pick<Row, "cell" | "cellName" | "instance" | "error"> & { readonly line: number }

type Counts = { calls: number; promptTokens: number; completionTokens: number }

export interface Index {
  /** Instances in first-seen order; an instance's number is its position here. */
  readonly instances: ReadonlyArray<InstanceFacts>
  readonly number: ReadonlyMap<string, number>
  /** The cell's ok lines as columns (undefined for a cell without lines). */
  readonly columns: (cell: string) => CellColumns | undefined
  readonly usage: ReadonlyMap<string, CellUsage>
  /** Per `provider/model`: calls and tokens over every line. */
  readonly models: ReadonlyMap<string, Readonly<Counts>>
  /** Failed lines, in file order. */
  readonly failures: ReadonlyArray<Failure>
  /** Whole lines of the first instance of each type (file order), by instance then cell. */
  readonly exampleRows: ReadonlyMap<string, ReadonlyMap<string, Row>>
  /** Every line, in file order: what results.csv and results.parquet hold. */
  readonly table: ReadonlyArray<Row>
  /** The score keys of the ok lines, each with whether its first ok line scored it with counts (see Summary.of). */
  readonly okScoreKinds: ReadonlyMap<string, boolean>
  /** Per cell, per metric a scorer judged more than once: each ok line's repeats (null as NaN), in file order. */
  readonly repeats: ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<ReadonlyArray<number>>>>
}

const entry = <K, V>(map: { get(key: K): V | undefined; set(key: K, value: V): unknown }, key: K, make: () => V): V => {
  let v = map.get(key)
  if (v === undefined) map.set(key, (v = make()))
  return v
}

const nans = (n: number) => new Float64Array(n).fill(NaN)

/** Why the lines cannot be one run's (a cell with two lines for an instance), or undefined. */
export const problem = (rows: ReadonlyArray<Row>): string | undefined => {
  const seen = new Set<string>()
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!
    const key = `${r.cell}\u0000${r.instance}`
    if (seen.has(key))
      return `line ${i + 1} is a second line of cell "${r.cellName}" for instance "${r.instance}"; a run has one line per cell and instance`
    seen.add(key)
  }
  return undefined
}

/** The index of lines in file order (call {@link problem} first on lines that may repeat a pair). */
export const index = (rows: ReadonlyArray<Row>): Index => {
  const instances: Array<InstanceFacts> = []
  const number = new Map<string, number>()
  const cellLines = new Map<string, Array<number>>()
  const usage = new Map<string, Types.Mutable<CellUsage>>()
  const models = new Map<string, Counts>()
  const failures: Array<Failure> = []
  const exampleRows = new Map<string, Map<string, Row>>()
  const exampleTypes = new Set<string>()
  const okScoreKinds = new Map<string, boolean>()
  const repeats = new Map<string, Map<string, Array<ReadonlyArray<number>>>>()
  rows.forEach((r, line) => {
    if (!number.has(r.instance)) {
      number.set(r.instance, instances.length)
      instances.push({ instance: r.instance, personaId: r.personaId, type: r.type, meta: r.meta })
      if (!exampleTypes.has(r.type)) {
        exampleTypes.add(r.type)
        exampleRows.set(r.instance, new Map())
      }
    }
    exampleRows.get(r.instance)?.set(r.cell, r)
    const of = entry(cellLines, r.cell, () => [])
    const u = r.usage,
      s = u.byStage["score"]
    const cell = entry(usage, r.cell, () => ({
      pairs: 0,
      calls: 0,
      promptTokens: 0,
      completionTokens: 0,
      scoringCalls: 0,
      scoringTokens: 0
    }))
    cell.pairs++
    cell.calls += u.calls - (s?.calls ?? 0)
    cell.promptTokens += u.promptTokens - (s?.promptTokens ?? 0)
    cell.completionTokens += u.completionTokens - (s?.completionTokens ?? 0)
    cell.scoringCalls += s?.calls ?? 0
    cell.scoringTokens += (s?.promptTokens ?? 0) + (s?.completionTokens ?? 0)
    for (const id in u.byModel) {
      const m = u.byModel[id]!
      const t = entry(models, id, () => ({ calls: 0, promptTokens: 0, completionTokens: 0 }))
      t.calls += m.calls
      t.promptTokens += m.promptTokens
      t.completionTokens += m.completionTokens
    }
    if (r.status !== "ok") {
      failures.push({ line, cell: r.cell, cellName: r.cellName, instance: r.instance, error: r.error })
      return
    }
    of.push(line)
    for (const key in r.scores) {
      const v = r.scores[key]
      if (!okScoreKinds.has(key)) okScoreKinds.set(key, v !== null && typeof v === "object")
    }
    if (r.repeats !== undefined) {
      const byMetric = entry(repeats, r.cell, () => new Map())
      for (const m in r.repeats) entry(byMetric, m, () => []).push(r.repeats[m]!.map((v) => v ?? NaN))
    }
  })
  const columns = new Map<string, CellColumns>()
  for (const [id, of] of cellLines) columns.set(id, cellColumns(rows, of, number))
  return {
    instances,
    number,
    columns: (id) => columns.get(id),
    usage,
    models,
    failures,
    exampleRows,
    table: rows,
    okScoreKinds,
    repeats
  }
}

/** One cell's ok lines (`of`, line numbers into `rows`) as columns over instance numbers; a metric's columns are made when first asked for. */
const cellColumns = (
  rows: ReadonlyArray<Row>,
  of: ReadonlyArray<number>,
  number: ReadonlyMap<string, number>
): CellColumns => {
  const count = number.size
  const instances = Int32Array.from(of, (line) => number.get(rows[line]!.instance)!)
  const slot = new Int32Array(count).fill(-1)
  for (let k = 0; k < instances.length; k++) slot[instances[k]!] = k
  const metrics = new Map<string, MetricColumns>()
  const copies = new Map<string, Float64Array>()
  return {
    slot,
    instances,
    metric: (name) =>
      entry(metrics, name, () => {
        const values = nans(count),
          num = nans(count),
          den = nans(count)
        of.forEach((line, k) => {
          const v = rows[line]!.scores[name]
          if (typeof v === "number") values[instances[k]!] = v
          else if (v !== null && v !== undefined) {
            num[instances[k]!] = v.num
            den[instances[k]!] = v.den
          }
        })
        return { values, num, den }
      }),
    kept: (key, make) => entry(copies, key, make)
  }
}

/** The numbers of instance ids in an index (-1 for an id it does not hold). */
export const numbers = (idx: Index, ids: ReadonlyArray<string>): Int32Array =>
  Int32Array.from(ids, (id) => idx.number.get(id) ?? -1)

const gather = (from: Float64Array, at: ArrayLike<number>): Float64Array =>
  Float64Array.from(at, (i) => (i < 0 ? NaN : from[i]!))

type Metric = Pick<MetricDescription, "name" | "aggregate">

/** A metric's data typed by its aggregate, for {@link Paired}, from `part(score key, part)`. */
const typed =
  (part: (name: string, p: keyof MetricColumns) => Float64Array) =>
  (metric: Metric): Paired.Columns => {
    const counts = (name: string) => ({ num: part(name, "num"), den: part(name, "den") })
    const agg = metric.aggregate
    switch (agg._tag) {
      case "Mean":
        return Paired.mean(part(metric.name, "values"))
      case "Ratio":
        return Paired.ratio(part(metric.name, "num"), part(metric.name, "den"))
      case "F1":
        return Paired.f1(counts(agg.precision), counts(agg.recall))
    }
  }

/**
 * A metric's data for one cell over a list of instance numbers (see {@link numbers}; NaN where
 * the cell has no ok line), for {@link Paired}: copies aligned with the list (two runs' instance
 * numbers differ).
 */
export const columnsOf = (
  idx: Index,
  cell: string,
  instances: ArrayLike<number>
): ((metric: Metric) => Paired.Columns) => {
  const c = idx.columns(cell)
  return typed((name, p) => (c === undefined ? nans(instances.length) : gather(c.metric(name)[p], instances)))
}

const sliceMemo = new WeakMap<Index, Map<Slice, Int32Array>>()

/** The numbers of the instances of a slice, in the index's order (computed once per index and slice). */
export const sliceNumbers = (idx: Index, slice: Slice): Int32Array =>
  entry(
    entry(sliceMemo, idx, () => new Map()),
    slice,
    () => Int32Array.from(idx.instances.flatMap((f, k) => (slice === "all" || f.type === slice ? [k] : [])))
  )

/**
 * A metric's data for one cell over every instance of a slice (see {@link columnsOf}): the same
 * rows for every cell, so two cells' are paired as they are. Kept with the cell's columns, so
 * comparing a cell with every other copies them once.
 */
export const sliceOf = (idx: Index, cell: string, slice: Slice): ((metric: Metric) => Paired.Columns) => {
  const at = sliceNumbers(idx, slice)
  const c = idx.columns(cell)
  if (c === undefined) return columnsOf(idx, cell, at)
  return typed((name, p) => c.kept(`${slice}\u0000${name}\u0000${p}`, () => gather(c.metric(name)[p], at)))
}

/** Ids of the instances of `slice` that cell `a` of one index and cell `b` of another both scored ok, in the order of `a`'s index. */
export const sharedIds = (ia: Index, a: string, ib: Index, b: string, slice: Slice): Array<string> => {
  const ca = ia.columns(a),
    cb = ib.columns(b)
  if (ca === undefined || cb === undefined) return []
  return ia.instances.flatMap((facts, k) => {
    if (ca.slot[k]! < 0 || (slice !== "all" && facts.type !== slice)) return []
    const kb = ib.number.get(facts.instance)
    return kb !== undefined && cb.slot[kb]! >= 0 ? [facts.instance] : []
  })
}

/** A value in a label: scalars as they are, a nested plugin spec by its plugin name, anything else as JSON. */
export const labelValue = (v: unknown): string =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean"
    ? String(v)
    : Predicate.isRecord(v) && typeof v["use"] === "string"
      ? v["use"]
      : Hash.canonicalJson(v)
