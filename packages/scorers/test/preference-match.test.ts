import { Errors, type LanguageModel, Memo, type Models, Plugin, Scorer, Usage } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import * as Checklist from "../src/Checklist.js"
import * as Coverage from "../src/Coverage.js"
import * as PreferenceMatch from "../src/PreferenceMatch.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeInstance, makeTrace, pluginEnv, scriptedModel, userText } from "./fixtures.js"

const goldPreference = "Recipes must use metric units and list prep time first."
const instance = makeInstance(["other", "relevant", "stale", "relevant"])
const inferred = (preference: string) => makeTrace(instance, { inference: { preference, analysis: "" } })

const models = (lm: LanguageModel.Service, options: Models.MakeOptions = {}) =>
  pluginEnv({ m: { languageModel: lm } }, options)

const build = (raw: Record<string, unknown>) => buildScorer("preference-match", raw)

describe("clause decomposer", () => {
  it.effect.each([
    [
      "Instructions must be concise and include numbered steps, with a check after each section.",
      ["Instructions must be concise", "include numbered steps", "with a check after each section"]
    ],
    ["Use tables or charts; avoid jargon.", ["Use tables or charts", "avoid jargon"]],
    ["Reports must include: a summary, charts, and sources.", ["Reports must include: a summary", "charts", "sources"]],
    [
      "Explain the math, but skip proofs while keeping examples short as well as concrete. Cite sources!",
      ["Explain the math", "skip proofs", "keeping examples short", "concrete", "Cite sources"]
    ],
    ["Use 2.5 cm margins, e.g. for print.", ["Use 2.5 cm margins", "e.g. for print"]],
    // "that is" has no content word, so it joins the fragment after it.
    ["Write clearly, that is, concisely.", ["Write clearly", "that is concisely"]],
    ["Be brief.", ["Be brief"]],
    ["   ", []]
  ] as const)("splits %j", ([preference, items]) =>
    Effect.map(Checklist.clauses().decompose(preference), (out) => expect(out).toEqual(items))
  )
})

describe("lexical matcher", () => {
  it("counts content lemmas found directly, by stem or through WordNet synonyms", () => {
    // responsibility ~ duty (one synset), stern and tone found, communicate not: 3 of 4.
    expect(
      Coverage.lexicalCoverage(
        "Are the responsibilities communicated in a stern tone?",
        "Use a stern tone when describing duties."
      )
    ).toBe(0.75)
    // instruction ~ direction (one synset); short ~ brief (adjectives linked as similar): 2 of 2.
    expect(Coverage.lexicalCoverage("Are the instructions short?", "Keep the directions brief.")).toBe(1)
    // communication / communicate and formal / formally share Porter stems.
    expect(Coverage.lexicalCoverage("Is the communication formal?", "Communicate formally.")).toBe(1)
    // example and short found, concrete not: 2 of 3.
    expect(Coverage.lexicalCoverage("Are the examples concrete and short?", "Give short examples.")).toBeCloseTo(
      2 / 3,
      12
    )
    expect(Coverage.lexicalCoverage("Is the tone playful?", "Cite peer-reviewed sources.")).toBe(0)
  })

  it("leaves checklist scaffolding words out unless told otherwise", () => {
    expect(Coverage.lexicalCoverage("Does the response use bullet points?", "Use bullet points.")).toBe(1)
    // response, use, bullet, point: response is not in the preference.
    expect(Coverage.lexicalCoverage("Does the response use bullet points?", "Use bullet points.", [])).toBe(0.75)
  })

  it("scores the same through a sweep's memo, on first use and when remembered", () => {
    const memo = Memo.unsafeMake()
    for (let round = 0; round < 2; round++) {
      expect(
        Coverage.lexicalCoverage(
          "Are the responsibilities communicated in a stern tone?",
          "Use a stern tone when describing duties.",
          undefined,
          memo
        )
      ).toBe(0.75)
      expect(
        Coverage.lexicalCoverage("Are the instructions short?", "Keep the directions brief.", undefined, memo)
      ).toBe(1)
      expect(Checklist.splitClauses("Use metric units, and list prep time first.", memo)).toEqual([
        "Use metric units",
        "list prep time first"
      ])
    }
  })

  it("gives 0 to an item with no content word", () => {
    expect(Coverage.lexicalCoverage("Is it?", "Anything at all.")).toBe(0)
  })

  it("maps coverage to 1 / 0.5 / 0 at the thresholds", () => {
    const t = { full: 0.7, partial: 0.4 }
    expect([0.7, 0.69, 0.4, 0.39, 1, 0].map((c) => Coverage.ratingOf(c, t))).toEqual([1, 0.5, 0.5, 0, 1, 0])
  })

  it.scoped("rates a checklist against one preference", () =>
    Effect.map(
      Coverage.lexical(Coverage.defaultLexical).rate(
        [
          "Are the responsibilities communicated in a stern tone?",
          "Are the examples concrete and short?",
          "Is the tone playful?"
        ],
        "Use a stern tone when describing duties, with short examples."
      ),
      // 3/4 -> 1; example and short of 3 -> 2/3 -> 0.5; tone of tone, playful -> 1/2 -> 0.5.
      (r) => expect(r).toEqual([1, 0.5, 0.5])
    )
  )
})

