/**
 * The `openai` provider: chat completions and embeddings through the official SDK, against
 * api.openai.com or any OpenAI-compatible server (vLLM, Ollama, llama.cpp server, Together) named
 * by `baseURL` or `OPENAI_BASE_URL`. The SDK is loaded when a model is built, not on import.
 *
 * Generation parameters set in the config (`temperature`, `topP`, `maxTokens`, `seed`,
 * `dimensions`, `revision`) are the model's defaults and appear in `info.params`, hence in every
 * cache key; a request's own values take precedence over them.
 *
 * @example
 * # config
 * models:
 *   gpt4o: { provider: openai, model: gpt-4o-2024-11-20, temperature: 0, rpm: 500 }
 *   prefmatcher: { provider: openai, model: kixlab/prefmatcher-7b, baseURL: "http://localhost:8000/v1" }
 */
import { type Batch, type LanguageModel, Errors, Models, Plugin } from "@cupid-lab/core"

import { Clock, Effect, Redacted, Schema, type Scope } from "effect"
import type OpenAIClient from "openai"
import * as CappedFetch from "./internal/CappedFetch.js"
import * as Failure from "./internal/Failure.js"
import * as OpenAiBatch from "./OpenAiBatch.js"
import * as Secret from "./internal/Secret.js"
import * as Text from "./internal/Text.js"
import * as Resilience from "./Resilience.js"

/** A chat message in the SDK's own type (one member of its union per role); system instructions in the role the model takes them in. */
const message =
  (systemRole: "system" | "developer") =>
  (m: LanguageModel.ChatMessage): OpenAIClient.ChatCompletionMessageParam =>
    m.role === "system"
      ? { role: systemRole, content: m.content }
      : m.role === "user"
        ? { role: "user", content: m.content }
        : { role: "assistant", content: m.content }

const PositiveInt = Schema.Int.pipe(Schema.positive())

export const Options = Schema.Struct({
  /** Server root including `/v1`; else `OPENAI_BASE_URL`; else api.openai.com. */
  baseURL: Schema.optional(Schema.String),
  /** Environment variable holding the key. Required for api.openai.com only. */
  apiKeyEnv: Schema.optionalWith(Secret.KeyEnvName, { default: () => "OPENAI_API_KEY" }),
  /** Sent unless a request sets its own; null: never sent, whatever a stage asks (o1/o3 reject it). */
  temperature: Schema.optional(Schema.NullOr(Schema.Number)),
  /** The role system instructions are sent in: `developer` for OpenAI's own models as the CUPID authors' code sends them. */
  systemRole: Schema.optionalWith(Schema.Literal("system", "developer"), { default: () => "system" as const }),
  /**
   * Fields added to every chat request body as they are: reasoning controls and other
   * server-specific parameters, e.g. `{ reasoning_effort: low }` (o3-mini, Gemini) or
   * `{ thinking: { type: enabled, budget_tokens: 1024 } }` (Claude through its OpenAI-compatible API).
   */
  extraBody: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  topP: Schema.optional(Schema.Number),
  maxTokens: Schema.optional(PositiveInt),
  /** Newer OpenAI reasoning models accept only `max_completion_tokens`. */
  maxTokensParam: Schema.optionalWith(Schema.Literal("max_tokens", "max_completion_tokens"), {
    default: () => "max_tokens" as const
  }),
  seed: Schema.optional(Schema.Int),
  /** Output size for embedding models that support shortening (text-embedding-3-*). */
  dimensions: Schema.optional(PositiveInt),
  /** Texts per embeddings request. */
  batchSize: Schema.optionalWith(PositiveInt, { default: () => 128 }),
  /** Free text added to the cache key: change it when different weights are served under one name. */
  revision: Schema.optional(Schema.String),
  /**
   * The largest response body taken, in bytes (default 64 MiB): a server that streams without end
   * fails the call instead of filling memory.
   */
  maxResponseBytes: Schema.optionalWith(PositiveInt, { default: () => 64 * 1024 * 1024 }),
  /** Send the chat calls as OpenAI batch jobs (half the price, within 24 hours): docs/providers.md, "Batch jobs". */
  batch: Schema.optional(OpenAiBatch.Option),
  ...Resilience.policyFields
})
export type Options = Schema.Schema.Type<typeof Options>

const ChatResponse = Schema.Struct({
  choices: Schema.NonEmptyArray(
    Schema.Struct({
      message: Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) }),
      finish_reason: Schema.optional(Schema.NullOr(Schema.String))
    })
  ),
  usage: Schema.optional(
    Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.Number, completion_tokens: Schema.Number }))
  )
})

const EmbeddingResponse = Schema.Struct({
  data: Schema.Array(
    Schema.Struct({ index: Schema.Int, embedding: Schema.Union(Schema.Array(Schema.Number), Schema.String) })
  ),
  usage: Schema.optional(Schema.NullOr(Schema.Struct({ prompt_tokens: Schema.Number })))
})

