/**
 * The wire format of the `http` stages (docs/http-systems.md, docs/schemas/http-system.schema.json):
 * what a service is sent, what it must answer, and how an answer that does not follow the protocol
 * is described. Every body is built from the visible query alone: the request, the sessions'
 * positions and messages (and dates, summaries), an opaque instance id and history id.
 */
import { Domain, Hash } from "@cupid-lab/core"
import { Either, ParseResult, Schema } from "effect"

export const Message = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: Schema.String,
  speaker: Schema.optional(Schema.String).annotations({
    description: "Who speaks, where the benchmark names its speakers (LoCoMo)."
  })
}).annotations({ identifier: "Message" })

export const Summary = Schema.Struct({
  context: Schema.Array(Schema.String),
  preferences: Schema.Array(Schema.String)
}).annotations({ identifier: "Summary", description: "The pipeline summarizer's summary of the session." })

export const Session = Schema.Struct({
  id: Schema.String.annotations({ description: "s1 ... sN, the name a ranking gives the session by." }),
  position: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)).annotations({
    title: "position",
    description: "1-based chronological position: 1 is the oldest session."
  }),
  date: Schema.optional(Schema.String).annotations({ description: "YYYY-MM-DDTHH:MM, when the benchmark dates it." }),
  dialogue: Schema.Array(Message).annotations({
    description:
      "The session's messages in the configured representation (all of them, the user's, or the first user message; none when summaries are ranked)."
  }),
  summary: Schema.optional(Summary)
}).annotations({ identifier: "Session" })
export type Session = typeof Session.Type

export const Query = Schema.Struct({
  instance: Schema.String.annotations({
    description:
      "Opaque: a hash of the request and the history. Equal ids mean the same request over the same sessions."
  }),
  history: Schema.String.annotations({
    description: "Opaque: a hash of the sessions as sent, the id the ingest call gave them."
  }),
  request: Schema.String.annotations({ description: "The user's current request." }),
  date: Schema.optional(Schema.String).annotations({ description: "When the request is made, when dated." }),
  sessions: Schema.Array(Session),
  preference: Schema.optional(Schema.String).annotations({
    description: "Generators with `preference: inferred` only: the preference the pipeline's inferrer stated."
  })
}).annotations({ identifier: "Query", title: "POST url" })
export type Query = typeof Query.Type

export const Ingest = Schema.Struct({
  history: Query.fields.history,
  sessions: Schema.Array(Session)
}).annotations({ identifier: "Ingest", title: "POST url/ingest" })
export type Ingest = typeof Ingest.Type

export const RankingAnswer = Schema.Struct({
  ranking: Schema.Array(
    Schema.Struct({
      id: Schema.String,
      score: Schema.Number.pipe(Schema.finite()).annotations({ title: "score", description: "Higher is better." })
    })
  ).annotations({ description: "Sessions that were sent, each at most once, in any order." })
}).annotations({ identifier: "RankingAnswer", title: "retriever answer" })

const Text = Schema.String.pipe(
  Schema.filter((s) => s.trim() !== "", { message: () => "expected a non-empty text" })
).annotations({ jsonSchema: { type: "string", minLength: 1 } })

export const PreferenceAnswer = Schema.Struct({
  preference: Text,
  analysis: Schema.optional(Schema.String)
}).annotations({ identifier: "PreferenceAnswer", title: "inferrer answer" })

export const ResponseAnswer = Schema.Struct({ response: Text }).annotations({
  identifier: "ResponseAnswer",
  title: "generator answer"
})

/** The shape each stage expects, as error messages quote it. */
export const expectedShape = {
  retrieve: '{"ranking": [{"id": "s1", "score": 0.9}, ...]}',
  infer: '{"preference": "..."}',
  generate: '{"response": "..."}'
} as const

const messagesOf = (
  session: Domain.SessionView,
  representation: Domain.SessionRepresentation
): ReadonlyArray<Domain.Message> => {
  switch (representation) {
    case "dialogue":
      return session.dialogue
    case "user-turns":
      return session.dialogue.filter((m) => m.role === "user")
    case "first-user-message":
      return session.dialogue.filter((m) => m.role === "user").slice(0, 1)
    case "summary":
      return []
  }
}

