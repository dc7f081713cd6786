/**
 * A run's result lines as columns, built in one pass as the lines go by (the sweep folds each line
 * as it is written; `report --run` as it reads the file), so that reports never hold the lines
 * themselves: per line only numbers, ids shared with other lines, the selection and an error when
 * there is one. Reports, the CSV and results.parquet read everything from here:
 *
 * - per cell, the lines scored ok, by instance number, and each metric as typed columns over them
 *   (the paired tests, the bins, the tables);
 * - the instances in first-seen order with their facts (type, meta);
 * - per cell, the usage totals; per model, its calls and tokens; failures grouped by stage, plugin
 *   and error tag, with the first examples;
 * - the whole lines of the first instance of each type (the examples section);
 * - every line's CSV fields, read by position ({@link Index.table}) without building the line again.
 *
 * @example
 * import * as Rows from "@cupid-lab/experiments/report/Rows"
 * const b = Rows.builder()
 * for (const row of lines) b.add(row)
 * const idx = b.finish()
 * const ids = Rows.sharedInstances(idx, a, c, "all") // instance numbers
 * Rows.columnsOf(idx, a, ids)(metric) // Paired.Columns of the metric
 */
import { Paired } from "@cupid-lab/scorers"
import type { InstanceMeta, MetricDescription, Row, Slice } from "../ResultLine.js"
import * as Growable from "../internal/Growable.js"
import * as LineTable from "./LineTable.js"

type LineError = NonNullable<Row["error"]>

/** One metric of one cell as typed columns over the cell's ok lines (in the order they came). */
interface MetricColumns {
  readonly values: Float64Array
  readonly num: Float64Array
  readonly den: Float64Array
}

/** A cell's ok lines as columns: each instance's position among them (by instance number, -1 when none), and each metric's columns. */
interface CellColumns {
  readonly slot: Int32Array
  /** The instance number of each ok line, in order. */
  readonly instances: Int32Array
  readonly metric: (name: string) => MetricColumns
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
  /** Whole lines of the first instance of each type (result-file order), by instance then cell. */
  readonly exampleRows: ReadonlyMap<string, ReadonlyMap<string, Row>>
  /**
   * Every line's CSV fields (ids, type, status, selection, scores, usage totals, error) as plain
   * data, read by position without building the line (`LineTable.lines`; results.csv and
   * results.parquet). A worker thread can be given it as it is.
   */
  readonly table: LineTable.LineTable
  /**
   * The score keys of the ok lines, each with whether its first ok line scored it with counts: how
   * the summary aggregates a key no scorer declared (see Summary.fromIndex).
   */
  readonly okScoreKinds: ReadonlyMap<string, boolean>
}

const { doubles, ints } = Growable
/** Counts, 0 where absent. */
const zeros = () => Growable.doubles(0)
/** Which lines scored a key (1) and which did not (0). */
const flags = () => Growable.bytes(0)
type Column<T extends Float64Array | Int32Array | Uint8Array> = Growable.Column<T>

/**
 * A score key's columns over every line: a Mean's value, or a Ratio's counts (NaN where absent).
 * A column starts with the first line that needs it, so a key scored only with counts holds no
 * values, and one scored only with numbers no counts.
 */
interface KeyColumns {
  counted: boolean
  readonly present: Column<Uint8Array>
  readonly values: Column<Float64Array>
  readonly num: Column<Float64Array>
  readonly den: Column<Float64Array>
}

interface CellState {
  readonly id: string
  readonly index: number
  readonly name: string
  /** Line numbers of the cell's ok lines, in order. */
  readonly ok: Column<Int32Array>
  readonly okInstances: Column<Int32Array>
  pairs: number
  calls: number
  promptTokens: number
  completionTokens: number
  scoringCalls: number
  scoringTokens: number
}

const scoringStage = "score"

export interface Builder {
  readonly add: (row: Row) => void
  readonly finish: () => Index
}

