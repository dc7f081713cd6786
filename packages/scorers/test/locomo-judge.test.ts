// locomo-judge without Mem0's repository: how their prompt is read from a Python file (on a file
// written here in the same shape, not theirs) and what is refused, how a reply is read (as their
// json.loads(extract_json(...))["label"] reads it), which categories are judged, the per-category
// means, and the scorer's failures and dry run. Their own code is compared in
// locomo-judge-reference.test.ts.
import { Domain, Errors, type LanguageModel, ModelCache } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import * as LocomoJudge from "../src/LocomoJudge.js"
import * as LocomoJudgePrompts from "../src/LocomoJudgePrompts.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeTrace, pluginEnv, scriptedModel } from "./fixtures.js"

// A module of the same shape as theirs, with this test's own prompt text.
const shaped = [
  "import json",
  "",
  'ACCURACY_PROMPT = """',
  "Grade it {{strictly}}.",
  "Q: {question}",
  "Gold: {gold_answer}",
  "Said: {generated_answer}",
  '"""',
  "",
  "def evaluate_llm_judge(question, gold_answer, generated_answer):",
  "    response = client.chat.completions.create(",
  '        model="m",',
  '        messages=[{"role": "user", "content": ACCURACY_PROMPT.format(',
  "            question=question, gold_answer=gold_answer, generated_answer=generated_answer",
  "        )}],",
  "    )",
  ""
].join("\n")

const parsed = (source: string) => LocomoJudgePrompts.parse(source, "shaped.py")
const problem = (source: string) => Either.match(parsed(source), { onLeft: (e) => e, onRight: () => "" })

describe("the judge's prompt, read from a Python module", () => {
  it("reads ACCURACY_PROMPT and fills it as their str.format does", () => {
    const p = Either.getOrThrow(parsed(shaped))
    expect(LocomoJudgePrompts.fill(p, { question: "Where?", gold: "Lisbon {0}", generated: "In Lisbon" })).toBe(
      "\nGrade it {strictly}.\nQ: Where?\nGold: Lisbon {0}\nSaid: In Lisbon\n"
    )
    expect(p.standIn).toBe(false)
  })

  it("refuses a module not shaped as expected, saying what is wrong", () => {
    expect(problem("x = 1\n")).toBe("expected one ACCURACY_PROMPT assignment, found 0")
    expect(problem(shaped.replace('ACCURACY_PROMPT = """', "ACCURACY_PROMPT = ["))).toMatch(/^ACCURACY_PROMPT: /)
    expect(problem(shaped.replace("Gold: {gold_answer}", "Gold: {answer}"))).toBe(
      "ACCURACY_PROMPT: unsupported format field at offset 44"
    )
    expect(problem(shaped.replace("Said: {generated_answer}", "Said: -"))).toBe(
      "ACCURACY_PROMPT has no field generated_answer"
    )
    expect(problem(shaped.replace("question=question, gold_answer", "question=gold_answer, gold_answer"))).toMatch(
      /is not formatted with/
    )
  })

  it.effect("a checkout's file must have the pinned sha256", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "locomo-judge-"))
      fs.mkdirSync(path.join(dir, "evaluation", "metrics"), { recursive: true })
      fs.writeFileSync(path.join(dir, LocomoJudgePrompts.file.path), shaped)
      const wrong = yield* Effect.flip(LocomoJudgePrompts.prompt({ dir }))
      expect(wrong).toBeInstanceOf(Errors.PluginError)
      expect(wrong.message).toContain(`does not match the pinned ${LocomoJudgePrompts.file.sha256}`)
      expect(wrong.message).toContain(`git -C mem0 checkout ${LocomoJudgePrompts.commit}`)
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )
})

