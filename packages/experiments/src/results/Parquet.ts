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
import { finiteOrNull, type Row } from "./ResultLine.js"

const elementOf = (c: Csv.Column): SchemaElement =>
  c.kind === "number"
    ? { name: c.title, type: "DOUBLE", repetition_type: "OPTIONAL" }
    : { name: c.title, type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: c.required ? "REQUIRED" : "OPTIONAL" }

const valueOf = (c: Csv.Column, r: Row): string | number | null => {
  if (c.kind === "number") return finiteOrNull(c.value(r))
  const x = c.value(r)
  return x === null ? null : Csv.visibleControls(x)
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
      const columns = Csv.columns(rows)
      const bytes = new ByteWriter()
      const schema = [{ name: "schema", num_children: columns.length }, ...columns.map(elementOf)]
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
        parquet.write({ columnData: columns.map((c) => ({ name: c.title, data: group.map((r) => valueOf(c, r)) })), rowGroupSize: group.length })
        yield* put(take())
      }
      parquet.finish()
      yield* put(take())
    }))
