/**
 * The `cohere` provider: chat, embeddings and reranking through `cohere-ai` (`CohereClientV2`).
 * The key comes from `CO_API_KEY` (or the variable `apiKeyEnv` names); `baseURL` points the client
 * at another host (a proxy, or a loopback test server). The SDK is loaded when a model is built.
 *
 * Embeddings use one `inputType` per configured model (Cohere embeds queries and documents
 * differently); configure two models if a retriever should embed them with different types.
 * Rerank answers carry search units rather than tokens, so their token count is the server's
 * `meta.tokens` when present and otherwise estimated.
 *
 * @example
 * # config
 * models:
 *   rerank: { provider: cohere, model: rerank-v3.5, rpm: 100 }
 *   embed: { provider: cohere, model: embed-english-v3.0, inputType: search_document }
 */
import { type LanguageModel, type Models, Errors, Plugin } from "@cupid-lab/core"

import type { CohereClientV2 } from "cohere-ai"
import { Clock, Effect, Redacted, Schema, type Scope } from "effect"
import * as Failure from "./internal/Failure.js"
import * as Secret from "./internal/Secret.js"
import * as Text from "./internal/Text.js"
import * as Resilience from "./Resilience.js"

const PositiveInt = Schema.Int.pipe(Schema.positive())

export const Options = Schema.Struct({
  /** Host root, e.g. `https://api.cohere.com`; the client adds `/v2/...`. */
  baseURL: Schema.optional(Schema.String),
  /** Environment variable holding the key; required unless `baseURL` is set. */
  apiKeyEnv: Schema.optionalWith(Secret.KeyEnvName, { default: () => "CO_API_KEY" }),
  temperature: Schema.optional(Schema.Number),
  topP: Schema.optional(Schema.Number),
  maxTokens: Schema.optional(PositiveInt),
  seed: Schema.optional(Schema.Int),
  inputType: Schema.optionalWith(Schema.Literal("search_document", "search_query", "classification", "clustering"), {
    default: () => "search_document" as const
  }),
  /** Output size for embedding models that support it (embed-v4). */
  dimensions: Schema.optional(PositiveInt),
  /** Texts per embed request (the API accepts at most 96). */
  batchSize: Schema.optionalWith(PositiveInt.pipe(Schema.lessThanOrEqualTo(96)), { default: () => 96 }),
  /** Free text added to the cache key. */
  revision: Schema.optional(Schema.String),
  ...Resilience.policyFields
})
export type Options = Schema.Schema.Type<typeof Options>

const Tokens = Schema.Struct({
  inputTokens: Schema.optional(Schema.Number),
  outputTokens: Schema.optional(Schema.Number)
})

const ChatResponse = Schema.Struct({
  message: Schema.Struct({
    content: Schema.optional(Schema.Array(Schema.Struct({ type: Schema.String, text: Schema.optional(Schema.String) })))
  }),
  finishReason: Schema.optional(Schema.String),
  usage: Schema.optional(Schema.Struct({ tokens: Schema.optional(Tokens), billedUnits: Schema.optional(Tokens) }))
})

const Meta = Schema.optional(Schema.Struct({ tokens: Schema.optional(Tokens), billedUnits: Schema.optional(Tokens) }))

const EmbedResponse = Schema.Struct({
  embeddings: Schema.Struct({ float: Schema.Array(Schema.Array(Schema.Number)) }),
  meta: Meta
})

const RerankResponse = Schema.Struct({
  results: Schema.Array(Schema.Struct({ index: Schema.Int, relevanceScore: Schema.Number })),
  meta: Meta
})

/** The parameters fixed by configuration: exactly those that can change an answer. */
export const params = (options: Options): Record<string, unknown> => {
  const out: Record<string, unknown> = { inputType: options.inputType }
  for (const k of ["temperature", "topP", "maxTokens", "seed", "dimensions", "revision"] as const) {
    if (options[k] !== undefined) out[k] = options[k]
  }
  return out
}

type Sdk = typeof import("cohere-ai")

const detailOf = (body: unknown): string | undefined =>
  typeof body === "string"
    ? body
    : typeof body === "object" && body !== null && typeof (body as { message?: unknown }).message === "string"
      ? (body as { message: string }).message
      : body === undefined
        ? undefined
        : JSON.stringify(body)

