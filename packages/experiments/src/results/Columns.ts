/**
 * A run's result lines in memory, as reports read them: the lines in file order, and per cell its
 * ok lines as typed columns over instance numbers (one `Float64Array` per metric), plus the
 * totals reports show (usage per cell and model, failures, the example lines).
 *
 * Built once from the lines in final order ({@link index}); everything is computed eagerly, and
 * nothing is read back from disk. At CUPID's size (60 cells, 756 instances: 45,000 lines) the
 * decoded lines take about 45 MB.
 *
 * @example
 * import * as Columns from "@cupid-lab/experiments/results/Columns"
 * const idx = Columns.index(rows)
 * Columns.sliceOf(idx, cellId, "all")(metric) // Paired.Columns of the metric over every instance
 */
import { Paired } from "@cupid-lab/scorers"
import type * as Csv from "./Csv.js"
import { lines as csvLines } from "./Csv.js"
import type { InstanceMeta, MetricDescription, Row, Slice } from "./ResultLine.js"

type LineError = NonNullable<Row["error"]>

/** One metric of one cell over instance numbers (NaN where the cell has no ok line, or the line no such score). */
interface MetricColumns {
  readonly values: Float64Array
  readonly num: Float64Array
  readonly den: Float64Array
}

/** A cell's ok lines as columns: each instance's position among them (-1 when none), and each metric's columns. */
export interface CellColumns {
  readonly slot: Int32Array
  /** The instance number of each ok line, in order. */
  readonly instances: Int32Array
  readonly metric: (name: string) => MetricColumns
  /** A copy derived from the columns, made once and kept with them. */
  readonly kept: (key: string, make: () => Float64Array) => Float64Array
}

/** What reports know of an instance: the facts of its first line. */
export interface InstanceFacts {
  readonly instance: string
  readonly personaId: string
  readonly type: Row["type"]
  readonly meta: InstanceMeta
}

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

export interface Failure {
  readonly line: number
  readonly cell: string
  readonly cellName: string
  readonly instance: string
  readonly error: LineError | null
}

export interface Index {
  /** Instances in first-seen order. */
  readonly instances: ReadonlyArray<InstanceFacts>
  /** Each instance's number: its position in {@link instances}. */
  readonly number: ReadonlyMap<string, number>
  /** Cell ids in first-seen order. */
  readonly cellIds: ReadonlyArray<string>
  /** The cell's ok lines as columns (undefined for a cell without lines). */
  readonly columns: (cell: string) => CellColumns | undefined
  readonly lines: number
  readonly okLines: number
  readonly usage: ReadonlyMap<string, CellUsage>
  /** Per `provider/model`: calls and tokens over every line. */
  readonly models: ReadonlyMap<string, { readonly calls: number; readonly promptTokens: number; readonly completionTokens: number }>
  /** Failed lines, in file order. */
  readonly failures: ReadonlyArray<Failure>
  /** Whole lines of the first instance of each type (file order), by instance then cell. */
  readonly exampleRows: ReadonlyMap<string, ReadonlyMap<string, Row>>
  /** Every line's fields, as results.csv and results.parquet read them. */
  readonly table: Csv.Lines
  /**
   * The score keys of the ok lines, each with whether its first ok line scored it with counts: how
   * the summary aggregates a key no scorer declared (see Summary.fromIndex).
   */
  readonly okScoreKinds: ReadonlyMap<string, boolean>
  /** Per cell, per metric a scorer judged more than once: each ok line's repeats (null as NaN), in file order. */
  readonly repeats: ReadonlyMap<string, ReadonlyMap<string, ReadonlyArray<ReadonlyArray<number>>>>
}

const scoringStage = "score"

/** Why the lines cannot be one run's (a cell with two lines for an instance), or undefined. */
export const problem = (rows: ReadonlyArray<Row>): string | undefined => {
  const seen = new Set<string>()
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!
    const key = `${r.cell}\u0000${r.instance}`
    if (seen.has(key)) return `line ${i + 1} is a second line of cell "${r.cellName}" for instance "${r.instance}"; a run has one line per cell and instance`
    seen.add(key)
  }
  return undefined
}

