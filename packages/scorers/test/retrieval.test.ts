import { Plugin } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { describe, expect } from "vitest"
import * as Retrieval from "../src/Retrieval.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeInstance, makeTrace, pluginEnv } from "./fixtures.js"

// s1..s8: other, relevant, other, stale, relevant, other, stale, other
const history = makeInstance(["other", "relevant", "other", "stale", "relevant", "other", "stale", "other"])
const ranked = (...ids: Array<string>) => ids.map((sessionId, i) => ({ sessionId, score: ids.length - i }))
const log2 = Math.log2
// Ideal DCG with two relevant sessions and k >= 2: 1 + 1/log2(3).
const idcg2 = 1 + 1 / log2(3)

const expectScores = (actual: Record<string, number>, expected: Record<string, number>) => {
  expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort())
  for (const [k, v] of Object.entries(expected)) {
    if (Number.isNaN(v)) expect(actual[k], k).toBeNaN()
    else expect(actual[k], k).toBeCloseTo(v, 10)
  }
}

describe("retrieval scorer", () => {
  it("scores a selection of three with a relevant session ranked second", () => {
    const trace = makeTrace(history, {
      retrieval: { ranking: ranked("s8", "s2", "s4", "s5", "s1"), selected: ["s2", "s4", "s8"] }
    })
    expectScores(Retrieval.compute(history, trace, [2, 4]), {
      "retrieval.precision": 1 / 3,
      "retrieval.recall": 1 / 2,
      // 2 * (1/3) * (1/2) / (1/3 + 1/2) = (1/3) / (5/6) = 0.4
      "retrieval.f1": 0.4,
      "retrieval.recall_all": 0,
      "retrieval.recall_any": 1,
      // rank 2 relevant: (1/log2 3) / (1 + 1/log2 3) = 0.386853...
      "retrieval.ndcg@2": 1 / log2(3) / idcg2,
      // ranks 2 and 4 relevant: (1/log2 3 + 1/log2 5) / (1 + 1/log2 3) = 0.650920...
      "retrieval.ndcg@4": (1 / log2(3) + 1 / log2(5)) / idcg2,
      "retrieval.mrr": 1 / 2,
      "retrieval.stale_rate": 1 / 3,
      "retrieval.distractor_rate": 1 / 3,
      "retrieval.selected": 3,
      "retrieval.relevant_position": (2 + 5) / 2
    })
    expect(1 / log2(3) / idcg2).toBeCloseTo(0.386853, 6)
    expect((1 / log2(3) + 1 / log2(5)) / idcg2).toBeCloseTo(0.65092, 5)
  })

  it("treats a trace without retrieval as everything selected, most recent first", () => {
    expectScores(Retrieval.compute(history, makeTrace(history), [2, 4]), {
      "retrieval.precision": 2 / 8,
      "retrieval.recall": 1,
      // 2 * (1/4) * 1 / (1/4 + 1) = 0.4: the full history has recall 1 but not a high F1
      "retrieval.f1": 0.4,
      "retrieval.recall_all": 1,
      "retrieval.recall_any": 1,
      // s8 other, s7 stale
      "retrieval.ndcg@2": 0,
      // s8, s7, s6, then s5 (relevant) at rank 4
      "retrieval.ndcg@4": 1 / log2(5) / idcg2,
      "retrieval.mrr": 1 / 4,
      "retrieval.stale_rate": 2 / 8,
      "retrieval.distractor_rate": 4 / 8,
      "retrieval.selected": 8,
      "retrieval.relevant_position": 3.5
    })
  })

  it("gives NaN for the ratios of an empty selection and zero for what it missed", () => {
    const trace = makeTrace(history, { retrieval: { ranking: [], selected: [] } })
    expectScores(Retrieval.compute(history, trace, [2]), {
      "retrieval.precision": NaN,
      "retrieval.recall": 0,
      // nothing found: 0, although precision is undefined
      "retrieval.f1": 0,
      "retrieval.recall_all": 0,
      "retrieval.recall_any": 0,
      "retrieval.ndcg@2": 0,
      "retrieval.mrr": 0,
      "retrieval.stale_rate": NaN,
      "retrieval.distractor_rate": NaN,
      "retrieval.selected": 0,
      "retrieval.relevant_position": 3.5
    })
  })

  it("gives NaN for recall-type metrics when the instance has no relevant session", () => {
    const none = makeInstance(["other", "stale", "other", "stale"])
    const trace = makeTrace(none, { retrieval: { ranking: ranked("s2", "s1", "s3", "s4"), selected: ["s1", "s2"] } })
    expectScores(Retrieval.compute(none, trace, [2]), {
      "retrieval.precision": 0,
      "retrieval.recall": NaN,
      "retrieval.f1": NaN,
      "retrieval.recall_all": NaN,
      "retrieval.recall_any": NaN,
      "retrieval.ndcg@2": NaN,
      "retrieval.mrr": NaN,
      "retrieval.stale_rate": 1 / 2,
      "retrieval.distractor_rate": 1 / 2,
      "retrieval.selected": 2,
      "retrieval.relevant_position": NaN
    })
  })

  it("reads tied scores in the order the retriever listed them", () => {
    const tied = (ids: Array<string>) =>
      makeTrace(history, { retrieval: { ranking: ids.map((sessionId) => ({ sessionId, score: 1 })), selected: ids } })
    const first = Retrieval.compute(history, tied(["s5", "s2", "s1"]), [2])
    // Both relevant sessions on top: DCG equals the ideal DCG.
    expect(first["retrieval.ndcg@2"]).toBeCloseTo(1, 12)
    expect(first["retrieval.mrr"]).toBe(1)
    const second = Retrieval.compute(history, tied(["s1", "s5", "s2"]), [2])
    expect(second["retrieval.ndcg@2"]).toBeCloseTo(1 / log2(3) / idcg2, 12)
    expect(second["retrieval.mrr"]).toBe(1 / 2)
    expect(second["retrieval.precision"]).toBeCloseTo(2 / 3, 12)
  })

  it("counts a session listed twice once, at its first place", () => {
    const trace = makeTrace(history, {
      retrieval: { ranking: ranked("s1", "s1", "s2"), selected: ["s2", "s2", "s1"] }
    })
    const s = Retrieval.compute(history, trace, [2])
    expect(s["retrieval.selected"]).toBe(2)
    expect(s["retrieval.precision"]).toBe(1 / 2)
    // s2 is second once the duplicate s1 is dropped.
    expect(s["retrieval.mrr"]).toBe(1 / 2)
    expect(s["retrieval.ndcg@2"]).toBeCloseTo(1 / log2(3) / idcg2, 12)
  })

  it("uses a single relevant session for the ideal DCG when there is only one", () => {
    const one = makeInstance(["other", "other", "relevant"])
    const trace = makeTrace(one, { retrieval: { ranking: ranked("s1", "s3"), selected: ["s3"] } })
    const s = Retrieval.compute(one, trace, [4])
    // DCG = 1/log2(3), ideal DCG = 1 (one relevant session at rank 1).
    expect(s["retrieval.ndcg@4"]).toBeCloseTo(1 / log2(3), 12)
    expect(s["retrieval.relevant_position"]).toBe(3)
    expect(s["retrieval.recall_all"]).toBe(1)
  })

  it("declares one nDCG per distinct cut-off, ascending", () => {
    const names = Retrieval.metricsFor([4, 2, 2]).map((m) => m.name)
    expect(names.filter((n) => n.startsWith("retrieval.ndcg"))).toEqual(["retrieval.ndcg@2", "retrieval.ndcg@4"])
    const lowerIsBetter = Retrieval.metricsFor([2])
      .filter((m) => m.direction === "lower")
      .map((m) => m.name)
    expect(lowerIsBetter).toEqual([
      "retrieval.stale_rate",
      "retrieval.distractor_rate",
      "retrieval.selected",
      "retrieval.relevant_position"
    ])
  })

  it.effect("decodes its options with defaults and rejects bad ones", () =>
    Effect.gen(function* () {
      expect(yield* Plugin.decodeOptions(Retrieval.plugin, {})).toEqual({ ks: [2, 4] })
      expect(yield* Plugin.decodeOptions(Retrieval.plugin, { ks: [1, 8] })).toEqual({ ks: [1, 8] })
      for (const bad of [{ ks: [] }, { ks: [0] }, { ks: [2.5] }, { k: [2] }]) {
        const r = yield* Effect.either(Plugin.decodeOptions(Retrieval.plugin, bad))
        expect(Either.isLeft(r), JSON.stringify(bad)).toBe(true)
      }
    })
  )

  it.scoped("conforms to the scorer contract", () =>
    Effect.gen(function* () {
      const service = yield* buildScorer("retrieval", { ks: [2, 4] })
      const none = makeInstance(["other", "stale"])
      const problems = yield* ScorerConformance.check(service, [
        { instance: history, trace: makeTrace(history) },
        { instance: history, trace: makeTrace(history, { retrieval: { ranking: ranked("s2"), selected: ["s2"] } }) },
        { instance: none, trace: makeTrace(none, { retrieval: { ranking: [], selected: [] } }) }
      ])
      expect(problems).toEqual([])
    }).pipe(Effect.provide(pluginEnv()))
  )
})
