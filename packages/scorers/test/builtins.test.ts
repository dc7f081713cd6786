import { Pipeline, Plugin, Retriever } from "@cupid-lab/core"
import { Builtins } from "@cupid-lab/scorers"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"

import { makeInstance, pluginEnv, scriptedModel } from "./fixtures.js"

const registry = Plugin.makeRegistry(Builtins.plugins)
const env = pluginEnv({ gpt4o: { languageModel: scriptedModel(() => "Score: 9") } })

describe("scorer builtins", () => {
  it("ships the scorers", () => {
    expect(registry.names("scorer")).toEqual([
      "cost",
      "judge",
      "locomo-f1",
      "locomo-judge",
      "longmemeval-judge",
      "preference-match",
      "prefeval-judge",
      "retrieval",
      "retrieval-at-k"
    ])
    expect(Builtins.plugins.every((p) => p.stage === "scorer" && p.description.length > 0)).toBe(true)
  })

  it.scoped("scores a pipeline run built from config-style specs", () =>
    Effect.gen(function* () {
      const instance = makeInstance(["other", "relevant", "stale", "relevant"])
      const scorers = yield* Effect.forEach(
        [
          { use: "retrieval", ks: [2, 4] },
          { use: "preference-match", matcher: "lexical" },
          { use: "judge", model: "gpt4o" },
          { use: "cost" }
        ],
        (spec) => Effect.map(Plugin.build("scorer", spec), (service) => ({ plugin: spec.use, service }))
      )
      const trace = yield* Pipeline.run(
        {
          retriever: {
            plugin: "newest",
            needsGold: false,
            service: {
              needsSummaries: false,
              retrieve: ({ query }) =>
                Effect.succeed(
                  Retriever.fromScores(
                    query.sessions.map((s) => [s.id, s.index]),
                    2
                  )
                )
            }
          },
          inferrer: {
            plugin: "echo",
            service: { infer: () => Effect.succeed({ preference: instance.gold.preference, analysis: "" }) }
          },
          generator: {
            plugin: "fixed",
            service: { usesGoldPreference: false, generate: () => Effect.succeed({ text: "Lemon cake, 200 g flour." }) }
          },
          scorers
        },
        instance
      )
      expect(trace.error).toBeUndefined()
      // Newest two: s4 (relevant), s3 (stale).
      expect(trace.scores["retrieval.precision"]).toBe(0.5)
      expect(trace.scores["retrieval.mrr"]).toBe(1)
      expect(trace.scores["inference.f1"]).toBe(1)
      expect(trace.scores["generation.score"]).toBe(9)
      // The judge's own call is in the trace's usage but not in the method's cost.
      expect(trace.usage.map((u) => u.stage)).toEqual(["score"])
      expect(trace.scores["cost.model_calls"]).toBe(0)
    }).pipe(Effect.provide(env))
  )
})
