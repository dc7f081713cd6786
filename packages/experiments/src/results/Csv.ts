/**
 * `<out>/results.csv`: one row per result line (RFC 4180, CRLF line ends). A score key scored with
 * counts has two columns, `<name>.num` and `<name>.den`; missing and non-finite numbers are empty
 * fields; text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first) gets a `'`.
 *
 * @example
 * yield* Csv.write("runs/x/results.csv", run.index.table) // needs a FileSystem
 */
import { Files } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import type { Row } from "./ResultLine.js"

/** Unicode controls that reorder text (bidi embeddings, overrides, isolates and marks). */
const bidi = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/** Bidi controls shown as their escapes (`\u202E`), so that they neither reorder nor hide text, in every output format. */
export const visibleControls = (text: string): string =>
  text.replace(bidi, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)

const formula = /^[=+\-@\t\r]/

/** One text field: guarded against formula evaluation, then quoted when RFC 4180 requires it. */
export const field = (raw: string): string => {
  const text = visibleControls(raw)
  const value = formula.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value
}

const num = (x: number | null | undefined): string => (x === null || x === undefined || !Number.isFinite(x) ? "" : String(x))

export const leading = ["cell", "cell_name", "instance", "persona_id", "type", "status", "selected"] as const
export const trailing = ["calls", "prompt_tokens", "completion_tokens", "error_stage", "error_plugin", "error_message"] as const

type ScoreColumn = { readonly title: string; readonly value: (row: Row) => number | null | undefined }

/** One column per score key of the rows, in key order; two for a key any row scored with counts (a Ratio metric). */
export const scoreColumns = (rows: ReadonlyArray<Row>): Array<ScoreColumn> => {
  const counted = new Map<string, boolean>()
  for (const r of rows) {
    for (const k in r.scores) {
      const v = r.scores[k]
      counted.set(k, counted.get(k) === true || (v !== null && typeof v === "object"))
    }
  }
  return [...counted.keys()].sort().flatMap((key): Array<ScoreColumn> => {
    const part = (name: "num" | "den") => (r: Row) => {
      const v = r.scores[key]
      return v !== null && typeof v === "object" ? v[name] : undefined
    }
    const mean = (r: Row) => {
      const v = r.scores[key]
      return typeof v === "number" ? v : undefined
    }
    return counted.get(key) === true
      ? [{ title: `${key}.num`, value: part("num") }, { title: `${key}.den`, value: part("den") }]
      : [{ title: key, value: mean }]
  })
}

const line = (r: Row, scores: ReadonlyArray<ScoreColumn>): string => {
  const numbers = [...scores.map((c) => c.value(r)), r.usage.calls, r.usage.promptTokens, r.usage.completionTokens].map((x) => `,${num(x)}`).join("")
  const error = r.error === null ? ",,," : `,${field(r.error.stage)},${field(r.error.plugin)},${field(r.error.message)}`
  const ids = `${field(r.cell)},${field(r.cellName)},${field(r.instance)},${field(r.personaId)}`
  return `${ids},${r.type},${r.status},${field(r.selected?.join(" ") ?? "")}${numbers}${error}\r\n`
}

/** The CSV's text: the header, then one line per row. */
export const render = (rows: ReadonlyArray<Row>): string => {
  const scores = scoreColumns(rows)
  return `${[...leading, ...scores.map((c) => c.title), ...trailing].map(field).join(",")}\r\n${rows.map((r) => line(r, scores)).join("")}`
}

/** Write the rows to `file` atomically. */
export const write = (file: string, rows: ReadonlyArray<Row>): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  Files.writeFileAtomic(file, render(rows))
