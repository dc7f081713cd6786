// Reading a JSON object out of a model's answer: the whole answer, a fenced block, or the span
// from the first "{" to the last "}". Errors say what was found, for the failure record.
import { Either, ParseResult, Schema } from "effect"
import { excerpt } from "./text.js"

const candidates = (answer: string): ReadonlyArray<string> => {
  const out = [answer.trim()]
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(answer)
  if (fenced !== null) out.push(fenced[1]!.trim())
  const first = answer.indexOf("{")
  const last = answer.lastIndexOf("}")
  if (first >= 0 && last > first) out.push(answer.slice(first, last + 1))
  return out
}

export const parseObject = <A, I>(schema: Schema.Schema<A, I>, answer: string): Either.Either<A, string> => {
  let parsed: unknown = undefined
  let found = false
  for (const c of candidates(answer)) {
    try {
      parsed = JSON.parse(c)
      found = true
      break
    } catch {
      // try the next candidate
    }
  }
  if (!found) return Either.left(`the answer is not JSON: "${excerpt(answer)}"`)
  return Either.mapLeft(Schema.decodeUnknownEither(schema)(parsed, { errors: "all" }), (e) => {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(e)
      .slice(0, 3)
      .map((i) => (i.path.length === 0 ? i.message : `${i.path.join(".")}: ${i.message}`))
    return `the JSON answer does not fit: ${issues.join("; ")}`
  })
}
