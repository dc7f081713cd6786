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
 * fs.writeFileSync("runs/x/results.csv", Csv.render(run.rows))
 */
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

/** One column per Mean score key, two per key scored with counts, sorted by key (results.parquet has the same). */
export const scoreColumns = (rows: ReadonlyArray<Row>): Array<ScoreColumn> => {
  const keys = new Map<string, boolean>()
  for (const r of rows) {
    for (const k in r.scores) {
      const v = r.scores[k]
      if (v !== null && typeof v === "object") keys.set(k, true)
      else if (!keys.has(k)) keys.set(k, false)
    }
  }
  const count = (k: string, part: "num" | "den") => (r: Row) => {
    const v = r.scores[k]
    return v !== null && typeof v === "object" ? v[part] : undefined
  }
  return [...keys.keys()].sort().flatMap((k): Array<ScoreColumn> =>
    keys.get(k) === true
      ? [{ title: `${k}.num`, value: count(k, "num") }, { title: `${k}.den`, value: count(k, "den") }]
      : [{ title: k, value: (r) => {
        const v = r.scores[k]
        return typeof v === "number" ? v : undefined
      } }]
  )
}

/** The header: fixed columns around the sorted score columns. */
export const columns = (rows: ReadonlyArray<Row>): Array<string> => [...leading, ...scoreColumns(rows).map((c) => c.title), ...trailing]

export const render = (rows: ReadonlyArray<Row>): string => {
  const scores = scoreColumns(rows)
  const head = [...leading, ...scores.map((c) => c.title), ...trailing]
  const lines = [head.map(field).join(",")]
  // Text goes through `field`; numbers never need quoting. A cell's two columns are quoted once.
  const cellFields = new Map<string, string>()
  for (const r of rows) {
    let cell = cellFields.get(r.cell)
    if (cell === undefined) cellFields.set(r.cell, (cell = `${field(r.cell)},${field(r.cellName)}`))
    let line = `${cell},${field(r.instance)},${field(r.personaId)},${r.type},${r.status},${field(r.selected?.join(" ") ?? "")}`
    for (const c of scores) line += `,${num(c.value(r))}`
    line += `,${num(r.usage.calls)},${num(r.usage.promptTokens)},${num(r.usage.completionTokens)}`
    line += `,${field(r.error?.stage ?? "")},${field(r.error?.plugin ?? "")},${field(r.error?.message ?? "")}`
    lines.push(line)
  }
  return `${lines.join("\r\n")}\r\n`
}
