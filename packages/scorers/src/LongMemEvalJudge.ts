/**
 * LongMemEval's QA accuracy, judged as the authors' `src/evaluation/evaluate_qa.py` judges it
 * (xiaowu0162/LongMemEval at commit 9e0b455f4ef0e2ab8f2e582289761153549043fc): the judge model
 * gets one user message, the prompt their `get_anscheck_prompt(question_type, question, answer,
 * hypothesis, abstention)` builds (the templates are loaded from their file at run time, see
 * {@link LongMemEvalPrompts}), with temperature 0 and at most 10 tokens; the answer is correct when
 * the reply, lowercased, contains "yes". A question is an abstention question when its id contains
 * `_abs`, their test.
 *
 * The scorer `longmemeval-judge` applies this to the generated answer (`trace.generation.text`) of
 * each LongMemEval question, the question type read from the instance type. Its metrics:
 * `generation.longmemeval_correct` (1 or 0; its mean per question type in summary.json's `types`
 * is their per-type accuracy, its mean over all their overall accuracy) and
 * `generation.longmemeval_abstention` (the same verdict on abstention questions, NaN on the others:
 * their "Abstention Accuracy" with its N).
 *
 * A reply cut at the token limit is read as it is, as theirs is (`acceptTruncated`).
 *
 * @example
 * // models: { gpt-4o: { provider: openai, model: gpt-4o-2024-08-06 } }
 * // scorers: [{ use: longmemeval-judge, model: gpt-4o }]
 * import { LongMemEvalJudge } from "@cupid-lab/scorers"
 * LongMemEvalJudge.verdict("Yes.") // true
 * LongMemEvalJudge.isAbstention("gpt4_2655b836_abs") // true
 */
import { Plugin, Python, Scorer } from "@cupid-lab/core"
import { Effect } from "effect"
import * as AuthorsJudge from "./internal/AuthorsJudge.js"
import * as LongMemEvalPrompts from "./LongMemEvalPrompts.js"

export const name = "longmemeval-judge"

/** The judge model the authors name for their results (`gpt-4o` in their `model_zoo`). */
export const authorsModel = "gpt-4o-2024-08-06"

/** The judge (a `models:` entry; the authors': {@link authorsModel}), at most 10 tokens, temperature 0, as theirs. */
export const Options = AuthorsJudge.options({ maxTokens: 10, temperature: 0 })
export type Options = typeof Options.Type

/** Their rule: `'yes' in completion.choices[0].message.content.strip().lower()`. */
export const verdict = (reply: string): boolean => Python.strip(reply).toLowerCase().includes("yes")

/** Their test for an abstention question: `'_abs' in question_id`. */
export const isAbstention = (questionId: string): boolean => questionId.includes("_abs")

export const metrics: ReadonlyArray<Scorer.MetricInfo> = [
  Scorer.metric({
    name: "generation.longmemeval_correct",
    description:
      "LongMemEval QA accuracy as its authors' evaluate_qa.py judges it: 1 when the judge model's reply to their prompt for the question's type (or their abstention prompt, for _abs questions) contains 'yes', else 0. Per question type in summary.json's types.",
    family: "generation",
    headline: true,
    mainRank: 0
  }),
  Scorer.metric({
    name: "generation.longmemeval_abstention",
    description:
      "The same verdict on LongMemEval's abstention questions only (their abstention accuracy); undefined (NaN) for the other questions.",
    family: "generation"
  })
]

export const plugin = Plugin.scorer({
  name,
  description:
    "LongMemEval's QA accuracy: the generated answer judged by a chat model with the authors' per-type prompts from evaluate_qa.py, loaded from their repository at a pinned commit (needs a generator, e.g. qa).",
  options: Options,
  make: (options) =>
    Effect.gen(function* () {
      const judge = yield* AuthorsJudge.make({
        name,
        options,
        howToGet: LongMemEvalPrompts.howToGet,
        load: (dryRun) =>
          Effect.flatMap(LongMemEvalPrompts.locations, (at) => LongMemEvalPrompts.templates({ ...at, dryRun }))
      })
      const { fail, prompts: templates } = judge
      const service: Scorer.Service = {
        metrics,
        score: ({ instance, trace }) =>
          Effect.gen(function* () {
            const task = instance.type
            if (!LongMemEvalPrompts.isTask(task))
              return yield* fail(
                `instance type "${task}" is not a LongMemEval question type (${LongMemEvalPrompts.tasks.join(", ")}): ${name} judges LongMemEval questions only`
              )
            const response = yield* judge.answer(trace)
            const answer = instance.gold.answer
            if (answer === undefined) return yield* fail(`${instance.id} has no gold answer`)
            const abstention = isAbstention(instance.id)
            const content = LongMemEvalPrompts.prompt(
              templates,
              task,
              instance.query.request,
              answer,
              response,
              abstention
            )
            const reply = yield* judge.ask({
              messages: [{ role: "user", content }],
              dryRunAnswer: "yes",
              read: (text) => ({ ok: true, value: verdict(text) }),
              acceptTruncated: true
            })
            const correct = verdict(reply.text) ? 1 : 0
            return {
              "generation.longmemeval_correct": correct,
              "generation.longmemeval_abstention": abstention ? correct : Number.NaN
            }
          })
      }
      return service
    })
})
