import { Domain, Hash } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Selector from "../src/Selector.js"
import * as Bm25 from "../src/Bm25.js"
import { suite } from "../src/testing/Conformance.js"
import { env } from "./support.js"

const docs = [Bm25.document(["a", "b"]), Bm25.document(["b", "c", "c"]), Bm25.document(["d"])]

describe("Bm25.scores", () => {
  it("matches hand-computed Okapi BM25 (k1 = 1.2, b = 0.75)", () => {
    // idf(b) = ln(1 + 1.5/2.5) = 0.470004; idf(c) = ln(1 + 2.5/1.5) = 0.980829; avg length 2.
    // d2 (length 3): b: 0.470004 * 2.2 / (1 + 1.2 * 1.375); c (tf 2): 0.980829 * 4.4 / (2 + 1.2 * 1.375).
    const s = Bm25.scores(["b", "c"], docs, { k1: 1.2, b: 0.75 })
    expect(s[0]).toBeCloseTo(0.4700036, 6)
    expect(s[1]).toBeCloseTo(1.5725612, 6)
    expect(s[2]).toBe(0)
  })

  it("with k1 = 0 sums the idf of the matched terms", () => {
    const s = Bm25.scores(["b", "c"], docs, { k1: 0, b: 0.75 })
    expect(s[0]).toBeCloseTo(0.4700036, 6)
    expect(s[1]).toBeCloseTo(1.4508329, 6)
  })

  it("counts a repeated query term once and keeps idf positive for common terms", () => {
    expect(Bm25.scores(["b", "b"], docs, { k1: 1.2, b: 0.75 })).toEqual(Bm25.scores(["b"], docs, { k1: 1.2, b: 0.75 }))
    // b occurs in 2 of 3 documents: the Robertson-Sparck Jones idf would be negative here.
    expect(Bm25.idf(3, 2)).toBeGreaterThan(0)
    expect(Bm25.idf(3, 3)).toBeGreaterThan(0)
  })

  it("scores nothing for an empty collection or a query with no known terms", () => {
    expect(Bm25.scores(["b"], [], { k1: 1.2, b: 0.75 })).toEqual([])
    expect(Bm25.scores(["zzz"], docs, { k1: 1.2, b: 0.75 })).toEqual([0, 0, 0])
  })
})