describe("preference-match formula", () => {
  it("computes macro values and pooled counts from the ratings", () => {
    const s = PreferenceMatch.fromRatings([1, 0.5], [1, 0, 0])
    expect(s["inference.precision"]).toBe(0.75)
    expect(s["inference.recall"]).toBeCloseTo(1 / 3, 12)
    // 2 * 0.75 * (1/3) / (0.75 + 1/3) = 0.5 / 1.08333... = 6/13
    expect(s["inference.f1"]).toBeCloseTo(6 / 13, 12)
    expect(s["inference.f1_micro"]).toBeUndefined()
    expect(s["inference.precision_micro"]).toEqual({ num: 1.5, den: 2 })
    expect(s["inference.recall_micro"]).toEqual({ num: 1, den: 3 })
  })

  it("scores an empty inferred checklist 0 and leaves recall undefined without gold items", () => {
    const empty = PreferenceMatch.fromRatings([], [0, 0])
    expect([empty["inference.precision"], empty["inference.recall"], empty["inference.f1"]]).toEqual([0, 0, 0])
    expect(empty["inference.precision_micro"]).toEqual({ num: 0, den: 0 })
    const noGold = PreferenceMatch.fromRatings([1], [])
    expect(noGold["inference.recall"]).toBeNaN()
    expect(noGold["inference.f1"]).toBeNaN()
  })
})

