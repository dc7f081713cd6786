/**
 * LoCoMo's answer F1, as the authors' evaluation code computes it (snap-research/locomo,
 * `task_eval/evaluation.py` at commit 92286325a40764bee61f77824ddb95233b11c4d6: `normalize_answer`,
 * `f1_score`, `f1` and the category branches of `eval_question_answering`), reimplemented here:
 *
 * - normalization: commas dropped, lowercased, ASCII punctuation (Python's `string.punctuation`)
 *   dropped, the words "a", "an", "the" and "and" replaced by a space (word boundaries as the
 *   `regex` module's Unicode `\b`), whitespace runs (Python's `str.split()`) collapsed;
 * - tokens: the normalized words, each stemmed by NLTK's Porter stemmer in its default mode;
 * - token F1: the multiset overlap of prediction and answer tokens, 0 when nothing is shared;
 * - per category: multi-hop (1) splits prediction and answer on commas and averages, over the
 *   answer's parts, the best F1 of any prediction part (numpy's mean, pairwise summation
 *   included); temporal (2) and single-hop (4) take the token F1; open-domain (3) scores against
 *   the answer's part before the first ";"; adversarial (5) scores 1 when the prediction contains
 *   "no information available" or "not mentioned" (any case), else 0.
 *
 * The scorer `locomo-f1` applies this to the generated answer (`trace.generation.text`) of each
 * LoCoMo question, the category read from the instance type. Its one metric,
 * `generation.locomo_f1`, is a per-question mean, so the per-category means (summary.json `types`)
 * are the authors' per-category accuracies (their running sum over the questions divided by the
 * count) and the overall mean theirs up to the last binary digit ({@link overall}).
 *
 * @example
 * // scorers: [{ use: locomo-f1 }]
 * import { LocomoF1 } from "@cupid-lab/scorers"
 * LocomoF1.score("Paris, Rome", "Rome, Paris and Oslo", 1) // multi-hop: (1 + 2/3) / 2 ("Paris and Oslo" at "Paris")
 */
import { Errors, Plugin, Python, Scorer } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import { stem } from "./internal/porter.js"

export const name = "locomo-f1"

/** LoCoMo's category numbers by the instance types the LoCoMo reader gives them (docs/locomo.md). */
export const categories: Readonly<Record<string, Category>> = {
  "multi-hop": 1,
  temporal: 2,
  "open-domain": 3,
  "single-hop": 4,
  adversarial: 5
}
export type Category = 1 | 2 | 3 | 4 | 5

const punctuation = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g
// `\b(a|an|the|and)\b` of the `regex` module: its word characters are these Unicode classes.
const word = String.raw`[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]`
const articles = new RegExp(String.raw`(?<!${word})(?:a|an|the|and)(?!${word})`, "gu")
// What Python's `str.split()` splits on (`str.isspace()`), which is not JavaScript's `\s`.
const pyWhitespace = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/

const pySplit = (text: string): ReadonlyArray<string> => text.split(pyWhitespace).filter((w) => w !== "")

/** `normalize_answer`: the answer text as it is compared. */
export const normalize = (text: string): string =>
  pySplit(text.replace(/,/g, "").toLowerCase().replace(punctuation, "").replace(articles, " ")).join(" ")

/** The stemmed tokens F1 compares. */
export const tokens = (text: string): ReadonlyArray<string> => pySplit(normalize(text)).map(stem)

/** `f1_score`: token F1 of one prediction against one answer. */
export const tokenF1 = (prediction: string, answer: string): number => {
  const p = tokens(prediction)
  const a = tokens(answer)
  const left = new Map<string, number>()
  for (const t of a) left.set(t, (left.get(t) ?? 0) + 1)
  let same = 0
  for (const t of p) {
    const n = left.get(t) ?? 0
    if (n > 0) {
      same++
      left.set(t, n - 1)
    }
  }
  if (same === 0) return 0
  const precision = same / p.length
  const recall = same / a.length
  return (2 * precision * recall) / (precision + recall)
}

