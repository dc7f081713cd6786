/**
 * The system under test as a service: a retriever, an inferrer and a generator named `http`, each
 * a POST of the visible query to a url of yours, answered as JSON (docs/http-systems.md; the JSON
 * Schema is docs/schemas/http-system.schema.json, made from the schemas here by {@link jsonSchema}).
 *
 * - The retriever is a ranker: the service scores the sessions (`{"ranking": [{"id", "score"}]}`),
 *   and the config's `k` or `select` cuts the ranking (the top 2 by default); `representation`
 *   says which messages of each session are sent.
 * - The inferrer answers `{"preference": "..."}`, the generator `{"response": "..."}`; they are
 *   sent the request and the evidence (the sessions the retriever selected).
 * - A body holds the request, the sessions' positions, dates and messages, and opaque ids (hashes
 *   of that text): never a label, a context factor, a gold preference or the dataset's id.
 * - `headers` take their values from environment variables; `ingest: true` posts each history to
 *   `url/ingest` once before its first query; answers are cached like model calls and recorded in
 *   calls.jsonl; the call policy (concurrency, rpm, the shared `limiter`, `timeoutMs`, retries on
 *   429 and 5xx that honour Retry-After) is the hosted models' (Resilience).
 *
 * @example
 * # config
 * pipeline:
 *   retriever: { use: http, url: "http://127.0.0.1:8000/rank", k: 2, ingest: true }
 *   inferrer: { use: http, url: "http://127.0.0.1:8000/infer", headers: { Authorization: { env: MEMORY_TOKEN, prefix: "Bearer " } } }
 */
import { Domain, Errors, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Either, JSONSchema, Schema } from "effect"
import * as Client from "./internal/http/Client.js"
import * as Protocol from "./internal/http/Protocol.js"
import * as Secret from "./internal/Secret.js"
import * as Resilience from "./Resilience.js"

export { Ingest, PreferenceAnswer, Query, RankingAnswer, ResponseAnswer, Session } from "./internal/http/Protocol.js"

const Url = Schema.String.pipe(
  Schema.filter((s) => URL.canParse(s) && ["http:", "https:"].includes(new URL(s).protocol), {
    message: () => "expected an http:// or https:// URL"
  })
)

const HeaderName = Schema.String.pipe(
  Schema.pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, { message: () => "expected an HTTP header name" })
)

/** A header's value: an environment variable's, after an optional prefix (`Bearer `). */
export const HeaderValue = Schema.Struct({
  env: Secret.KeyEnvName,
  prefix: Schema.optional(Schema.String)
}).annotations({
  message: () => ({
    message:
      'expected { env: VARIABLE, prefix: "..." }: a header\'s value is read from an environment variable, never written in the config (the value given is not shown)',
    override: true
  })
})

/** The options every `http` stage has. */
export const commonFields = {
  /** Where queries are posted. */
  url: Url,
  /** Headers sent with every request, each value from an environment variable. */
  // `exact`: a union with undefined would quote a value pasted in the config in its message.
  headers: Schema.optionalWith(Schema.Record({ key: HeaderName, value: HeaderValue }), {
    exact: true,
    default: () => ({})
  }),
  /** Post each history to `url/ingest` once before its first query. */
  ingest: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Free text added to the cache key: change it when the service changes. */
  revision: Schema.optional(Schema.String),
  ...Resilience.policyFields
}

export const RetrieverOptions = Schema.Struct({
  ...commonFields,
  representation: Schema.optionalWith(Domain.SessionRepresentation, { default: () => "dialogue" as const })
})
export type RetrieverOptions = typeof RetrieverOptions.Type

export const InferrerOptions = Schema.Struct(commonFields)
export type InferrerOptions = typeof InferrerOptions.Type

export const GeneratorOptions = Schema.Struct({
  ...commonFields,
  /** `none`: no preference is sent; `inferred`: the preference the pipeline's inferrer stated (never the gold one). */
  preference: Schema.optionalWith(Schema.Literal("none", "inferred"), { default: () => "none" as const })
})
export type GeneratorOptions = typeof GeneratorOptions.Type

/**
 * The protocol as a JSON Schema document: every body a stage sends or a service answers. Extra
 * fields are allowed, so a service may answer more than it is asked and later versions may send more.
 */
export const jsonSchema = (): object => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const root = JSONSchema.fromAST(
    Schema.Union(
      Protocol.Query,
      Protocol.Ingest,
      Protocol.RankingAnswer,
      Protocol.PreferenceAnswer,
      Protocol.ResponseAnswer
    ).ast,
    { definitions, additionalPropertiesStrategy: "allow" }
  )
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "cupid-lab http systems",
    description:
      "The bodies of the http stages (docs/http-systems.md): a Query is posted to the configured url, an Ingest to url/ingest; a retriever service answers a RankingAnswer, an inferrer a PreferenceAnswer, a generator a ResponseAnswer.",
    ...root,
    $defs: definitions
  }
}

