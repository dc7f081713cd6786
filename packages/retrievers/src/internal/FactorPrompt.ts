import { Schema } from "effect"

/** The messages asking a chat model which sessions involve the same context factor as the request. */
export const messages = (
  request: string,
  sessions: ReadonlyArray<{ readonly id: string; readonly opening: string }>
) => [
  {
    role: "system" as const,
    content:
      "You match a user's earlier chat sessions to the context factor of their new request. A context factor is one " +
      "concrete thing in the user's world (a person or group, organization, tool, artifact, piece of media, place, " +
      "activity or event) that shapes what they expect. The first message of each session names its factor."
  },
  {
    role: "user" as const,
    content: [
      `New request:\n${request}`,
      "",
      "First messages of earlier sessions:",
      ...sessions.map((s) => `[${s.id}] ${s.opening.length > 1500 ? `${s.opening.slice(0, 1500)}...` : s.opening}`),
      "",
      "Which sessions involve exactly the same context factor as the new request? A similar but different factor " +
        "(another colleague, another tool or venue of the same kind) does not count.",
      'Answer with JSON only: {"factor": "<the factor the new request names>", "sessions": ["s1", ...]} ' +
        "(an empty list when no session involves it)."
    ].join("\n")
  }
]

/** A well-formed answer naming the given sessions, for dry runs. */
export const example = (ids: ReadonlyArray<string>): string =>
  JSON.stringify({ factor: "the factor named in the request", sessions: ids })

const Answer = Schema.Struct({
  factor: Schema.optional(Schema.String),
  sessions: Schema.Array(Schema.Union(Schema.String, Schema.Number))
})

export type Parsed =
  { readonly ok: true; readonly sessions: ReadonlyArray<string> } | { readonly ok: false; readonly reason: string }

const normalizeId = (raw: string | number): string => {
  const s = String(raw)
    .trim()
    .replace(/^\[|\]$/g, "")
  return /^\d+$/.test(s) ? `s${s}` : s.toLowerCase()
}

/**
 * Read the session ids from an answer: a JSON object (possibly in a code fence or surrounded by
 * prose) with a `sessions` list of ids ("s3", "[s3]" or 3); failing that, a line starting with
 * "sessions:". Ids that are not among `known` make the answer invalid.
 */
export const parse = (answer: string, known: ReadonlySet<string>): Parsed => {
  let ids: Array<string> | undefined
  const start = answer.indexOf("{")
  const end = answer.lastIndexOf("}")
  if (start >= 0 && end > start) {
    try {
      const decoded = Schema.decodeUnknownEither(Answer)(JSON.parse(answer.slice(start, end + 1)))
      if (decoded._tag === "Right") ids = decoded.right.sessions.map(normalizeId)
    } catch {
      // not JSON: fall through to the line form
    }
  }
  if (ids === undefined) {
    const line = /^\s*[*-]?\s*\**sessions\**\s*:\s*(.*)$/im.exec(answer)
    if (line !== null) {
      const body = line[1]!.trim()
      ids = /^(none|\[\s*\])\.?$/i.test(body) ? [] : (body.match(/\[?s?\d+\]?/gi) ?? []).map(normalizeId)
    }
  }
  if (ids === undefined) {
    return { ok: false, reason: `expected a JSON object {"sessions": [...]}, got: ${answer.slice(0, 200)}` }
  }
  const unknown = ids.filter((id) => !known.has(id))
  if (unknown.length > 0) {
    return {
      ok: false,
      reason: `the answer names sessions that are not in the list: ${[...new Set(unknown)].join(", ")}`
    }
  }
  return { ok: true, sessions: [...new Set(ids)] }
}
