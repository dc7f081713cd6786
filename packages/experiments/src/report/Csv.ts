/**
 * `<out>/results.csv`: one row per (cell, instance) for spreadsheets and data-frame tools. Columns:
 * ids (`cell`, `cell_name`, `instance`, `persona_id`), `type`, `status`, `selected` (the session ids
 * the cell's retriever selected, space-separated; empty without a retriever), every score key of the run
 * as its own column (sorted; a metric scored with counts (a Ratio metric) has two columns,
 * `<name>.num` and `<name>.den`, so micro averages can be recomputed), usage totals (`calls`, `prompt_tokens`, `completion_tokens`), and the error
 * (`error_stage`, `error_plugin`, `error_message`). Missing or undefined scores are empty fields.
 *
 * RFC 4180: CRLF line ends; a field holding a comma, a double quote, CR or LF is quoted, with
 * inner quotes doubled. Numbers are written in JavaScript's shortest round-trip form.
 *
 * Text that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a CR,
 * e.g. a cell name or an error message `=HYPERLINK(...)`) gets a leading `'`, which spreadsheets
 * show as text; numbers are never changed, so `-0.5` stays a number.
 *
 * @example
 * import * as Csv from "@cupid-lab/experiments/report/Csv"
 * yield* Csv.write("runs/x/results.csv", run.index) // needs a FileSystem
 * Csv.render(rows) // the text, for rows in memory
 */
import { Files } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import type { Row } from "./RunDir.js"

/** Text a spreadsheet would evaluate as a formula. */
const formula = /^[=+\-@\t\r]/

/** One text field: guarded against formula evaluation, then quoted when RFC 4180 requires it. */
export const field = (text: string): string => {
  const value = formula.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value
}

const num = (x: number | null | undefined): string => (x === null || x === undefined || !Number.isFinite(x) ? "" : String(x))

export const leading = ["cell", "cell_name", "instance", "persona_id", "type", "status", "selected"] as const
export const trailing = ["calls", "prompt_tokens", "completion_tokens", "error_stage", "error_plugin", "error_message"] as const

export interface ScoreColumn {
  readonly title: string
  readonly value: (r: Row) => number | null | undefined
}

/** A score key of a run, and whether any line scored it with counts (a Ratio metric). */
export interface ScoreKey {
  readonly key: string
  readonly counted: boolean
}

/** The score keys of rows, sorted (what {@link Rows.Index.scoreKeys} holds for a run). */
export const scoreKeys = (rows: Iterable<Row>): Array<ScoreKey> => {
  const keys = new Map<string, boolean>()
  for (const r of rows) {
    for (const k in r.scores) {
      const v = r.scores[k]
      if (v !== null && typeof v === "object") keys.set(k, true)
      else if (!keys.has(k)) keys.set(k, false)
    }
  }
  return [...keys.keys()].sort().map((key) => ({ key, counted: keys.get(key)! }))
}

/** One column per Mean score key, two per key scored with counts, in key order (results.parquet has the same). */
export const scoreColumns = (keys: ReadonlyArray<ScoreKey>): Array<ScoreColumn> => {
  const count = (k: string, part: "num" | "den") => (r: Row) => {
    const v = r.scores[k]
    return v !== null && typeof v === "object" ? v[part] : undefined
  }
  return keys.flatMap(({ key: k, counted }): Array<ScoreColumn> =>
    counted
      ? [{ title: `${k}.num`, value: count(k, "num") }, { title: `${k}.den`, value: count(k, "den") }]
      : [{ title: k, value: (r) => {
        const v = r.scores[k]
        return typeof v === "number" ? v : undefined
      } }]
  )
}

/** The header: fixed columns around the score columns. */
export const columns = (keys: ReadonlyArray<ScoreKey>): Array<string> => [...leading, ...scoreColumns(keys).map((c) => c.title), ...trailing]

/** What the CSV is made from: the run's score keys and its lines, a chunk at a time (see Rows.Index). */
export interface Source {
  readonly scoreKeys: ReadonlyArray<ScoreKey>
  readonly chunks: (size: number) => Iterable<ReadonlyArray<Row>>
}

/** Lines of rows in memory, as a {@link Source}. */
export const source = (rows: ReadonlyArray<Row>): Source => ({
  scoreKeys: scoreKeys(rows),
  chunks: function*(size) {
    for (let i = 0; i < rows.length; i += size) yield rows.slice(i, i + size)
  }
})

/** The CSV's text, a header and then one piece per chunk of lines (each piece ends with CRLF). */
export const pieces = function*(src: Source, chunkRows = 10_000): Generator<string> {
  const scores = scoreColumns(src.scoreKeys)
  const head = [...leading, ...scores.map((c) => c.title), ...trailing]
  yield `${head.map(field).join(",")}\r\n`
  // Text goes through `field`; numbers never need quoting. A cell's two columns are quoted once.
  const cellFields = new Map<string, string>()
  for (const rows of src.chunks(chunkRows)) {
    let text = ""
    for (const r of rows) {
      let cell = cellFields.get(r.cell)
      if (cell === undefined) cellFields.set(r.cell, (cell = `${field(r.cell)},${field(r.cellName)}`))
      let line = `${cell},${field(r.instance)},${field(r.personaId)},${r.type},${r.status},${field(r.selected?.join(" ") ?? "")}`
      for (const c of scores) line += `,${num(c.value(r))}`
      line += `,${num(r.usage.calls)},${num(r.usage.promptTokens)},${num(r.usage.completionTokens)}`
      line += `,${field(r.error?.stage ?? "")},${field(r.error?.plugin ?? "")},${field(r.error?.message ?? "")}`
      text += `${line}\r\n`
    }
    yield text
  }
}

/** The whole CSV as one string (tests and small runs; the sweep writes {@link pieces} to the file as they come). */
export const render = (src: Source | ReadonlyArray<Row>): string => [...pieces(Array.isArray(src) ? source(src) : (src as Source))].join("")

/** Write the CSV atomically, a chunk of lines at a time (the text is never held whole). */
export const write = (file: string, src: Source): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  Files.writeFileAtomicWith(file, (put) =>
    Effect.gen(function*() {
      const encoder = new TextEncoder()
      for (const piece of pieces(src)) yield* put(encoder.encode(piece))
    }))
