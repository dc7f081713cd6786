/**
 * The LLM-as-a-judge score memory-system papers report on LoCoMo (the "J" score), as the Mem0
 * evaluation computes it: not the LoCoMo authors' metric (theirs is `locomo-f1`), but
 * `evaluate_llm_judge` of `evaluation/metrics/llm_judge.py` in mem0ai/mem0 at commit
 * aae5989e78a6188b3b047c104d960c9ad0927e75. The judge model gets one user message, their
 * `ACCURACY_PROMPT` filled with the question, the gold answer and the generated answer (loaded from
 * their file at run time, see {@link LocomoJudgePrompts}), with temperature 0, a JSON-object
 * response format and no token limit; the reply is read as theirs reads it,
 * `json.loads(extract_json(content))["label"]` ({@link label}), and scores 1 when the label is
 * exactly "CORRECT", else 0. A reply their code cannot read (not JSON, not an object, no "label")
 * raises there and fails the question here: a recorded failure, never a score. Their scripts
 * (`llm_judge.py`'s main and `evals.py`) skip category 5 (adversarial) without asking the judge:
 * here those questions are NaN, so means leave them out.
 *
 * The scorer `locomo-judge` applies this to the generated answer (`trace.generation.text`) of each
 * LoCoMo question, the category read from the instance type. Its metric,
 * `generation.locomo_judge`, is 1 or 0 per question; its mean per category (summary.json's
 * `types`) is their per-category accuracy, its mean over all their overall J score.
 *
 * @example
 * // models: { judge: { provider: openai, model: gpt-4o-mini } }
 * // scorers: [{ use: locomo-f1 }, { use: locomo-judge, model: judge }]
 * import { LocomoJudge } from "@cupid-lab/scorers"
 * LocomoJudge.verdict('```json\n{"label": "CORRECT"}\n```') // Either.right(1)
 */
import { type Errors, LanguageModel, Plugin, Python, Scorer } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import * as AuthorsJudge from "./internal/AuthorsJudge.js"
import * as LocomoF1 from "./LocomoF1.js"
import * as LocomoJudgePrompts from "./LocomoJudgePrompts.js"

export const name = "locomo-judge"

/** The judge model their `evaluate_llm_judge` names. */
export const authorsModel = "gpt-4o-mini"

/** The judge (a `models:` entry; theirs: {@link authorsModel}), no token limit, temperature 0, as theirs. */
export const Options = AuthorsJudge.options({ maxTokens: null, temperature: 0 })
export type Options = typeof Options.Type

/** The categories their scripts judge: all but 5 (adversarial), which they skip. */
export const judged: ReadonlyArray<LocomoF1.Category> = [1, 2, 3, 4]

// Python's `\s` in a str pattern (`str.isspace()`), which is not JavaScript's.
const ws = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
const fenced = new RegExp(`\`\`\`(?:json)?${ws}*([\\s\\S]*?)${ws}*\`\`\``)

/**
 * Their `extract_json` (mem0/memory/utils.py at the pinned commit): the text stripped, then the
 * inside of its first ``` block (a `json` tag after the backticks dropped), else the whole text.
 */
export const extractJson = (text: string): string => {
  const stripped = Python.strip(text)
  return fenced.exec(stripped)?.[1] ?? stripped
}

/** Python's `json.loads`: JSON, plus the bare `NaN`, `Infinity` and `-Infinity` it also accepts. */
export const jsonLoads = (text: string): Either.Either<unknown, string> => {
  const parse = (t: string) =>
    Either.try({ try: () => JSON.parse(t) as unknown, catch: (e) => (e instanceof Error ? e.message : String(e)) })
  const plain = parse(text)
  if (Either.isRight(plain)) return plain
  let out = ""
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (inString) {
      out += c
      if (c === "\\") out += text[++i] ?? ""
      else if (c === '"') inString = false
      continue
    }
    const word = /^(?:-Infinity|Infinity|NaN)/.exec(text.slice(i, i + 9))
    if (word !== null) {
      out += "null"
      i += word[0].length - 1
      continue
    }
    if (c === '"') inString = true
    out += c
  }
  return out === text ? plain : Either.orElse(parse(out), () => plain)
}