describe("preference-match scorer, offline", () => {
  it.scoped("scores a perfect inference 1 and a shallow one low", () =>
    Effect.gen(function* () {
      const scorer = yield* build({})
      const perfect = yield* scorer.score({ instance, trace: inferred(goldPreference) })
      expect([perfect["inference.precision"], perfect["inference.recall"], perfect["inference.f1"]]).toEqual([1, 1, 1])
      // "Keep recipes short": recipe found in the gold preference, short not -> 1/2 -> 0.5.
      // Gold items: recipe of recipe/use/metric/unit -> 1/4 -> 0; prep/time/list -> 0.
      const shallow = yield* scorer.score({ instance, trace: inferred("Keep recipes short.") })
      expect(shallow["inference.precision"]).toBe(0.5)
      expect(shallow["inference.recall"]).toBe(0)
      expect(shallow["inference.f1"]).toBe(0)
      expect(shallow["inference.recall_micro"]).toEqual({ num: 0, den: 2 })
    }).pipe(Effect.provide(models(scriptedModel(() => "unused"))))
  )

  it.scoped(
    "records each checklist item's rating, gold items then inferred ones, and its scores are made of them",
    () =>
      Effect.gen(function* () {
        const scorer = yield* build({})
        const [scores, ratings] = yield* Scorer.collectRatings(
          scorer.score({ instance, trace: inferred("Keep recipes short.") })
        )
        // as above: the gold items are not covered (0 each), the one inferred item half (0.5)
        expect(ratings).toEqual([
          ...instance.gold.checklist.map((item) => ({ side: "gold", item, rating: 0 })),
          { side: "inferred", item: "Keep recipes short", rating: 0.5 }
        ])
        expect(instance.gold.checklist.length).toBe(2)
        expect(scores["inference.recall_micro"]).toEqual({ num: 0, den: 2 })
        expect(scores["inference.precision_micro"]).toEqual({ num: 0.5, den: 1 })
        // outside a collector, recording is a no-op: the scorer's own tests need none
        expect((yield* scorer.score({ instance, trace: inferred(goldPreference) }))["inference.f1"]).toBe(1)
      }).pipe(Effect.provide(models(scriptedModel(() => "unused"))))
  )

  it.scoped("labels its metrics as heuristic", () =>
    Effect.gen(function* () {
      const scorer = yield* build({})
      expect(scorer.metrics.every((m) => m.heuristic)).toBe(true)
      expect(scorer.metrics.every((m) => m.description.includes("HEURISTIC"))).toBe(true)
      const aggregates = Object.fromEntries(scorer.metrics.map((m) => [m.name, m.aggregate]))
      expect(aggregates).toEqual({
        "inference.precision": { _tag: "Mean" },
        "inference.recall": { _tag: "Mean" },
        "inference.f1": { _tag: "Mean" },
        "inference.precision_micro": { _tag: "Ratio" },
        "inference.recall_micro": { _tag: "Ratio" },
        "inference.f1_micro": { _tag: "F1", precision: "inference.precision_micro", recall: "inference.recall_micro" }
      })
    }).pipe(Effect.provide(models(scriptedModel(() => "unused"))))
  )

  it.scoped("fails with a StageError when the cell has no inferrer", () =>
    Effect.gen(function* () {
      const scorer = yield* build({})
      const error = yield* Effect.flip(scorer.score({ instance, trace: makeTrace(instance) }))
      expect(error).toBeInstanceOf(Errors.StageError)
      expect(error.plugin).toBe("preference-match")
      expect(error.message).toMatch(/no inferrer/)
    }).pipe(Effect.provide(models(scriptedModel(() => "unused"))))
  )

  it.scoped("conforms to the scorer contract", () =>
    Effect.gen(function* () {
      const scorer = yield* build({})
      const problems = yield* ScorerConformance.check(scorer, [
        { instance, trace: inferred("Keep recipes short and use grams.") },
        { instance, trace: inferred("") }
      ])
      expect(problems).toEqual([])
    }).pipe(Effect.provide(models(scriptedModel(() => "unused"))))
  )

  it.scoped("decodes options with defaults and rejects bad ones", () =>
    Effect.gen(function* () {
      expect(yield* Plugin.decodeOptions(PreferenceMatch.plugin, {})).toEqual({
        decomposer: "clauses",
        matcher: "lexical",
        lexical: Coverage.defaultLexical,
        accounting: "strict"
      })
      const llm = yield* Plugin.decodeOptions(PreferenceMatch.plugin, { matcher: { model: "m" } })
      expect(llm.matcher).toEqual({ model: "m", prompts: "project", maxTokens: 8192, temperature: 0 })
      for (const bad of [
        { matcher: "llm" },
        { matcher: { model: "m", temperature: 3 } },
        { matcher: { model: "m", prompts: "paper" } },
        { accounting: "lenient" },
        { lexical: { full: 0.3, partial: 0.5 } },
        { decomposer: "sentences" },
        { judge: "m" }
      ]) {
        expect(
          Either.isLeft(yield* Effect.either(Plugin.decodeOptions(PreferenceMatch.plugin, bad))),
          JSON.stringify(bad)
        ).toBe(true)
      }
    })
  )
})

