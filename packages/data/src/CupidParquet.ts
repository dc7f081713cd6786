/**
 * CUPID rows in the released parquet layout: the schema (lists of structs nested as pyarrow writes
 * them), so that `Dataset.open` reads what is written here exactly like the published file. One
 * definition for every writer: synthesis's outputs, test fixtures and benchmarks.
 *
 * @example
 * const bytes = CupidParquet.toBuffer(rows) // the bytes of instances.parquet
 * yield* Effect.promise(() => CupidParquet.write("/tmp/fixture.parquet", rows, { rowGroupSize: 2 }))
 */
import { Domain } from "@cupid-lab/core"
import type { SchemaElement } from "hyparquet"
import { fileWriter, parquetWriteBuffer, parquetWriteRows } from "hyparquet-writer"

const text = (name: string): SchemaElement => ({
  name,
  type: "BYTE_ARRAY",
  converted_type: "UTF8",
  repetition_type: "OPTIONAL"
})
const list = (name: string): ReadonlyArray<SchemaElement> => [
  { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
  { name: "list", repetition_type: "REPEATED", num_children: 1 }
]

/** The released file's schema, column by column in {@link Domain.releasedColumns} order. */
export const schema: Array<SchemaElement> = [
  { name: "schema", num_children: 7 },
  text("persona_id"),
  text("instance_type"),
  text("current_request"),
  text("current_context_factor"),
  text("current_contextual_preference"),
  ...list("current_checklist"),
  text("element"),
  ...list("prior_interactions"),
  { name: "element", repetition_type: "OPTIONAL", num_children: 3 },
  text("context_factor"),
  text("contextual_preference"),
  ...list("dialogue"),
  { name: "element", repetition_type: "OPTIONAL", num_children: 2 },
  text("role"),
  text("content")
]

/** The parquet bytes of `rows`, 500 rows per row group. */
export const toBuffer = (rows: ReadonlyArray<Domain.CupidRow>): Uint8Array =>
  new Uint8Array(
    parquetWriteBuffer({
      schema,
      columnData: Domain.releasedColumns.map((name) => ({ name, data: rows.map((r) => r[name]) })),
      rowGroupSize: 500
    })
  )

/** Streams rows into a parquet file, `rowGroupSize` rows per row group (default 500). */
export const write = (
  file: string,
  rows: Iterable<Domain.CupidRow | Record<string, unknown>>,
  options: { readonly rowGroupSize?: number } = {}
): Promise<void> =>
  Promise.resolve(
    parquetWriteRows({
      writer: fileWriter(file),
      rows: rows as Iterable<Record<string, unknown>>,
      columns: Domain.releasedColumns.map((name) => ({ name })),
      schema,
      rowGroupSize: options.rowGroupSize ?? 500
    })
  )