/** The parameters fixed by configuration: exactly those that can change an answer. */
export const params = (options: Options): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const k of ["temperature", "topP", "maxTokens", "seed", "dimensions", "revision", "extraBody"] as const) {
    if (options[k] !== undefined) out[k] = options[k]
  }
  if (options.systemRole !== "system") out.systemRole = options.systemRole
  if (options.maxTokens !== undefined && options.maxTokensParam !== "max_tokens")
    out.maxTokensParam = options.maxTokensParam
  return out
}

type Sdk = typeof import("openai")

const classify = (sdk: Sdk, ctx: Failure.CallContext, error: unknown, now: number) => {
  const large = CappedFetch.tooLarge(error)
  if (large !== undefined)
    return Failure.unexpected(ctx, `${large.message}; raise maxResponseBytes if such answers are expected`)
  if (error instanceof sdk.APIConnectionTimeoutError) return Failure.fromConnection(ctx, "timed out in the HTTP client")
  if (error instanceof sdk.APIConnectionError) {
    return Failure.fromConnection(
      ctx,
      Failure.connectionFailure(error.cause) ?? `connection failed: ${Failure.scrub(error.message, ctx.secrets)}`
    )
  }
  if (error instanceof sdk.APIError && typeof error.status === "number") {
    const body = error.error as { message?: unknown } | undefined
    const detail = typeof body?.message === "string" ? body.message : error.message
    return Failure.fromStatus(ctx, error.status, detail, Failure.retryAfterMs(error.headers, now))
  }
  if (error instanceof SyntaxError) return Failure.malformed(ctx, "the body is not JSON")
  const dropped = Failure.connectionFailure(error)
  return dropped !== undefined ? Failure.fromConnection(ctx, dropped) : Failure.unexpected(ctx, error)
}

