import { Effect, ConfigProvider, Either } from "effect"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import * as CohereServer from "../src/testing/CohereServer.js"
import { Faults } from "../src/testing/LoopbackServer.js"
import * as OpenAi from "../src/OpenAi.js"
import * as Cohere from "../src/Cohere.js"
import { Plugin } from "@cupid-lab/core"

const program = Effect.gen(function*() {
  const server = yield* OpenAiServer.make({})
  const opts = yield* Plugin.decodeOptions(OpenAi.plugin, { baseURL: server.baseURL, retryBaseMs: 1, retryMaxMs: 5, timeoutMs: 1000 })
  const b = yield* OpenAi.make(opts, "m")
  server.scriptFaults(Faults.rateLimit({ retryAfterMs: 5 }), Faults.serverError(), Faults.reset(), Faults.malformed(), Faults.slow(3000))
  const r = yield* b.languageModel!.complete({ messages: [{ role: "user", content: "hello there" }] })
  console.log(r, server.requests.map((q) => q.fault))
  const e = yield* b.embeddingModel!.embed(["a b", "c"])
  console.log(e)
  server.scriptFaults(...Array(6).fill(Faults.serverError(503, "overloaded")))
  const f = yield* Effect.either(b.languageModel!.complete({ messages: [{ role: "user", content: "x" }] }))
  console.log(Either.isLeft(f) ? [f.left.message, f.left] : f)

  const cs = yield* CohereServer.make({})
  const co = yield* Plugin.decodeOptions(Cohere.plugin, { baseURL: cs.url, retryBaseMs: 1, retryMaxMs: 5, timeoutMs: 1000 })
  const cb = yield* Cohere.make(co, "c")
  cs.scriptFaults(Faults.rateLimit({ retryAfterSeconds: 0 }), Faults.reset(), Faults.malformed(), Faults.serverError())
  console.log(yield* cb.languageModel!.complete({ messages: [{ role: "user", content: "hello there" }] }), cs.requests.map(r => r.fault))
  console.log(yield* cb.embeddingModel!.embed(["a b", "c"]))
  console.log(yield* cb.reranker!.rerank("red apple", ["green apple", "red apple pie", "car"]))
  cs.scriptFaults(Faults.status(400, { message: "bad thing" }))
  const g = yield* Effect.either(cb.reranker!.rerank("q", ["d"]))
  console.log(Either.isLeft(g) ? g.left.message : g)
  console.log(JSON.stringify(cs.requests.at(-1)?.headers), cs.requests[0]?.rawBody)
})
Effect.runPromise(Effect.scoped(program).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["CO_API_KEY", "co-secret"]])))) ).catch((e) => console.error("FAILED", e))
