/**
 * PrefEval's preference-following judgement, as the authors' `generation_task/` code makes it
 * (amazon-science/PrefEval at commit 50795054b5ff5f418d2b768a331d71e480f93331): for each response
 * their `llm_based_evaluation_errortypes.py` asks the judge four questions in turn (does it
 * acknowledge a preference, violate the stated one, hallucinate one, help at all), each one user
 * message filled from their `error_type/` file under their system prompt, at temperature 0 and at
 * most 100 tokens (prompts loaded at run time, see {@link PrefEvalPrompts}); the hallucination
 * check is shown the preference the acknowledgement reply quoted. Replies are read as their
 * BeautifulSoup parse reads them (the text of the first `<answer>`, `<preference>`), and
 * `get_preference_following_accuracy_generation_task.py`'s `analyze_errors` turns them into error
 * types: acknowledged = "yes" in the answer; hallucinated = acknowledged and "yes"; violated =
 * "yes"; unhelpful = "no" in the helpfulness answer; then the three violations and unhelpfulness,
 * and followed when none of the four holds.
 *
 * The scorer `prefeval-judge` applies this to the generated answer (`trace.generation.text`) of
 * each PrefEval instance, with the instance's question (`query.request`) and its preference
 * (`gold.preference`). Its metrics, each 1 or 0 per response, so their means per preference form in
 * summary.json's `types` are the authors' rates: `generation.prefeval_followed` (their preference
 * following accuracy), the four error types `generation.prefeval_error_unhelpful`,
 * `..._error_inconsistent`, `..._error_hallucinated_violation`, `..._error_unaware_violation`, and
 * the three checks behind them (`..._acknowledged`, `..._hallucinated`, `..._violated`).
 *
 * @example
 * // models: { sonnet: { provider: openai, model: claude-3-sonnet, baseURL: ... } }
 * // scorers: [{ use: prefeval-judge, model: sonnet }]
 * import { PrefEvalJudge } from "@cupid-lab/scorers"
 * PrefEvalJudge.errorTypes({ acknow: "Yes", violate: "Yes", hallucinate: "No", helpful: "Yes" }).inconsistent // true
 */
import { type LanguageModel, Plugin, Scorer } from "@cupid-lab/core"
import { Effect } from "effect"
import * as AuthorsJudge from "./internal/AuthorsJudge.js"
import * as SoupText from "./internal/SoupText.js"
import * as PrefEvalPrompts from "./PrefEvalPrompts.js"

export const name = "prefeval-judge"

/** The judge the authors used (Claude 3 Sonnet on Bedrock). */
export const authorsModel = "anthropic.claude-3-sonnet-20240229-v1:0"

/** PrefEval's preference forms, as the reader gives them as instance types. */
export const forms = ["explicit", "implicit-choice", "implicit-persona"] as const

/** The judge (a `models:` entry; the authors': {@link authorsModel}), at most 100 tokens per reply, temperature 0, as theirs. */
export const Options = AuthorsJudge.options({ maxTokens: 100, temperature: 0 })
export type Options = typeof Options.Type

/** What their parse keeps of a reply: the `<answer>` text, and for the acknowledgement check the `<preference>`. */
export const parseReply = (check: PrefEvalPrompts.Check, reply: string) => ({
  answer: SoupText.strippedText(reply, "answer"),
  ...(check === "acknow" ? { extractPref: SoupText.strippedText(reply, "preference") } : {})
})

/** Their `analyze_errors` on one entry, from the four answers. */
export const errorTypes = (answers: Readonly<Record<PrefEvalPrompts.Check, string>>) => {
  const acknowledged = answers.acknow.toLowerCase().includes("yes")
  const hallucinated = acknowledged && answers.hallucinate.toLowerCase().includes("yes")
  const violated = answers.violate.toLowerCase().includes("yes")
  const unhelpful = answers.helpful.toLowerCase().includes("no")
  const inconsistent = acknowledged && !hallucinated && violated && !unhelpful
  const hallucinatedViolation = acknowledged && hallucinated && violated && !unhelpful
  const unawareViolation = !acknowledged && violated && !unhelpful
  const followed = !(inconsistent || hallucinatedViolation || unawareViolation || unhelpful)
  return {
    acknowledged,
    hallucinated,
    violated,
    unhelpful,
    inconsistent,
    hallucinatedViolation,
    unawareViolation,
    followed
  }
}

const m = (suffix: string, description: string, extra: Partial<Scorer.MetricInfo> = {}) =>
  Scorer.metric({ name: `generation.prefeval_${suffix}`, description, family: "generation", ...extra })

