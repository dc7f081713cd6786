import { ModelCache, Models, Usage, type Errors } from "@cupid-lab/core"

import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Cohere from "../src/Cohere.js"
import * as CohereServer from "../src/testing/CohereServer.js"
import { Faults } from "../src/testing/LoopbackServer.js"
import { hashVector } from "../src/testing/OpenAiServer.js"
import { build, fast, user } from "./support.js"

const key = "co-test-SECRET-987654321"
const cohere = (raw: Record<string, unknown>, env: Record<string, string> = { CO_API_KEY: key }) =>
  build(Cohere.plugin, raw, env)

const failureOf = <A>(effect: Effect.Effect<A, Errors.ModelError>) =>
  Effect.flatMap(Effect.either(effect), (e) =>
    Either.isLeft(e) ? Effect.succeed(e.left) : Effect.dieMessage("expected a failure")
  )

describe("cohere provider: chat, embed, rerank", () => {
  it.scopedLive("chat sends v2 fields and reads text and token usage", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make({
        chat: () => ({ content: "noted", usage: { inputTokens: 21, outputTokens: 2 } })
      })
      const bundle = yield* cohere({ baseURL: server.url, temperature: 0.3, maxTokens: 40 })
      expect(bundle.languageModel!.info).toStrictEqual({
        provider: "cohere",
        model: "test-model",
        params: { inputType: "search_document", temperature: 0.3, maxTokens: 40 }
      })
      const out = yield* bundle.languageModel!.complete({
        messages: [
          { role: "system", content: "s" },
          { role: "user", content: "u" }
        ],
        topP: 0.9,
        seed: 3,
        stop: ["END"],
        responseFormat: "json"
      })
      expect(out).toStrictEqual({
        text: "noted",
        promptTokens: 21,
        completionTokens: 2,
        finishReason: "COMPLETE",
        requests: 1
      })
      expect(server.requests[0]!.path).toBe("/v2/chat")
      expect(server.requests[0]!.body).toStrictEqual({
        model: "test-model",
        messages: [
          { role: "system", content: "s" },
          { role: "user", content: "u" }
        ],
        temperature: 0.3,
        p: 0.9,
        max_tokens: 40,
        seed: 3,
        stop_sequences: ["END"],
        response_format: { type: "json_object" },
        stream: false
      })
    })
  )

  it.scopedLive("embed batches texts, keeps their order and sums billed tokens", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make()
      const bundle = yield* cohere({ baseURL: server.url, batchSize: 2, inputType: "search_query" })
      const texts = ["red apple", "pie", "green tea leaves"]
      const out = yield* bundle.embeddingModel!.embed(texts)
      expect(out.vectors.map((v) => Array.from(v))).toStrictEqual(
        texts.map((t) => Array.from(Float32Array.from(hashVector(t))))
      )
      expect(out.promptTokens).toBe(6)
      expect(server.requests.map((r) => r.body)).toStrictEqual([
        { model: "test-model", texts: ["red apple", "pie"], input_type: "search_query", embedding_types: ["float"] },
        { model: "test-model", texts: ["green tea leaves"], input_type: "search_query", embedding_types: ["float"] }
      ])
    })
  )

  it.scopedLive("rerank returns scores in document order whatever order the server ranks them in", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make()
      const bundle = yield* cohere({ baseURL: server.url })
      const docs = ["green apple", "red apple pie", "a car"]
      const out = yield* bundle.reranker!.rerank("red apple", docs)
      // distinct query words found: green apple -> apple; red apple pie -> red, apple; a car -> none
      expect(out.scores).toStrictEqual([1, 2, 0])
      // server tokens: per document, query words + document words = (2+2) + (2+3) + (2+2)
      expect(out.promptTokens).toBe(13)
      expect(server.requests[0]!.body).toStrictEqual({
        model: "test-model",
        query: "red apple",
        documents: docs,
        top_n: 3
      })
      expect(yield* bundle.reranker!.rerank("q", [])).toStrictEqual({ scores: [], promptTokens: 0 })
      expect(server.requests).toHaveLength(1)
    })
  )

  it.scopedLive("estimates tokens when the server sends no usage or meta", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make({ usage: false })
      const bundle = yield* cohere({ baseURL: server.url })
      expect(yield* bundle.languageModel!.complete(user("one two"))).toStrictEqual({
        text: "echo: one two",
        promptTokens: 6,
        completionTokens: 4,
        finishReason: "COMPLETE",
        requests: 1
      })
      expect((yield* bundle.embeddingModel!.embed(["a b c"])).promptTokens).toBe(3)
      // Tokens.count: "red apple" 2, "green apple" 2, "car." 2 -> (2+2) + (2+2)
      expect((yield* bundle.reranker!.rerank("red apple", ["green apple", "car."])).promptTokens).toBe(8)
    })
  )

  it.scopedLive("usage reaches the ledger through the model registry", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make()
      const bundle = yield* cohere({ baseURL: server.url })
      const models = Models.make({ co: bundle }, yield* ModelCache.ModelCache)
      const reranker = yield* models.reranker("co")
      const [, usage] = yield* Usage.track(reranker.rerank("red apple", ["apple"]))
      expect(usage.map((u) => [u.provider, u.kind, u.promptTokens, u.cached])).toStrictEqual([
        ["cohere", "rerank", 3, false]
      ])
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )
})

