import { Either, ParseResult, Predicate, Schema } from "effect"
import type { BatchError, ChatBody } from "../OpenAiServer.js"

export const ENDPOINT = "/v1/chat/completions"

const ChatBodySchema = Schema.Struct(
  {
    model: Schema.String,
    messages: Schema.Array(Schema.Struct({ role: Schema.String, content: Schema.String }))
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
const InputLine = Schema.Struct({
  custom_id: Schema.String,
  method: Schema.Literal("POST"),
  url: Schema.Literal(ENDPOINT),
  body: ChatBodySchema
})
export const CreateBody = Schema.Struct({
  input_file_id: Schema.String,
  endpoint: Schema.String,
  completion_window: Schema.String,
  metadata: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.String })))
})

export interface Line {
  readonly customId: string
  readonly body: ChatBody
}

/** An input file read once at upload: its lines, or why a batch on it fails. */
export interface Parsed {
  readonly lines: ReadonlyArray<Line>
  readonly customIds: ReadonlyArray<string>
  readonly errors: ReadonlyArray<BatchError>
}

export const lineError = (
  line: number | null,
  code: string,
  message: string,
  param: string | null = null
): BatchError => ({
  code,
  line,
  message,
  param
})

/** The first issue of a decoding failure, with its path as the API's `param`. */
export const firstIssue = (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  const param = issue?.path.map(String).join(".") ?? ""
  return { param: param === "" ? null : param, message: `${param}: ${issue?.message ?? "invalid"}` }
}

/** Reads a batch input file as the API validates it: every line a chat request, custom_ids unique, one model. */
export const parseInput = (text: string): Parsed => {
  const rows = text.split("\n")
  if (rows.at(-1)?.trim() === "") rows.pop()
  const lines: Array<Line> = []
  const customIds: Array<string> = []
  const errors: Array<BatchError> = []
  if (rows.length === 0) errors.push(lineError(null, "empty_file", "The batch input file is empty."))
  rows.forEach((row, i) => {
    const at = i + 1
    let json: unknown
    try {
      json = JSON.parse(row)
    } catch {
      return errors.push(lineError(at, "invalid_json_line", "This line is not parseable as valid JSON."))
    }
    if (Predicate.hasProperty(json, "custom_id") && typeof json.custom_id === "string") customIds.push(json.custom_id)
    const decoded = Schema.decodeUnknownEither(InputLine)(json)
    if (Either.isLeft(decoded)) {
      const { message, param } = firstIssue(decoded.left)
      return errors.push(lineError(at, "invalid_request", message, param))
    }
    const { body, custom_id } = decoded.right
    if (lines.some((l) => l.customId === custom_id))
      return errors.push(
        lineError(at, "duplicate_custom_id", `The custom_id ${custom_id} is not unique in this file.`, "custom_id")
      )
    if (lines.length > 0 && lines[0]!.body.model !== body.model)
      return errors.push(lineError(at, "mismatched_model", "All requests of a batch must use one model.", "body.model"))
    lines.push({ customId: custom_id, body })
  })
  return { lines, customIds, errors }
}