/** The index of lines in file order (call {@link problem} first on lines that may repeat a pair). */
export const index = (rows: ReadonlyArray<Row>): Index => {
  const instances: Array<InstanceFacts> = []
  const number = new Map<string, number>()
  const cellIds: Array<string> = []
  const cellLines = new Map<string, Array<number>>()
  const usage = new Map<string, { pairs: number; calls: number; promptTokens: number; completionTokens: number; scoringCalls: number; scoringTokens: number }>()
  const models = new Map<string, { calls: number; promptTokens: number; completionTokens: number }>()
  const failures: Array<Failure> = []
  const exampleRows = new Map<string, Map<string, Row>>()
  const exampleTypes = new Set<string>()
  const okKinds = new Map<string, boolean>()
  const repeats = new Map<string, Map<string, Array<ReadonlyArray<number>>>>()
  let okLines = 0
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
    let of = cellLines.get(r.cell)
    if (of === undefined) {
      cellLines.set(r.cell, (of = []))
      cellIds.push(r.cell)
      usage.set(r.cell, { pairs: 0, calls: 0, promptTokens: 0, completionTokens: 0, scoringCalls: 0, scoringTokens: 0 })
    }
    const u = r.usage, cell = usage.get(r.cell)!
    const s = u.byStage[scoringStage]
    cell.pairs++
    cell.calls += u.calls - (s?.calls ?? 0)
    cell.promptTokens += u.promptTokens - (s?.promptTokens ?? 0)
    cell.completionTokens += u.completionTokens - (s?.completionTokens ?? 0)
    cell.scoringCalls += s?.calls ?? 0
    cell.scoringTokens += (s?.promptTokens ?? 0) + (s?.completionTokens ?? 0)
    for (const id in u.byModel) {
      const m = u.byModel[id]!
      const t = models.get(id) ?? { calls: 0, promptTokens: 0, completionTokens: 0 }
      t.calls += m.calls
      t.promptTokens += m.promptTokens
      t.completionTokens += m.completionTokens
      models.set(id, t)
    }
    if (r.status === "ok") {
      okLines++
      of.push(line)
      for (const key in r.scores) {
        if (!okKinds.has(key)) {
          const v = r.scores[key]
          okKinds.set(key, v !== null && typeof v === "object")
        }
      }
      if (r.repeats !== undefined) {
        const byMetric = repeats.get(r.cell) ?? new Map<string, Array<ReadonlyArray<number>>>()
        repeats.set(r.cell, byMetric)
        for (const m in r.repeats) {
          const values = r.repeats[m]!.map((v) => v ?? NaN)
          const of = byMetric.get(m)
          if (of === undefined) byMetric.set(m, [values])
          else of.push(values)
        }
      }
    } else failures.push({ line, cell: r.cell, cellName: r.cellName, instance: r.instance, error: r.error })
  })
  const columns = new Map<string, CellColumns>()
  for (const [id, of] of cellLines) columns.set(id, cellColumns(rows, of, number))
  return {
    instances,
    number,
    cellIds,
    columns: (id) => columns.get(id),
    lines: rows.length,
    okLines,
    usage,
    models,
    failures,
    exampleRows,
    table: csvLines(rows),
    okScoreKinds: okKinds,
    repeats
  }
}

/** One cell's ok lines (`of`, line numbers into `rows`) as columns over instance numbers; a metric's columns are made when first asked for. */
const cellColumns = (rows: ReadonlyArray<Row>, of: ReadonlyArray<number>, number: ReadonlyMap<string, number>): CellColumns => {
  const count = number.size
  const slot = new Int32Array(count).fill(-1)
  const instances = new Int32Array(of.length)
  of.forEach((line, k) => {
    const i = number.get(rows[line]!.instance)!
    slot[i] = k
    instances[k] = i
  })
  const metrics = new Map<string, MetricColumns>()
  const copies = new Map<string, Float64Array>()
  return {
    slot,
    instances,
    metric: (name) => {
      let m = metrics.get(name)
      if (m === undefined) {
        const values = new Float64Array(count).fill(NaN), num = new Float64Array(count).fill(NaN), den = new Float64Array(count).fill(NaN)
        of.forEach((line, k) => {
          const v = rows[line]!.scores[name]
          if (typeof v === "number") values[instances[k]!] = v
          else if (v !== null && v !== undefined) {
            num[instances[k]!] = v.num
            den[instances[k]!] = v.den
          }
        })
        metrics.set(name, (m = { values, num, den }))
      }
      return m
    },
    kept: (key, make) => {
      let x = copies.get(key)
      if (x === undefined) copies.set(key, (x = make()))
      return x
    }
  }
}

