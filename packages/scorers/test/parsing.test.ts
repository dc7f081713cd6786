import { PromptTemplate } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import * as Checklist from "../src/Checklist.js"
import * as Coverage from "../src/Coverage.js"
import { AnswerJson } from "@cupid-lab/core"
import * as Template from "../src/internal/Template.js"
import * as Judge from "../src/Judge.js"

const right = <A>(e: Either.Either<A, string>): A => {
  if (Either.isLeft(e)) throw new Error(`expected a value, got the error: ${e.left}`)
  return e.right
}
const left = <A>(e: Either.Either<A, string>): string => {
  if (Either.isRight(e)) throw new Error(`expected an error, got ${JSON.stringify(e.right)}`)
  return e.left
}

describe("AnswerJson.extract", () => {
  it("reads plain JSON, fenced JSON and JSON surrounded by prose", () => {
    expect(AnswerJson.extract(`{"a": 1}`)).toEqual({ value: { a: 1 } })
    expect(AnswerJson.extract("Sure!\n```json\n[1, 2]\n```\nHope this helps.")).toEqual({ value: [1, 2] })
    expect(AnswerJson.extract('Result: {"checklist": ["x"]} -- done')).toEqual({ value: { checklist: ["x"] } })
    expect(AnswerJson.extract('Ratings: ["Fully Covered", "Not Covered"] as asked')).toEqual({
      value: ["Fully Covered", "Not Covered"]
    })
    expect(AnswerJson.extract("no json here")).toBeUndefined()
  })
})

describe("Coverage.parseRating", () => {
  it.each([
    ["Fully Covered", 1],
    ["fully", 1],
    ["**Fully covered**", 1],
    ["1", 1],
    [1, 1],
    ["1.0", 1],
    ["Covered", 1],
    ["Partially Covered", 0.5],
    ["partial", 0.5],
    ["0.5", 0.5],
    [".5", 0.5],
    [0.5, 0.5],
    ["Not Covered", 0],
    ["not covered.", 0],
    ["No", 0],
    ["0", 0],
    [0, 0]
  ] as const)("reads %j as %d", (raw, value) => {
    expect(Coverage.parseRating(raw)).toBe(value)
  })

  it.each(["maybe", "2", 0.7, null, "", "somewhat"])("rejects %j", (raw) => {
    expect(Coverage.parseRating(raw)).toBeUndefined()
  })
})

describe("Coverage.parseRatings", () => {
  it("reads the results object, ordering entries by their index", () => {
    const answer =
      '```json\n{"results": [{"index": 2, "entry": "b", "label": "Not Covered"}, {"index": 1, "entry": "a", "reasoning": "...", "label": "Fully Covered"}]}\n```'
    expect(right(Coverage.parseRatings(answer, 2))).toEqual([1, 0])
  })

  it("reads a bare list of labels, numbers or objects (PrefMatcher-style)", () => {
    expect(right(Coverage.parseRatings(`["Partially Covered", "fully", 0]`, 3))).toEqual([0.5, 1, 0])
    expect(right(Coverage.parseRatings(`[{"entry": "a", "label": "Partially Covered"}]`, 1))).toEqual([0.5])
    expect(right(Coverage.parseRatings(`{"1": "Fully Covered", "2": "Not Covered"}`, 2))).toEqual([1, 0])
    expect(right(Coverage.parseRatings(`{"label": "Fully Covered"}`, 1))).toEqual([1])
  })

  it("falls back to exactly n '... covered' labels in prose", () => {
    expect(right(Coverage.parseRatings("1. Partially covered - close.\n2. Fully covered.", 2))).toEqual([0.5, 1])
  })

  it("explains what it expected when the answer cannot be read", () => {
    expect(left(Coverage.parseRatings("They look similar to me.", 2))).toMatch(/expected 2 ratings/)
    expect(left(Coverage.parseRatings(`["Fully Covered", "Not Covered", "Fully Covered"]`, 2))).toMatch(/got 3/)
    expect(left(Coverage.parseRatings(`["Fully Covered", "sort of"]`, 2))).toMatch(/entry 2 is "sort of"/)
    expect(left(Coverage.parseRatings(`[{"index": 1, "label": "fully"}, {"index": 3, "label": "fully"}]`, 2))).toMatch(
      /indexes 1\.\.2/
    )
  })
})

