import { Plugin, type Usage } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import * as Cost from "../src/Cost.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeInstance, makeTrace, pluginEnv } from "./fixtures.js"

const entry = (
  stage: string,
  model: string,
  promptTokens: number,
  completionTokens: number,
  cached = false
): Usage.UsageEntry => ({
  stage,
  provider: "openai",
  model,
  kind: "complete",
  promptTokens,
  completionTokens,
  cached
})

const usage = [
  entry("infer", "gpt-4o-2024-11-20", 1000, 200, true),
  entry("summarize", "gpt-4o-mini", 500, 100),
  // The scorers' own calls are not the method's cost.
  entry("score", "gpt-4o-2024-11-20", 9000, 900)
]

describe("cost scorer", () => {
  it("sums tokens and calls of pipeline stages, cached calls included, and prices them", () => {
    expect(Cost.compute(usage, Cost.defaultPrices)).toEqual({
      "cost.prompt_tokens": 1500,
      "cost.completion_tokens": 300,
      "cost.model_calls": 2,
      // (1000 * 2.50 + 200 * 10.00) / 1e6 + (500 * 0.15 + 100 * 0.60) / 1e6 = 0.0045 + 0.000135
      "cost.usd": expect.closeTo(0.004635, 12)
    })
  })

  it("gives NaN dollars, not 0, when a model has no price", () => {
    const s = Cost.compute([...usage, entry("generate", "my-local-model", 10, 10)], Cost.defaultPrices)
    expect(s["cost.usd"]).toBeNaN()
    expect(s["cost.model_calls"]).toBe(3)
  })

  it("charges a batched model's calls at its batch rate, cached ones too; leaves a service's calls out", () => {
    const batched = (e: Usage.UsageEntry): Usage.UsageEntry => ({ ...e, batchRate: 0.5 })
    const service: Usage.UsageEntry = {
      ...entry("retrieve", "http://127.0.0.1:8000/rank", 700, 30),
      provider: "http",
      kind: "service"
    }
    expect(Cost.compute([...usage.map(batched), service], Cost.defaultPrices)).toEqual({
      "cost.prompt_tokens": 1500,
      "cost.completion_tokens": 300,
      "cost.model_calls": 2,
      // Half of each call's micro-dollars, rounded per call: 4500 / 2 + 135 / 2 = 2250 + 68 (67.5 rounded up).
      "cost.usd": expect.closeTo(0.002318, 12)
    })
  })

  it("costs nothing without model calls", () => {
    expect(Cost.compute([], Cost.defaultPrices)).toEqual({
      "cost.prompt_tokens": 0,
      "cost.completion_tokens": 0,
      "cost.model_calls": 0,
      "cost.usd": 0
    })
  })

  it.scoped("merges configured prices over the default table", () =>
    Effect.gen(function* () {
      const scorer = yield* buildScorer("cost", {
        prices: {
          "openai/gpt-4o-2024-11-20": { prompt: 1, completion: 2 },
          "openai/my-local-model": { prompt: 0, completion: 0 }
        }
      })
      const instance = makeInstance(["relevant"])
      const trace = makeTrace(instance, { usage: [...usage, entry("generate", "my-local-model", 10, 10)] })
      const s = yield* scorer.score({ instance, trace })
      // (1000 * 1 + 200 * 2) / 1e6 + 0.000135 (gpt-4o-mini from the defaults) + 0
      expect(s["cost.usd"]).toBeCloseTo(0.001535, 12)
      expect(scorer.metrics.every((m) => m.direction === "lower")).toBe(true)
      expect(
        yield* ScorerConformance.check(scorer, [
          { instance, trace },
          { instance, trace: makeTrace(instance) }
        ])
      ).toEqual([])
    }).pipe(Effect.provide(pluginEnv()))
  )

  it.effect("rejects negative or incomplete prices", () =>
    Effect.gen(function* () {
      for (const prices of [{ "openai/x": { prompt: -1, completion: 0 } }, { "openai/x": { prompt: 1 } }]) {
        const r = yield* Effect.either(Plugin.decodeOptions(Cost.plugin, { prices }))
        expect(r._tag, JSON.stringify(prices)).toBe("Left")
      }
    })
  )
})

describe("cost in integer micro-dollars", () => {
  it("prices each call in whole micro-dollars, so the total does not depend on the order calls completed in", () => {
    // gpt-4o-mini: 0.15 / 0.6 USD per million tokens. 7 prompt + 3 completion tokens = 1.05 + 1.8 = 2.85 -> 3 micro-dollars
    expect(Cost.microUsd(7, 3, { prompt: 0.15, completion: 0.6 })).toBe(3)
    const calls = Array.from({ length: 50 }, (_, i) => entry("infer", "gpt-4o-mini", 7 + i * 13, 3 + (i % 7)))
    const forward = Cost.compute(calls, Cost.defaultPrices)["cost.usd"]!
    const backward = Cost.compute([...calls].reverse(), Cost.defaultPrices)["cost.usd"]!
    const shuffled = Cost.compute([...calls.slice(25), ...calls.slice(0, 25)], Cost.defaultPrices)["cost.usd"]!
    expect(String(backward)).toBe(String(forward))
    expect(String(shuffled)).toBe(String(forward))
    const micro = calls.reduce(
      (n, c) => n + Cost.microUsd(c.promptTokens, c.completionTokens, { prompt: 0.15, completion: 0.6 }),
      0
    )
    expect(Number.isInteger(micro)).toBe(true)
    expect(forward).toBe(micro / 1e6)
  })
})
