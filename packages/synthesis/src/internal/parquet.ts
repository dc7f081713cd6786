// Rows in the released parquet layout (lists of structs nested as pyarrow writes them), so the
// dataset loader reads the output like the published file.
import { Domain } from "@cupid-lab/core"
import type { SchemaElement } from "hyparquet"
import { parquetWriteBuffer } from "hyparquet-writer"

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

const schema: Array<SchemaElement> = [
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

/** The parquet bytes of `rows`, column by column in the released order. */
export const toParquet = (rows: ReadonlyArray<Domain.CupidRow>): Uint8Array =>
  new Uint8Array(
    parquetWriteBuffer({
      schema,
      columnData: Domain.releasedColumns.map((name) => ({ name, data: rows.map((r) => r[name]) })),
      rowGroupSize: 500
    })
  )
