/**
 * `<out>/results.parquet`: the rows and columns of results.csv as typed data for pandas, polars,
 * DuckDB or Arrow: UTF-8 strings (null without a selection or an error), DOUBLE numbers (null
 * where the CSV field is empty), and no formula guard (a parquet reader never evaluates).
 *
 * @example
 * yield* Parquet.write("runs/x/results.parquet", run.index.table) // needs a FileSystem
 */
import * as Files from "@cupid-lab/core/Files"
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import type { SchemaElement } from "hyparquet"
import { ByteWriter, ParquetWriter } from "hyparquet-writer"
import * as Csv from "./Csv.js"
import type { Row } from "./ResultLine.js"

type Value = string | number | null

interface Column {
  readonly element: SchemaElement
  readonly value: (row: Row) => Value
}

const text = (name: string, value: (row: Row) => string | null, required: boolean): Column => ({
  element: { name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: required ? "REQUIRED" : "OPTIONAL" },
  value: (r) => {
    const x = value(r)
    return x === null ? null : Csv.visibleControls(x)
  }
})

const double = (name: string, value: (row: Row) => number | null | undefined): Column => ({
  element: { name, type: "DOUBLE", repetition_type: "OPTIONAL" },
  value: (r) => {
    const x = value(r)
    return x === null || x === undefined || !Number.isFinite(x) ? null : x
  }
})

/** Keyed by the CSV's own column names, so a column the CSV gains is a type error here. */
const fixed: Record<(typeof Csv.leading)[number] | (typeof Csv.trailing)[number], Column> = {
  cell: text("cell", (r) => r.cell, true),
  cell_name: text("cell_name", (r) => r.cellName, true),
  instance: text("instance", (r) => r.instance, true),
  persona_id: text("persona_id", (r) => r.personaId, true),
  type: text("type", (r) => r.type, true),
  status: text("status", (r) => r.status, true),
  selected: text("selected", (r) => r.selected?.join(" ") ?? null, false),
  calls: double("calls", (r) => r.usage.calls),
  prompt_tokens: double("prompt_tokens", (r) => r.usage.promptTokens),
  completion_tokens: double("completion_tokens", (r) => r.usage.completionTokens),
  error_stage: text("error_stage", (r) => r.error?.stage ?? null, false),
  error_plugin: text("error_plugin", (r) => r.error?.plugin ?? null, false),
  error_message: text("error_message", (r) => r.error?.message ?? null, false)
}

/** Names the writing library, without a version or a time, so the bytes stay the same. */
const createdBy = "cupid-lab"

/** Write the rows to `file` atomically, one row group (default 10,000 rows) at a time. */
export const write = (
  file: string,
  rows: ReadonlyArray<Row>,
  options: { readonly rowGroupRows?: number } = {}
): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  Files.writeFileAtomicWith(file, (put) =>
    Effect.gen(function*() {
      const columns = [
        ...Csv.leading.map((name) => fixed[name]),
        ...Csv.scoreColumns(rows).map((c) => double(c.title, c.value)),
        ...Csv.trailing.map((name) => fixed[name])
      ]
      const bytes = new ByteWriter()
      const schema = [{ name: "schema", num_children: columns.length }, ...columns.map((c) => c.element)]
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
        parquet.write({ columnData: columns.map((c) => ({ name: c.element.name, data: group.map(c.value) })), rowGroupSize: group.length })
        yield* put(take())
      }
      parquet.finish()
      yield* put(take())
    }))