// The scripted model plays decomposer and matcher. The matcher's answers depend on which
// preference it is shown: the gold one (precision call) or the inferred one (recall call).
const inferredText = "Recipes should be short and in metric."
const llmAnswers = (request: LanguageModel.CompletionRequest): string => {
  const text = userText(request)
  if (!text.includes("Checklist ("))
    return 'Analysis first.\n```json\n{"checklist": ["Is the recipe short?", "Does it use metric?"]}\n```'
  if (text.includes(goldPreference)) {
    return '```json\n{"results": [{"index": 2, "label": "Fully Covered"}, {"index": 1, "label": "Not covered"}]}\n```'
  }
  return "1. Fully covered\n2. Partially covered"
}

describe("preference-match scorer, with models", () => {
  it.scoped("decomposes and matches through the configured models", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(llmAnswers)
      const scorer = yield* build({ decomposer: { model: "m" }, matcher: { model: "m" } }).pipe(
        Effect.provide(models(lm))
      )
      const [scores, usage] = yield* Usage.track(
        Usage.withStage("score", scorer.score({ instance, trace: inferred(inferredText) }))
      )
      // Precision: inferred items rated [0, 1] against gold -> 0.5. Recall: gold items [1, 0.5] -> 0.75.
      expect(scores["inference.precision"]).toBe(0.5)
      expect(scores["inference.recall"]).toBe(0.75)
      expect(scores["inference.f1"]).toBeCloseTo(0.6, 12)
      expect(scores["inference.recall_micro"]).toEqual({ num: 1.5, den: 2 })
      expect(usage.map((u) => u.stage)).toEqual(["score", "score", "score"])
      expect(lm.requests).toHaveLength(3)
      // dryRunAnswer never reaches a provider; the dry-run test below shows each call has one.
      for (const r of lm.requests) expect(r.responseFormat).toBe("json")
      const recallCall = lm.requests.find(
        (r) => userText(r).includes(inferredText) && userText(r).includes("Checklist (")
      )!
      expect(userText(recallCall)).toContain("1. Does the recipe use metric units?\n2. Is the prep time listed first?")
      expect(scorer.metrics.some((m) => m.heuristic)).toBe(false)
    })
  )

  it.scoped("with repeats: 2 matches twice (the second time with seed 1) and scores the mean of the repeats", () =>
    Effect.gen(function* () {
      // Repeat 1 (no seed) answers as llmAnswers; repeat 2 (seed 1) rates every item fully covered.
      const lm = scriptedModel((r) => (r.seed === 1 ? "1. Fully covered\n2. Fully covered" : llmAnswers(r)))
      const scorer = yield* build({ matcher: { model: "m" }, repeats: 2 }).pipe(Effect.provide(models(lm)))
      const [[scores, repeats], ratings] = yield* Scorer.collectRatings(
        Scorer.collectRepeats(scorer.score({ instance, trace: inferred(inferredText) }))
      )
      // The clause decomposer gives two inferred items. Repeat 1: P 0.5, R 0.75, F1 0.6 (as above);
      // repeat 2: P 1, R 1, F1 1. Counts are the mean counts: P (1 + 2) / 2 of 2, R (1.5 + 2) / 2 of 2.
      expect(repeats).toEqual({
        "inference.precision": [0.5, 1],
        "inference.recall": [0.75, 1],
        "inference.f1": [0.6, 1]
      })
      expect(scores["inference.precision"]).toBe(0.75)
      expect(scores["inference.recall"]).toBe(0.875)
      expect(scores["inference.f1"]).toBeCloseTo(0.8, 12)
      expect(scores["inference.precision_micro"]).toEqual({ num: 1.5, den: 2 })
      expect(scores["inference.recall_micro"]).toEqual({ num: 1.75, den: 2 })
      expect(lm.requests.map((r) => r.seed).sort()).toEqual([1, 1, undefined, undefined])
      // The item ratings are the first repeat's.
      expect(ratings.map((r) => r.rating)).toEqual([1, 0.5, 0, 1])
    })
  )

  it.scoped("refuses repeats when neither the decomposer nor the matcher is a model", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(build({ repeats: 3 }))
      expect(error.message).toMatch(
        /repeats: 3 repeats a model's judgments, but the clauses decomposer and the lexical matcher give the same answer every time/
      )
    }).pipe(Effect.provide(models(scriptedModel(() => "unused"))))
  )

  it.scoped("marks only precision-side metrics heuristic with the clause decomposer", () =>
    Effect.gen(function* () {
      const scorer = yield* build({ matcher: { model: "m" } })
      const flags = Object.fromEntries(scorer.metrics.map((m) => [m.name, m.heuristic]))
      expect(flags).toEqual({
        "inference.precision": true,
        "inference.recall": false,
        "inference.f1": true,
        "inference.precision_micro": true,
        "inference.recall_micro": false,
        "inference.f1_micro": true
      })
    }).pipe(Effect.provide(models(scriptedModel(llmAnswers))))
  )

  it.scoped("runs on the dry-run answers without calling the model", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(() => {
        throw new Error("a dry run must not call the model")
      })
      const scorer = yield* build({ decomposer: { model: "m" }, matcher: { model: "m" } }).pipe(
        Effect.provide(models(lm, { dryRun: true }))
      )
      const scores = yield* scorer.score({ instance, trace: inferred(inferredText) })
      expect([scores["inference.precision"], scores["inference.recall"], scores["inference.f1"]]).toEqual([
        0.5, 0.5, 0.5
      ])
      expect(lm.requests).toHaveLength(0)
    })
  )

  it.scoped("makes no model call for an empty inference", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(llmAnswers)
      const scorer = yield* build({ decomposer: { model: "m" }, matcher: { model: "m" } }).pipe(
        Effect.provide(models(lm))
      )
      const scores = yield* scorer.score({ instance, trace: inferred("  ") })
      expect([scores["inference.precision"], scores["inference.recall"], scores["inference.f1"]]).toEqual([0, 0, 0])
      expect(lm.requests).toHaveLength(0)
    })
  )

  it.scoped(
    "with accounting: reference decomposes an empty inference too, and says it scores the inference as the authors do",
    () =>
      Effect.gen(function* () {
        const lm = scriptedModel(llmAnswers)
        const options = { decomposer: { model: "m" }, matcher: { model: "m" } }
        const scorer = yield* build({ ...options, accounting: "reference" }).pipe(Effect.provide(models(lm)))
        expect(scorer.reference).toBe("inference")
        const scores = yield* scorer.score({ instance, trace: inferred("") })
        // Decomposer, then the two matcher calls; the recall side's numbered prose is unreadable to
        // their parse_json, so both sides count 0 over their item counts.
        expect(lm.requests.map((r) => userText(r).includes("Checklist ("))).toEqual([false, true, true])
        expect(scores["inference.precision_micro"]).toEqual({ num: 0, den: 2 })
        expect(scores["inference.recall_micro"]).toEqual({ num: 0, den: 2 })
        expect((yield* build(options).pipe(Effect.provide(models(lm)))).reference).toBeUndefined()
      })
  )

  it.scoped("turns unreadable answers into StageErrors that name the scorer, the model and the expectation", () =>
    Effect.gen(function* () {
      const failWith = (answer: (r: LanguageModel.CompletionRequest) => string, options: Record<string, unknown>) =>
        Effect.gen(function* () {
          const scorer = yield* build(options).pipe(Effect.provide(models(scriptedModel(answer))))
          return yield* Effect.flip(scorer.score({ instance, trace: inferred(inferredText) }))
        })
      const prose = yield* failWith(() => "They look alike to me.", { matcher: { model: "m" } })
      expect(prose).toBeInstanceOf(Errors.StageError)
      expect(prose.message).toMatch(
        /^score \(preference-match\): matcher model "m" \(test\/scripted-1\): expected 2 ratings/
      )
      const extra = yield* failWith(() => `["Fully Covered", "Fully Covered", "Fully Covered"]`, {
        matcher: { model: "m" }
      })
      expect(extra.message).toMatch(/got 3/)
      const noChecklist = yield* failWith(() => "Is it short?", { decomposer: { model: "m" } })
      expect(noChecklist.message).toMatch(/decomposer model "m".*no JSON found/)
      const emptyChecklist = yield* failWith(() => `{"checklist": []}`, { decomposer: { model: "m" } })
      expect(emptyChecklist.message).toMatch(/empty checklist/)
    })
  )

  it.scoped("reports a failed model call as a StageError", () =>
    Effect.gen(function* () {
      const broken: LanguageModel.Service = {
        info: { provider: "test", model: "down", params: {} },
        complete: () =>
          Effect.fail(
            new Errors.ModelError({ provider: "test", model: "down", reason: "connection refused", retryable: true })
          )
      }
      const scorer = yield* build({ matcher: { model: "m" } }).pipe(Effect.provide(models(broken)))
      const error = yield* Effect.flip(scorer.score({ instance, trace: inferred(inferredText) }))
      expect(error.message).toMatch(/matcher model "m" \(test\/down\): test\/down: connection refused/)
    })
  )

  it.scoped("fails to build with an unknown model name or a bad template", () =>
    Effect.gen(function* () {
      const layer = models(scriptedModel(llmAnswers))
      const unknownModel = yield* Effect.flip(build({ matcher: { model: "gpt" } }).pipe(Effect.provide(layer)))
      expect(unknownModel.message).toMatch(/no model of that name is configured \(configured: m\)/)
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pm-templates-"))
      const bad = path.join(dir, "bad.md")
      fs.writeFileSync(bad, "<!-- user -->\n{{preference}} {{items}}")
      const badTemplate = yield* Effect.flip(
        build({ matcher: { model: "m", template: bad } }).pipe(Effect.provide(layer))
      )
      expect(badTemplate.message).toContain(`${bad}: unknown placeholder {{items}}`)
      const missing = yield* Effect.flip(
        build({ matcher: { model: "m", template: path.join(dir, "nope.md") } }).pipe(Effect.provide(layer))
      )
      expect(missing.message).toMatch(/prompt template not found/)
      fs.rmSync(dir, { recursive: true })
    })
  )

  it.scoped("uses a user template, and finds shipped prompts by file name", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pm-templates-"))
      const custom = path.join(dir, "custom.md")
      fs.writeFileSync(custom, "<!-- user -->\nCRITERION {{preference}}\nITEMS\n{{checklist}}")
      const lm = scriptedModel((r) =>
        userText(r).includes(goldPreference) ? `["fully", "not"]` : `["partially", "fully"]`
      )
      const scorer = yield* build({ matcher: { model: "m", template: custom, json: false } }).pipe(
        Effect.provide(models(lm))
      )
      const scores = yield* scorer.score({ instance, trace: inferred(inferredText) })
      expect(lm.requests[0]!.messages[0]!.content.startsWith("CRITERION ")).toBe(true)
      expect(lm.requests[0]!.responseFormat).toBeUndefined()
      // Clause items of the inferred text: "Recipes should be short", "in metric" -> [1, 0].
      expect(scores["inference.precision"]).toBe(0.5)
      expect(scores["inference.recall"]).toBe(0.75)
      fs.rmSync(dir, { recursive: true })

      const prefmatcher = scriptedModel(
        () => `[{"index": 1, "label": "Fully Covered"}, {"index": 2, "label": "Fully Covered"}]`
      )
      const viaName = yield* build({ matcher: { model: "m", template: "match-prefmatcher.md", json: false } }).pipe(
        Effect.provide(models(prefmatcher))
      )
      yield* viaName.score({ instance, trace: inferred(inferredText) })
      expect(prefmatcher.requests[0]!.messages.map((m) => m.role)).toEqual(["system", "user"])
      expect(prefmatcher.requests[0]!.messages[1]!.content).toMatch(/^#### Criterion\n\n.+\n\n#### Checklist\n\n1\. /)
    })
  )

  it.scoped("conforms to the scorer contract", () =>
    Effect.gen(function* () {
      const scorer = yield* build({ decomposer: { model: "m" }, matcher: { model: "m" } })
      expect(yield* ScorerConformance.check(scorer, [{ instance, trace: inferred(inferredText) }])).toEqual([])
    }).pipe(Effect.provide(models(scriptedModel(llmAnswers))))
  )
})