describe("Checklist.parseChecklist", () => {
  it("reads the checklist object or a bare list, trimming and dropping empty items", () => {
    expect(right(Checklist.parseChecklist('```json\n{"checklist": [" Is it brief? ", ""]}\n```'))).toEqual([
      "Is it brief?"
    ])
    expect(right(Checklist.parseChecklist('**Checklist**\n["A?", "B?"]'))).toEqual(["A?", "B?"])
  })

  it("rejects answers without a checklist", () => {
    expect(left(Checklist.parseChecklist("Is it brief?"))).toMatch(/no JSON/)
    expect(left(Checklist.parseChecklist(`{"items": "Is it brief?"}`))).toMatch(/expected \{"checklist"/)
  })
})

describe("Judge.parseScore", () => {
  it.each([
    ["7.5", 7.5],
    ["Score: 8/10", 8],
    ["**9**", 9],
    ["### Evaluation Score\n\n**9**", 9],
    ["The response is good (1-10 scale).\n\nScore: 6", 6],
    ["Score (1-10): 7", 7],
    ['{"score": 7.5}', 7.5],
    ["Overall it earns 8 out of 10.", 8],
    ["Score: 10", 10],
    ["Score: 1", 1],
    ["First score: 3. After reflection, final score: 4.", 4]
  ] as const)("reads %j as %d", (answer, score) => {
    expect(right(Judge.parseScore(answer))).toBe(score)
  })

  it("rejects scores outside 1-10 and answers without a score", () => {
    expect(left(Judge.parseScore("Score: 11"))).toMatch(/score 11 is outside 1-10/)
    expect(left(Judge.parseScore("Score: 0"))).toMatch(/outside/)
    expect(left(Judge.parseScore("Score: -2"))).toMatch(/outside/)
    expect(left(Judge.parseScore("Very good response overall."))).toMatch(/expected a score from 1 to 10/)
  })
})

describe("prompt templates (core's PromptTemplate, on the scorers' files)", () => {
  const spec = (file: string, required: ReadonlyArray<string>, optional: ReadonlyArray<string> = []) => ({
    plugin: "t",
    file,
    required,
    optional
  })
  const parse = (
    text: string,
    file: string,
    required: ReadonlyArray<string>,
    optional: ReadonlyArray<string> = ["checklist"]
  ) => Effect.runSync(Effect.either(PromptTemplate.fromText(spec(file, required, optional), text)))

  it("splits system and user sections, drops comments, and fills slots in one pass", () => {
    const t = parse(
      "<!-- A note. -->\n<!-- system -->\nRate {{checklist}}.\n<!-- user -->\nPreference: {{preference}}\n",
      "t.md",
      ["preference"]
    )
    if (Either.isLeft(t)) throw t.left
    expect(PromptTemplate.render(t.right, { preference: "uses {{checklist}} literally", checklist: "1. A" })).toEqual([
      { role: "system", content: "Rate 1. A." },
      { role: "user", content: "Preference: uses {{checklist}} literally" }
    ])
  })

  it("sends a file without markers whole as the user message", () => {
    const t = parse("Judge {{ preference }}", "t.md", ["preference"])
    if (Either.isLeft(t)) throw t.left
    expect(PromptTemplate.render(t.right, { preference: "x" })).toEqual([{ role: "user", content: "Judge x" }])
  })

  it("names the file and the placeholder that is wrong, and refuses a note outside a comment", () => {
    const reason = (e: Either.Either<unknown, { readonly message: string }>) =>
      Either.isLeft(e) ? e.left.message : "no error"
    expect(reason(parse("{{preferences}}", "my.md", []))).toMatch(/my\.md: unknown placeholder \{\{preferences\}\}/)
    expect(reason(parse("{{checklist}}", "my.md", ["preference"]))).toMatch(/missing placeholder \{\{preference\}\}/)
    expect(reason(parse("<!-- system -->\nonly system", "my.md", []))).toMatch(/no user message/)
    expect(reason(parse("A note.\n<!-- user -->\n{{preference}}", "my.md", ["preference"]))).toMatch(
      /text before the first/
    )
  })

  it("ships prompts that parse with the placeholders their scorers fill", () => {
    const load = (file: string, allowedHere: Array<string>, required: Array<string>) => {
      const t = parse(
        fs.readFileSync(`${Template.promptsDir}/${file}`, "utf8"),
        file,
        required,
        allowedHere.filter((a) => !required.includes(a))
      )
      if (Either.isLeft(t)) throw t.left
      return PromptTemplate.render(t.right, Object.fromEntries(allowedHere.map((a) => [a, `<${a}>`])))
    }
    expect(load("decompose.md", ["preference"], ["preference"])[0]!.content).toContain("checklist")
    for (const f of ["match.md", "match-prefmatcher.md"])
      expect(load(f, ["preference", "checklist", "count"], ["preference", "checklist"])).toHaveLength(2)
    expect(
      load("judge.md", ["request", "response", "preference", "checklist"], ["response", "preference"])[1]!.content
    ).toContain("<response>")
  })
})
