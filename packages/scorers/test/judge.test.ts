import { Errors, type LanguageModel, type Models, Plugin, Scorer } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import * as Judge from "../src/Judge.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { allText, buildScorer, makeInstance, makeTrace, pluginEnv, scriptedModel, userText } from "./fixtures.js"

const instance = makeInstance(["relevant", "other"])
const answered = makeTrace(instance, { generation: { text: "Lemon cake\nPrep time: 20 min\n200 g flour" } })

const models = (lm: LanguageModel.Service, options: Models.MakeOptions = {}) =>
  pluginEnv({ judge: { languageModel: lm } }, options)

const build = (raw: Record<string, unknown>) => buildScorer("judge", raw)

describe("judge scorer", () => {
  it.scoped("keeps a decimal score and shows the judge the request, response, preference and checklist", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(() => "1. Metric units: yes.\n2. Prep time first: yes.\n\n**Score: 7.5**")
      const scorer = yield* build({ model: "judge" }).pipe(Effect.provide(models(lm)))
      expect(yield* scorer.score({ instance, trace: answered })).toEqual({ "generation.score": 7.5 })
      const request = lm.requests[0]!
      expect(userText(request)).toContain("Can you write up the lemon cake recipe for the binder?")
      expect(userText(request)).toContain("200 g flour")
      expect(allText(request)).toContain(`Preference: "${instance.gold.preference}"`)
      expect(allText(request)).toContain("- Does the recipe use metric units?\n- Is the prep time listed first?")
    })
  )

  it.scoped("fails with a StageError on an out-of-range or missing score", () =>
    Effect.gen(function* () {
      for (const [answer, pattern] of [
        ["Score: 11", /judge model "judge" \(test\/scripted-1\): score 11 is outside 1-10/],
        ["A fine answer.", /expected a score from 1 to 10/]
      ] as const) {
        const scorer = yield* build({ model: "judge" }).pipe(Effect.provide(models(scriptedModel(() => answer))))
        const error = yield* Effect.flip(scorer.score({ instance, trace: answered }))
        expect(error).toBeInstanceOf(Errors.StageError)
        expect(error.plugin).toBe("judge")
        expect(error.message).toMatch(pattern)
      }
    })
  )

  it.scoped("fails with a StageError when the cell has no generator", () =>
    Effect.gen(function* () {
      const scorer = yield* build({ model: "judge" }).pipe(Effect.provide(models(scriptedModel(() => "Score: 5"))))
      const error = yield* Effect.flip(scorer.score({ instance, trace: makeTrace(instance) }))
      expect(error.message).toMatch(/no generator/)
    })
  )

  it.scoped("runs on its dry-run answer", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(() => {
        throw new Error("a dry run must not call the model")
      })
      const scorer = yield* build({ model: "judge" }).pipe(Effect.provide(models(lm, { dryRun: true })))
      expect(yield* scorer.score({ instance, trace: answered })).toEqual({ "generation.score": 6 })
    })
  )

  it.scoped("with repeats: n asks n times with distinct seeds, scores their mean and records each repeat", () =>
    Effect.gen(function* () {
      // Repeat 0 is the single judgment's request (no seed); repeats 1, 2 send seeds 1, 2.
      const lm = scriptedModel((r) => `Score: ${r.seed === undefined ? 6 : r.seed === 1 ? 7.5 : 9}`)
      const scorer = yield* build({ model: "judge", repeats: 3 }).pipe(Effect.provide(models(lm)))
      const [scores, repeats] = yield* Scorer.collectRepeats(scorer.score({ instance, trace: answered }))
      expect(scores).toEqual({ "generation.score": 7.5 })
      expect(repeats).toEqual({ "generation.score": [6, 7.5, 9] })
      expect(lm.requests.map((r) => r.seed).sort()).toEqual([1, 2, undefined])
      // The requests differ only in their seed.
      expect(new Set(lm.requests.map((r) => allText(r))).size).toBe(1)

      const single = scriptedModel(() => "Score: 6")
      const one = yield* build({ model: "judge" }).pipe(Effect.provide(models(single)))
      const [alone, none] = yield* Scorer.collectRepeats(one.score({ instance, trace: answered }))
      expect(alone).toEqual({ "generation.score": 6 })
      expect(none).toEqual({})
      expect(single.requests[0]!.seed).toBeUndefined()
    })
  )

  it("offsets repeat seeds from the model's configured seed", () => {
    expect([0, 1, 2].map((r) => Judge.repeatSeed(r, 40))).toEqual([undefined, 41, 42])
    expect([0, 1, 2].map((r) => Judge.repeatSeed(r, undefined))).toEqual([undefined, 1, 2])
  })

  it.scoped("caches each repeat apart: a second scoring asks nothing, a third repeat asks only once more", () =>
    Effect.gen(function* () {
      const lm = scriptedModel((r) => `Score: ${5 + (r.seed ?? 0)}`)
      yield* Effect.gen(function* () {
        const twice = yield* build({ model: "judge", repeats: 2 })
        expect(yield* twice.score({ instance, trace: answered })).toEqual({ "generation.score": 5.5 })
        expect(yield* twice.score({ instance, trace: answered })).toEqual({ "generation.score": 5.5 })
        expect(lm.requests).toHaveLength(2)
        const thrice = yield* build({ model: "judge", repeats: 3 })
        expect(yield* thrice.score({ instance, trace: answered })).toEqual({ "generation.score": 6 })
        expect(lm.requests).toHaveLength(3)
      }).pipe(Effect.provide(models(lm)))
    })
  )

  it.scoped("rejects repeats outside 1-50, and adds none to the options when absent (cell ids stay as they were)", () =>
    Effect.gen(function* () {
      expect("repeats" in (yield* Plugin.decodeOptions(Judge.plugin, { model: "judge" }))).toBe(false)
      for (const repeats of [0, 51, 1.5]) {
        const error = yield* Effect.flip(Plugin.decodeOptions(Judge.plugin, { model: "judge", repeats }))
        expect(error.issues[0]!.path).toEqual(["repeats"])
      }
    })
  )

  it.scoped("requires a model and conforms to the scorer contract", () =>
    Effect.gen(function* () {
      const missing = yield* Effect.flip(Plugin.decodeOptions(Judge.plugin, {}))
      expect(missing.issues[0]!.path).toEqual(["model"])
      const scorer = yield* build({ model: "judge" }).pipe(Effect.provide(models(scriptedModel(() => "Score: 8/10"))))
      expect(yield* ScorerConformance.check(scorer, [{ instance, trace: answered }])).toEqual([])
    })
  )
})