/** What `json.loads(extract_json(reply))["label"]` gives, or why it raises there. */
export const label = (reply: string): Either.Either<unknown, string> =>
  Either.flatMap(jsonLoads(extractJson(reply)), (value) =>
    typeof value !== "object" || value === null || Array.isArray(value)
      ? Either.left(
          `the reply's JSON is ${value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`}, not an object`
        )
      : Object.hasOwn(value, "label")
        ? Either.right((value as Record<string, unknown>)["label"])
        : Either.left('the reply\'s JSON object has no "label"')
  )

/** Their score: `1 if label == "CORRECT" else 0`, or why the reply cannot be read. */
export const verdict = (reply: string): Either.Either<0 | 1, string> =>
  Either.map(label(reply), (l) => (l === "CORRECT" ? 1 : 0))

export const metrics: ReadonlyArray<Scorer.MetricInfo> = [
  Scorer.metric({
    name: "generation.locomo_judge",
    description:
      "The Mem0 evaluation's LLM-judge score on LoCoMo (the J score of memory-system papers; mem0ai/mem0 evaluation/metrics/llm_judge.py), not the LoCoMo authors' metric: 1 when the judge model labels the generated answer CORRECT against the gold answer with their prompt, else 0; adversarial questions (category 5) are skipped, as theirs are (NaN). Per category in summary.json's types.",
    family: "generation",
    headline: true,
    mainRank: 1
  })
]

/**
 * The scorer with the prompt `load` gives (the plugin's: theirs from {@link LocomoJudgePrompts};
 * tests give their own).
 */
export const make = Effect.fn("LocomoJudge.make")(function* (
  options: Options,
  load: (dryRun: boolean) => Effect.Effect<LocomoJudgePrompts.Prompt, Errors.PluginError, Plugin.Env>
): Effect.fn.Return<Scorer.Service, Plugin.MakeError, Plugin.Env> {
  const judge = yield* AuthorsJudge.make({ name, options, howToGet: LocomoJudgePrompts.howToGet, load })
  const { fail } = judge
  return {
    metrics,
    score: ({ instance, trace }) =>
      Effect.gen(function* () {
        const category = LocomoF1.categories[instance.type]
        if (category === undefined)
          return yield* fail(
            `instance type "${instance.type}" is not a LoCoMo category (${Object.keys(LocomoF1.categories).join(", ")}): ${name} judges LoCoMo questions only`
          )
        if (!judged.includes(category)) return { "generation.locomo_judge": Number.NaN }
        const generated = yield* judge.answer(trace)
        const gold = instance.gold.answer
        if (gold === undefined) return yield* fail(`${instance.id} has no gold answer`)
        const content = LocomoJudgePrompts.fill(judge.prompts, { question: instance.query.request, gold, generated })
        const reply = yield* judge.ask({
          messages: [{ role: "user", content }],
          responseFormat: "json",
          dryRunAnswer: '{"label": "CORRECT"}',
          accept: (text) => Either.isRight(label(text)),
          read: (text) => LanguageModel.reading(verdict(text)),
          acceptTruncated: true
        })
        const score = verdict(reply.text)
        if (Either.isLeft(score))
          return yield* fail(
            `the judge's reply cannot be read as their code reads it (${score.left}): ${JSON.stringify(reply.text.slice(0, 200))}`
          )
        return { "generation.locomo_judge": score.right }
      })
  }
})

export const plugin = Plugin.scorer({
  name,
  description:
    "The Mem0 evaluation's LLM judge on LoCoMo (not the LoCoMo authors' metric): the generated answer labelled CORRECT or WRONG by a chat model with Mem0's llm_judge.py prompt, loaded from mem0ai/mem0 at a pinned commit; adversarial questions skipped (needs a generator, e.g. qa).",
  options: Options,
  make: (options) =>
    make(options, (dryRun) =>
      Effect.flatMap(LocomoJudgePrompts.locations, (at) => LocomoJudgePrompts.prompt({ ...at, dryRun }))
    )
})
