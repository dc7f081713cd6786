/**
 * `<out>/results.csv`: one row per (cell, instance) for spreadsheets and data-frame tools. Columns:
 * ids (`cell`, `cell_name`, `instance`, `persona_id`), `type`, `status`, every score key of the run
 * as its own column (sorted; `:num` / `:den` counts of pooled metrics included, so micro averages
 * can be recomputed), usage totals (`calls`, `prompt_tokens`, `completion_tokens`), and the error
 * (`error_stage`, `error_plugin`, `error_message`). Missing or undefined scores are empty fields.
 *
 * RFC 4180: CRLF line ends; a field holding a comma, a double quote, CR or LF is quoted, with
 * inner quotes doubled. Numbers are written in JavaScript's shortest round-trip form.
 *
 * @example
 * import * as Csv from "@cupid-lab/experiments/report/Csv"
 * fs.writeFileSync("runs/x/results.csv", Csv.render(run.rows))
 */
import type { Row } from "./RunDir.js"

/** One field, quoted when RFC 4180 requires it. */
export const field = (value: string): string => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value)

const num = (x: number | null | undefined): string => (x === null || x === undefined || !Number.isFinite(x) ? "" : String(x))

export const leading = ["cell", "cell_name", "instance", "persona_id", "type", "status"] as const
export const trailing = ["calls", "prompt_tokens", "completion_tokens", "error_stage", "error_plugin", "error_message"] as const

/** The header: fixed columns around the sorted score keys. */
export const columns = (rows: ReadonlyArray<Row>): Array<string> => {
  const keys = new Set<string>()
  for (const r of rows) for (const k in r.scores) keys.add(k)
  return [...leading, ...[...keys].sort(), ...trailing]
}

export const render = (rows: ReadonlyArray<Row>): string => {
  const head = columns(rows)
  const scoreKeys = head.slice(leading.length, head.length - trailing.length)
  const lines = [head.map(field).join(",")]
  for (const r of rows) {
    const cells = [
      r.cell,
      r.cellName,
      r.instance,
      r.personaId,
      r.type,
      r.status,
      ...scoreKeys.map((k) => num(r.scores[k])),
      num(r.usage.calls),
      num(r.usage.promptTokens),
      num(r.usage.completionTokens),
      r.error?.stage ?? "",
      r.error?.plugin ?? "",
      r.error?.message ?? ""
    ]
    lines.push(cells.map(field).join(","))
  }
  return `${lines.join("\r\n")}\r\n`
}