/** Build the chat and embedding services of one configured model. */
export const make = (
  options: Options,
  model: string,
  context: Plugin.ProviderContext = {}
): Effect.Effect<Models.ModelBundle, Errors.PluginError, Scope.Scope> =>
  Effect.gen(function* () {
    const baseURL = yield* Secret.setting(options.baseURL, "OPENAI_BASE_URL")
    // A dry run sends nothing, so it needs no key (the placeholder is never used).
    const key = yield* Secret.apiKey(
      "openai",
      model,
      options.apiKeyEnv,
      baseURL === undefined && context.dryRun !== true
    )
    const sdk = yield* Effect.tryPromise({
      try: () => import("openai"),
      catch: (e) => new Errors.PluginError({ plugin: "openai", reason: `cannot load the openai package: ${String(e)}` })
    })
    const client: OpenAIClient = new sdk.OpenAI({
      apiKey: Redacted.value(key),
      ...(baseURL !== undefined ? { baseURL } : {}),
      // One retry policy (ours) applies; the client's own timer is only a backstop behind it.
      maxRetries: 0,
      timeout: options.timeoutMs + 5_000,
      logLevel: "off",
      fetch: CappedFetch.make(options.maxResponseBytes)
    })
    const secrets = yield* Secret.scrubbables(key, context.secretVariables)
    const ctx: Failure.CallContext = { provider: "openai", model, keyEnv: options.apiKeyEnv, secrets }
    const guard = yield* Resilience.make(options, ctx)
    const rate = OpenAiBatch.settings(options.batch, context.batchAll === true)?.rate
    const info: LanguageModel.ModelInfo = {
      provider: "openai",
      model,
      params: params(options),
      ...(rate !== undefined ? { batch: { rate } } : {})
    }

    // The request stops at the attempt's deadline (headers or body, however far it got) or when the call is interrupted.
    const send = <A>(deadline: AbortSignal, request: (signal: AbortSignal) => Promise<A>) =>
      Effect.tryPromise({ try: (signal) => request(AbortSignal.any([signal, deadline])), catch: (e) => e }).pipe(
        Effect.catchAll((e) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.fail(classify(sdk, ctx, e, now)))
        )
      )

    /** The chat request's body as sent: the role and token-limit renames applied, `extraBody` under it. */
    const bodyOf = (request: LanguageModel.CompletionRequest): OpenAIClient.ChatCompletionCreateParamsNonStreaming => {
      const maxTokens = request.maxTokens ?? options.maxTokens
      const body: OpenAIClient.ChatCompletionCreateParamsNonStreaming = Text.definedOnly({
        model,
        messages: request.messages.map(message(options.systemRole)),
        temperature: options.temperature === null ? undefined : (request.temperature ?? options.temperature),
        top_p: request.topP ?? options.topP,
        // One of the two names, as the server expects (the other stays undefined and is dropped).
        max_tokens: options.maxTokensParam === "max_tokens" ? maxTokens : undefined,
        max_completion_tokens: options.maxTokensParam === "max_completion_tokens" ? maxTokens : undefined,
        seed: request.seed ?? options.seed,
        stop: request.stop !== undefined && request.stop.length > 0 ? [...request.stop] : undefined,
        response_format: request.responseFormat === "json" ? { type: "json_object" as const } : undefined
      })
      return { ...options.extraBody, ...body } as OpenAIClient.ChatCompletionCreateParamsNonStreaming
    }

    /** A chat answer's body as a completion: its text, token counts and why it stopped. */
    const completionOf = (request: LanguageModel.CompletionRequest) => (r: typeof ChatResponse.Type) => {
      const choice = r.choices[0]
      const text = choice.message.content
      // A reasoning model can spend the whole token limit before writing any answer.
      if ((text === null || text === undefined) && choice.finish_reason === "length") {
        return Effect.succeed({
          text: "",
          promptTokens: r.usage?.prompt_tokens ?? 0,
          completionTokens: r.usage?.completion_tokens ?? 0,
          finishReason: "length"
        })
      }
      if (text === null || text === undefined) {
        return Effect.fail(
          Failure.unexpected(ctx, `the answer has no text (finish_reason: ${choice.finish_reason ?? "none"})`)
        )
      }
      return Effect.succeed({
        text,
        promptTokens: r.usage?.prompt_tokens ?? Text.estimatePromptTokens(request.messages),
        completionTokens: r.usage?.completion_tokens ?? Text.estimateTextTokens([text]),
        ...(typeof choice.finish_reason === "string" ? { finishReason: choice.finish_reason } : {})
      })
    }

    const complete = (request: LanguageModel.CompletionRequest) => {
      const sent = bodyOf(request)
      return guard
        .counted(
          (deadline) =>
            send(deadline, (signal) => client.chat.completions.create(sent, { signal })).pipe(
              Effect.flatMap(Failure.decode(ctx, ChatResponse, "expected choices[0].message")),
              Effect.flatMap(completionOf(request))
            ),
          () => Text.estimatePromptTokens(request.messages)
        )
        .pipe(Effect.map(([completion, sent]): LanguageModel.Completion => ({ ...completion, ...sent })))
    }

    // Batch jobs: the same bodies, sent as a file through the sweep's queue, answered by cache key.
    const batching = OpenAiBatch.settings(options.batch, context.batchAll === true)
    const endpoint =
      batching === undefined
        ? undefined
        : OpenAiBatch.endpoint({
            sdk,
            client,
            ctx,
            at: baseURL ?? "https://api.openai.com/v1",
            settings: batching,
            request: (f) => guard((deadline) => send(deadline, f))
          })
    const queue = context.dryRun === true ? undefined : context.batch
    const completeBatched = (batch: Batch.Queue, at: Batch.Endpoint) => (request: LanguageModel.CompletionRequest) =>
      batch
        .call(at, {
          key: Models.completionKey(info, request),
          body: { ...bodyOf(request) },
          promptTokens: Text.estimatePromptTokens(request.messages),
          completionTokens: request.maxTokens ?? options.maxTokens ?? 0
        })
        .pipe(
          Effect.flatMap((answer) =>
            Failure.decode(
              ctx,
              ChatResponse,
              "expected choices[0].message"
            )(answer.body).pipe(
              Effect.flatMap(completionOf(request)),
              Effect.map((c): LanguageModel.Completion => ({ ...c, requests: 0, batch: answer.batch }))
            )
          )
        )

    const embedBatch = (batch: ReadonlyArray<string>) =>
      guard.counted(
        (deadline) =>
          send(deadline, (signal) =>
            client.embeddings.create(
              {
                model,
                input: [...batch],
                encoding_format: "float",
                ...(options.dimensions !== undefined ? { dimensions: options.dimensions } : {})
              },
              { signal }
            )
          ).pipe(
            Effect.flatMap(Failure.decode(ctx, EmbeddingResponse, "expected data[].embedding")),
            Effect.flatMap((r) => {
              const vectors = new Array<Float32Array | undefined>(batch.length)
              for (const d of r.data) {
                if (d.index >= 0 && d.index < batch.length) {
                  vectors[d.index] =
                    typeof d.embedding === "string"
                      ? Text.decodeBase64Floats(d.embedding)
                      : Float32Array.from(d.embedding)
                }
              }
              const missing = vectors.findIndex((v) => v === undefined)
              if (missing >= 0 || r.data.length !== batch.length) {
                return Effect.fail(
                  Failure.malformed(
                    ctx,
                    `${r.data.length} embeddings for ${batch.length} texts (first missing index ${missing})`
                  )
                )
              }
              return Effect.succeed({
                vectors: vectors as Array<Float32Array>,
                promptTokens: r.usage?.prompt_tokens ?? Text.estimateTextTokens(batch)
              })
            })
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

    const chat = queue !== undefined && endpoint !== undefined ? completeBatched(queue, endpoint) : complete
    return {
      languageModel: { info, complete: chat, wire: (r) => ({ ...bodyOf(r) }) },
      // Embeddings have no batch here: their model's info says nothing of batches.
      embeddingModel: { info: { provider: "openai", model, params: params(options) }, embed },
      ...(endpoint !== undefined ? { batch: endpoint } : {})
    }
  })

export const plugin = Plugin.provider({
  name: "openai",
  description:
    "OpenAI chat and embeddings, or any OpenAI-compatible server (vLLM, Ollama, llama.cpp, Together) via baseURL.",
  options: Options,
  make
})
