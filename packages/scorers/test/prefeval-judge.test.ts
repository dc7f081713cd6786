// prefeval-judge without the authors' repository: how a reply is parsed (the expected texts are
// what BeautifulSoup 4's html.parser gives, checked once by hand), their error-type rules, how a
// prompt is filled (on texts written here, not theirs), what a checkout must hold, and the
// scorer's failures and dry run. Their own code is compared in prefeval-reference.test.ts.
import { Domain, Models } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import * as SoupText from "../src/internal/SoupText.js"
import * as PrefEvalJudge from "../src/PrefEvalJudge.js"
import * as PrefEvalPrompts from "../src/PrefEvalPrompts.js"
import { buildScorer, makeTrace, pluginEnv, scriptedModel } from "./fixtures.js"

describe("a judge reply, read as BeautifulSoup's html.parser reads it", () => {
  it("finds the first element by name, whatever its case, closed or not, with the text inside it", () => {
    const cases: ReadonlyArray<readonly [string, string, string | undefined]> = [
      ["<Answer> YES </Answer>", "answer", " YES "],
      ["<answer>[Yes]", "answer", "[Yes]"],
      ["no tags at all: Yes", "answer", undefined],
      ["<preference>x<answer>Yes</preference> tail</answer>", "answer", "Yes"],
      ["<preference>x<answer>Yes</preference> tail</answer>", "preference", "xYes"],
      ["<answer>Yes<br>No</answer>", "answer", "YesNo"],
      ["<answer>a<!-- c -->b</answer>", "answer", "ab"],
      ['1 < 2 <answer type="x">No</answer>', "answer", "No"],
      ["<answer/>Yes", "answer", ""],
      ["<answer>Y<b>e</b>s</answer><answer>No</answer>", "answer", "Yes"],
      ["</answer><answer>No", "answer", "No"],
      ["<explanation>a &amp; b &lt;c&gt; &foo; &#65;&#x42;</explanation>", "explanation", "a & b <c> &foo AB"]
    ]
    expect(cases.map(([reply, name]) => SoupText.findText(reply, name))).toEqual(cases.map(([, , text]) => text))
    expect(PrefEvalJudge.parseReply("acknow", "<preference> quiet </preference>\n<answer>Yes")).toEqual({
      answer: "Yes",
      extractPref: "quiet"
    })
  })
})

describe("their error types", () => {
  const t = (acknow: string, violate: string, hallucinate: string, helpful: string) =>
    PrefEvalJudge.errorTypes({ acknow, violate, hallucinate, helpful })
  it("follows analyze_errors, substring tests included", () => {
    expect(t("Yes", "No", "No", "Yes").followed).toBe(true)
    expect(t("Yes", "Yes", "No", "Yes").inconsistent).toBe(true)
    expect(t("Yes", "yes", "YES", "Yes").hallucinatedViolation).toBe(true)
    expect(t("No", "Yes", "Yes", "Yes")).toMatchObject({ hallucinated: false, unawareViolation: true, followed: false })
    // "know" holds "no": unhelpful, as in theirs; a hallucinated restatement alone is no error.
    expect(t("No", "No", "No", "Yes, I know")).toMatchObject({ unhelpful: true, followed: false })
    expect(t("Yes", "No", "Yes", "Yes")).toMatchObject({ hallucinated: true, followed: true })
  })
})

const shaped: PrefEvalPrompts.Prompts = {
  system: "System.",
  byCheck: {
    acknow: "Q={question} R={end_generation}",
    violate: "P={preference} Q={question} R={end_generation}",
    hallucinate: 'P="{preference}" S="{assistant_restatement}"',
    helpful: "Q={question} R={end_generation}"
  },
  source: "test",
  standIn: false
}

describe("their prompts", () => {
  it("are filled by replacing each placeholder in their order, inside inserted texts too", () => {
    const inputs = { preference: "no {question}", question: "Q?", response: "see {question}", restatement: "r" }
    expect(PrefEvalPrompts.fill(shaped, "acknow", inputs)).toBe("Q=Q? R=see Q?")
    expect(PrefEvalPrompts.fill(shaped, "violate", inputs)).toBe("P=no Q? Q=Q? R=see {question}")
    expect(PrefEvalPrompts.fill(shaped, "hallucinate", inputs)).toBe('P="no {question}" S="r"')
  })

  it("take the one system_prompt literal of their script", () => {
    expect(PrefEvalPrompts.systemPrompt('def main():\n    system_prompt = """A "b" c"""\n')).toBe('A "b" c')
    expect(PrefEvalPrompts.systemPrompt("x = 1\n")).toEqual({ error: "expected one system_prompt assignment, found 0" })
  })

  it.effect("must come from a checkout holding the pinned files", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "prefeval-"))
      const missing = yield* Effect.flip(PrefEvalPrompts.prompts({ dir }))
      expect(missing.message).toContain("missing from the checkout")
      fs.mkdirSync(path.join(dir, "error_type"))
      fs.writeFileSync(path.join(dir, PrefEvalPrompts.files.acknow.path), "not theirs")
      const wrong = yield* Effect.flip(PrefEvalPrompts.prompts({ dir }))
      expect(wrong.message).toContain(`does not match the pinned ${PrefEvalPrompts.files.acknow.sha256}`)
      expect(wrong.message).toContain("PREFEVAL_REFERENCE_DIR")
    }).pipe(Effect.provide(pluginEnv()))
  )
})

const instance = (type: string): Domain.Instance => ({
  id: `${type}/t:1`,
  personaId: `${type}/t:1`,
  type,
  query: { key: Domain.queryKey(`${type}/t:1`), request: "Which hotel?", sessions: [] },
  gold: { factor: "", preference: "Dogs allowed.", checklist: [], sessions: [] }
})

describe("the prefeval-judge scorer", () => {
  it.scoped("refuses what is not a PrefEval response, and prices four calls with stand-ins in a dry run", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(() => "<answer>No</answer>")
      const env = Layer.merge(
        pluginEnv({ judge: { languageModel: lm } }, { dryRun: true } as Models.MakeOptions),
        Layer.succeed(PrefEvalPrompts.Reference, {})
      )
      const score = (i: Domain.Instance, text?: string) =>
        Effect.flatMap(buildScorer("prefeval-judge", { model: "judge" }), (s) =>
          s.score({ instance: i, trace: makeTrace(i, text === undefined ? {} : { generation: { text } }) })
        ).pipe(Effect.provide(env))
      const notPrefEval = yield* Effect.flip(score(instance("single-session-user"), "x"))
      expect(notPrefEval.message).toContain("is not a PrefEval preference form")
      const unanswered = yield* Effect.flip(score(instance("explicit")))
      expect(unanswered.message).toContain("no generated answer to judge")
      const scores = yield* score(instance("explicit"), "The Balmoral.")
      expect(scores["generation.prefeval_followed"]).toBe(1)
    })
  )
})