/** cohere-ai 8.1 hands a 2xx body that is not JSON back as a parse-failure record instead of throwing. */
const unparsedBody = (body: unknown): boolean =>
  typeof body === "object" &&
  body !== null &&
  (body as { ok?: unknown }).ok === false &&
  (body as { error?: { reason?: unknown } }).error?.reason === "non-json"

const classify = (sdk: Sdk, ctx: Failure.CallContext, error: unknown, now: number) => {
  if (error instanceof sdk.CohereTimeoutError) return Failure.fromConnection(ctx, "timed out in the HTTP client")
  if (error instanceof sdk.CohereError) {
    const status = error.statusCode
    if (status !== undefined && status >= 400) {
      return Failure.fromStatus(
        ctx,
        status,
        detailOf(error.body),
        Failure.retryAfterMs(error.rawResponse?.headers, now)
      )
    }
    if (status !== undefined) return Failure.malformed(ctx, "the body is not JSON")
    return Failure.fromConnection(
      ctx,
      Failure.connectionFailure(error.cause) ?? `connection failed: ${Failure.scrub(error.message, ctx.secrets)}`
    )
  }
  const dropped = Failure.connectionFailure(error)
  return dropped !== undefined ? Failure.fromConnection(ctx, dropped) : Failure.unexpected(ctx, error)
}

