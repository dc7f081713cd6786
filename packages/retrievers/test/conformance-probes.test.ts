/**
 * The conformance suite's checks can fail:
 * - blindness: probe retrievers that peek at what a query should not carry are caught when the data
 *   path lets it through (simulated by a leaky `visible`), and pass only because the real path
 *   (`Domain.fromRow`) gives them nothing to peek at;
 * - sharing: a probe that keeps its cache in a module-level map is caught, the same probe with its
 *   cache in the build's memo passes, and BM25 is caught when every build is handed one memo;
 * - turn ranking: each way a retrieval's turn ranking can break its contract is named.
 */
import { Domain, Memo, Retriever } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Bm25 from "../src/Bm25.js"
import {
  blindnessProblems,
  defaultVisible,
  forged,
  sharingProblems,
  turnProblems,
  twin,
  type Visible
} from "../src/testing/Conformance.js"
import * as Histories from "../src/testing/Histories.js"
import { env } from "./support.js"

const fixtures = Histories.set(8, 11)

/** Selects the first session, or the last when `peek` says so. */
const probe = (peek: (query: Domain.Query) => boolean): Retriever.Service => ({
  needsSummaries: false,
  retrieve: ({ query }) =>
    Effect.succeed(
      Retriever.fromScores(
        query.sessions.map((s) => [s.id, peek(query) ? s.index : -s.index] as const),
        1
      )
    )
})

const typeInKey = probe((q) => q.key.endsWith(":changing"))
/** Selects the sessions whose hash says they are relevant: a cheat, if the data path ever let labels through. */
const labelInHash: Retriever.Service = {
  needsSummaries: false,
  retrieve: ({ query }) =>
    Effect.succeed(
      Retriever.fromScores(
        query.sessions.map((s) => [s.id, s.hash.startsWith("relevant") ? 1 : 0] as const),
        2
      )
    )
}

/** A data path that leaks the instance id into the key (what `persona:type` ids once did). */
const leakId: Visible = (i) => ({ ...defaultVisible(i), key: i.id })
/** A data path that leaks labels into the session hashes. */
const leakLabels: Visible = (i) => {
  const q = defaultVisible(i)
  return { ...q, sessions: q.sessions.map((s, k) => ({ ...s, hash: `${i.gold.sessions[k]!.label}-${s.hash}` })) }
}

describe("conformance: the blindness check", () => {
  it("a twin has the same visible text and the same key, but another type, target and labels", () => {
    for (const f of fixtures) {
      const t = twin(f)
      expect(t.query).toEqual(f.query)
      expect(t.type).not.toBe(f.type)
      expect(t.gold.preference).not.toBe(f.gold.preference)
      expect(t.gold.sessions.map((s) => s.label)).not.toEqual(f.gold.sessions.map((s) => s.label))
    }
  })

  it.effect("catches a probe that branches on a type-bearing id", () =>
    Effect.gen(function* () {
      const problems = yield* blindnessProblems(typeInKey, fixtures, leakId)
      expect(problems.length).toBeGreaterThan(0)
      expect(problems[0]).toMatch(/the retrieval differs between the \w+ instance and its \w+ twin/)
      expect(yield* blindnessProblems(typeInKey, fixtures)).toEqual([])
    })
  )

  it.effect("catches a probe that branches on gold-derived data", () =>
    Effect.gen(function* () {
      expect((yield* blindnessProblems(labelInHash, fixtures, leakLabels)).length).toBeGreaterThan(0)
      expect(yield* blindnessProblems(labelInHash, fixtures)).toEqual([])
    })
  )

  it("the real data path gives a persona's three instances one opaque key", () => {
    const keys = new Set(
      Domain.cupidTypes.map((type) => Domain.fromRow({ ...Domain.toRow(fixtures[0]!), instance_type: type }).query.key)
    )
    expect(keys.size).toBe(1)
    expect([...keys][0]).not.toContain(fixtures[0]!.personaId)
  })
})

