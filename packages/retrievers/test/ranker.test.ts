import { Domain, Plugin, type Retriever } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as Builtins from "../src/Builtins.js"
import * as Ranker from "../src/Ranker.js"
import * as Selector from "../src/Selector.js"
import { suite } from "../src/testing/Conformance.js"
import { plugin as sharedWords } from "./fixtures/SharedWords.js"
import { env } from "./support.js"

// Request terms: plan, garden, bed, spring. First user messages' terms, with what shared-words scores:
const firsts = [
  "My garden needs spring bulbs. Garden soil too.", // garden x2, spring: 2/4; with minCount 2, 1/4
  "Tax forms for the garden club", //                 garden: 1/4; with minCount 2, 0
  "Nothing relevant here", //                         0
  "garden garden spring" //                           garden x2, spring: 2/4; with minCount 2, 1/4
]
const query: Domain.Query = {
  key: "q",
  request: "Plan the garden beds for spring",
  sessions: firsts.map((text, index) => ({
    id: Domain.sessionId(index),
    index,
    hash: `h${index}`,
    dialogue: [
      { role: "user", content: text },
      { role: "assistant", content: "Here is a garden plan for spring beds." }
    ]
  }))
}

const withRegistry = <A, E>(effect: Effect.Effect<A, E, Plugin.Env>, plugins: ReadonlyArray<Plugin.AnyPlugin> = []) =>
  effect.pipe(
    Effect.scoped,
    Effect.provide(Layer.succeed(Plugin.Plugins, Plugin.makeRegistry([...Builtins.plugins, sharedWords, ...plugins]))),
    Effect.provide(env())
  )

const retrieve = (
  spec: { readonly use: string } & Record<string, unknown>,
  plugins: ReadonlyArray<Plugin.AnyPlugin> = []
) =>
  withRegistry(
    Effect.flatMap(Selector.build(spec), (service) => service.retrieve({ query })),
    plugins
  )

const ranking = (r: Retriever.Retrieval) => r.ranking.map((x) => [x.sessionId, x.score])

describe("Ranker.plugin", () => {
  it.effect(
    "scores each session in the configured representation; ties go to the newer session; the default cut is the top 2",
    () =>
      Effect.gen(function* () {
        const r = yield* retrieve({ use: "shared-words", representation: "first-user-message" })
        expect(ranking(r)).toEqual([
          ["s4", 0.5],
          ["s1", 0.5],
          ["s2", 0.25],
          ["s3", 0]
        ])
        expect(r.selected).toEqual(["s1", "s4"])
        const strict = yield* retrieve({ use: "shared-words", representation: "first-user-message", minCount: 2, k: 3 })
        expect(ranking(strict)).toEqual([
          ["s4", 0.25],
          ["s1", 0.25],
          ["s3", 0],
          ["s2", 0]
        ])
        expect(strict.selected).toEqual(["s1", "s3", "s4"])
        // dialogue (the default) includes the assistant's turn, which names garden, spring, plan and beds: a tie at 1
        const dialogue = yield* retrieve({ use: "shared-words", select: { threshold: 1 } })
        expect(ranking(dialogue).map(([, s]) => s)).toEqual([1, 1, 1, 1])
        expect(dialogue.selected).toEqual(["s1", "s2", "s3", "s4"])
      })
  )

  it("adds the representation option and the default cut; unknown keys and bad values are refused", () => {
    expect(sharedWords.defaultSelect).toEqual({ top: 2 })
    const decoded = sharedWords.decode({})
    expect(Either.isRight(decoded) && decoded.right.params).toEqual({ minCount: 1, representation: "dialogue" })
    expect(Either.isLeft(sharedWords.decode({ minCount: 0 }))).toBe(true)
    expect(Either.isLeft(sharedWords.decode({ representation: "turns" }))).toBe(true)
    expect(Either.isLeft(sharedWords.decode({ mincount: 2 }))).toBe(true)
    const custom = Ranker.plugin({
      name: "c",
      description: "",
      options: Schema.Struct({}),
      score: () => 0,
      top: 4,
      representation: "user-turns"
    })
    expect(custom.defaultSelect).toEqual({ top: 4 })
    expect(Either.map(custom.decode({}), (d) => d.params)).toEqual(Either.right({ representation: "user-turns" }))
  })

  it.effect("a score that throws or is not finite fails the instance, naming the plugin and the session", () =>
    Effect.gen(function* () {
      const throwing = Ranker.plugin({
        name: "throws",
        description: "",
        options: Schema.Struct({}),
        score: (_q, s) => {
          if (s.index === 2) throw new Error("no vector")
          return 1
        }
      })
      const nan = Ranker.plugin({
        name: "nan",
        description: "",
        options: Schema.Struct({}),
        score: (_q, s) => (s.index === 1 ? NaN : 1)
      })
      const thrown = yield* Effect.flip(retrieve({ use: "throws" }, [throwing, nan]))
      expect(thrown.message).toBe("retrieve (throws): score threw on session s3: no vector")
      const notFinite = yield* Effect.flip(retrieve({ use: "nan" }, [throwing, nan]))
      expect(notFinite.message).toBe("retrieve (nan): score of session s2 is NaN; a score must be a finite number")
    })
  )

  it.effect(
    "ranks summaries when configured: the pipeline must summarize first, and a missing summary names the plugin",
    () =>
      withRegistry(
        Effect.gen(function* () {
          const service = yield* Selector.build({ use: "shared-words", representation: "summary" })
          expect(service.needsSummaries).toBe(true)
          const summaries = new Map(
            query.sessions.map((s, i) => [
              s.id,
              { sessionId: s.id, context: [i === 1 ? "spring garden beds" : "taxes"], preferences: [] }
            ])
          )
          const r = yield* service.retrieve({ query, summaries })
          expect(r.ranking[0]).toEqual({ sessionId: "s2", score: 0.75 })
          const missing = yield* Effect.flip(service.retrieve({ query }))
          expect(missing.message).toContain("retrieve (shared-words): session s1 has no summary")
        })
      )
  )

  it.effect("reads a session's text only when score does", () =>
    Effect.gen(function* () {
      const built = Ranker.plugin({
        name: "newest",
        description: "",
        options: Schema.Struct({}),
        score: (_q, s) => s.index
      })
      const trap: Domain.Query = {
        ...query,
        sessions: query.sessions.map((s) => ({
          ...s,
          get dialogue(): ReadonlyArray<Domain.Message> {
            throw new Error("the text was read")
          }
        }))
      }
      const service = yield* withRegistry(Selector.build({ use: "newest" }), [built])
      expect((yield* service.retrieve({ query: trap })).ranking.map((x) => x.sessionId)).toEqual([
        "s4",
        "s3",
        "s2",
        "s1"
      ])
    })
  )

  it("the guide's example is this test's ranker, and fits in 25 lines with its options", () => {
    const source = fs.readFileSync(new URL("./fixtures/SharedWords.ts", import.meta.url), "utf8")
    const guide = fs.readFileSync(new URL("../../../docs/writing-a-retriever.md", import.meta.url), "utf8")
    expect(guide).toContain("```ts\n" + source + "```")
    expect(source.trimEnd().split("\n").length).toBeLessThanOrEqual(25)
  })
})

suite({ plugin: sharedWords })
suite({ plugin: sharedWords, options: { representation: "user-turns", minCount: 2 } })
