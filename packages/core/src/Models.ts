/**
 * Named, configured models shared by every cell of a sweep, each behind the one model cache and
 * the per-instance usage ledger. Plugins ask for a model by the name the config gives it.
 *
 * @example
 * import { Models } from "@cupid-lab/core"
 * const lm = yield* (yield* Models.Models).languageModel("judge")
 */
import { Clock, Context, Effect, Either, Layer, Schema } from "effect"
import type * as Batch from "./Batch.js"
import type * as EmbeddingModel from "./EmbeddingModel.js"
import { ModelError, ModelNotConfigured } from "./Errors.js"
import * as LanguageModel from "./LanguageModel.js"
import { key, ModelCache, overlay } from "./ModelCache.js"
import type * as Reranker from "./Reranker.js"
import * as Tokens from "./Tokens.js"
import * as Usage from "./Usage.js"

export interface Service {
  readonly names: ReadonlyArray<string>
  readonly languageModel: (name: string) => Effect.Effect<LanguageModel.Service, ModelNotConfigured>
  readonly embeddingModel: (name: string) => Effect.Effect<EmbeddingModel.Service, ModelNotConfigured>
  readonly reranker: (name: string) => Effect.Effect<Reranker.Service, ModelNotConfigured>
  /** A dry run (`--dry-run`): stages that call services of their own send nothing either. */
  readonly dryRun?: boolean
}

export class Models extends Context.Tag("@cupid-lab/core/Models")<Models, Service>() {}

/** What a provider built for one configured model; a provider offers the capabilities it has. */
export interface ModelBundle {
  readonly languageModel?: LanguageModel.Service
  readonly embeddingModel?: EmbeddingModel.Service
  readonly reranker?: Reranker.Service
  /** The model's batch endpoint, when its calls go as batch jobs (`batch: true`): for listing and cancelling them. */
  readonly batch?: Batch.Endpoint
}

const missing = (name: string, names: ReadonlyArray<string>, what: string) =>
  new ModelNotConfigured({ model: name, capability: what, configured: names })

export interface MakeOptions {
  /**
   * Dry run: no request is sent. A call whose answer is cached returns it (and counts as cached);
   * any other call is recorded as one that would be made, with estimated tokens, and answers with
   * the caller's `dryRunAnswer` (completions), zero vectors (embeddings) or zero scores (rerank).
   */
  readonly dryRun?: boolean
}

/** A registry over already-built bundles; every service is wrapped with cache and usage recording. */
export const make = (
  bundles: Readonly<Record<string, ModelBundle>>,
  cache: ModelCache["Type"],
  options: MakeOptions = {}
): Service => {
  const names = Object.keys(bundles).sort()
  const lms = new Map<string, LanguageModel.Service>()
  const ems = new Map<string, EmbeddingModel.Service>()
  const rrs = new Map<string, Reranker.Service>()
  const dry = options.dryRun === true
  // A dry run stores its made-up answers in memory only, so repeated calls count as cached (as
  // they would be in a real run) and the cache on disk is never written.
  const store = dry ? overlay(cache) : cache
  for (const [name, b] of Object.entries(bundles)) {
    if (b.languageModel)
      lms.set(name, cachedLanguageModel(dry ? dryLanguageModel(b.languageModel) : b.languageModel, store, dry))
    if (b.embeddingModel)
      ems.set(name, cachedEmbeddingModel(dry ? dryEmbeddingModel(b.embeddingModel.info) : b.embeddingModel, store))
    if (b.reranker) rrs.set(name, cachedReranker(dry ? dryReranker(b.reranker.info) : b.reranker, store))
  }
  const lookup =
    <S>(map: Map<string, S>, what: string) =>
    (name: string) => {
      const s = map.get(name)
      return s === undefined ? Effect.fail(missing(name, names, what)) : Effect.succeed(s)
    }
  return {
    names,
    ...(dry ? { dryRun: true } : {}),
    languageModel: lookup(lms, "chat completion"),
    embeddingModel: lookup(ems, "embeddings"),
    reranker: lookup(rrs, "reranking")
  }
}

/**
 * The registry a cell sees when it binds model roles to entries (`sweep: { models.subject: [gpt-4o,
 * o3-mini] }`): a role's name resolves to the entry bound to it; other names resolve as before.
 */
