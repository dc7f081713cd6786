/**
 * The `judge` scorer: an LLM rates 1-10 how well the generated response satisfies the gold
 * preference, given the gold checklist (CUPID's generation metric). Decimal scores are kept
 * ("7.5" stays 7.5); a score outside 1-10 or an answer without one fails the instance with a
 * StageError instead of being stored as a zero. With `repeats: n` each response is judged n times
 * (each repeat cached apart) and the score is their mean; the repeats are kept in the result line.
 *
 * @example
 * // scorers: [{ use: judge, model: gpt4o, repeats: 3 }]
 * import { Judge } from "@cupid-lab/scorers"
 * Judge.parseScore("Strong answer.\n\nScore: 8/10") // Either.right(8)
 */
import {
  AnswerJson,
  Errors,
  LanguageModel,
  Models,
  Plugin,
  PromptTemplate,
  ReferencePrompts,
  Scorer
} from "@cupid-lab/core"
import { Effect, Either, Schema } from "effect"
import * as Repeats from "./internal/Repeats.js"
import * as Checklist from "./Checklist.js"
import * as Template from "./internal/Template.js"
import * as ReferenceAccounting from "./ReferenceAccounting.js"
import { Accounting } from "./ReferenceAccounting.js"

export const name = "judge"

const { json: _json, ...callFields } = Checklist.llmSpec(8192).fields

export const Options = Schema.Struct({
  /** A `models:` entry, its prompt pack, template, token limit and temperature (the judge asks for no JSON). */
  ...callFields,
  /** `strict` (default) or `reference`: the authors' arithmetic (see ReferenceAccounting). */
  accounting: Schema.optionalWith(Accounting, { default: () => "strict" as const }),
  /**
   * How many times each response is judged (absent: once; absent and 1 differ only in the cell's
   * id, which records what the config says). The score is the mean of the repeats;
   * the repeats' own scores are kept in the result line and the report shows their spread and
   * agreement. Each repeat is its own cached call (see {@link repeatSeed}).
   */
  repeats: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 50)), { exact: true })
})
export type Options = typeof Options.Type

const number = String.raw`(-?\d+(?:\.\d+)?)`
const afterKeyword = new RegExp(String.raw`\bscore\b["']?\s*(?:is|of|=|:|-)?\s*["']?\s*${number}`, "gi")
const outOfTen = new RegExp(String.raw`${number}\s*(?:\/|out of)\s*10\b`, "gi")
const bare = new RegExp(String.raw`^${number}(?:\s*(?:\/|out of)\s*10)?$`, "i")
// "(1-10)", "1~10", "from 1 to 10": the scale, not a score.
const scale = /\(?\b1\s*(?:-|–|—|~|to)\s*10\b\)?/g

/**
 * Read a judge's score: the last number after the word "score" ("Score: 8/10", "### Evaluation
 * Score\n\n**9**", `{"score": 7.5}`), else a bare number, else the last "N/10" or "N out of 10".
 */
export const parseScore = (answer: string): Either.Either<number, string> => {
  const text = answer
    .replace(/```[A-Za-z]*/g, " ")
    .replace(/[*#_`]/g, "")
    .replace(scale, " ")
    .trim()
  const last = (re: RegExp) => {
    const all = [...text.matchAll(re)]
    return all.length === 0 ? undefined : Number(all[all.length - 1]![1])
  }
  const value = last(afterKeyword) ?? (bare.test(text) ? Number(bare.exec(text)![1]) : undefined) ?? last(outOfTen)
  if (value === undefined)
    return Either.left(`expected a score from 1 to 10 (e.g. "Score: 7"), got ${AnswerJson.excerpt(answer)}`)
  if (value < 1 || value > 10) return Either.left(`score ${value} is outside 1-10 in ${AnswerJson.excerpt(answer)}`)
  return Either.right(value)
}

/** The request seed of repeat `r` (0-based): none for the first, the model's seed (else 0) plus r after. */
export const repeatSeed = Repeats.repeatSeed

const dryRunAnswer = "1. The response follows the first checklist item only in part.\n\nScore: 6"

