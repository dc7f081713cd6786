/**
 * `<out>/results.csv` and `<out>/results.parquet`: one row per result line, the same columns (a key scored
 * with counts has `<name>.num` and `<name>.den`). The CSV (RFC 4180, CRLF) leaves non-finite numbers empty and
 * puts `'` before text a spreadsheet would run (`=`, `+`, `-`, `@`, tab, CR first); the parquet file holds
 * typed data for pandas, polars, DuckDB or Arrow (UTF-8, DOUBLE, null where the CSV field is empty), unguarded.
 *
 * @example
 * yield* Exports.writeParquet("runs/x/results.parquet", run.index.table) // and Exports.csv(rows): the CSV's text
 */
import { Files } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import type { SchemaElement } from "hyparquet"
import { ByteWriter, ParquetWriter } from "hyparquet-writer"
import { finiteOrNull, type Row } from "./ResultLine.js"

/** Unicode controls that reorder text (bidi embeddings, overrides, isolates and marks). */
const bidi = /[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g

/** Bidi controls shown as their escapes (`\u202E`), so that they neither reorder nor hide text, in every format people read (not results.parquet). */
export const visibleControls = (text: string): string =>
  text.replace(bidi, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)

const formula = /^[=+\-@\t\r]/

/** One text field: guarded against formula evaluation, then quoted when RFC 4180 requires it. */
export const field = (raw: string): string => {
  const text = visibleControls(raw)
  const value = formula.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value
}

/** A column of both files: text (null when absent; `required` never is) or a number. */
export type Column =
  | {
      readonly title: string
      readonly kind: "text"
      readonly required: boolean
      readonly value: (row: Row) => string | null
    }
  | { readonly title: string; readonly kind: "number"; readonly value: (row: Row) => number | null | undefined }

const text = (title: string, value: (row: Row) => string | null, required = false): Column => ({
  title,
  kind: "text",
  required,
  value
})

const number = (title: string, value: (row: Row) => number | null | undefined): Column => ({
  title,
  kind: "number",
  value
})

export const leading: ReadonlyArray<Column> = [
  text("cell", (r) => r.cell, true),
  text("cell_name", (r) => r.cellName, true),
  text("instance", (r) => r.instance, true),
  text("persona_id", (r) => r.personaId, true),
  text("type", (r) => r.type, true),
  text("status", (r) => r.status, true),
  text("selected", (r) => r.selected?.join(" ") ?? null)
]

export const trailing: ReadonlyArray<Column> = [
  number("calls", (r) => r.usage.calls),
  number("prompt_tokens", (r) => r.usage.promptTokens),
  number("completion_tokens", (r) => r.usage.completionTokens),
  text("error_stage", (r) => r.error?.stage ?? null),
  text("error_plugin", (r) => r.error?.plugin ?? null),
  text("error_message", (r) => r.error?.message ?? null)
]

/** Every column of the rows: the fixed ones around one per score key, in key order (two for a key any row scored with counts). */
export const columns = (rows: ReadonlyArray<Row>): Array<Column> => {
  const counted = new Map<string, boolean>()
  for (const r of rows) {
    for (const k in r.scores) {
      const v = r.scores[k]
      counted.set(k, counted.get(k) === true || (v !== null && typeof v === "object"))
    }
  }
  const scores = [...counted.keys()].sort().flatMap((key): Array<Column> => {
    const part = (name: "num" | "den") => (r: Row) => {
      const v = r.scores[key]
      return v !== null && typeof v === "object" ? v[name] : undefined
    }
    const mean = (r: Row) => {
      const v = r.scores[key]
      return typeof v === "number" ? v : undefined
    }
    return counted.get(key) === true
      ? [number(`${key}.num`, part("num")), number(`${key}.den`, part("den"))]
      : [number(key, mean)]
  })
  return [...leading, ...scores, ...trailing]
}

const cellOf = (c: Column, r: Row): string =>
  c.kind === "text" ? field(c.value(r) ?? "") : String(finiteOrNull(c.value(r)) ?? "")

/** The CSV's text: the header, then one line per row. */
export const csv = (rows: ReadonlyArray<Row>): string => {
  const all = columns(rows)
  return `${all.map((c) => field(c.title)).join(",")}\r\n${rows.map((r) => `${all.map((c) => cellOf(c, r)).join(",")}\r\n`).join("")}`
}

const elementOf = (c: Column): SchemaElement =>
  c.kind === "number"
    ? { name: c.title, type: "DOUBLE", repetition_type: "OPTIONAL" }
    : {
        name: c.title,
        type: "BYTE_ARRAY",
        converted_type: "UTF8",
        repetition_type: c.required ? "REQUIRED" : "OPTIONAL"
      }

/** A data file keeps the data: texts as results.jsonl holds them (escaping is for the files people read). */
const valueOf = (c: Column, r: Row): string | number | null =>
  c.kind === "number" ? finiteOrNull(c.value(r)) : c.value(r)

/** Names the writing library, without a version or a time, so the bytes stay the same. */
const createdBy = "cupid-lab"

/** Write the rows to `file` as parquet, atomically, one row group (default 10,000 rows) at a time. */
export const writeParquet = (
  file: string,
  rows: ReadonlyArray<Row>,
  options: { readonly rowGroupRows?: number } = {}
): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  Files.writeFileAtomicWith(file, (put) =>
    Effect.gen(function* () {
      const all = columns(rows)
      const bytes = new ByteWriter()
      const schema = [{ name: "schema", num_children: all.length }, ...all.map(elementOf)]
      const parquet = new ParquetWriter({ writer: bytes, schema, createdBy })
      // The writer keeps appending to `bytes`: what it holds is written after each group, and it starts over.
      const take = () => {
        const out = bytes.getBytes()
        bytes.index = 0
        return out
      }
      const size = Math.max(1, options.rowGroupRows ?? 10_000)
      for (let start = 0; start < rows.length; start += size) {
        const group = rows.slice(start, start + size)
        parquet.write({
          columnData: all.map((c) => ({ name: c.title, data: group.map((r) => valueOf(c, r)) })),
          rowGroupSize: group.length
        })
        yield* put(take())
      }
      parquet.finish()
      yield* put(take())
    })
  )