export const bound = (models: Service, roles: Readonly<Record<string, string>>): Service => {
  const entry = (name: string) => roles[name] ?? name
  return {
    names: models.names,
    ...(models.dryRun === true ? { dryRun: true } : {}),
    languageModel: (name) => models.languageModel(entry(name)),
    embeddingModel: (name) => models.embeddingModel(entry(name)),
    reranker: (name) => models.reranker(entry(name))
  }
}

export const layer = (
  bundles: Readonly<Record<string, ModelBundle>>,
  options: MakeOptions = {}
): Layer.Layer<Models, never, ModelCache> =>
  Layer.effect(
    Models,
    Effect.map(ModelCache, (cache) => make(bundles, cache, options))
  )

const dryLanguageModel = ({ info, wire }: LanguageModel.Service): LanguageModel.Service => ({
  info,
  ...(wire === undefined ? {} : { wire }),
  complete: (request) =>
    Effect.sync(() => {
      const made = typeof request.dryRunAnswer === "function" ? request.dryRunAnswer() : request.dryRunAnswer
      return {
        text: made ?? "",
        promptTokens: request.messages.reduce((n, m) => n + Tokens.count(m.content) + 4, 0),
        completionTokens: made === undefined ? (request.maxTokens ?? 0) : Tokens.count(made)
      }
    })
})

const dryEmbeddingModel = (info: LanguageModel.ModelInfo): EmbeddingModel.Service => ({
  info,
  embed: (texts) =>
    Effect.succeed({
      vectors: texts.map(() => new Float32Array(8)),
      promptTokens: texts.reduce((n, t) => n + Tokens.count(t), 0)
    })
})

const dryReranker = (info: LanguageModel.ModelInfo): Reranker.Service => ({
  info,
  rerank: (query, documents) =>
    Effect.succeed({
      scores: documents.map(() => 0),
      promptTokens: documents.reduce((n, d) => n + Tokens.count(query) + Tokens.count(d), 0)
    })
})

/** No models configured: the offline default. */
export const layerEmpty: Layer.Layer<Models, never, ModelCache> = layer({})

export const completionKey = (info: LanguageModel.ModelInfo, request: LanguageModel.CompletionRequest): string =>
  key({
    kind: "complete",
    provider: info.provider,
    model: info.model,
    params: info.params,
    request: providerRequest(request)
  })

/** What a provider receives: the request without framework-only fields. */
export const providerRequest = (request: LanguageModel.CompletionRequest): LanguageModel.CompletionRequest => {
  const { dryRunAnswer: _dry, accept: _accept, read: _read, acceptTruncated: _cut, ...sent } = request
  return sent
}

/** A refusal, or an answer the caller's `accept` rejected: carried through the cache as a failure so it is not stored. */
class Rejected {
  readonly _tag = "Rejected"
  constructor(readonly completion: LanguageModel.Completion) {}
}

/** How a completion is stored in the cache. */
export const StoredCompletion: Schema.Schema<LanguageModel.Completion> = Schema.Struct({
  text: Schema.String,
  promptTokens: Schema.NonNegative,
  completionTokens: Schema.NonNegative
})

const excerpt = (text: string): string => {
  const t = text.replace(/\s+/g, " ").trim()
  return t.length > 120 ? `${t.slice(0, 120)}...` : t
}

/**
 * `dry`: pass `dryRunAnswer` on to `inner` (a dry model); otherwise it is stripped before sending.
 *
 * Refusals ({@link LanguageModel.isRefusal}) are never stored, and a request's `accept` decides
 * which other answers are: a cached answer that is a refusal or that `accept` rejects is asked for
 * again and replaced; a fresh one is returned but not stored. For a request with `accept` (a caller
 * that parses answers) a refusal fails the call with a `ModelError`, so the stage fails visibly and
 * a rerun asks again.
 */
