import { Domain, Hash, Plugin, type Retriever } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Selector from "../src/Selector.js"
import * as Rerank from "../src/Rerank.js"
import { suite } from "../src/testing/Conformance.js"
import { env, wordOverlapReranker } from "./support.js"

const session = (index: number, user: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [{ role: "user", content: user }]
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

const envWith = (reranker: ReturnType<typeof wordOverlapReranker>) =>
  env({ models: { overlap: { reranker: reranker.service } } })

describe("rerank plugin", () => {
  const query: Domain.Query = {
    key: "p",
    request: "email for my supervisor about the budget",
    sessions: [
      session(0, "budget email for my supervisor"),
      session(1, "soup"),
      session(2, "email about the budget"),
      session(3, "supervisor")
    ]
  }

  it.effect("reorders the candidates by the reranker's scores and ranks only candidates", () => {
    const reranker = wordOverlapReranker()
    return Effect.gen(function* () {
      const service = (yield* Plugin.build("retriever", {
        use: "rerank",
        candidates: { use: "recency", k: 3 },
        model: "overlap"
      })) as Retriever.Service
      const r = yield* service.retrieve({ query })
      // Candidates (recency, k 3): s2, s3, s4. Words shared with the request: s3 "email about the
      // budget" 4, s4 "supervisor" 1, s2 "soup" 0.
      expect(r.ranking.map((x) => x.sessionId)).toEqual(["s3", "s4", "s2"])
      expect(Selector.apply({ top: 1 }, r, query).selected).toEqual(["s3"])
      expect(reranker.calls()).toBe(1)
    }).pipe(Effect.scoped, Effect.provide(envWith(reranker)))
  })

  it.effect("fails to build when the model is not a configured reranker", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Plugin.build("retriever", { use: "rerank", model: "nope" }))
      expect(error.message).toContain(`model "nope"`)
    }).pipe(Effect.scoped, Effect.provide(envWith(wordOverlapReranker())))
  )

  it.effect("requires a model", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Plugin.decodeOptions(Rerank.plugin, {}))
      expect(error.issues.map((i) => i.path.join("."))).toContain("model")
    })
  )
})

suite({
  plugin: Rerank.plugin,
  options: { model: "overlap" },
  models: { overlap: { reranker: wordOverlapReranker().service } }
})
suite({
  plugin: Rerank.plugin,
  options: { model: "overlap", candidates: { use: "embedding", select: { top: 5 } }, representation: "user-turns" },
  models: { overlap: { reranker: wordOverlapReranker().service } }
})