const readWith =
  <A, I, V>(schema: Schema.Schema<A, I>, expected: string, then: (a: A) => Either.Either<Client.Read<V>, string>) =>
  (text: string): Either.Either<Client.Read<V>, string> =>
    Either.flatMap(Protocol.decodeAnswer(schema, text, expected), then)

const rankingOf = (sessions: ReadonlyArray<Protocol.Session>) =>
  readWith(Protocol.RankingAnswer, Protocol.expectedShape.retrieve, ({ ranking }) => {
    const problem = Protocol.rankingProblems(ranking, sessions)
    return problem !== undefined
      ? Either.left(problem)
      : Either.right({
          value: Retriever.fromScores(ranking.map((r) => [r.id, r.score] as const)),
          shown: ranking
        })
  })

const stageError = (stage: string, reason: string) => new Errors.StageError({ stage, plugin: "http", reason })

export const retriever = Plugin.retriever({
  name: "http",
  description: "A retrieval service of yours: POSTs the request and the sessions to a url, which answers a ranking.",
  options: RetrieverOptions,
  defaultSelect: { top: 2 },
  make: (o) =>
    Effect.map(Client.make(o, "retrieve"), (endpoint) => ({
      needsSummaries: o.representation === "summary",
      retrieve: (input) =>
        Effect.suspend(() => {
          const sessions: Array<Protocol.Session> = []
          for (const s of input.query.sessions) {
            const summary = o.representation === "summary" ? input.summaries?.get(s.id) : undefined
            if (o.representation === "summary" && summary === undefined)
              return Effect.fail(
                stageError("retrieve", `session ${s.id} has no summary; the summary representation needs a summarizer`)
              )
            sessions.push(Protocol.session(s, o.representation, summary))
          }
          const body = Protocol.query({ request: input.query.request, date: input.query.date, sessions })
          // A dry run ranks newest first, as every tie is broken.
          const dry = Retriever.fromScores(sessions.map((s) => [s.id, 0] as const))
          return Client.ask(endpoint, body, rankingOf(sessions), dry)
        })
    }))
})

const evidenceSessions = (evidence: {
  readonly sessions: ReadonlyArray<Domain.SessionView>
  readonly summaries?: ReadonlyArray<Domain.SessionSummary> | undefined
}): ReadonlyArray<Protocol.Session> => {
  const summaries = new Map((evidence.summaries ?? []).map((s) => [s.sessionId, s]))
  return evidence.sessions.map((s) => Protocol.session(s, "dialogue", summaries.get(s.id)))
}

export const inferrer = Plugin.inferrer({
  name: "http",
  description:
    "An inference service of yours: POSTs the request and the evidence to a url, which answers the preference.",
  options: InferrerOptions,
  make: (o) =>
    Effect.map(Client.make(o, "infer"), (endpoint) => ({
      infer: (input) =>
        Effect.suspend(() => {
          const body = Protocol.query({ request: input.request, sessions: evidenceSessions(input.evidence) })
          const read = readWith(Protocol.PreferenceAnswer, Protocol.expectedShape.infer, (a) =>
            Either.right({
              value: { preference: a.preference.trim(), analysis: a.analysis ?? "" },
              shown: a.preference
            })
          )
          return Client.ask(endpoint, body, read, { preference: "(dry run: no preference asked for)", analysis: "" })
        })
    }))
})

export const generator = Plugin.generator({
  name: "http",
  description:
    "A generation service of yours: POSTs the request, the evidence and optionally the inferred preference to a url, which answers the response.",
  options: GeneratorOptions,
  make: (o) =>
    Effect.map(Client.make(o, "generate"), (endpoint) => ({
      usesGoldPreference: false,
      generate: (input) =>
        Effect.suspend(() => {
          if (o.preference === "inferred" && (input.preference === undefined || input.preference.trim() === ""))
            return Effect.fail(
              stageError(
                "generate",
                "preference: inferred, but no inferred preference was passed (configure an inferrer, or use preference: none)"
              )
            )
          const body = Protocol.query({
            request: input.request,
            sessions: evidenceSessions(input.evidence),
            preference: o.preference === "inferred" ? input.preference : undefined
          })
          const read = readWith(Protocol.ResponseAnswer, Protocol.expectedShape.generate, (a) =>
            Either.right({ value: { text: a.response }, shown: a.response })
          )
          return Client.ask(endpoint, body, read, { text: "(dry run: no response asked for)" })
        })
    }))
})

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [retriever, inferrer, generator]
