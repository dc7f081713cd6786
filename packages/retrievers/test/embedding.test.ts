import { Corpus, Domain, Hash, Memo, ModelCache } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Selector from "../src/Selector.js"
import * as Embedder from "../src/Embedder.js"
import * as Embedding from "../src/Embedding.js"
import { suite } from "../src/testing/Conformance.js"
import * as Histories from "../src/testing/Histories.js"
import { countingEmbedder, env } from "./support.js"

const session = (index: number, user: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [
    { role: "user", content: user },
    { role: "assistant", content: "Done." }
  ]
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

const query: Domain.Query = {
  key: "p",
  request: "Plan my garden for spring and a travel weekend",
  sessions: [
    session(0, "Check this invoice for errors"),
    session(1, "Which garden beds get the most sun?"),
    session(2, "Book travel for the garden show"),
    session(3, "A soup recipe for tonight")
  ]
}

const withModel = (embedder: ReturnType<typeof countingEmbedder>) =>
  env({ models: { topics: { embeddingModel: embedder.service } } })

describe("embedding plugin with a configured model", () => {
  it.effect("ranks by cosine similarity to the request", () => {
    const embedder = countingEmbedder()
    return Effect.gen(function* () {
      const service = yield* Embedding.plugin.make({
        representation: "dialogue",
        embedder: { use: "model", model: "topics" },
        store: "memory"
      })
      const r = yield* service.retrieve({ query })
      // request = garden + travel; s3 has both (cos ~ 1), s2 one (~ 0.707), s1 and s4 none (~ 0.005).
      expect(r.ranking.map((x) => x.sessionId).slice(0, 2)).toEqual(["s3", "s2"])
      expect(r.ranking[0]!.score).toBeCloseTo(1, 3)
      expect(r.ranking[1]!.score).toBeCloseTo(Math.SQRT1_2, 3)
      expect(Selector.apply({ top: 2 }, r, query).selected).toEqual(["s2", "s3"])
    }).pipe(Effect.scoped, Effect.provide(withModel(embedder)))
  })

  it.effect("embeds each distinct text once across the cells of a sweep and concurrent calls", () => {
    const embedder = countingEmbedder()
    return Effect.gen(function* () {
      const cellA = yield* Embedder.make({ use: "model", model: "topics" })
      const cellB = yield* Embedder.make({ use: "model", model: "topics" })
      const items = [
        { key: "a", text: "garden" },
        { key: "b", text: "invoice" },
        { key: "a", text: "garden" }
      ]
      yield* Effect.all([cellA.embed(items), cellB.embed(items), cellA.embed(items)], { concurrency: 3 })
      yield* cellB.embed([
        { key: "b", text: "invoice" },
        { key: "c", text: "travel" }
      ])
      expect([...embedder.texts].sort()).toEqual(["garden", "invoice", "travel"])
      expect(embedder.calls()).toBe(2)
    }).pipe(Effect.provide(Memo.layer), Effect.provide(withModel(embedder)))
  })

  it.effect("names the configured models when the embedder is not one of them", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Embedder.make({ use: "model", model: "missing" }))
      expect(error.message).toContain("configured: topics")
    }).pipe(Effect.provide(withModel(countingEmbedder())))
  )
})