const wireMessage = (m: Domain.Message): typeof Message.Type =>
  m.speaker === undefined
    ? { role: m.role, content: m.content }
    : { role: m.role, content: m.content, speaker: m.speaker }

/** A session as sent: its id, position, date and messages; its summary when there is one. */
export const session = (
  s: Domain.SessionView,
  representation: Domain.SessionRepresentation,
  summary?: Domain.SessionSummary
): Session => ({
  id: s.id,
  position: s.index + 1,
  ...(s.date === undefined ? {} : { date: s.date }),
  dialogue: messagesOf(s, representation).map(wireMessage),
  ...(summary === undefined ? {} : { summary: { context: summary.context, preferences: summary.preferences } })
})

/** `h` and 24 hex digits of the hash of the sessions as sent. */
export const historyId = (sessions: ReadonlyArray<Session>): string =>
  `h${Hash.sha256Hex(Hash.canonicalJson(sessions)).slice(0, 24)}`

/** `i` and 24 hex digits of the hash of the request, its date and the history: nothing a dataset's id could leak. */
export const instanceId = (request: string, date: string | undefined, history: string): string =>
  `i${Hash.sha256Hex(Hash.canonicalJson({ request, date: date ?? null, history })).slice(0, 24)}`

/** The body of a query (and the history to ingest first), from visible text only. */
export const query = (o: {
  readonly request: string
  readonly date?: string | undefined
  readonly sessions: ReadonlyArray<Session>
  readonly preference?: string | undefined
}): Query => {
  const history = historyId(o.sessions)
  return {
    instance: instanceId(o.request, o.date, history),
    history,
    request: o.request,
    ...(o.date === undefined ? {} : { date: o.date }),
    sessions: o.sessions,
    ...(o.preference === undefined ? {} : { preference: o.preference })
  }
}

/** `ranking[1].score` */
const fieldOf = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, p) => (typeof p === "number" ? `${out}[${p}]` : out === "" ? String(p) : `${out}.${String(p)}`),
    ""
  )

/**
 * Read a 2xx body with `schema`: the decoded answer, or why it does not follow the protocol,
 * naming the field and what was expected (at most three problems).
 */
export const decodeAnswer = <A, I>(
  schema: Schema.Schema<A, I>,
  text: string,
  expected: string
): Either.Either<A, string> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return Either.left(`the body is not JSON (${e instanceof Error ? e.message : String(e)}); expected ${expected}`)
  }
  return Either.mapLeft(Schema.decodeUnknownEither(schema, { errors: "all" })(json), (e) => {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(e)
    const listed = issues
      .slice(0, 3)
      .map((i) => (i.path.length === 0 ? `the body: ${i.message}` : `field ${fieldOf(i.path)}: ${i.message}`))
    const more = issues.length > 3 ? `; and ${issues.length - 3} more` : ""
    return `${listed.join("; ")}${more}; expected ${expected}`
  })
}

/** Problems of a decoded ranking against the sessions sent: unknown ids and ids ranked twice. */
export const rankingProblems = (
  ranking: ReadonlyArray<{ readonly id: string }>,
  sent: ReadonlyArray<Session>
): string | undefined => {
  const known = new Set(sent.map((s) => s.id))
  const seen = new Set<string>()
  for (const [i, r] of ranking.entries()) {
    if (!known.has(r.id)) {
      const range = sent.length === 0 ? "none was sent" : `expected one of ${sent[0]!.id} ... ${sent.at(-1)!.id}`
      return `field ranking[${i}].id: ${JSON.stringify(r.id)} is not a session that was sent (${range})`
    }
    if (seen.has(r.id))
      return `field ranking[${i}].id: ${JSON.stringify(r.id)} is ranked twice; expected each session at most once`
    seen.add(r.id)
  }
  return undefined
}
