import { ModelCache, Models, Tokens, Usage, Errors } from "@cupid-lab/core"

import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, TestClock } from "effect"
import * as OpenAi from "../src/OpenAi.js"
import { Faults } from "../src/testing/LoopbackServer.js"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import { build, fast, user } from "./support.js"

const openai = (raw: Record<string, unknown>, env: Record<string, string> = {}) => build(OpenAi.plugin, raw, env)

const failureOf = <A>(effect: Effect.Effect<A, Errors.ModelError>) =>
  Effect.flatMap(Effect.either(effect), (e) =>
    Either.isLeft(e) ? Effect.succeed(e.left) : Effect.dieMessage("expected a failure")
  )

describe("openai provider: requests and answers", () => {
  it.scopedLive("sends configured and per-request parameters, returns text and the server's usage", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: () => ({ content: "fine", usage: { promptTokens: 11, completionTokens: 3 } })
      })
      const bundle = yield* openai({ baseURL: server.baseURL, temperature: 0, seed: 7, maxTokens: 50 })
      const lm = bundle.languageModel!
      expect(lm.info).toStrictEqual({
        provider: "openai",
        model: "test-model",
        params: { temperature: 0, seed: 7, maxTokens: 50 }
      })
      const out = yield* lm.complete({
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" }
        ],
        temperature: 0.2,
        stop: ["\n\n"],
        responseFormat: "json"
      })
      expect(out).toStrictEqual({
        text: "fine",
        promptTokens: 11,
        completionTokens: 3,
        finishReason: "stop",
        requests: 1
      })
      expect(server.requests).toHaveLength(1)
      expect(server.requests[0]!.path).toBe("/v1/chat/completions")
      expect(server.requests[0]!.body).toStrictEqual({
        model: "test-model",
        messages: [
          { role: "system", content: "be brief" },
          { role: "user", content: "hi" }
        ],
        temperature: 0.2,
        max_tokens: 50,
        seed: 7,
        stop: ["\n\n"],
        response_format: { type: "json_object" }
      })
    })
  )

  it.scopedLive("fails an answer whose body passes maxResponseBytes, without retrying; a smaller one passes", () =>
    Effect.gen(function* () {
      const big = "word ".repeat(400_000) // 2 MB of answer
      const server = yield* OpenAiServer.make({
        chat: (body) => (body.messages.at(-1)?.content === "big" ? big : "small")
      })
      const lm = (yield* openai({ baseURL: server.baseURL, maxResponseBytes: 1_000_000, maxRetries: 3 })).languageModel!
      expect((yield* lm.complete(user("small"))).text).toBe("small")
      const e = yield* failureOf(lm.complete(user("big")))
      expect(e.reason).toMatch(/the response is larger than 1000000 bytes \(\d+ or more\); raise maxResponseBytes/)
      expect(e.retryable).toBe(false)
      expect(server.requests).toHaveLength(2)
    })
  )

  it.scopedLive("can send max_completion_tokens for models that require it", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      const bundle = yield* openai({ baseURL: server.baseURL, maxTokens: 9, maxTokensParam: "max_completion_tokens" })
      yield* bundle.languageModel!.complete(user("x"))
      expect(server.requests[0]!.body).toMatchObject({ max_completion_tokens: 9 })
      expect(server.requests[0]!.body).not.toHaveProperty("max_tokens")
      expect(bundle.languageModel!.info.params).toStrictEqual({ maxTokens: 9, maxTokensParam: "max_completion_tokens" })
    })
  )

  it.scopedLive("estimates tokens with core Tokens.count when the server omits usage", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ usage: false })
      const bundle = yield* openai({ baseURL: server.baseURL })
      const out = yield* bundle.languageModel!.complete(user("one two three"))
      // prompt: 3 words + 4 for the message frame; answer "echo: one two three": echo, ":", one, two, three
      expect(out).toStrictEqual({
        text: "echo: one two three",
        promptTokens: 7,
        completionTokens: 5,
        finishReason: "stop",
        requests: 1
      })
      expect(Tokens.count("echo: one two three")).toBe(5)
      const emb = yield* bundle.embeddingModel!.embed(["alpha beta", "gamma"])
      expect(emb.promptTokens).toBe(3)
    })
  )

  it.scopedLive("records usage of every call in the ledger through the model registry, once per request sent", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: () => ({ content: "ok", usage: { promptTokens: 11, completionTokens: 3 } })
      })
      const bundle = yield* openai({ baseURL: server.baseURL })
      const cache = yield* ModelCache.ModelCache
      const lm = yield* Models.make({ gpt: bundle }, cache).languageModel("gpt")
      const [, usage] = yield* Usage.track(Effect.zip(lm.complete(user("same")), lm.complete(user("same"))))
      expect(
        usage.map((u) => [u.provider, u.model, u.kind, u.promptTokens, u.completionTokens, u.cached])
      ).toStrictEqual([
        ["openai", "test-model", "complete", 11, 3, false],
        ["openai", "test-model", "complete", 11, 3, true]
      ])
      expect(server.requests).toHaveLength(1)
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.scopedLive("embeds in input order across batches, asking for float encoding", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      const bundle = yield* openai({ baseURL: server.baseURL, batchSize: 2, dimensions: 8 })
      const texts = ["a b", "c", "d e f", "g", "h"]
      const out = yield* bundle.embeddingModel!.embed(texts)
      expect(out.vectors.map((v) => Array.from(v))).toStrictEqual(
        texts.map((t) => Array.from(Float32Array.from(OpenAiServer.hashVector(t))))
      )
      expect(out.promptTokens).toBe(8)
      expect(server.requests.map((r) => r.body)).toStrictEqual([
        { model: "test-model", input: ["a b", "c"], encoding_format: "float", dimensions: 8 },
        { model: "test-model", input: ["d e f", "g"], encoding_format: "float", dimensions: 8 },
        { model: "test-model", input: ["h"], encoding_format: "float", dimensions: 8 }
      ])
      expect(yield* bundle.embeddingModel!.embed([])).toStrictEqual({ vectors: [], promptTokens: 0 })
      expect(server.requests).toHaveLength(3)
    })
  )

  it.scopedLive("decodes base64 embeddings from servers that send them anyway", () =>
    Effect.gen(function* () {
      const packed = Buffer.alloc(8)
      packed.writeFloatLE(1.5, 0)
      packed.writeFloatLE(-2, 4)
      const server = yield* OpenAiServer.make({
        faults: [
          Faults.status(200, {
            data: [{ index: 0, embedding: packed.toString("base64") }],
            usage: { prompt_tokens: 4 }
          })
        ]
      })
      const bundle = yield* openai({ baseURL: server.baseURL })
      const out = yield* bundle.embeddingModel!.embed(["x"])
      expect(Array.from(out.vectors[0]!)).toStrictEqual([1.5, -2])
      expect(out.promptTokens).toBe(4)
    })
  )
})