/** numpy's sum of float64 values (pairwise, eight accumulators per block of up to 128). */
const numpySum = (xs: ReadonlyArray<number>): number => {
  const n = xs.length
  if (n < 8) return xs.reduce((s, x) => s + x, 0)
  if (n <= 128) {
    const r = xs.slice(0, 8)
    let i = 8
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j]! += xs[i + j]!
    let s = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!))
    for (; i < n; i++) s += xs[i]!
    return s
  }
  const half = Math.floor(n / 2)
  const cut = half - (half % 8)
  return numpySum(xs.slice(0, cut)) + numpySum(xs.slice(cut))
}

/** `f1`: the multi-answer F1 of multi-hop questions, over the comma-separated parts. */
export const multiAnswerF1 = (prediction: string, answer: string): number => {
  const predictions = prediction.split(",").map(Python.strip)
  const answers = answer.split(",").map(Python.strip)
  const best = answers.map((a) => Math.max(...predictions.map((p) => tokenF1(p, a))))
  return numpySum(best) / best.length
}

/** What the adversarial category accepts: the prediction says the conversation does not tell. */
export const declines = (prediction: string): boolean => {
  const lower = prediction.toLowerCase()
  return lower.includes("no information available") || lower.includes("not mentioned")
}

/** One question's score by its category's rule (the answer as the data gives it, as text). */
export const score = (prediction: string, answer: string, category: Category): number => {
  switch (category) {
    case 1:
      return multiAnswerF1(prediction, answer)
    case 2:
    case 4:
      return tokenF1(prediction, answer)
    case 3:
      return tokenF1(prediction, Python.strip(answer.split(";")[0]!))
    case 5:
      return declines(prediction) ? 1 : 0
  }
}

/**
 * The overall score as the authors' `analyze_aggr_acc` adds it up: each category's running sum, the
 * sums added in their print order (4, 1, 2, 3, 5), divided by the number of questions. It equals
 * the plain mean of every question's score up to the last binary digit (summary.json's `all` is the
 * plain mean); both round to the same three decimals their report prints.
 */
export const overall = (scores: ReadonlyArray<{ readonly category: Category; readonly value: number }>): number => {
  let total = 0
  for (const category of [4, 1, 2, 3, 5] as const) {
    let sum = 0
    for (const s of scores) if (s.category === category) sum += s.value
    total += sum
  }
  return total / scores.length
}

export const Options = Schema.Struct({})
export type Options = typeof Options.Type

export const metrics: ReadonlyArray<Scorer.MetricInfo> = [
  Scorer.metric({
    name: "generation.locomo_f1",
    description:
      "LoCoMo's answer score as its authors' evaluation code computes it: token F1 of the generated answer against the gold answer after their normalization and Porter stemming; multi-hop averages over the answer's comma-separated parts, open-domain uses the answer before its first ';', adversarial is 1 when the answer says 'no information available' or 'not mentioned'. Per category in summary.json's types.",
    family: "generation",
    headline: true,
    mainRank: 0
  })
]

export const plugin = Plugin.scorer({
  name,
  description:
    "LoCoMo's answer F1 per category, as the authors' task_eval/evaluation.py computes it, of the generated answer (needs a generator, e.g. qa).",
  options: Options,
  make: () =>
    Effect.succeed<Scorer.Service>({
      metrics,
      score: ({ instance, trace }) =>
        Effect.gen(function* () {
          const fail = (reason: string) => new Errors.StageError({ stage: "score", plugin: name, reason })
          const category = categories[instance.type]
          if (category === undefined)
            return yield* fail(
              `instance type "${instance.type}" is not a LoCoMo category (${Object.keys(categories).join(", ")}): locomo-f1 scores LoCoMo questions only`
            )
          if (trace.generation === undefined)
            return yield* fail(
              "no generated answer to score: configure a generator (e.g. generator: { use: qa, model: ... })"
            )
          // The adversarial rule reads the prediction only; the published file gives those questions no `answer`.
          const answer = instance.gold.answer
          if (answer === undefined && category !== 5) return yield* fail(`${instance.id} has no gold answer`)
          return { "generation.locomo_f1": score(trace.generation.text, answer ?? "", category) }
        })
    })
})
