/**
 * Turns Effect Schema parse errors into short, per-path messages: the noise an optional field adds
 * ("Expected undefined") is dropped, literal alternatives are joined, and an unexpected key names
 * the valid ones.
 */
import { Either, ParseResult, type Schema } from "effect"

export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const expected = /^Expected (.*), actual (.*)$/s
const unexpectedKeys = /^is unexpected, expected: (.*)$/s

/** `noun` names what the keys are in messages: "option" for plugin options, "key" for config keys. */
export const clean = (issues: ReadonlyArray<Issue>, noun: string): Array<Issue> => {
  const byPath = new Map<string, { path: ReadonlyArray<PropertyKey>; messages: Array<string> }>()
  for (const issue of issues) {
    const k = JSON.stringify(issue.path.map(String))
    const entry = byPath.get(k) ?? { path: issue.path, messages: [] }
    entry.messages.push(issue.message)
    byPath.set(k, entry)
  }
  const out: Array<Issue> = []
  for (const { path, messages } of byPath.values()) {
    const unexpected = messages.map((m) => unexpectedKeys.exec(m)).find((m) => m !== null)
    if (unexpected) {
      const valid = unexpected[1]!.split(" | ").map((s) => s.replace(/^"|"$/g, "")).sort()
      // Reported at the enclosing object, which is where the misspelt key has to be fixed.
      out.push({ path: path.slice(0, -1), message: `unknown ${noun} "${String(path.at(-1))}"; valid ${noun}s: ${valid.join(", ")}` })
      continue
    }
    const useful = messages.length > 1 ? messages.filter((m) => !/^Expected undefined, actual /.test(m)) : messages
    const parsed = useful.map((m) => expected.exec(m))
    if (useful.length > 1 && parsed.every((p) => p !== null && p[2] === parsed[0]![2])) {
      out.push({ path, message: `Expected ${parsed.map((p) => p![1]).join(" | ")}, actual ${parsed[0]![2]}` })
    } else {
      out.push({ path, message: [...new Set(useful)].join("; ") })
    }
  }
  return out
}

/** Decode with every issue collected and unknown keys rejected; issues come back cleaned. */
export const decode = <A, I>(
  schema: Schema.Schema<A, I, never>,
  value: unknown,
  noun: string
): Either.Either<A, Array<Issue>> => {
  const result = ParseResult.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(value)
  return Either.mapLeft(result, (e) => clean(ParseResult.ArrayFormatter.formatIssueSync(e), noun))
}