export const cachedLanguageModel = (
  inner: LanguageModel.Service,
  cache: ModelCache["Type"],
  dry = false
): LanguageModel.Service => ({
  info: inner.info,
  complete: (request) =>
    Effect.gen(function* () {
      const sent = providerRequest(request)
      const callKey = completionKey(inner.info, request)
      // The dry model is the one consumer of `dryRunAnswer`; a real provider never receives it. The
      // provider builds its request only on a miss.
      const call = Effect.suspend(() => inner.complete(dry ? request : sent))
      const accept = request.accept
      const truncated = (c: LanguageModel.Completion) => c.finishReason === "length" && request.acceptTruncated !== true
      const usable = (c: LanguageModel.Completion) =>
        !truncated(c) && !LanguageModel.isRefusal(c.text) && (accept === undefined || accept(c.text))
      // The cache keeps the answer alone: how many requests it took, and why the model stopped,
      // are this call's, not the answer's.
      let requests: number | undefined
      let limiterMs: number | undefined
      let finishReason: string | undefined
      let batch: string | undefined
      const checked = Effect.flatMap(call, (c) => {
        requests = c.requests
        limiterMs = c.limiterMs
        finishReason = c.finishReason
        batch = c.batch
        return usable(c)
          ? Effect.succeed({ text: c.text, promptTokens: c.promptTokens, completionTokens: c.completionTokens })
          : Effect.fail(new Rejected(c))
      })
      const record = (
        value: LanguageModel.Completion | undefined,
        cached: boolean,
        detail: Omit<Usage.CallDetail, "request" | "wire">
      ) =>
        Usage.record({
          provider: inner.info.provider,
          model: inner.info.model,
          kind: "complete",
          promptTokens: value?.promptTokens ?? 0,
          completionTokens: value?.completionTokens ?? 0,
          cached,
          ...(cached ? { requests: 0 } : requests !== undefined ? { requests } : {}),
          ...(value === undefined ? { failed: true } : {}),
          ...(inner.info.batch !== undefined ? { batchRate: inner.info.batch.rate } : {}),
          detail: {
            key: callKey,
            request: sent,
            ...(inner.wire === undefined ? {} : { wire: inner.wire(sent) }),
            ...(limiterMs !== undefined ? { limiterMs } : {}),
            ...(!cached && batch !== undefined ? { batch } : {}),
            ...detail
          }
        })
      const fail = (reason: string) =>
        Effect.fail(
          new ModelError({ provider: inner.info.provider, model: inner.info.model, reason, retryable: false })
        )
      const started = yield* Clock.currentTimeMillis
      const got = yield* Effect.either(
        cache.getOrCompute(callKey, checked, { schema: StoredCompletion, accept: usable }).pipe(
          Effect.catchIf(
            (e): e is Rejected => e instanceof Rejected,
            (e) => Effect.succeed({ value: e.completion, cached: false })
          )
        )
      )
      const latencyMs = (yield* Clock.currentTimeMillis) - started
      if (Either.isLeft(got)) {
        const e = got.left
        if (e instanceof ModelError) {
          requests = e.requests
          limiterMs = e.limiterMs
          yield* record(undefined, false, { latencyMs, error: e.reason })
        }
        return yield* Effect.fail(e)
      }
      const { value, cached } = got.right
      const problem = truncated(value)
        ? `truncated: the answer stopped at the token limit (${request.maxTokens ?? "the model's default"} tokens) and is not read as an answer; raise maxTokens for this stage (truncated answers are never cached)`
        : accept !== undefined && LanguageModel.isRefusal(value.text)
          ? `the answer is a refusal, which counts as unparseable: "${excerpt(value.text)}" (refusals are never cached; a rerun asks again)`
          : undefined
      yield* record(value, cached, {
        latencyMs,
        answer: Usage.excerptOf(value.text),
        ...(!cached && finishReason !== undefined ? { finishReason } : {}),
        ...(problem !== undefined
          ? { error: problem }
          : request.read !== undefined
            ? { reading: request.read(value.text) }
            : {})
      })
      if (problem !== undefined) return yield* fail(problem)
      return value
    })
})

/** How one text's embedding is stored in the cache: the vector and the tokens it counted for. */
const StoredVector = Schema.Struct({ v: Schema.Array(Schema.Number), t: Schema.NonNegative })
type StoredVector = typeof StoredVector.Type

/** How a reranking is stored in the cache. */
const StoredRerank: Schema.Schema<Reranker.Rerank> = Schema.Struct({
  scores: Schema.Array(Schema.Number),
  promptTokens: Schema.NonNegative
})

