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
  const dialogue: ReadonlyArray<Domain.Message> = [{ role: "user", content: user }, { role: "assistant", content: "Sure, here it is." }]
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
    Effect.gen(function*() {
      const service = yield* Bm25.plugin.make({ representation: "dialogue", k1: 1.2, b: 0.75 })
      const r = yield* service.retrieve({ query })
      expect(r.ranking.map((x) => x.sessionId).slice(0, 2)).toEqual(["s2", "s4"])
      expect(Selector.apply({ top: 2 }, r, query).selected).toEqual(["s2", "s4"])
    }).pipe(Effect.scoped, Effect.provide(env())))

  it.effect("ranks summaries when asked to, and fails clearly without them", () =>
    Effect.gen(function*() {
      const service = yield* Bm25.plugin.make({ representation: "summary", k1: 1.2, b: 0.75 })
      expect(service.needsSummaries).toBe(true)
      const summaries = new Map(query.sessions.map((s) => [s.id, { sessionId: s.id, context: [s.id === "s3" ? "Hartwell Family Foundation renewal" : "other work"], preferences: [] }]))
      expect(Selector.apply({ top: 1 }, yield* service.retrieve({ query, summaries }), query).selected).toEqual(["s3"])
      const error = yield* Effect.flip(service.retrieve({ query }))
      expect(error.message).toContain("session s1 has no summary")
    }).pipe(Effect.scoped, Effect.provide(env())))
})

suite({ plugin: Bm25.plugin })
suite({ plugin: Bm25.plugin, options: { representation: "user-turns", k1: 0.9, b: 0.4 } })
suite({ plugin: Bm25.plugin, options: { representation: "first-user-message" } })
suite({ plugin: Bm25.plugin, options: { representation: "summary" } })