describe("a reply, read as their code reads it", () => {
  const read = (reply: string) =>
    Either.match(LocomoJudge.verdict(reply), { onLeft: () => "raises", onRight: (v) => v })

  it("scores 1 when the JSON object's label is exactly CORRECT, else 0", () => {
    expect(read('{"label": "CORRECT"}')).toBe(1)
    expect(read('{"label": "WRONG"}')).toBe(0)
    // `label == "CORRECT"` compares exactly: case, spaces and types count.
    expect(["correct", "CORRECT ", "Correct"].map((l) => read(JSON.stringify({ label: l })))).toEqual([0, 0, 0])
    expect(read('{"label": true}')).toBe(0)
    expect(read('{"label": null}')).toBe(0)
    // A repeated key: the last one, as json.loads keeps.
    expect(read('{"label": "WRONG", "label": "CORRECT"}')).toBe(1)
  })

  it("takes the inside of the first ``` block, a json tag dropped, after Python's strip", () => {
    expect(LocomoJudge.extractJson('```json\n{"label": "CORRECT"}\n```')).toBe('{"label": "CORRECT"}')
    expect(LocomoJudge.extractJson('Here:\n```\n{"a": 1}\n``` and ```{"b": 2}```')).toBe('{"a": 1}')
    // "JSON" is not the tag: it stays, and the reply does not parse.
    expect(read('```JSON\n{"label": "CORRECT"}\n```')).toBe("raises")
    // Python's whitespace: U+2003 and U+001C are stripped, U+FEFF is not.
    expect(read('\u2003{"label": "CORRECT"}\x1c')).toBe(1)
    expect(read('\ufeff{"label": "CORRECT"}')).toBe("raises")
    expect(read('```json\u00a0{"label": "CORRECT"}\u00a0```')).toBe(1)
  })

  it("accepts the NaN and Infinity json.loads accepts, and nothing else JSON does not", () => {
    expect(Either.getOrThrow(LocomoJudge.jsonLoads('{"s": NaN, "t": [-Infinity, Infinity], "u": "NaN"}'))).toEqual({
      s: null,
      t: [null, null],
      u: "NaN"
    })
    expect(read('{"label": "CORRECT", "p": NaN}')).toBe(1)
    for (const bad of ['{"s": nan}', '{"s": -NaN}', '{"s": NaNa}', "{'label': 'CORRECT'}", '{"label": "CORRECT",}'])
      expect(Either.isLeft(LocomoJudge.jsonLoads(bad)), bad).toBe(true)
  })

  it("raises, and so fails, on what is not a JSON object with a label", () => {
    const raises = ["CORRECT", "", '["CORRECT"]', '"CORRECT"', "null", "1", '{"verdict": "CORRECT"}']
    const chatty = ['It is right. {"label": "CORRECT"}', '{"label": "CORRECT"} (sure)']
    expect([...raises, ...chatty].map(read)).toEqual([...raises, ...chatty].map(() => "raises"))
    expect(Either.getLeft(LocomoJudge.label('["CORRECT"]'))).toEqual(
      Either.getLeft(Either.left("the reply's JSON is an array, not an object"))
    )
    expect(Either.getLeft(LocomoJudge.label("{}"))).toEqual(
      Either.getLeft(Either.left('the reply\'s JSON object has no "label"'))
    )
  })
})

const question = (n: number, type: string, answer: string | null = `gold ${n}`): Domain.Instance => ({
  id: `conv-1:q${n}`,
  personaId: "conv-1",
  type,
  query: { key: Domain.queryKey("conv-1"), request: `Question number ${n}?`, sessions: [] },
  gold: { factor: "", preference: "", checklist: [], sessions: [], ...(answer === null ? {} : { answer }) }
})

const answered = (i: Domain.Instance, text = "an answer") => makeTrace(i, { generation: { text } })

/** A judge answering each question's scripted reply, found by the question number in the prompt. */
const scripted = (replies: Readonly<Record<number, string>>) =>
  scriptedModel((r: LanguageModel.CompletionRequest) => {
    const n = Number(/Question number (\d+)\?/.exec(r.messages[0]!.content)![1])
    return replies[n]!
  })

const dry = (lm: LanguageModel.Service) =>
  Layer.merge(
    pluginEnv({ judge: { languageModel: lm } }, { dryRun: true }),
    Layer.succeed(LocomoJudgePrompts.Reference, {})
  )

/** The scorer on the shaped prompt (theirs is compared in locomo-judge-reference.test.ts), asking `lm`. */
const onShaped = (lm: LanguageModel.Service) =>
  LocomoJudge.make({ model: "judge", maxTokens: null, temperature: 0 }, () =>
    Effect.succeed(Either.getOrThrow(parsed(shaped)))
  ).pipe(Effect.provide(pluginEnv({ judge: { languageModel: lm } })))