/** Build the chat, embedding and rerank services of one configured model. */
export const make = (
  options: Options,
  model: string,
  context: Plugin.ProviderContext = {}
): Effect.Effect<Models.ModelBundle, Errors.PluginError, Scope.Scope> =>
  Effect.gen(function* () {
    const baseURL = options.baseURL !== undefined && options.baseURL.trim() !== "" ? options.baseURL.trim() : undefined
    // A dry run sends nothing, so it needs no key (the placeholder is never used).
    const key = yield* Secret.apiKey(
      "cohere",
      model,
      options.apiKeyEnv,
      baseURL === undefined && context.dryRun !== true
    )
    const sdk = yield* Effect.tryPromise({
      try: () => import("cohere-ai"),
      catch: (e) =>
        new Errors.PluginError({ plugin: "cohere", reason: `cannot load the cohere-ai package: ${String(e)}` })
    })
    const client: CohereClientV2 = new sdk.CohereClientV2({
      token: Redacted.value(key),
      ...(baseURL !== undefined ? { baseUrl: baseURL } : {}),
      maxRetries: 0,
      timeoutInSeconds: Math.ceil(options.timeoutMs / 1000) + 5,
      logging: { silent: true }
    })
    const secrets = yield* Secret.scrubbables(key, context.secretVariables)
    const ctx: Failure.CallContext = { provider: "cohere", model, keyEnv: options.apiKeyEnv, secrets }
    const guard = yield* Resilience.make(options, ctx)
    const info: LanguageModel.ModelInfo = { provider: "cohere", model, params: params(options) }
    const requestOptions = (abortSignal: AbortSignal) => ({ abortSignal, maxRetries: 0 })

    // The request stops at the attempt's deadline (headers or body, however far it got) or when the call is interrupted.
    const send = <A>(deadline: AbortSignal, request: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: (signal) => request(AbortSignal.any([signal, deadline])), catch: (e) => e }).pipe(
        Effect.catchAll((e) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(classify(sdk, ctx, e, now)))
        ),
        Effect.filterOrFail(
          (body) => !unparsedBody(body),
          () => Failure.malformed(ctx, "the body is not JSON")
        )
      )

    const complete = (request: LanguageModel.CompletionRequest) => {
      const body = Text.definedOnly({
        model,
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        temperature: request.temperature ?? options.temperature,
        p: request.topP ?? options.topP,
        maxTokens: request.maxTokens ?? options.maxTokens,
        seed: request.seed ?? options.seed,
        stopSequences: request.stop !== undefined && request.stop.length > 0 ? [...request.stop] : undefined,
        responseFormat: request.responseFormat === "json" ? { type: "json_object" as const } : undefined
      })
      return guard
        .counted(
          (deadline) =>
            send(deadline, (signal) => client.chat(body, requestOptions(signal))).pipe(
              Effect.flatMap(Failure.decode(ctx, ChatResponse, "expected message.content")),
              Effect.map((r) => {
                const text = (r.message.content ?? [])
                  .filter((c) => c.type === "text")
                  .map((c) => c.text ?? "")
                  .join("")
                const tokens = r.usage?.tokens ?? r.usage?.billedUnits
                return {
                  text,
                  promptTokens: tokens?.inputTokens ?? Text.estimatePromptTokens(request.messages),
                  completionTokens: tokens?.outputTokens ?? Text.estimateTextTokens([text]),
                  ...(r.finishReason === "MAX_TOKENS"
                    ? { finishReason: "length" }
                    : r.finishReason
                      ? { finishReason: r.finishReason }
                      : {})
                }
              })
            ),
          () => Text.estimatePromptTokens(request.messages)
        )
        .pipe(Effect.map(([completion, sent]): LanguageModel.Completion => ({ ...completion, ...sent })))
    }

    const embedBatch = (batch: ReadonlyArray<string>) =>
      guard.counted(
        (deadline) =>
          send(deadline, (signal) =>
            client.embed(
              Text.definedOnly({
                model,
                texts: [...batch],
                inputType: options.inputType,
                embeddingTypes: ["float" as const],
                outputDimension: options.dimensions
              }),
              requestOptions(signal)
            )
          ).pipe(
            Effect.flatMap(Failure.decode(ctx, EmbedResponse, "expected embeddings.float")),
            Effect.flatMap((r) =>
              r.embeddings.float.length !== batch.length
                ? Effect.fail(
                    Failure.malformed(ctx, `${r.embeddings.float.length} embeddings for ${batch.length} texts`)
                  )
                : Effect.succeed({
                    vectors: r.embeddings.float.map((v) => Float32Array.from(v)),
                    promptTokens:
                      r.meta?.billedUnits?.inputTokens ?? r.meta?.tokens?.inputTokens ?? Text.estimateTextTokens(batch)
                  })
            )
          ),
        () => Text.estimateTextTokens(batch)
      )

    const embed = (texts: ReadonlyArray<string>) =>
      texts.length === 0
        ? Effect.succeed({ vectors: [], promptTokens: 0 })
        : Effect.forEach(Text.chunks(texts, options.batchSize), embedBatch, { concurrency: "unbounded" }).pipe(
            Effect.map((parts) => ({
              vectors: parts.flatMap(([p]) => p.vectors),
              promptTokens: parts.reduce((n, [p]) => n + p.promptTokens, 0),
              ...Resilience.sumSent(parts.map(([, sent]) => sent))
            }))
          )

    const rerank = (query: string, documents: ReadonlyArray<string>) =>
      documents.length === 0
        ? Effect.succeed({ scores: [], promptTokens: 0 })
        : guard
            .counted((deadline) =>
              send(deadline, (signal) =>
                client.rerank(
                  { model, query, documents: [...documents], topN: documents.length },
                  requestOptions(signal)
                )
              ).pipe(
                Effect.flatMap(Failure.decode(ctx, RerankResponse, "expected results[].relevance_score")),
                Effect.flatMap((r) => {
                  const scores = new Array<number | undefined>(documents.length)
                  for (const x of r.results)
                    if (x.index >= 0 && x.index < documents.length) scores[x.index] = x.relevanceScore
                  const missing = scores.findIndex((s) => s === undefined)
                  return missing >= 0
                    ? Effect.fail(Failure.malformed(ctx, `no score for document ${missing} of ${documents.length}`))
                    : Effect.succeed({
                        scores: scores as Array<number>,
                        promptTokens:
                          r.meta?.tokens?.inputTokens ??
                          documents.reduce((n, d) => n + Text.estimateTextTokens([query, d]), 0)
                      })
                })
              )
            )
            .pipe(Effect.map(([r, sent]) => ({ ...r, ...sent })))

    return { languageModel: { info, complete }, embeddingModel: { info, embed }, reranker: { info, rerank } }
  })

export const plugin = Plugin.provider({
  name: "cohere",
  description: "Cohere chat, embeddings and rerank (v2 API); key from CO_API_KEY.",
  options: Options,
  make
})
