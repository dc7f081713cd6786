import { fileWriter, parquetWriteRows } from "hyparquet-writer"
import type { SchemaElement } from "hyparquet"
import { Domain } from "@cupid-lab/core"

/*
 * Writes rows in the released parquet schema (the nested layout pyarrow produces for lists of
 * structs), for test fixtures and benchmarks. hyparquet-writer is a development dependency: nothing
 * the CLI or the loader runs imports this module.
 */

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

export const releasedSchema: Array<SchemaElement> = [
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

const columns = Domain.releasedColumns.map((name) => ({ name }))

/** Streams rows into a parquet file, `rowGroupSize` rows per row group. */
export const writeParquet = (
  file: string,
  rows: Iterable<Domain.CupidRow | Record<string, unknown>>,
  options: { readonly rowGroupSize?: number } = {}
): Promise<void> =>
  Promise.resolve(
    parquetWriteRows({
      writer: fileWriter(file),
      rows: rows as Iterable<Record<string, unknown>>,
      columns,
      schema: releasedSchema,
      rowGroupSize: options.rowGroupSize ?? 500
    })
  )