/** The numbers of instance ids in an index (-1 for an id it does not hold). */
export const numbers = (idx: Index, ids: ReadonlyArray<string>): Int32Array => Int32Array.from(ids, (id) => idx.number.get(id) ?? -1)

const gather = (from: Float64Array, at: ArrayLike<number>): Float64Array => {
  const out = new Float64Array(at.length)
  for (let i = 0; i < at.length; i++) out[i] = at[i]! < 0 ? NaN : from[at[i]!]!
  return out
}

const empty: MetricColumns = { values: new Float64Array(0), num: new Float64Array(0), den: new Float64Array(0) }

/** A metric's columns typed by its aggregate, for {@link Paired}, read from `column`. */
const typed = (column: (name: string) => MetricColumns, read: (xs: Float64Array) => Float64Array) =>
(metric: Pick<MetricDescription, "name" | "aggregate">): Paired.Columns => {
  const counts = (name: string): Paired.RatioColumns => {
    const m = column(name)
    return { num: read(m.num), den: read(m.den) }
  }
  const agg = metric.aggregate
  switch (agg._tag) {
    case "Mean":
      return Paired.mean(read(column(metric.name).values))
    case "Ratio": {
      const r = counts(metric.name)
      return Paired.ratio(r.num, r.den)
    }
    case "F1":
      return Paired.f1(counts(agg.precision), counts(agg.recall))
  }
}

/**
 * A metric's per-instance data for one cell over a fixed list of instance numbers (see
 * {@link numbers}; NaN where the cell has no ok line), typed by its aggregate, for {@link Paired}:
 * copies, aligned with the list (for two runs, whose instance numbers differ).
 */
export const columnsOf = (
  idx: Index,
  cell: string,
  instances: ArrayLike<number>
): ((metric: Pick<MetricDescription, "name" | "aggregate">) => Paired.Columns) => {
  const c = idx.columns(cell)
  return typed((name) => c?.metric(name) ?? empty, (xs) => (c === undefined ? new Float64Array(instances.length).fill(NaN) : gather(xs, instances)))
}

/** The numbers of the instances of a slice, in the index's order (computed once per index and slice). */
export const sliceNumbers = (() => {
  const memo = new WeakMap<Index, Map<Slice, Int32Array>>()
  return (idx: Index, slice: Slice): Int32Array => {
    let byIndex = memo.get(idx)
    if (byIndex === undefined) memo.set(idx, (byIndex = new Map()))
    let out = byIndex.get(slice)
    if (out === undefined) {
      const list: Array<number> = []
      idx.instances.forEach((f, k) => void ((slice === "all" || f.type === slice) && list.push(k)))
      byIndex.set(slice, (out = Int32Array.from(list)))
    }
    return out
  }
})()

/**
 * A metric's per-instance data for one cell over every instance of a slice (in the index's order;
 * NaN where the cell has no ok line), typed by its aggregate, for {@link Paired}: the same rows
 * for every cell, so two cells' are paired as they are. Kept with the cell's columns, so that
 * comparing a cell with every other copies its columns once.
 */
export const sliceOf = (
  idx: Index,
  cell: string,
  slice: Slice
): ((metric: Pick<MetricDescription, "name" | "aggregate">) => Paired.Columns) => {
  const at = sliceNumbers(idx, slice)
  const c = idx.columns(cell)
  if (c === undefined) return columnsOf(idx, cell, at)
  return typed(
    (name) => {
      const part = (p: keyof MetricColumns) => c.kept(`${slice}\u0000${name}\u0000${p}`, () => gather(c.metric(name)[p], at))
      // Only the parts the aggregate reads are copied.
      return {
        get values() {
          return part("values")
        },
        get num() {
          return part("num")
        },
        get den() {
          return part("den")
        }
      }
    },
    (xs) => xs
  )
}

/** Ids of the instances of `slice` that cell `a` of one index and cell `b` of another both scored ok, in the order of `a`'s index. */
export const sharedIds = (ia: Index, a: string, ib: Index, b: string, slice: Slice): Array<string> => {
  const ca = ia.columns(a), cb = ib.columns(b)
  if (ca === undefined || cb === undefined) return []
  const out: Array<string> = []
  ia.instances.forEach((facts, k) => {
    if (ca.slot[k]! < 0 || (slice !== "all" && facts.type !== slice)) return
    const kb = ib.number.get(facts.instance)
    if (kb !== undefined && cb.slot[kb]! >= 0) out.push(facts.instance)
  })
  return out
}
