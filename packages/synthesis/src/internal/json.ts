// A JSON object read out of a model's answer (core's AnswerJson) and decoded with a schema.
// Errors say what was found, for the failure record.
import { AnswerJson } from "@cupid-lab/core"
import { Either, ParseResult, Schema } from "effect"
import { excerpt } from "./text.js"

export const parseObject = <A, I>(schema: Schema.Schema<A, I>, answer: string): Either.Either<A, string> => {
  const found = AnswerJson.extract(answer)
  if (found === undefined) return Either.left(`the answer is not JSON: "${excerpt(answer)}"`)
  return Either.mapLeft(Schema.decodeUnknownEither(schema)(found.value, { errors: "all" }), (e) => {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(e)
      .slice(0, 3)
      .map((i) => (i.path.length === 0 ? i.message : `${i.path.join(".")}: ${i.message}`))
    return `the JSON answer does not fit: ${issues.join("; ")}`
  })
}