describe("openai provider: faults", () => {
  const cases = [
    {
      name: "429 with retry-after-ms",
      fault: Faults.rateLimit({ retryAfterMs: 3 }),
      expected: { reason: "rate limited: rate limit reached, slow down", status: 429, retryable: true, retryAfterMs: 3 }
    },
    {
      name: "429 with Retry-After seconds",
      fault: Faults.rateLimit({ retryAfterSeconds: 0 }),
      expected: { reason: "rate limited: rate limit reached, slow down", status: 429, retryable: true, retryAfterMs: 0 }
    },
    {
      name: "500",
      fault: Faults.serverError(500, "internal error"),
      expected: { reason: "server error: internal error", status: 500, retryable: true }
    },
    {
      name: "connection reset",
      fault: Faults.reset(),
      expected: { retryable: true }
    },
    {
      name: "malformed JSON body",
      fault: Faults.malformed(),
      expected: { reason: "malformed response: the body is not JSON", retryable: true }
    }
  ] as const

  for (const c of cases) {
    it.scopedLive(`${c.name}: a final failure without retries, then success with one retry`, () =>
      Effect.gen(function* () {
        const server = yield* OpenAiServer.make({ faults: [c.fault] })
        const once = yield* openai({ baseURL: server.baseURL, ...fast, maxRetries: 0 })
        const error = yield* failureOf(once.languageModel!.complete(user("hi")))
        expect(error).toBeInstanceOf(Errors.ModelError)
        expect(error).toMatchObject({ provider: "openai", model: "test-model", ...c.expected })
        if (c.name === "connection reset") expect(error.reason).toMatch(/^connection (reset|closed) by the server/)
        server.scriptFaults(c.fault)
        const retrying = yield* openai({ baseURL: server.baseURL, ...fast, maxRetries: 1 })
        expect((yield* retrying.languageModel!.complete(user("hi"))).text).toBe("echo: hi")
        expect(server.requests.map((r) => r.fault)).toStrictEqual([c.fault.kind, c.fault.kind, undefined])
      })
    )
  }

  it.scopedLive("a response slower than timeoutMs is abandoned and retried", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ faults: [Faults.slow(20_000)] })
      const once = yield* openai({ baseURL: server.baseURL, ...fast, timeoutMs: 500, maxRetries: 0 })
      const error = yield* failureOf(once.languageModel!.complete(user("hi")))
      expect(error).toMatchObject({ reason: "no answer within 500 ms (timeoutMs)", retryable: true })
      server.scriptFaults(Faults.slow(20_000))
      const retrying = yield* openai({ baseURL: server.baseURL, ...fast, timeoutMs: 1500, maxRetries: 1 })
      expect((yield* retrying.languageModel!.complete(user("hi"))).text).toBe("echo: hi")
      expect(server.requests.map((r) => r.fault)).toStrictEqual(["slow", "slow", undefined])
    })
  )

  it.scopedLive("retries through a mix of faults, then gives up with a message naming the last one", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        faults: [Faults.rateLimit({ retryAfterMs: 1 }), Faults.reset(), Faults.serverError(502, "bad gateway")]
      })
      const bundle = yield* openai({ baseURL: server.baseURL, ...fast, maxRetries: 2 })
      const error = yield* failureOf(bundle.languageModel!.complete(user("hi")))
      expect(error.message).toBe("openai/test-model: server error: bad gateway; gave up after 3 attempts (HTTP 502)")
      expect(server.requests).toHaveLength(3)
      server.scriptFaults(Faults.reset(), Faults.malformed())
      expect((yield* bundle.languageModel!.complete(user("again"))).text).toBe("echo: again")
      expect(server.requests.map((r) => r.fault)).toStrictEqual([
        "rate-limit",
        "reset",
        "server-error",
        "reset",
        "malformed",
        undefined
      ])
    })
  )

  it.scopedLive("does not retry a rejected request (400)", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        faults: [Faults.status(400, { error: { message: "Unrecognized request argument: foo" } })]
      })
      const bundle = yield* openai({ baseURL: server.baseURL, ...fast, maxRetries: 4 })
      const error = yield* failureOf(bundle.languageModel!.complete(user("hi")))
      expect(error.message).toBe("openai/test-model: request rejected: Unrecognized request argument: foo (HTTP 400)")
      expect(error.retryable).toBe(false)
      expect(server.requests).toHaveLength(1)
    })
  )

  it.scopedLive("an answer without choices is a malformed response", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ faults: [Faults.status(200, { choices: [] })] })
      const bundle = yield* openai({ baseURL: server.baseURL, ...fast, maxRetries: 0 })
      const error = yield* failureOf(bundle.languageModel!.complete(user("hi")))
      expect(error.reason).toBe("malformed response: expected choices[0].message: choices.0: is missing")
    })
  )
})