describe("cohere provider: faults and keys", () => {
  it.scopedLive("retries 429 (honouring retry-after), resets, malformed bodies and 503, then succeeds", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make({
        faults: [
          Faults.rateLimit({ retryAfterSeconds: 0 }),
          Faults.reset(),
          Faults.malformed(),
          Faults.serverError(503, "busy")
        ]
      })
      const bundle = yield* cohere({ baseURL: server.url, ...fast, maxRetries: 4 })
      expect((yield* bundle.reranker!.rerank("apple", ["apple", "pear"])).scores).toStrictEqual([1, 0])
      expect(server.requests.map((r) => r.fault)).toStrictEqual([
        "rate-limit",
        "reset",
        "malformed",
        "server-error",
        undefined
      ])
    })
  )

  it.scopedLive("classifies each fault when no retry is allowed", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make({
        faults: [
          Faults.rateLimit({ retryAfterSeconds: 2 }),
          Faults.reset(),
          Faults.malformed(),
          Faults.status(422, { message: "too many documents" })
        ]
      })
      const bundle = yield* cohere({ baseURL: server.url, ...fast, maxRetries: 0 })
      const errors: Array<Errors.ModelError> = []
      for (let i = 0; i < 4; i++) errors.push(yield* failureOf(bundle.languageModel!.complete(user("hi"))))
      expect(errors.map((e) => [e.status, e.retryable, e.retryAfterMs])).toStrictEqual([
        [429, true, 2000],
        [undefined, true, undefined],
        [undefined, true, undefined],
        [422, false, undefined]
      ])
      expect(errors[0]!.message).toBe("cohere/test-model: rate limited: rate limit reached, slow down (HTTP 429)")
      expect(errors[1]!.reason).toMatch(/^connection (reset|closed) by the server/)
      expect(errors[2]!.reason).toBe("malformed response: the body is not JSON")
      expect(errors[3]!.message).toBe("cohere/test-model: request rejected: too many documents (HTTP 422)")
    })
  )

  it.scopedLive("a slow answer times out and the retry succeeds", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make({ faults: [Faults.slow(20_000)] })
      const bundle = yield* cohere({ baseURL: server.url, ...fast, timeoutMs: 1500, maxRetries: 1 })
      expect((yield* bundle.embeddingModel!.embed(["x"])).vectors).toHaveLength(1)
      expect(server.requests.map((r) => r.fault)).toStrictEqual(["slow", undefined])
    })
  )

  it.scoped("the hosted API without CO_API_KEY fails to build, naming the variable", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(cohere({}, {}))
      expect(error.message).toContain('plugin "cohere": model "test-model": environment variable CO_API_KEY is not set')
    })
  )

  it.scopedLive("the key is sent only as the bearer token and never surfaces in errors", () =>
    Effect.gen(function* () {
      const server = yield* CohereServer.make({
        faults: [
          Faults.status(401, { message: `invalid api token ${key}` }),
          Faults.status(400, { message: `echo ${key}` })
        ]
      })
      const bundle = yield* cohere({ baseURL: server.url, ...fast, maxRetries: 0 })
      const denied = yield* failureOf(bundle.languageModel!.complete(user("hi")))
      const rejected = yield* failureOf(bundle.languageModel!.complete(user("hi")))
      expect(denied.message).toBe("cohere/test-model: authentication failed; check the key in CO_API_KEY (HTTP 401)")
      expect(rejected.reason).toBe("request rejected: echo [redacted]")
      for (const e of [denied, rejected]) expect(JSON.stringify([e.message, e, String(e), e.stack])).not.toContain(key)
      for (const r of server.requests) {
        expect(r.headers.authorization).toBe(`Bearer ${key}`)
        const { authorization: _, ...others } = r.headers
        expect(JSON.stringify([others, r.path, r.rawBody])).not.toContain(key)
      }
      expect(JSON.stringify(bundle.reranker!.info)).not.toContain(key)
    })
  )
})
