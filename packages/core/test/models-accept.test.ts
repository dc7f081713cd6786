import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { type LanguageModel, ModelCache, Models } from "@cupid-lab/core"

const scripted = (answers: Array<string>) => {
  const seen: Array<string> = []
  const service: LanguageModel.Service = {
    info: { provider: "test", model: "scripted", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        seen.push(request.messages[0]!.content)
        return { text: answers.shift() ?? "", promptTokens: 3, completionTokens: 2 }
      })
  }
  return { service, seen }
}

describe("answers a caller rejects", () => {
  it.effect("are returned but not cached, so the next identical call asks again", () =>
    Effect.gen(function* () {
      const model = scripted(["garbled", "Score: 7"])
      const layer = Models.layer({ m: { languageModel: model.service } }).pipe(
        Layer.provideMerge(ModelCache.layerMemory)
      )
      const [first, second, third] = yield* Effect.gen(function* () {
        const lm = yield* (yield* Models.Models).languageModel("m")
        const request = {
          messages: [{ role: "user" as const, content: "judge this" }],
          accept: (t: string) => t.startsWith("Score")
        }
        return [yield* lm.complete(request), yield* lm.complete(request), yield* lm.complete(request)] as const
      }).pipe(Effect.provide(layer))
      expect([first.text, second.text, third.text]).toEqual(["garbled", "Score: 7", "Score: 7"])
      // The rejected answer cost a call; the accepted one was stored and answered the third call.
      expect(model.seen).toHaveLength(2)
    })
  )

  it.effect("a cached answer the caller rejects is asked for again and replaced", () =>
    Effect.gen(function* () {
      const model = scripted(["garbled", "Score: 7"])
      const layer = Models.layer({ m: { languageModel: model.service } }).pipe(
        Layer.provideMerge(ModelCache.layerMemory)
      )
      const [texts, stats] = yield* Effect.gen(function* () {
        const lm = yield* (yield* Models.Models).languageModel("m")
        const messages = [{ role: "user" as const, content: "judge this" }]
        // A caller without a check stores "garbled"; one that parses scores rejects it from the cache.
        const lax = yield* lm.complete({ messages })
        const strict = { messages, accept: (t: string) => t.startsWith("Score") }
        const texts = [lax.text, (yield* lm.complete(strict)).text, (yield* lm.complete(strict)).text]
        return [texts, yield* (yield* ModelCache.ModelCache).stats] as const
      }).pipe(Effect.provide(layer))
      expect(texts).toEqual(["garbled", "Score: 7", "Score: 7"])
      expect(model.seen).toHaveLength(2)
      expect(stats).toEqual({ hits: 1, misses: 2, writes: 2, invalid: 0, rejected: 1, writeErrors: 0 })
    })
  )

  it.effect("`accept` is not part of the cache key", () =>
    Effect.gen(function* () {
      const info = { provider: "p", model: "m", params: {} }
      const base = { messages: [{ role: "user" as const, content: "x" }] }
      expect(Models.completionKey(info, { ...base, accept: () => true })).toBe(Models.completionKey(info, base))
      expect(Models.completionKey(info, { ...base, dryRunAnswer: "y" })).toBe(Models.completionKey(info, base))
    })
  )
})
