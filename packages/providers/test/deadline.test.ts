/**
 * `timeoutMs` bounds a whole attempt, headers and body, for every hosted call (openai chat and
 * embeddings, cohere chat, embed and rerank), against loopback servers that trickle the answer one
 * byte every 200 ms or never send headers. The calls run uninterruptibly, as a sweep runs its pairs:
 * there an interruption (Effect's own timeout) only takes effect once the call is over.
 */
import type { Models, Errors } from "@cupid-lab/core"

import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Cohere from "../src/Cohere.js"
import * as CohereServer from "../src/testing/CohereServer.js"
import { type Fault, Faults } from "../src/testing/LoopbackServer.js"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import * as OpenAi from "../src/OpenAi.js"
import { build, user } from "./support.js"

const timeoutMs = 1000
// The reason below is written only by the deadline: the HTTP client's own backstop (timeoutMs + 5 s)
// and the faults' own ends (20 s and more for a trickle, 2 minutes for a silent server) say otherwise.
const policy = { timeoutMs, maxRetries: 0 }

const faults: ReadonlyArray<readonly [string, Fault]> = [
  ["trickles its answer one byte every 200 ms", Faults.trickle(200)],
  ["never sends headers", Faults.slow(120_000)]
]

type Call = (bundle: Models.ModelBundle) => Effect.Effect<unknown, Errors.ModelError>
const calls: ReadonlyArray<readonly [string, "openai" | "cohere", Call]> = [
  ["openai chat", "openai", (b) => b.languageModel!.complete(user("hi"))],
  ["openai embeddings", "openai", (b) => b.embeddingModel!.embed(["alpha beta"])],
  ["cohere chat", "cohere", (b) => b.languageModel!.complete(user("hi"))],
  ["cohere embed", "cohere", (b) => b.embeddingModel!.embed(["alpha beta"])],
  ["cohere rerank", "cohere", (b) => b.reranker!.rerank("which", ["alpha beta", "gamma delta"])]
]

/** A bundle of the provider against a fresh loopback server that answers the first request with `fault`. */
const serve = (provider: "openai" | "cohere", fault: Fault) =>
  provider === "openai"
    ? Effect.flatMap(OpenAiServer.make({ faults: [fault] }), (server) =>
        Effect.map(build(OpenAi.plugin, { baseURL: server.baseURL, ...policy }), (bundle) => ({ bundle, server }))
      )
    : Effect.flatMap(CohereServer.make({ faults: [fault] }), (server) =>
        Effect.map(
          build(Cohere.plugin, { baseURL: server.url, ...policy }, { CO_API_KEY: "co-test-key" }),
          (bundle) => ({
            bundle,
            server
          })
        )
      )

describe("timeoutMs covers headers and body", () => {
  for (const [what, provider, call] of calls) {
    for (const [how, fault] of faults) {
      it.scopedLive(`${what}: an attempt against a server that ${how} ends at the deadline`, () =>
        Effect.gen(function* () {
          const { bundle, server } = yield* serve(provider, fault)
          const result = yield* Effect.either(Effect.uninterruptible(call(bundle)))
          expect(Either.isLeft(result)).toBe(true)
          if (Either.isLeft(result)) {
            expect(result.left).toMatchObject({
              reason: `no answer within ${timeoutMs} ms (timeoutMs)`,
              retryable: true,
              requests: 1
            })
          }
          expect(server.requests.map((r) => r.fault)).toStrictEqual([fault.kind])
        })
      )
    }
  }
})
