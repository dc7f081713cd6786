/**
 * `<out>/results.parquet`: the rows and columns of results.csv (see Csv.ts: same order, same
 * names) as typed data for pandas, polars, DuckDB or Arrow.
 *
 * - ids, `type`, `status`: required UTF-8 strings.
 * - `selected`: the selected session ids joined by one space, as in the CSV (a plain string column
 *   groups, sorts and compares in pandas, where a list column holds unhashable arrays;
 *   `df["selected"].str.split()` gives the lists). Null when the line has no selection (no retriever,
 *   or the pair failed before retrieval); `""` when the retriever selected nothing.
 * - scores, `<name>.num` / `<name>.den` of a counted metric, `calls`, `prompt_tokens`,
 *   `completion_tokens`: DOUBLE, null where the CSV field is empty (missing, or not finite).
 * - `error_stage`, `error_plugin`, `error_message`: strings, null on a line without an error.
 *
 * Text is written as it is: no formula guard (the CSV's leading `'`), since a parquet reader
 * never evaluates a cell. The file carries no time or host: a run gives the same bytes each time.
 * Rows are encoded and written one row group at a time, so a large run is never held twice as
 * columns or as file bytes.
 *
 * @example
 * import * as Parquet from "@cupid-lab/experiments/report/Parquet"
 * yield* Parquet.write("runs/x/results.parquet", run.index) // needs a FileSystem
 * // python: pd.read_parquet("runs/x/results.parquet") / pl.read_parquet(...)
 */
import { Files } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import type { SchemaElement } from "hyparquet"
import { ByteWriter, ParquetWriter } from "hyparquet-writer"
import * as Csv from "./Csv.js"
import type { Row } from "./RunDir.js"

type Value = string | number | null

export interface Column {
  readonly element: SchemaElement
  readonly value: (r: Row) => Value
}

const text = (name: string, value: (r: Row) => string | null, required: boolean): Column => ({
  element: { name, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: required ? "REQUIRED" : "OPTIONAL" },
  value
})

const double = (name: string, value: (r: Row) => number | null | undefined): Column => ({
  element: { name, type: "DOUBLE", repetition_type: "OPTIONAL" },
  value: (r) => {
    const x = value(r)
    return x === null || x === undefined || !Number.isFinite(x) ? null : x
  }
})

type Fixed = (typeof Csv.leading)[number] | (typeof Csv.trailing)[number]

/** Keyed by the CSV's own column names, so a column the CSV gains is a type error here. */
const fixed: Record<Fixed, Column> = {
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

/** The columns of a run with these score keys, in the CSV's order. */
export const columns = (keys: ReadonlyArray<Csv.ScoreKey>): Array<Column> => [
  ...Csv.leading.map((name) => fixed[name]),
  ...Csv.scoreColumns(keys).map((c) => double(c.title, c.value)),
  ...Csv.trailing.map((name) => fixed[name])
]

export interface WriteOptions {
  /** Rows per row group (default 10,000): the most rows encoded at once. */
  readonly rowGroupRows?: number
}

/** Names the writing library, without a version or a time, so the bytes stay the same. */
const createdBy = "cupid-lab"

/** Write a run's lines (a Rows.Index, or rows in memory) to `file` atomically (through core's Files.writeFileAtomicWith), one row group at a time. */
export const write = (
  file: string,
  lines: Csv.Source | ReadonlyArray<Row>,
  options: WriteOptions = {}
): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  Files.writeFileAtomicWith(file, (put) =>
    Effect.gen(function*() {
      const groupRows = Math.max(1, options.rowGroupRows ?? 10_000)
      const src = Array.isArray(lines) ? Csv.source(lines) : (lines as Csv.Source)
      const cols = columns(src.scoreKeys)
      const bytes = new ByteWriter()
      const parquet = new ParquetWriter({ writer: bytes, schema: [{ name: "schema", num_children: cols.length }, ...cols.map((c) => c.element)], createdBy })
      // The encoder keeps appending to `bytes`; what it holds goes to the file after each group and
      // the buffer starts over (offsets in the footer count from the file's start, not the buffer's).
      const flush = Effect.suspend(() => put(bytes.getBytes())).pipe(Effect.tap(() => { bytes.index = 0 }))
      for (const group of src.chunks(groupRows)) {
        parquet.write({ columnData: cols.map((c) => ({ name: c.element.name, data: group.map(c.value) })), rowGroupSize: group.length })
        yield* flush
      }
      parquet.finish()
      yield* flush
    }))