describe("openai provider: keys", () => {
  const key = "sk-test-SECRET-0123456789"

  it.scoped("a hosted endpoint without a key fails to build, naming the variable", () =>
    Effect.gen(function* () {
      const plain = yield* Effect.flip(openai({}))
      expect(plain.message).toBe(
        'plugin "openai": model "test-model": environment variable OPENAI_API_KEY is not set; export the API key there, ' +
          "or set apiKeyEnv to the variable that holds it"
      )
      const named = yield* Effect.flip(
        openai({ apiKeyEnv: "TEAM_OPENAI_KEY" }, { OPENAI_API_KEY: key, TEAM_OPENAI_KEY: "" })
      )
      expect(named.message).toContain("environment variable TEAM_OPENAI_KEY is not set")
    })
  )

  it.scopedLive("a local server needs no key; OPENAI_BASE_URL is honoured", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      const bundle = yield* openai({}, { OPENAI_BASE_URL: server.baseURL })
      expect((yield* bundle.languageModel!.complete(user("hi"))).text).toBe("echo: hi")
      expect(server.requests[0]!.headers.authorization).toBe("Bearer not-needed")
    })
  )

  it.scopedLive("the key travels only in the Authorization header and never appears in errors or params", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        faults: [
          Faults.status(401, { error: { message: `Incorrect API key provided: ${key}` } }),
          Faults.status(400, { error: { message: `bad request from ${key}` } }),
          Faults.serverError(500, `trace includes ${key}`),
          Faults.status(418, `teapot ${key}`)
        ]
      })
      const bundle = yield* openai(
        { baseURL: server.baseURL, ...fast, maxRetries: 0, temperature: 0 },
        { OPENAI_API_KEY: key }
      )
      const errors: Array<Errors.ModelError> = []
      for (let i = 0; i < 4; i++) errors.push(yield* failureOf(bundle.languageModel!.complete(user("hi"))))
      expect(errors[0]!.message).toBe(
        "openai/test-model: authentication failed; check the key in OPENAI_API_KEY (HTTP 401)"
      )
      expect(errors[1]!.reason).toBe("request rejected: bad request from [redacted]")
      for (const e of errors) {
        for (const text of [e.message, e.reason, String(e), JSON.stringify(e), e.stack ?? ""])
          expect(text).not.toContain(key)
      }
      const answer = yield* bundle.languageModel!.complete(user("hi"))
      expect(JSON.stringify([answer, bundle.languageModel!.info, bundle.embeddingModel!.info])).not.toContain(key)
      expect(server.requests).toHaveLength(5)
      for (const r of server.requests) {
        expect(r.headers.authorization).toBe(`Bearer ${key}`)
        const { authorization: _, ...others } = r.headers
        expect(JSON.stringify([others, r.path, r.rawBody])).not.toContain(key)
      }
    })
  )
})

