import * as path from "node:path"
import { Dataset } from "@cupid-lab/data"
import type { Retriever } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import * as RetrievalAtK from "../src/RetrievalAtK.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeInstance, makeTrace, pluginEnv } from "./fixtures.js"

const log2 = Math.log2
const ranked = (...ids: Array<string>) => ids.map((sessionId, i) => ({ sessionId, score: ids.length - i }))
const scores = (
  instance: Parameters<typeof RetrievalAtK.compute>[0],
  retrieval: Retriever.Retrieval | undefined,
  ks: Array<number>,
  levels: Array<RetrievalAtK.Level> = ["session"]
) => RetrievalAtK.compute(instance, makeTrace(instance, retrieval === undefined ? {} : { retrieval }), ks, levels)

const expectScores = (actual: Record<string, number>, expected: Record<string, number>) => {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort())
  for (const [k, v] of Object.entries(expected)) {
    if (Number.isNaN(v)) expect(actual[k], k).toBeNaN()
    else expect(actual[k], k).toBeCloseTo(v, 10)
  }
}

describe("retrieval-at-k: LongMemEval's recall_any@k, recall_all@k, ndcg_any@k", () => {
  it("a session ranking: s2 and s5 relevant, ranked second and fifth", () => {
    // s1..s6: other, relevant, other, other, relevant, other
    const instance = makeInstance(["other", "relevant", "other", "other", "relevant", "other"])
    const retrieval = { ranking: ranked("s4", "s2", "s6", "s1", "s5", "s3"), selected: ["s2"] }
    expectScores(scores(instance, retrieval, [1, 3, 5]), {
      "retrieval.recall_any@1": 0,
      "retrieval.recall_all@1": 0,
      "retrieval.ndcg_any@1": 0,
      "retrieval.recall_any@3": 1,
      "retrieval.recall_all@3": 0,
      // DCG: position 2 counts fully (1 / log2 2) = 1; ideal: positions 1 and 2 = 2
      "retrieval.ndcg_any@3": 0.5,
      "retrieval.recall_any@5": 1,
      "retrieval.recall_all@5": 1,
      // (1 + 1/log2 5) / 2 = 0.715338...
      "retrieval.ndcg_any@5": (1 + 1 / log2(5)) / 2
    })
    expect((1 + 1 / log2(5)) / 2).toBeCloseTo(0.715338, 6)
  })

  it("a turn ranking is scored at session level: k grows until k distinct sessions are covered", () => {
    // s1 and s4 relevant; two turns each; the evidence turns are s1's second and s4's first.
    const base = makeInstance(["relevant", "other", "other", "relevant"])
    const instance = {
      ...base,
      gold: {
        ...base.gold,
        sessions: base.gold.sessions.map((g) =>
          g.id === "s1" ? { ...g, evidenceTurns: [1] } : g.id === "s4" ? { ...g, evidenceTurns: [0] } : g
        )
      }
    }
    const order: Array<[string, number]> = [
      ["s2", 0],
      ["s2", 1],
      ["s3", 0],
      ["s1", 1],
      ["s4", 0],
      ["s1", 0],
      ["s3", 1],
      ["s4", 1]
    ]
    const retrieval = {
      ranking: ranked("s2", "s3", "s1", "s4"),
      selected: ["s2"],
      turns: order.map(([sessionId, turn], i) => ({ sessionId, turn, score: 8 - i }))
    }
    // Sessions of the ranked turns: s2 s2 s3 s1 s4 s1 s3 s4. Relevant turns: every turn of s1 and s4 (4 of 8).
    const ideal4 = 1 + 1 + 1 / log2(3) + 1 / log2(4)
    expectScores(scores(instance, retrieval, [1, 2, 3, 4, 5], ["session", "turn"]), {
      // k=1 -> 1 turn (s2); k=2 -> 3 turns (s2 s2 s3): nothing relevant.
      "retrieval.recall_any@1": 0,
      "retrieval.recall_all@1": 0,
      "retrieval.ndcg_any@1": 0,
      "retrieval.recall_any@2": 0,
      "retrieval.recall_all@2": 0,
      "retrieval.ndcg_any@2": 0,
      // k=3 -> 4 turns: s1 at position 4 (1/log2 4 = 0.5); ideal: 4 relevant turns within 4 = 3.130930
      "retrieval.recall_any@3": 1,
      "retrieval.recall_all@3": 0,
      "retrieval.ndcg_any@3": 0.5 / ideal4,
      // k=4 -> 5 turns: s1 at 4, s4 at 5
      "retrieval.recall_any@4": 1,
      "retrieval.recall_all@4": 1,
      "retrieval.ndcg_any@4": (0.5 + 1 / log2(5)) / ideal4,
      // k=5: only 4 sessions exist, so every turn counts: relevant at 4, 5, 6, 8
      "retrieval.recall_any@5": 1,
      "retrieval.recall_all@5": 1,
      "retrieval.ndcg_any@5": (0.5 + 1 / log2(5) + 1 / log2(6) + 1 / log2(8)) / ideal4,
      // Turn level: the evidence turns s1#1 (position 4) and s4#0 (position 5); ideal 1 + 1 = 2.
      "retrieval.turn_recall_any@1": 0,
      "retrieval.turn_recall_all@1": 0,
      "retrieval.turn_ndcg_any@1": 0,
      "retrieval.turn_recall_any@2": 0,
      "retrieval.turn_recall_all@2": 0,
      "retrieval.turn_ndcg_any@2": 0,
      "retrieval.turn_recall_any@3": 0,
      "retrieval.turn_recall_all@3": 0,
      "retrieval.turn_ndcg_any@3": 0,
      "retrieval.turn_recall_any@4": 1,
      "retrieval.turn_recall_all@4": 0,
      "retrieval.turn_ndcg_any@4": 0.25,
      "retrieval.turn_recall_any@5": 1,
      "retrieval.turn_recall_all@5": 1,
      "retrieval.turn_ndcg_any@5": (0.5 + 1 / log2(5)) / 2
    })
    expect(
      [0.5 / ideal4, (0.5 + 1 / log2(5)) / ideal4, (0.5 + 1 / log2(5) + 1 / log2(6) + 1 / log2(8)) / ideal4].map((x) =>
        x.toFixed(6)
      )
    ).toEqual(["0.159697", "0.297252", "0.527276"])
  })

  it("the effective k stops past the end of a short turn ranking", () => {
    expect(RetrievalAtK.effectiveK(["a", "a", "b"], 2)).toBe(3)
    expect(RetrievalAtK.effectiveK(["a", "a", "b"], 3)).toBe(4)
    expect(RetrievalAtK.effectiveK(["a", "b", "c"], 2)).toBe(2)
  })

  it("no relevant session, or turn metrics without a turn ranking: NaN, left out of means", () => {
    const none = makeInstance(["other", "other"])
    expect(scores(none, { ranking: ranked("s1", "s2"), selected: [] }, [5])["retrieval.recall_any@5"]).toBeNaN()
    const some = makeInstance(["relevant", "other"])
    const r = scores(some, { ranking: ranked("s2", "s1"), selected: [] }, [1], ["session", "turn"])
    expect(r["retrieval.recall_any@1"]).toBe(0)
    expect(r["retrieval.turn_recall_any@1"]).toBeNaN()
  })

  it.scoped("the plugin declares its metrics and scores a LongMemEval abstention question as NaN", () =>
    Effect.gen(function* () {
      const scorer = yield* buildScorer("retrieval-at-k", { ks: [5, 1] })
      expect(scorer.metrics.map((m) => m.name)).toEqual([
        "retrieval.recall_any@1",
        "retrieval.recall_all@1",
        "retrieval.ndcg_any@1",
        "retrieval.recall_any@5",
        "retrieval.recall_all@5",
        "retrieval.ndcg_any@5"
      ])
      expect(scorer.metrics.every((m) => m.family === "retrieval" && m.direction === "higher")).toBe(true)
      const fixture = path.join(
        import.meta.dirname,
        "..",
        "..",
        "data",
        "test",
        "fixtures",
        "longmemeval",
        "longmemeval_s_tiny.json"
      )
      const { instances } = yield* Dataset.loadAll(`longmemeval:${fixture}`)
      const abs = instances.find((i) => i.gold.withoutEvidence === "abstention")!
      const user = instances.find((i) => i.id === "q-user-1")!
      const scoreOf = (i: typeof abs) => scorer.score({ instance: i, trace: makeTrace(i) })
      expect((yield* scoreOf(abs))["retrieval.recall_any@5"]).toBeNaN()
      // No retriever: every session, most recent first (s4, s3, ...): the answer session s3 is second.
      const u = yield* scoreOf(user)
      expect([u["retrieval.recall_any@1"], u["retrieval.recall_any@5"], u["retrieval.ndcg_any@5"]]).toEqual([0, 1, 1])
      expect(
        yield* ScorerConformance.check(
          scorer,
          instances.map((i) => ({ instance: i, trace: makeTrace(i) }))
        )
      ).toEqual([])
    }).pipe(Effect.provide(pluginEnv()))
  )
})