/** An empty index builder; `add` every line in file order, then `finish`. */
export const builder = (): Builder => {
  const instances: Array<InstanceFacts> = []
  const number = new Map<string, number>()
  const cells = new Map<string, CellState>()
  const cellIds: Array<string> = []
  const keys = new Map<string, KeyColumns>()
  const okKinds = new Map<string, boolean>()
  // per line
  const lineCell = ints()
  const lineInstance = ints()
  const lineFailed = flags()
  // Each line's selection as a number into `selections` (-1: none): cells often select the same sessions.
  const lineSelection = ints()
  const selections: Array<string> = []
  const selectionNo = new Map<string, number>()
  const calls = zeros(), prompt = zeros(), completion = zeros()
  const errors = new Map<number, LineError>()
  const failures: Array<Failure> = []
  const models = new Map<string, { calls: number; promptTokens: number; completionTokens: number }>()
  const exampleTypes = new Set<string>()
  const exampleRows = new Map<string, Map<string, Row>>()
  let lines = 0, okLines = 0

  const keyColumns = (key: string): KeyColumns => {
    let k = keys.get(key)
    if (k === undefined) {
      k = { counted: false, present: flags(), values: doubles(), num: doubles(), den: doubles() }
      keys.set(key, k)
    }
    return k
  }

  const add = (r: Row): void => {
    const line = lines++
    let cell = cells.get(r.cell)
    if (cell === undefined) {
      cell = { id: r.cell, index: cellIds.length, name: r.cellName, ok: ints(), okInstances: ints(), pairs: 0, calls: 0, promptTokens: 0, completionTokens: 0, scoringCalls: 0, scoringTokens: 0 }
      cells.set(r.cell, cell)
      cellIds.push(r.cell)
    }
    let k = number.get(r.instance)
    if (k === undefined) {
      k = instances.length
      number.set(r.instance, k)
      instances.push({ instance: r.instance, personaId: r.personaId, type: r.type, meta: r.meta })
      if (!exampleTypes.has(r.type)) {
        exampleTypes.add(r.type)
        exampleRows.set(r.instance, new Map())
      }
    }
    exampleRows.get(r.instance)?.set(r.cell, r)
    lineCell.push(cell.index)
    lineInstance.push(k)
    lineFailed.push(r.status === "ok" ? 0 : 1)
    if (r.selected === null) lineSelection.push(-1)
    else {
      const text = r.selected.join(" ")
      let n = selectionNo.get(text)
      if (n === undefined) {
        n = selections.length
        selections.push(text)
        selectionNo.set(text, n)
      }
      lineSelection.push(n)
    }
    // Usage columns grow only from a line that has some (a run without model calls holds none).
    if (r.usage.calls !== 0 || r.usage.promptTokens !== 0 || r.usage.completionTokens !== 0) {
      for (const [c, v] of [[calls, r.usage.calls], [prompt, r.usage.promptTokens], [completion, r.usage.completionTokens]] as const) {
        c.fill(line)
        c.push(v)
      }
    }
    if (r.error !== null) errors.set(line, r.error)
    for (const key in r.scores) {
      const v = r.scores[key]
      const c = keyColumns(key)
      if (r.status === "ok" && !okKinds.has(key)) okKinds.set(key, v !== null && typeof v === "object")
      c.present.fill(line)
      c.present.push(1)
      if (v !== null && typeof v === "object") {
        c.counted = true
        c.num.fill(line)
        c.num.push(v.num)
        c.den.fill(line)
        c.den.push(v.den)
      } else if (typeof v === "number" && !Number.isNaN(v)) {
        c.values.fill(line)
        c.values.push(v)
      }
    }
    cell.pairs++
    const s = r.usage.byStage[scoringStage]
    cell.calls += r.usage.calls - (s?.calls ?? 0)
    cell.promptTokens += r.usage.promptTokens - (s?.promptTokens ?? 0)
    cell.completionTokens += r.usage.completionTokens - (s?.completionTokens ?? 0)
    cell.scoringCalls += s?.calls ?? 0
    cell.scoringTokens += (s?.promptTokens ?? 0) + (s?.completionTokens ?? 0)
    for (const id in r.usage.byModel) {
      const u = r.usage.byModel[id]!
      const t = models.get(id) ?? { calls: 0, promptTokens: 0, completionTokens: 0 }
      t.calls += u.calls
      t.promptTokens += u.promptTokens
      t.completionTokens += u.completionTokens
      models.set(id, t)
    }
    if (r.status === "ok") {
      okLines++
      cell.ok.push(line)
      cell.okInstances.push(k)
    } else failures.push({ line, cell: r.cell, cellName: r.cellName, instance: r.instance, error: r.error })
  }

  const finish = (): Index => {
    const columns = new Map<string, CellColumns>()
    const cellList = cellIds.map((id) => cells.get(id)!)
    const names = cellList.map((c) => c.name)
    const scoreKeys = [...keys.keys()].sort().map((key) => ({ key, counted: keys.get(key)!.counted }))
    const cellColumns = (c: CellState): CellColumns => {
      const slot = new Int32Array(instances.length).fill(-1)
      for (let i = 0; i < c.okInstances.length; i++) slot[c.okInstances.data[i]!] = i
      const byMetric = new Map<string, MetricColumns>()
      const n = c.ok.length
      // A column no line of the key has reads NaN throughout: one such array serves them all (nothing writes to these).
      let none: Float64Array | undefined
      const gatherKey = (column: Column<Float64Array> | undefined): Float64Array => {
        if (column === undefined || column.length === 0) return (none ??= new Float64Array(n).fill(NaN))
        const out = new Float64Array(n)
        for (let i = 0; i < n; i++) out[i] = column.at(c.ok.data[i]!)
        return out
      }
      return {
        slot,
        instances: c.okInstances.filled(),
        metric: (name) => {
          let m = byMetric.get(name)
          if (m === undefined) {
            const key = keys.get(name)
            byMetric.set(name, (m = { values: gatherKey(key?.values), num: gatherKey(key?.num), den: gatherKey(key?.den) }))
          }
          return m
        }
      }
    }
    const table: LineTable.LineTable = {
      length: lines,
      cellIds,
      cellNames: names,
      instances: instances.map((f) => f.instance),
      personaIds: instances.map((f) => f.personaId),
      types: instances.map((f) => f.type),
      lineCell: lineCell.filled(),
      lineInstance: lineInstance.filled(),
      failed: lineFailed.filled(),
      selection: lineSelection.filled(),
      selections,
      calls: calls.filled(),
      promptTokens: prompt.filled(),
      completionTokens: completion.filled(),
      errors,
      keys: scoreKeys.map(({ key, counted }) => {
        const c = keys.get(key)!
        return { key, counted, present: c.present.filled(), values: c.values.filled(), num: c.num.filled(), den: c.den.filled() }
      })
    }
    return {
      instances,
      number,
      cellIds,
      columns: (id) => {
        let c = columns.get(id)
        if (c === undefined) {
          const state = cells.get(id)
          if (state === undefined) return undefined
          columns.set(id, (c = cellColumns(state)))
        }
        return c
      },
      lines,
      okLines,
      usage: new Map(cellList.map((c) => [c.id, { pairs: c.pairs, calls: c.calls, promptTokens: c.promptTokens, completionTokens: c.completionTokens, scoringCalls: c.scoringCalls, scoringTokens: c.scoringTokens }])),
      models,
      failures,
      exampleRows,
      table,
      okScoreKinds: okKinds
    }
  }
  return { add, finish }
}

/** An index of lines already in memory (tests, tools). */
export const index = (rows: Iterable<Row>): Index => {
  const b = builder()
  for (const r of rows) b.add(r)
  return b.finish()
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
 * {@link numbers}; NaN where the cell has no ok line), typed by its aggregate, for {@link Paired}.
 * The lines are looked up once; each metric is then gathered from the cell's columns.
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