/** Ranks sessions by the request words their dialogue contains; each session's words cached by its hash in `cache`. */
const overlap = (cache: Memo.Store<ReadonlySet<string>>): Retriever.Service => ({
  needsSummaries: false,
  retrieve: ({ query }) =>
    Effect.sync(() => {
      const words = (t: string) => new Set(t.toLowerCase().match(/[a-z]+/g) ?? [])
      const request = words(query.request)
      return Retriever.fromScores(
        query.sessions.map((s) => {
          const own = cache.getOrSet(s.hash, () => words(Domain.sessionText(s, "dialogue")))
          return [s.id, [...request].filter((w) => own.has(w)).length] as const
        })
      )
    })
})

/** The cache every build of the leaky probe shares: module-level state. */
const moduleLevel = new Memo.Store<ReadonlySet<string>>(10_000)
const bagOfWords = Memo.namespace<ReadonlySet<string>>("probe/bag-of-words", 10_000)

const retrieveWith = (service: Retriever.Service, query: Domain.Query) => service.retrieve({ query })

describe("conformance: the sharing check", () => {
  it("a forged query keeps ids and request, and moves the dialogues; stale hashes are the original's", () => {
    const q = fixtures[0]!.query
    const honest = forged(q, "honest"),
      stale = forged(q, "stale")
    expect(honest.request).toBe(q.request)
    expect(stale.sessions.map((s) => s.id)).toEqual(q.sessions.map((s) => s.id))
    expect(stale.sessions.map((s) => s.hash)).toEqual(q.sessions.map((s) => s.hash))
    expect(honest.sessions.map((s) => s.dialogue)).toEqual(stale.sessions.map((s) => s.dialogue))
    expect(honest.sessions[0]!.hash).toBe(q.sessions[q.sessions.length - 1]!.hash)
  })

  it.effect("catches a probe whose cache is module-level state", () =>
    Effect.gen(function* () {
      const problems = yield* sharingProblems(Effect.succeed(overlap(moduleLevel)), fixtures, (s, q) =>
        retrieveWith(s, q)
      )
      expect(problems.length).toBeGreaterThan(0)
      expect(problems[0]).toMatch(/builds share what they remember/)
    })
  )

  it.effect("passes the same probe with its cache in the memo each build is given", () =>
    Effect.gen(function* () {
      const build = Effect.map(Memo.current, (memo) => overlap(memo.store(bagOfWords)))
      expect(yield* sharingProblems(build, fixtures, (s, q) => retrieveWith(s, q))).toEqual([])
    })
  )

  it.effect("catches BM25 when every build is handed one memo, and passes it when each build has its own", () =>
    Effect.gen(function* () {
      const build = Effect.scoped(Bm25.plugin.make({ representation: "dialogue", k1: 1.2, b: 0.75 }))
      const check = sharingProblems(build, fixtures, (s, q) => retrieveWith(s, q))
      expect((yield* Effect.provide(check, Memo.layer)).length).toBeGreaterThan(0)
      expect(yield* check).toEqual([])
    }).pipe(Effect.provide(env()))
  )
})

describe("conformance: the turn-ranking check", () => {
  const instance = fixtures[0]!
  const good = Retriever.fromTurnScores([
    ["s1", 0, 0.5],
    ["s1", 1, 0.9],
    ["s2", 0, 0.2]
  ])

  it("accepts what fromTurnScores builds, and a retrieval without turns", () => {
    expect(turnProblems(instance, good)).toEqual([])
    expect(turnProblems(instance, Retriever.fromScores([["s1", 1]]))).toEqual([])
  })

  it("names each way a turn ranking can break the contract", () => {
    const turns = [
      { sessionId: "s2", turn: 0, score: 0.1 },
      { sessionId: "s1", turn: 99, score: 0.5 },
      { sessionId: "s2", turn: 0, score: 0.1 }
    ]
    const broken: Retriever.Retrieval = {
      ranking: [
        { sessionId: "s2", score: 0.7 },
        { sessionId: "s3", score: 0.1 }
      ],
      selected: [],
      turns
    }
    expect(turnProblems(instance, broken)).toEqual([
      "s1#99 is not a turn of the history",
      "s1#99 scores more than the turn ranked before it",
      "s2#0 is ranked twice",
      "s2 is ranked at 0.7, not at its best turn's score 0.1",
      "s1 is ranked at undefined, not at its best turn's score 0.5",
      "s3 is ranked but has no ranked turn"
    ])
  })
})
