import { Domain, Hash, Plugin, type Retriever } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Bm25 from "../src/Bm25.js"
import * as Embedding from "../src/Embedding.js"
import * as Expansion from "../src/Expansion.js"
import { suite } from "../src/testing/Conformance.js"
import { countingEmbedder, env, scriptedChat } from "./support.js"

const session = (index: number, user: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [{ role: "user", content: user }]
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

// s1 "violin lesson", s2 "tomato garden"; the model's facts: "music" for s1, none for s2.
const query: Domain.Query = {
  key: "x",
  request: "music",
  sessions: [session(0, "violin lesson"), session(1, "tomato garden")]
}
const facts = () => scriptedChat((r) => (r.messages.some((m) => m.content.includes("violin")) ? "- music" : "NONE"))

const build = (options: Record<string, unknown>) =>
  Effect.map(
    Plugin.build("retriever", {
      use: "bm25",
      representation: "user-turns",
      expand: "facts",
      expandModel: "facts",
      ...options
    }),
    (s) => s as Retriever.Service
  )

describe("key expansion: expand and join", () => {
  it("keyphrases: the noun phrases of the text, most frequent first", () => {
    expect(Expansion.keyphrases("I bought a new road bike for the Alpine tour. The road bike has carbon wheels.")).toBe(
      "new road bike; alpine tour; road bike; carbon wheel"
    )
    expect(Expansion.parseFacts("1. The user owns a dog.\n- They live in Oslo.\n\n")).toEqual([
      "The user owns a dog.",
      "They live in Oslo."
    ])
    expect(Expansion.parseFacts("NONE")).toEqual([])
  })

  it.effect("merge, replace and separate change what BM25 ranks (hand-computed)", () => {
    const chat = facts()
    return Effect.gen(function* () {
      const score = (join: string) =>
        Effect.map(
          Effect.flatMap(build({ join }), (s) => s.retrieve({ query })),
          (r) => r.ranking.map((x) => [x.sessionId, x.score])
        )
      // merge: s1 = "violin lesson\nmusic" (3 terms), s2 = "tomato garden" (2); average 2.5; idf(music) = ln 2.
      // s1: 0.693147 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3/2.5)) = 0.640724
      const merge = yield* score("merge")
      expect(merge[0]![0]).toBe("s1")
      expect(merge[0]![1]).toBeCloseTo(0.640724, 5)
      // replace: s1 = "music" (1 term), s2 = "" (0); average 0.5: 0.693147 * 2.2 / (1 + 1.2 * 1.75) = 0.491911
      expect((yield* score("replace"))[0]![1]).toBeCloseTo(0.491911, 5)
      // separate: four documents (two texts, two expansions), average 5/4; idf(music, 1 of 4) = ln(10/3):
      // 1.203973 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 1/1.25)) = 1.311258; s1 ranks at its better document.
      const separate = yield* score("separate")
      expect(separate[0]![1]).toBeCloseTo(1.311258, 5)
      expect(separate[1]).toEqual(["s2", 0])
      // One call per session, whatever the join: the model cache shares a session's facts across cells.
      expect(chat.requests).toHaveLength(2)
      expect(chat.requests[0]!.messages.at(-1)!.content).toContain("User: violin lesson")
    }).pipe(Effect.scoped, Effect.provide(env({ models: { facts: { languageModel: chat.service } } })))
  })

  it.effect(
    "the summary expansion reads the pipeline's summaries; facts need a model; turn granularity is refused",
    () =>
      Effect.gen(function* () {
        const summary = (yield* Plugin.build("retriever", { use: "bm25", expand: "summary" })) as Retriever.Service
        expect(summary.needsSummaries).toBe(true)
        const summaries = new Map(
          query.sessions.map((s) => [
            s.id,
            { sessionId: s.id, context: [s.id === "s2" ? "music festival" : "practice"], preferences: [] }
          ])
        )
        expect((yield* summary.retrieve({ query, summaries })).ranking[0]!.sessionId).toBe("s2")
        expect((yield* Effect.flip(summary.retrieve({ query }))).message).toContain(
          "expand: summary needs a summarizer"
        )
        expect((yield* Effect.flip(Plugin.build("retriever", { use: "bm25", expand: "facts" }))).message).toContain(
          "expand: facts needs expandModel"
        )
        expect(
          (yield* Effect.flip(Plugin.build("retriever", { use: "bm25", expand: "keyphrases", granularity: "turn" })))
            .message
        ).toContain("use it with granularity: session")
      }).pipe(Effect.scoped, Effect.provide(env()))
  )

  it.effect("embedding: separate keys rank a session at its better vector", () => {
    const embedder = countingEmbedder()
    const chat = scriptedChat((r) => (r.messages.some((m) => m.content.includes("invoice")) ? "garden travel" : "NONE"))
    return Effect.gen(function* () {
      const service = (yield* Plugin.build("retriever", {
        use: "embedding",
        representation: "user-turns",
        embedder: { use: "model", model: "topics" },
        expand: "facts",
        expandModel: "chat",
        join: "separate"
      })) as Retriever.Service
      const q: Domain.Query = {
        key: "e",
        request: "garden travel",
        sessions: [session(0, "invoice"), session(1, "garden")]
      }
      const r = yield* service.retrieve({ query: q })
      // s1's text is about invoices (cos ~ 0), its facts are garden + travel (cos 1); s2: garden (~ 0.707).
      expect(r.ranking.map((x) => [x.sessionId, Number(x.score.toFixed(3))])).toEqual([
        ["s1", 1],
        ["s2", 0.707]
      ])
    }).pipe(
      Effect.scoped,
      Effect.provide(
        env({ models: { topics: { embeddingModel: embedder.service }, chat: { languageModel: chat.service } } })
      )
    )
  })
})

// The suite's twin check: an instance and its twin (same visible text, other labels and type) get
// the same retrieval, so the expansion reads no gold.
suite({ plugin: Bm25.plugin, options: { expand: "keyphrases", join: "merge" } })
suite({ plugin: Bm25.plugin, options: { expand: "summary", join: "separate" } })
suite({
  plugin: Bm25.plugin,
  options: { representation: "user-turns", expand: "facts", expandModel: "facts", join: "replace" },
  models: {
    facts: { languageModel: scriptedChat((r) => r.messages.at(-1)!.content.split("\n").slice(1, 3).join(" ")).service }
  },
  largeHistory: 200
})
suite({
  plugin: Embedding.plugin,
  options: { expand: "keyphrases", join: "separate", embedder: { use: "tfidf-svd", dims: 16, minDf: 1 } }
})