describe("openai provider: limits", () => {
  it.scoped("requests per minute: two go at once, the rest wait for the bucket to refill", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      const bundle = yield* openai({ baseURL: server.baseURL, rpm: 2, timeoutMs: 3_600_000 })
      const calls = Effect.all(
        ["a", "b", "c", "d"].map((t) => bundle.languageModel!.complete(user(t))),
        { concurrency: "unbounded" }
      )
      const fiber = yield* Effect.fork(calls)
      yield* Effect.promise(() => server.waitForRequests(2))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 150)))
      expect(server.requests).toHaveLength(2)
      yield* TestClock.adjust("30 seconds")
      yield* Effect.promise(() => server.waitForRequests(3))
      yield* TestClock.adjust("30 seconds")
      const answers = yield* Fiber.join(fiber)
      expect(answers.map((a) => a.text)).toStrictEqual(["echo: a", "echo: b", "echo: c", "echo: d"])
      expect(server.requests).toHaveLength(4)
    })
  )

  it.scopedLive("concurrency: never more requests in flight than allowed", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ faultFor: () => Faults.slow(60) })
      const bundle = yield* openai({ baseURL: server.baseURL, concurrency: 2 })
      const texts = ["a", "b", "c", "d", "e", "f"]
      const exit = yield* Effect.exit(
        Effect.all(
          texts.map((t) => bundle.languageModel!.complete(user(t))),
          { concurrency: "unbounded" }
        )
      )
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(server.requests).toHaveLength(6)
      expect(server.peakInFlight).toBe(2)
    })
  )
})

describe("openai plugin options", () => {
  it.effect("applies defaults and rejects unknown keys", () =>
    Effect.gen(function* () {
      const { Plugin } = yield* Effect.promise(() => import("@cupid-lab/core"))
      const options = yield* Plugin.decodeOptions(OpenAi.plugin, {})
      expect(options).toStrictEqual({
        apiKeyEnv: "OPENAI_API_KEY",
        systemRole: "system",
        maxTokensParam: "max_tokens",
        batchSize: 128,
        maxResponseBytes: 64 * 1024 * 1024,
        concurrency: 4,
        timeoutMs: 60_000,
        maxRetries: 5,
        retryBaseMs: 500,
        retryMaxMs: 30_000
      })
      const bad = yield* Effect.flip(Plugin.decodeOptions(OpenAi.plugin, { temprature: 0 }))
      expect(bad.issues.map((i) => i.path.join("."))).toStrictEqual(["temprature"])
    })
  )
})