describe("embedding plugin with the offline TF-IDF + SVD embedder", () => {
  const instances = Histories.set(8, 3)
  const offline = env({ queries: instances.map((i) => i.query) })

  it.effect("fits once per corpus and options in a memo and reuses the fit", () =>
    Effect.gen(function* () {
      const corpus = yield* Corpus.Corpus
      const spec = { use: "tfidf-svd" as const, dims: 16, minDf: 1, maxTerms: 500 }
      const a = yield* Embedder.fitted(corpus, spec)
      const b = yield* Embedder.fitted(corpus, spec)
      expect(a).toBe(b)
      expect(a.model.dims).toBeGreaterThan(1)
      expect(a.model.dims).toBeLessThanOrEqual(16)
      const c = yield* Embedder.fitted(corpus, { ...spec, dims: 8 })
      expect(c).not.toBe(a)
      // Another memo (another sweep) fits again.
      expect(yield* Effect.provide(Embedder.fitted(corpus, spec), Memo.layer)).not.toBe(a)
    }).pipe(Effect.provide(Memo.layer), Effect.provide(offline))
  )

  it.effect(
    "keeps the fit in the model cache: another sweep on the same documents reads it back; a dry run writes none",
    () =>
      Effect.gen(function* () {
        const corpus = yield* Corpus.Corpus
        const cache = yield* ModelCache.ModelCache
        const spec = { use: "tfidf-svd" as const, dims: 12, minDf: 1, maxTerms: 400 }
        const start = yield* cache.stats
        const a = yield* Effect.provide(Embedder.fitted(corpus, spec), Memo.layer)
        const stored = yield* cache.stats
        expect([stored.writes - start.writes, stored.hits - start.hits]).toEqual([1, 0])
        // Another sweep (another memo): the same model, read back, not fitted again.
        const b = yield* Effect.provide(Embedder.fitted(corpus, spec), Memo.layer)
        const read = yield* cache.stats
        expect([read.writes - stored.writes, read.hits - stored.hits]).toEqual([0, 1])
        expect(b).not.toBe(a)
        expect([...b.model.vocabulary]).toEqual([...a.model.vocabulary])
        expect(b.model.singularValues).toEqual(a.model.singularValues)
        for (const text of ["garden invoice", "travel recipe travel", instances[0]!.query.request])
          expect(b.model.embed(text)).toEqual(a.model.embed(text))
      }).pipe(Effect.provide(offline))
  )

  it.effect("a dry run fits without writing the fit to the model cache", () =>
    Effect.gen(function* () {
      const corpus = yield* Corpus.Corpus
      const cache = yield* ModelCache.ModelCache
      const start = yield* cache.stats
      yield* Effect.provide(Embedder.fitted(corpus, { use: "tfidf-svd", dims: 8, minDf: 1, maxTerms: 300 }), Memo.layer)
      expect((yield* cache.stats).writes).toBe(start.writes)
    }).pipe(Effect.provide(env({ queries: instances.map((i) => i.query), dryRun: true })))
  )

  it.effect("ranks the current factor's sessions above other factors' on a synthetic history", () =>
    Effect.gen(function* () {
      const service = yield* Embedding.plugin.make({
        representation: "first-user-message",
        embedder: Embedder.defaultSpec,
        store: "memory"
      })
      const instance = instances[0]!
      const r = yield* service.retrieve({ query: instance.query })
      const relevant = instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id)
      expect([...Selector.apply({ top: 2 }, r, instance.query).selected].sort()).toEqual([...relevant].sort())
    }).pipe(Effect.scoped, Effect.provide(offline))
  )
})

describe("embedding plugin with granularity: turn", () => {
  it.effect("embeds each turn; a session ranks at its best turn's cosine", () => {
    const embedder = countingEmbedder()
    return Effect.gen(function* () {
      const service = yield* Embedding.plugin.make({
        representation: "user-turns",
        embedder: { use: "model", model: "topics" },
        store: "memory",
        granularity: "turn"
      })
      const turnQuery: Domain.Query = {
        key: "turns",
        request: "garden travel",
        sessions: [
          {
            id: "s1",
            index: 0,
            hash: "t1",
            dialogue: [
              { role: "user", content: "invoice" },
              { role: "assistant", content: "garden travel" },
              { role: "user", content: "garden" }
            ]
          },
          { id: "s2", index: 1, hash: "t2", dialogue: [{ role: "user", content: "travel to the garden show" }] }
        ]
      }
      const r = yield* service.retrieve({ query: turnQuery })
      // Vectors (garden, invoice, travel, recipe, 0.01): request (1,0,1,0,.01); s2#0 the same (cos 1);
      // s1#2 garden only (cos ~ 0.707); s1#0 invoice only (cos ~ 0.0001). The assistant turn is not a user turn.
      expect(r.turns!.map((t) => `${t.sessionId}#${t.turn}`)).toEqual(["s2#0", "s1#2", "s1#0"])
      expect(r.turns![1]!.score).toBeCloseTo(Math.SQRT1_2, 3)
      expect(r.ranking.map((x) => [x.sessionId, Number(x.score.toFixed(3))])).toEqual([
        ["s2", 1],
        ["s1", 0.707]
      ])
      expect(embedder.texts).toEqual(["garden travel", "invoice", "garden", "travel to the garden show"])
    }).pipe(Effect.scoped, Effect.provide(withModel(embedder)))
  })
})

suite({ plugin: Embedding.plugin })
suite({
  plugin: Embedding.plugin,
  options: { representation: "dialogue", granularity: "turn", embedder: { use: "tfidf-svd", dims: 32, minDf: 1 } }
})
suite({
  plugin: Embedding.plugin,
  options: { representation: "user-turns", embedder: { use: "tfidf-svd", dims: 32, minDf: 1 } }
})
suite({
  plugin: Embedding.plugin,
  options: { representation: "first-user-message", embedder: { use: "model", model: "topics" } },
  models: { topics: { embeddingModel: countingEmbedder().service } }
})