/** The judge's metric; its description says which accounting read the scores. */
export const metricsFor = (accounting: "strict" | "reference"): ReadonlyArray<Scorer.MetricInfo> => [
  Scorer.metric({
    name: "generation.score",
    description: `LLM judge score 1-10 of how well the response satisfies the gold preference, given its checklist [${accounting === "reference" ? "the authors' accounting: an answer without a score heading is 0, decimals truncated" : "strict accounting: an unreadable score is a failure, decimals kept"}].`,
    family: "generation",
    headline: true,
    mainRank: 3
  })
]

export const plugin = Plugin.scorer({
  name,
  description: "Generation score 1-10 from an LLM judge against the gold preference and checklist.",
  options: Options,
  make: (options) =>
    Effect.gen(function* () {
      const lm = yield* (yield* Models.Models).languageModel(options.model)
      const reference = Checklist.usesReference(options)
      const template = reference
        ? yield* ReferencePrompts.template("judge", {
            plugin: name,
            required: ["user_request", "ai_response", "preference", "checklist"]
          })
        : yield* Template.load(
            name,
            options.template,
            "judge.md",
            ["request", "response", "preference", "checklist"],
            ["response", "preference"]
          )
      const who = `judge model "${options.model}" (${lm.info.provider}/${lm.info.model})`
      const fail = (reason: string) =>
        new Errors.StageError({ stage: "score", plugin: name, reason: `${who}: ${reason}` })
      const read = (text: string): Either.Either<number, string> =>
        options.accounting === "reference" ? Either.right(ReferenceAccounting.judgeScore(text)) : parseScore(text)
      const settings = Checklist.requestSettings({ ...options, json: false })
      const repeats = options.repeats ?? 1
      const service: Scorer.Service = {
        metrics: metricsFor(options.accounting),
        score: ({ instance, trace }) => {
          if (trace.generation === undefined) {
            return Effect.fail(
              new Errors.StageError({
                stage: "score",
                plugin: name,
                reason:
                  "the trace has no generated response: this cell has no generator (add pipeline.generator or drop this scorer)"
              })
            )
          }
          const checklist = ReferencePrompts.bulletedChecklist(instance.gold.checklist)
          const request: LanguageModel.CompletionRequest = {
            messages: PromptTemplate.render(
              template,
              reference
                ? {
                    user_request: instance.query.request,
                    ai_response: trace.generation.text,
                    preference: instance.gold.preference,
                    checklist
                  }
                : {
                    request: instance.query.request,
                    response: trace.generation.text,
                    preference: instance.gold.preference,
                    checklist
                  }
            ),
            dryRunAnswer: reference
              ? "### Evaluation of AI Assistant's Response\n\n1. In part.\n\n### Evaluation Label\n\nAbove Average\n\n### Evaluation Score\n\n6"
              : dryRunAnswer,
            ...settings,
            read: (text) => LanguageModel.reading(read(text)),
            ...(options.accounting === "strict" ? { accept: (text: string) => Either.isRight(parseScore(text)) } : {})
          }
          const judgeOnce = (r: number) => {
            const seed = repeatSeed(r, lm.info.params.seed)
            return lm.complete(seed === undefined ? request : { ...request, seed }).pipe(
              Effect.mapError((e) => fail(repeats > 1 ? `repeat ${r + 1} of ${repeats}: ${e.message}` : e.message)),
              Effect.flatMap((out) =>
                Either.match(read(out.text), {
                  onLeft: (reason) => Effect.fail(fail(reason)),
                  onRight: (score) => Effect.succeed(score)
                })
              )
            )
          }
          if (repeats === 1) return Effect.map(judgeOnce(0), (score) => ({ "generation.score": score }))
          return Effect.forEach(
            Array.from({ length: repeats }, (_, r) => r),
            judgeOnce,
            { concurrency: repeats }
          ).pipe(Effect.flatMap((scores) => Repeats.combine(scores.map((score) => ({ "generation.score": score })))))
        }
      }
      return service
    })
})