export const embeddingKey = (info: LanguageModel.ModelInfo, text: string): string =>
  key({ kind: "embed", provider: info.provider, model: info.model, params: info.params, text })

/** Caches per text, so a batch in which some texts were embedded before only sends the rest. */
export const cachedEmbeddingModel = (
  inner: EmbeddingModel.Service,
  cache: ModelCache["Type"]
): EmbeddingModel.Service => ({
  info: inner.info,
  embed: (texts) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const keys = texts.map((t) => embeddingKey(inner.info, t))
      const out = new Array<Float32Array | undefined>(texts.length)
      const missIdx: Array<number> = []
      let tokens = 0
      for (let i = 0; i < texts.length; i++) {
        const hit = yield* cache.get(keys[i]!, { schema: StoredVector })
        if (hit._tag === "Some") {
          out[i] = Float32Array.from(hit.value.v)
          tokens += hit.value.t
        } else missIdx.push(i)
      }
      const record = (cached: boolean, sent: Usage.Sent, failure?: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Usage.record({
            provider: inner.info.provider,
            model: inner.info.model,
            kind: "embed",
            promptTokens: tokens,
            completionTokens: 0,
            cached,
            ...(sent.requests !== undefined ? { requests: sent.requests } : {}),
            ...(failure !== undefined ? { failed: true } : {}),
            detail: {
              latencyMs: now - started,
              inputs: texts.length,
              ...(sent.limiterMs !== undefined ? { limiterMs: sent.limiterMs } : {}),
              ...(failure !== undefined ? { error: failure } : {})
            }
          })
        )
      let sent: Usage.Sent = {}
      if (missIdx.length > 0) {
        const unique = [...new Set(missIdx.map((i) => texts[i]!))]
        const result = yield* inner.embed(unique).pipe(Effect.tapError((e) => record(false, e, e.reason)))
        sent = result
        const perText = unique.length === 0 ? 0 : Math.round(result.promptTokens / unique.length)
        const byText = new Map<string, Float32Array>()
        for (let j = 0; j < unique.length; j++) {
          const v = result.vectors[j]!
          byText.set(unique[j]!, v)
          yield* cache.set(embeddingKey(inner.info, unique[j]!), {
            v: Array.from(v),
            t: perText
          } satisfies StoredVector)
        }
        for (const i of missIdx) {
          out[i] = byText.get(texts[i]!)!
          tokens += perText
        }
      }
      // One entry per call whatever the cache held, with the same token count either way, so
      // that results do not depend on the state of the cache.
      yield* record(missIdx.length === 0, missIdx.length === 0 ? { requests: 0 } : sent)
      return { vectors: out as Array<Float32Array>, promptTokens: tokens }
    })
})

export const rerankKey = (info: LanguageModel.ModelInfo, query: string, documents: ReadonlyArray<string>): string =>
  key({ kind: "rerank", provider: info.provider, model: info.model, params: info.params, query, documents })

export const cachedReranker = (inner: Reranker.Service, cache: ModelCache["Type"]): Reranker.Service => ({
  info: inner.info,
  rerank: (query, documents) =>
    Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const record = (value: Reranker.Rerank | undefined, cached: boolean, sent: Usage.Sent, failure?: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Usage.record({
            provider: inner.info.provider,
            model: inner.info.model,
            kind: "rerank",
            promptTokens: value?.promptTokens ?? 0,
            completionTokens: 0,
            cached,
            ...(sent.requests !== undefined ? { requests: sent.requests } : {}),
            ...(failure !== undefined ? { failed: true } : {}),
            detail: {
              latencyMs: now - started,
              inputs: documents.length,
              ...(sent.limiterMs !== undefined ? { limiterMs: sent.limiterMs } : {}),
              ...(failure !== undefined ? { error: failure } : {})
            }
          })
        )
      const { cached, value } = yield* cache
        .getOrCompute(rerankKey(inner.info, query, documents), inner.rerank(query, documents), { schema: StoredRerank })
        .pipe(Effect.tapError((e) => (e instanceof ModelError ? record(undefined, false, e, e.reason) : Effect.void)))
      yield* record(value, cached, cached ? { requests: 0 } : value)
      return value
    })
})