describe("the locomo-judge scorer", () => {
  it.scoped("in a dry run judges with a stand-in, sends nothing and conforms to the scorer contract", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(() => {
        throw new Error("a dry run must not call the model")
      })
      const scorer = yield* buildScorer("locomo-judge", { model: "judge" }).pipe(Effect.provide(dry(lm)))
      const hop = question(1, "single-hop")
      const adv = question(2, "adversarial", null)
      expect(yield* scorer.score({ instance: hop, trace: answered(hop) })).toEqual({ "generation.locomo_judge": 1 })
      expect(yield* scorer.score({ instance: adv, trace: answered(adv) })).toEqual({
        "generation.locomo_judge": Number.NaN
      })
      const inputs = [hop, adv].map((i) => ({ instance: i, trace: answered(i) }))
      expect(yield* ScorerConformance.check(scorer, inputs)).toEqual([])
      expect(scorer.metrics.map((m) => [m.name, m.headline, m.mainRank])).toEqual([
        ["generation.locomo_judge", true, 1]
      ])
      expect(scorer.metrics[0]!.description).toContain("Mem0")
      expect(scorer.metrics[0]!.description).toContain("not the LoCoMo authors' metric")
    })
  )

  it.scoped("judges categories 1 to 4 and skips adversarial questions; the means per category", () =>
    Effect.gen(function* () {
      const C = '{"label": "CORRECT"}'
      const W = '```json\n{"label": "WRONG"}\n```'
      const types = ["single-hop", "single-hop", "single-hop", "temporal", "multi-hop", "multi-hop"]
      const all = [...types, "open-domain", "open-domain", "adversarial", "adversarial"].map((t, k) =>
        question(k + 1, t)
      )
      const lm = scripted({ 1: C, 2: W, 3: C, 4: C, 5: W, 6: W, 7: C, 8: W, 9: C, 10: "not JSON" })
      const scorer = yield* onShaped(lm)
      const scores = yield* Effect.forEach(all, (i) => scorer.score({ instance: i, trace: answered(i) }))
      const values = scores.map((s) => s["generation.locomo_judge"] as number)
      expect(values).toEqual([1, 0, 1, 1, 0, 0, 1, 0, Number.NaN, Number.NaN])
      // Adversarial questions are never sent to the judge.
      expect(lm.requests).toHaveLength(8)
      expect(lm.requests.map((r) => [r.temperature, r.maxTokens, r.responseFormat])).toEqual(
        lm.requests.map(() => [0, undefined, "json"])
      )
      const byType = new Map<string, Array<number>>()
      all.forEach((i, k) => {
        if (!Number.isNaN(values[k]!)) byType.set(i.type, [...(byType.get(i.type) ?? []), values[k]!])
      })
      const means = Object.fromEntries([...byType].map(([t, v]) => [t, v.reduce((a, b) => a + b, 0) / v.length]))
      // By hand: single-hop 2 of 3, temporal 1 of 1, multi-hop 0 of 2, open-domain 1 of 2; all 4 of 8.
      expect(means).toEqual({ "single-hop": 2 / 3, temporal: 1, "multi-hop": 0, "open-domain": 0.5 })
      expect(values.filter((v) => !Number.isNaN(v)).reduce((a, b) => a + b, 0) / 8).toBe(0.5)
    })
  )

  it.scoped("a reply their code cannot read fails the question, is not cached, and is asked again", () =>
    Effect.gen(function* () {
      const lm = scripted({ 1: "The answer is CORRECT.", 2: '{"label": "CORRECT"}' })
      const scorer = yield* onShaped(lm)
      const bad = question(1, "temporal")
      const good = question(2, "temporal")
      for (let n = 0; n < 2; n++) {
        const failure = yield* Effect.flip(scorer.score({ instance: bad, trace: answered(bad) }))
        expect(failure).toBeInstanceOf(Errors.StageError)
        expect(failure.message).toContain("the judge's reply cannot be read as their code reads it")
        expect(failure.message).toContain('"The answer is CORRECT."')
        expect(yield* scorer.score({ instance: good, trace: answered(good) })).toEqual({ "generation.locomo_judge": 1 })
      }
      // The unreadable reply was asked for twice, the readable one once (then cached).
      expect(lm.requests.map((r) => /Question number (\d+)/.exec(r.messages[0]!.content)![1])).toEqual(["1", "2", "1"])
    })
  )

  it.scoped("fails the question, saying why, on another benchmark's type, without an answer or a gold answer", () =>
    Effect.gen(function* () {
      const scorer = yield* buildScorer("locomo-judge", { model: "judge" }).pipe(
        Effect.provide(dry(scriptedModel(() => "")))
      )
      const reason = (i: Domain.Instance, trace = answered(i)) =>
        Effect.map(Effect.flip(scorer.score({ instance: i, trace })), (e) => e.message)
      expect(yield* reason(question(1, "multi-session"))).toContain(
        'instance type "multi-session" is not a LoCoMo category'
      )
      const q = question(2, "single-hop")
      expect(yield* reason(q, makeTrace(q))).toContain("no generated answer to judge")
      expect(yield* reason(question(3, "open-domain", null))).toContain("conv-1:q3 has no gold answer")
    })
  )

  it("takes the authors' settings by default: temperature 0, no token limit", () => {
    const options = Either.getOrThrow(
      Either.mapLeft(LocomoJudge.plugin.decode({ model: "judge" }), (e) => new Error(JSON.stringify(e)))
    )
    expect(options.plugin).toBe("locomo-judge")
    expect(options.params).toEqual({ model: "judge", maxTokens: null, temperature: 0 })
    expect(LocomoJudge.authorsModel).toBe("gpt-4o-mini")
  })
})
