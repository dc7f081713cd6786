/**
 * Every line's CSV fields as plain data: strings shared per cell and per instance, typed arrays
 * per line, and the errors by line. {@link Rows} builds it as lines go by; {@link lines} reads it
 * field by field as results.csv and results.parquet need ({@link Csv.Lines}). Being plain data,
 * it can be posted to a worker thread as it is (see ResultFiles.ts).
 *
 * A score key's columns may be shorter than the table (a key first or last scored before the end):
 * past its end a line has no such score.
 *
 * @example
 * import * as LineTable from "@cupid-lab/experiments/report/LineTable"
 * const l = LineTable.lines(index.table)
 * l.cell(0) // the first line's cell id
 */
import type * as Csv from "./Csv.js"
import type { Row } from "./RunDir.js"

type LineError = NonNullable<Row["error"]>

/**
 * One score key over the lines: present (1) or not, a Mean's value, a Ratio's counts; NaN where
 * absent. Each column may end before the table does (or be empty): past its end, NaN.
 */
export interface KeyColumns {
  readonly key: string
  /** Some line scored it with counts (a Ratio metric). */
  readonly counted: boolean
  readonly present: Uint8Array
  readonly values: Float64Array
  readonly num: Float64Array
  readonly den: Float64Array
}

export interface LineTable {
  readonly length: number
  readonly cellIds: ReadonlyArray<string>
  readonly cellNames: ReadonlyArray<string>
  /** Instance ids, persona ids and types, by instance number. */
  readonly instances: ReadonlyArray<string>
  readonly personaIds: ReadonlyArray<string>
  readonly types: ReadonlyArray<string>
  /** Per line: its cell's position in `cellIds`, its instance number. */
  readonly lineCell: Int32Array
  readonly lineInstance: Int32Array
  /** Per line: 1 when it failed. */
  readonly failed: Uint8Array
  /** Per line: its selection's number in `selections`; -1 without a selection. */
  readonly selection: Int32Array
  /** The selections of the lines, each once: session ids joined by one space. */
  readonly selections: ReadonlyArray<string>
  /** Per line, usage totals; each column may end before the table does (or be empty): past its end, 0. */
  readonly calls: Float64Array
  readonly promptTokens: Float64Array
  readonly completionTokens: Float64Array
  /** The errors of the lines that have one, by line. */
  readonly errors: ReadonlyMap<number, LineError>
  /** Sorted by key. */
  readonly keys: ReadonlyArray<KeyColumns>
}

const at = (column: Float64Array, i: number): number => (i < column.length ? column[i]! : NaN)

/** A table's lines as the CSV and results.parquet read them. */
export const lines = (t: LineTable): Csv.Lines => {
  const byKey = new Map(t.keys.map((k) => [k.key, k]))
  return {
    length: t.length,
    scoreKeys: t.keys.map(({ key, counted }) => ({ key, counted })),
    cell: (i) => t.cellIds[t.lineCell[i]!]!,
    cellName: (i) => t.cellNames[t.lineCell[i]!]!,
    instance: (i) => t.instances[t.lineInstance[i]!]!,
    personaId: (i) => t.personaIds[t.lineInstance[i]!]!,
    type: (i) => t.types[t.lineInstance[i]!]!,
    status: (i) => (t.failed[i] === 1 ? "failed" : "ok"),
    selected: (i) => (t.selection[i]! < 0 ? null : t.selections[t.selection[i]!]!),
    score: (key) => {
      const c = byKey.get(key)
      return (i) => {
        if (c === undefined || i >= c.present.length || c.present[i] === 0) return undefined
        const num = at(c.num, i), den = at(c.den, i), value = at(c.values, i)
        return !Number.isNaN(num) || !Number.isNaN(den) ? { num, den } : Number.isNaN(value) ? null : value
      }
    },
    calls: (i) => (i < t.calls.length ? t.calls[i]! : 0),
    promptTokens: (i) => (i < t.promptTokens.length ? t.promptTokens[i]! : 0),
    completionTokens: (i) => (i < t.completionTokens.length ? t.completionTokens[i]! : 0),
    error: (i) => t.errors.get(i) ?? null
  }
}
