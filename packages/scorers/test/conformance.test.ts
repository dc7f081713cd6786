import { Scorer } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { makeInstance, makeTrace } from "./fixtures.js"

const instance = makeInstance(["relevant", "other"])
const inputs = [{ instance, trace: makeTrace(instance) }]
const metric = (name: string, aggregate: Scorer.Aggregate = Scorer.mean): Scorer.MetricInfo =>
  Scorer.metric({ name, description: "", family: name.split(".")[0]!, aggregate })

const problemsOf = (service: Scorer.Service) => ScorerConformance.check(service, inputs)

describe("scorer conformance check", () => {
  it.effect("accepts a scorer that keeps the contract", () =>
    Effect.gen(function* () {
      const ok: Scorer.Service = {
        metrics: [
          metric("cost.a"),
          metric("inference.p", Scorer.ratio),
          metric("inference.r", Scorer.ratio),
          metric("inference.f", Scorer.f1Of("inference.p", "inference.r"))
        ],
        score: () =>
          Effect.succeed({
            "cost.a": NaN,
            "inference.p": { num: 1, den: 1 },
            "inference.r": { num: 0, den: 2 }
          })
      }
      expect(yield* problemsOf(ok)).toEqual([])
    })
  )

  it.effect("reports each way a scorer can break it", () =>
    Effect.gen(function* () {
      let calls = 0
      const broken: Scorer.Service = {
        metrics: [
          metric("accuracy"),
          metric("cost.a"),
          metric("cost.a"),
          metric("inference.p", Scorer.ratio),
          metric("inference.q", Scorer.ratio),
          metric("inference.f", Scorer.f1Of("inference.p", "inference.x"))
        ],
        score: () =>
          Effect.sync(() => ({ "cost.a": calls++, "inference.p": 1, "inference.f": 1, "cost.extra": 0, accuracy: 1 }))
      }
      const problems = (yield* problemsOf(broken)).join("\n")
      expect(problems).toMatch(/"accuracy" is not namespaced/)
      expect(problems).toMatch(/duplicate metric names/)
      expect(problems).toMatch(/F1 of "inference.x", which is not a Ratio metric/)
      expect(problems).toMatch(/"inference.p" is not counts \{ num, den \}/)
      expect(problems).toMatch(/declared metric "inference.q" is missing/)
      expect(problems).toMatch(/"inference.f" is returned but not declared/)
      expect(problems).toMatch(/"cost.extra" is returned but not declared/)
      expect(problems).toMatch(/"cost.a" differs between two runs/)
    })
  )

  it.effect("catches a scorer that writes to its input", () =>
    Effect.gen(function* () {
      const mutating: Scorer.Service = {
        metrics: [metric("retrieval.n")],
        score: ({ trace }) =>
          Effect.sync(() => {
            ;(trace.usage as Array<unknown>).push("oops")
            return { "retrieval.n": 1 }
          })
      }
      expect((yield* problemsOf(mutating)).join("\n")).toMatch(/defect \(did it write to its input\?\)/)
    })
  )
})