const session = (index: number, user: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [
    { role: "user", content: user },
    { role: "assistant", content: "Sure, here it is." }
  ]
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

describe("bm25 plugin", () => {
  const query: Domain.Query = {
    key: "p",
    request: "Draft the renewal letter for the Hartwell Family Foundation.",
    sessions: [
      session(0, "Write the volunteer newsletter for March."),
      session(1, "I need a letter of inquiry for the Hartwell Family Foundation."),
      session(2, "Quarterly update for the board chair, please."),
      session(3, "The Hartwell foundation invited a proposal; can you draft it?")
    ]
  }

  it.effect("ranks sessions sharing the request's stemmed words first", () =>
    Effect.gen(function* () {
      const service = yield* Bm25.plugin.make({ representation: "dialogue", k1: 1.2, b: 0.75 })
      const r = yield* service.retrieve({ query })
      expect(r.ranking.map((x) => x.sessionId).slice(0, 2)).toEqual(["s2", "s4"])
      expect(Selector.apply({ top: 2 }, r, query).selected).toEqual(["s2", "s4"])
    }).pipe(Effect.scoped, Effect.provide(env()))
  )

  it.effect("ranks summaries when asked to, and fails clearly without them", () =>
    Effect.gen(function* () {
      const service = yield* Bm25.plugin.make({ representation: "summary", k1: 1.2, b: 0.75 })
      expect(service.needsSummaries).toBe(true)
      const summaries = new Map(
        query.sessions.map((s) => [
          s.id,
          {
            sessionId: s.id,
            context: [s.id === "s3" ? "Hartwell Family Foundation renewal" : "other work"],
            preferences: []
          }
        ])
      )
      expect(Selector.apply({ top: 1 }, yield* service.retrieve({ query, summaries }), query).selected).toEqual(["s3"])
      const error = yield* Effect.flip(service.retrieve({ query }))
      expect(error.message).toContain("session s1 has no summary")
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

describe("bm25 with granularity: turn", () => {
  const sessionOf = (index: number, dialogue: ReadonlyArray<Domain.Message>): Domain.SessionView => ({
    id: Domain.sessionId(index),
    index,
    hash: Hash.contentHash(dialogue),
    dialogue
  })
  // User turns (the documents): s1#0 "violin lesson", s1#2 "garden", s2#0 "tomato garden", s3#0 "violin violin".
  const query: Domain.Query = {
    key: "t",
    request: "violin lesson",
    sessions: [
      sessionOf(0, [
        { role: "user", content: "violin lesson" },
        { role: "assistant", content: "violin lesson tomato" },
        { role: "user", content: "garden" }
      ]),
      sessionOf(1, [{ role: "user", content: "tomato garden" }]),
      sessionOf(2, [{ role: "user", content: "violin violin" }])
    ]
  }

  it.effect(
    "scores each turn against the turns' statistics and ranks each session at its best turn (hand-computed)",
    () =>
      Effect.gen(function* () {
        const service = yield* Bm25.plugin.make({ representation: "user-turns", k1: 1.2, b: 0.75, granularity: "turn" })
        const r = yield* service.retrieve({ query })
        // 4 turns, average length 7/4. idf(violin, 2 of 4) = ln 2 = 0.693147; idf(lesson, 1 of 4) = ln(10/3) = 1.203973.
        // s1#0 (length 2, norm 0.25 + 0.75 * 2/1.75 = 1.107143): (0.693147 + 1.203973) * 2.2 / (1 + 1.2 * 1.107143) = 1.792373
        // s3#0 (length 2, violin twice): 0.693147 * 2 * 2.2 / (2 + 1.2 * 1.107143) = 0.916264
        expect(r.turns!.map((t) => [t.sessionId, t.turn])).toEqual([
          ["s1", 0],
          ["s3", 0],
          ["s2", 0],
          ["s1", 2]
        ])
        expect(r.turns![0]!.score).toBeCloseTo(1.792373, 5)
        expect(r.turns![1]!.score).toBeCloseTo(0.916264, 5)
        expect(r.turns!.slice(2).map((t) => t.score)).toEqual([0, 0])
        // Sessions at their best turn: s1 1.792373 (not its "garden" turn), s3 0.916264, s2 0.
        expect(r.ranking.map((x) => x.sessionId)).toEqual(["s1", "s3", "s2"])
        expect(r.ranking[0]!.score).toBeCloseTo(1.792373, 5)
        expect(r.ranking[2]!.score).toBe(0)
        expect(Selector.apply({ top: 1 }, r, query)).toEqual({ ...r, selected: ["s1"] })
      }).pipe(Effect.scoped, Effect.provide(env()))
  )

  it.effect("dialogue turns include the assistant's; first-user-message keeps one turn per session", () =>
    Effect.gen(function* () {
      const dialogue = yield* Bm25.plugin.make({ representation: "dialogue", k1: 1.2, b: 0.75, granularity: "turn" })
      const all = yield* dialogue.retrieve({ query })
      expect(all.turns!.map((t) => `${t.sessionId}#${t.turn}`).sort()).toEqual(["s1#0", "s1#1", "s1#2", "s2#0", "s3#0"])
      const first = yield* Bm25.plugin.make({
        representation: "first-user-message",
        k1: 1.2,
        b: 0.75,
        granularity: "turn"
      })
      expect((yield* first.retrieve({ query })).turns!.map((t) => `${t.sessionId}#${t.turn}`)).toEqual([
        "s1#0",
        "s3#0",
        "s2#0"
      ])
    }).pipe(Effect.scoped, Effect.provide(env()))
  )

  it.effect("turns of a summary do not exist: the plugin refuses to build", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Bm25.plugin.make({ representation: "summary", k1: 1.2, b: 0.75, granularity: "turn" })
      )
      expect(error.message).toContain("granularity: turn ranks the turns of a session; representation summary has none")
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

suite({ plugin: Bm25.plugin })
suite({ plugin: Bm25.plugin, options: { representation: "user-turns", granularity: "turn" } })
suite({ plugin: Bm25.plugin, options: { representation: "user-turns", k1: 0.9, b: 0.4 } })
suite({ plugin: Bm25.plugin, options: { representation: "first-user-message" } })
suite({ plugin: Bm25.plugin, options: { representation: "summary" } })