export const metrics: ReadonlyArray<Scorer.MetricInfo> = [
  m(
    "followed",
    "PrefEval preference following as its authors' error-type evaluation judges it: 1 when the response has none of their four error types (unhelpful, inconsistent, hallucinated-preference violation, preference-unaware violation), else 0. Per preference form in summary.json's types.",
    { headline: true, mainRank: 0 }
  ),
  m("error_unhelpful", "PrefEval error type: the judge found the response unhelpful ('no' in its answer).", {
    direction: "lower"
  }),
  m(
    "error_inconsistent",
    "PrefEval error type: acknowledges the preference, restates it right, and violates it anyway.",
    { direction: "lower" }
  ),
  m(
    "error_hallucinated_violation",
    "PrefEval error type: acknowledges a preference it hallucinated, and violates the real one.",
    { direction: "lower" }
  ),
  m("error_unaware_violation", "PrefEval error type: violates the preference without acknowledging any.", {
    direction: "lower"
  }),
  m("acknowledged", "PrefEval check: the response acknowledges some user preference (their acknowledgement count)."),
  m(
    "hallucinated",
    "PrefEval check: the response acknowledges a preference that is not the user's (their hallucination count).",
    { direction: "lower" }
  ),
  m("violated", "PrefEval check: the response violates the stated preference (their violation count).", {
    direction: "lower"
  })
]

export const plugin = Plugin.scorer({
  name,
  description:
    "PrefEval's preference following: the generated answer judged by a chat model on the authors' four error-type prompts from error_type/, loaded from their repository at a pinned commit (needs a generator).",
  options: Options,
  make: (options) =>
    Effect.gen(function* () {
      const judge = yield* AuthorsJudge.make({
        name,
        options,
        howToGet: PrefEvalPrompts.howToGet,
        load: (dryRun) => Effect.flatMap(PrefEvalPrompts.locations, (at) => PrefEvalPrompts.prompts({ ...at, dryRun }))
      })
      const { fail, prompts } = judge
      const service: Scorer.Service = {
        metrics,
        score: ({ instance, trace }) =>
          Effect.gen(function* () {
            if (!(forms as ReadonlyArray<string>).includes(instance.type))
              return yield* fail(
                `instance type "${instance.type}" is not a PrefEval preference form (${forms.join(", ")}): ${name} judges PrefEval instances only`
              )
            const response = yield* judge.answer(trace)
            if (instance.gold.preference === "") return yield* fail(`${instance.id} has no gold preference`)
            const ask = (check: PrefEvalPrompts.Check, restatement?: string) => {
              const inputs = {
                preference: instance.gold.preference,
                question: instance.query.request,
                response,
                ...(restatement === undefined ? {} : { restatement })
              }
              const request: LanguageModel.CompletionRequest = {
                messages: [
                  { role: "system", content: prompts.system },
                  { role: "user", content: PrefEvalPrompts.fill(prompts, check, inputs) }
                ],
                // A followed response: no acknowledgement, no violation, helpful.
                dryRunAnswer: `<preference></preference>\n<answer>${check === "helpful" ? "Yes" : "No"}</answer>`,
                read: (text) => ({ ok: true, value: parseReply(check, text) }),
                acceptTruncated: true
              }
              return Effect.map(judge.ask(request, `${check} check`), (reply) => parseReply(check, reply.text))
            }
            const acknow = yield* ask("acknow")
            const violate = yield* ask("violate")
            const hallucinate = yield* ask("hallucinate", acknow.extractPref ?? "")
            const helpful = yield* ask("helpful")
            const t = errorTypes({
              acknow: acknow.answer,
              violate: violate.answer,
              hallucinate: hallucinate.answer,
              helpful: helpful.answer
            })
            const n = (b: boolean) => (b ? 1 : 0)
            return {
              "generation.prefeval_followed": n(t.followed),
              "generation.prefeval_error_unhelpful": n(t.unhelpful),
              "generation.prefeval_error_inconsistent": n(t.inconsistent),
              "generation.prefeval_error_hallucinated_violation": n(t.hallucinatedViolation),
              "generation.prefeval_error_unaware_violation": n(t.unawareViolation),
              "generation.prefeval_acknowledged": n(t.acknowledged),
              "generation.prefeval_hallucinated": n(t.hallucinated),
              "generation.prefeval_violated": n(t.violated)
            }
          })
      }
      return service
    })
})
