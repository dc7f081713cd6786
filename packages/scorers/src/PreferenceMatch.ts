/**
 * The `preference-match` scorer, CUPID's inference metric. The inferred preference is decomposed
 * into a checklist; each inferred item is rated against the gold preference (precision) and each
 * gold checklist item against the inferred preference (recall), as fully (1), partially (0.5) or
 * not (0) covered. Emits per-instance (macro) precision, recall and F1, and the pooled counts the
 * reference harness sums over all instances (micro average).
 *
 * With the default `clauses` decomposer and `lexical` matcher everything runs offline, and every
 * metric that depends on them is marked heuristic: those numbers are not the paper's metric.
 *
 * @example
 * // scorers: [{ use: preference-match, decomposer: { model: gpt4o }, matcher: { model: gpt4o } }]
 * import { PreferenceMatch } from "@cupid-lab/scorers"
 * PreferenceMatch.fromRatings([1, 0.5], [1, 0, 0])["inference.f1"] // 2 * 0.75 * (1/3) / (0.75 + 1/3)
 */
import { Errors, Memo, Plugin, Scorer } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as Checklist from "./Checklist.js"
import * as Coverage from "./Coverage.js"
import * as Repeats from "./internal/Repeats.js"
import { Accounting } from "./ReferenceAccounting.js"

export const name = "preference-match"

export const Options = Schema.Struct({
  /** `clauses` (offline heuristic) or `{ model, prompts?, template?, json?, maxTokens?, temperature? }`. */
  decomposer: Schema.optionalWith(Schema.Union(Schema.Literal("clauses"), Checklist.LlmSpec), {
    default: () => "clauses" as const
  }),
  /** `lexical` (offline heuristic) or `{ model, prompts?, template?, json?, maxTokens?, temperature? }`. */
  matcher: Schema.optionalWith(Schema.Union(Schema.Literal("lexical"), Coverage.MatcherSpec), {
    default: () => "lexical" as const
  }),
  /** `strict` (default) or `reference`: the authors' arithmetic (see ReferenceAccounting). */
  accounting: Schema.optionalWith(Accounting, { default: () => "strict" as const }),
  /** Thresholds and ignored words of the lexical matcher (unused with an LLM matcher). */
  lexical: Schema.optionalWith(Coverage.LexicalOptions, { default: () => Coverage.defaultLexical }),
  /**
   * How many times each instance is decomposed and matched (absent: once; needs an LLM decomposer or
   * matcher). Per-instance precision, recall and F1 are the means of the repeats, the counts their
   * mean counts; the repeats' values are kept in the result line, the item ratings of the first.
   */
  repeats: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 50)), { exact: true })
})
export type Options = typeof Options.Type

/** F1 from precision and recall: 0 when both are 0, NaN when either is. */
export const f1 = (p: number, r: number): number =>
  Number.isNaN(p) || Number.isNaN(r) ? NaN : p + r > 0 ? (2 * p * r) / (p + r) : 0

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

/**
 * All emitted values from the two lists of ratings. An empty inferred checklist has precision 0
 * (nothing inferred matches), as in the reference harness; an empty gold checklist leaves recall
 * undefined (NaN).
 */
export const fromRatings = (
  inferredRatings: ReadonlyArray<number>,
  goldRatings: ReadonlyArray<number>
): Record<string, Scorer.Value> =>
  fromCounts({
    pNum: sum(inferredRatings),
    pDen: inferredRatings.length,
    rNum: sum(goldRatings),
    rDen: goldRatings.length
  })

/** All emitted values from the summed ratings and item counts of the two sides. */
export const fromCounts = (c: {
  readonly pNum: number
  readonly pDen: number
  readonly rNum: number
  readonly rDen: number
}): Record<string, Scorer.Value> => {
  const p = c.pDen > 0 ? c.pNum / c.pDen : 0
  const r = c.rDen > 0 ? c.rNum / c.rDen : NaN
  return {
    "inference.precision": p,
    "inference.recall": r,
    "inference.f1": f1(p, r),
    "inference.precision_micro": { num: c.pNum, den: c.pDen },
    "inference.recall_micro": { num: c.rNum, den: c.rDen }
  }
}

/**
 * The counts the authors' evaluation records for one instance: an empty inferred checklist matches
 * nothing; otherwise the inferred items are rated against the gold preference and then the gold
 * items against the inferred preference, and when either answer cannot be read (the second is then
 * not asked for) both sides count 0 over their full item counts.
 */
export const referenceCounts = (
  items: ReadonlyArray<string>,
  gold: { readonly preference: string; readonly checklist: ReadonlyArray<string> },
  inferred: string,
  rate: (items: ReadonlyArray<string>, preference: string) => Effect.Effect<number | undefined, Errors.StageError>
) =>
  Effect.gen(function* () {
    const zero = { pNum: 0, pDen: items.length, rNum: 0, rDen: gold.checklist.length }
    if (items.length === 0) return zero
    const pNum = yield* rate(items, gold.preference)
    if (pNum === undefined) return zero
    const rNum = yield* rate(gold.checklist, inferred)
    return rNum === undefined ? zero : { ...zero, pNum, rNum }
  })

/** The metrics declared for a decomposer/matcher pair. */
export const metricsFor = (
  decomposer: Pick<Checklist.Decomposer, "heuristic" | "label">,
  matcher: Pick<Coverage.Matcher, "heuristic" | "label">,
  accounting: Accounting = "strict"
): ReadonlyArray<Scorer.MetricInfo> => {
  const how = (heuristic: boolean) =>
    `[decomposer ${decomposer.label}, matcher ${matcher.label}${accounting === "reference" ? ", the authors' accounting" : ", strict accounting"}${heuristic ? "; HEURISTIC, not the paper's LLM metric" : ""}]`
  const pH = decomposer.heuristic || matcher.heuristic
  const rH = matcher.heuristic
  const m = (
    metric: string,
    heuristic: boolean,
    text: string,
    aggregate: Scorer.Aggregate,
    more: Partial<Pick<Scorer.MetricInfo, "headline" | "mainRank">> = {}
  ): Scorer.MetricInfo =>
    Scorer.metric({
      name: `inference.${metric}`,
      description: `${text} ${how(heuristic)}`,
      family: "inference",
      heuristic,
      aggregate,
      ...more
    })
  return [
    m(
      "precision",
      pH,
      "Mean coverage of the inferred checklist items by the gold preference, per instance (macro mean).",
      Scorer.mean
    ),
    m(
      "recall",
      rH,
      "Mean coverage of the gold checklist items by the inferred preference, per instance (macro mean).",
      Scorer.mean
    ),
    m("f1", pH, "Per-instance F1 of inference precision and recall (macro mean).", Scorer.mean),
    m(
      "precision_micro",
      pH,
      "Inference precision pooled over instances: summed item ratings / inferred items (micro, as the reference harness).",
      Scorer.ratio
    ),
    m(
      "recall_micro",
      rH,
      "Inference recall pooled over instances: summed item ratings / gold items (micro, as the reference harness).",
      Scorer.ratio
    ),
    m(
      "f1_micro",
      pH,
      "F1 of pooled precision and recall (micro, the paper's headline F1).",
      Scorer.f1Of("inference.precision_micro", "inference.recall_micro"),
      { headline: true, mainRank: 1 }
    )
  ]
}

export const plugin = Plugin.scorer({
  name,
  description:
    "Inference precision / recall / F1 by preference match (macro and pooled micro); offline defaults are heuristic.",
  options: Options,
  make: (options) =>
    Effect.gen(function* () {
      const memo = yield* Memo.current
      const repeats = options.repeats ?? 1
      // One decomposer and matcher per repeat, each sending its repeat's seed (see internal/Repeats).
      const parts = yield* Repeats.buildEach(repeats, () =>
        Effect.gen(function* () {
          const decomposer =
            options.decomposer === "clauses"
              ? Checklist.clauses(memo)
              : yield* Checklist.llm(name, options.decomposer, options.accounting)
          const matcher =
            options.matcher === "lexical"
              ? Coverage.lexical(options.lexical, memo)
              : yield* Coverage.llm(name, options.matcher)
          return { decomposer, matcher }
        })
      )
      const { decomposer, matcher } = parts[0]!
      if (options.accounting === "reference" && (matcher.rateReference === undefined || decomposer.heuristic)) {
        return yield* new Errors.PluginError({
          plugin: name,
          reason:
            "accounting: reference reproduces the authors' LLM decomposer and matcher; give both a model (decomposer: { model }, matcher: { model })"
        })
      }
      if (repeats > 1 && decomposer.heuristic && matcher.heuristic) {
        return yield* new Errors.PluginError({
          plugin: name,
          reason: `repeats: ${repeats} repeats a model's judgments, but the clauses decomposer and the lexical matcher give the same answer every time; give the decomposer or the matcher a model, or drop repeats`
        })
      }
      const scoreOnce = (part: (typeof parts)[number], record: boolean, { instance, trace }: Scorer.ScoreInput) =>
        Effect.gen(function* () {
          if (trace.inference === undefined) {
            return yield* new Errors.StageError({
              stage: "score",
              plugin: name,
              reason:
                "the trace has no inferred preference: this cell has no inferrer (add pipeline.inferrer or drop this scorer)"
            })
          }
          const gold = instance.gold
          const rateReference = part.matcher.rateReference
          if (rateReference !== undefined && options.accounting === "reference") {
            // The authors' inference step decomposes what it read, an empty preference included.
            const inferred = trace.inference.preference
            const items = yield* part.decomposer.decompose(inferred)
            return fromCounts(yield* referenceCounts(items, gold, inferred, rateReference))
          }
          const inferred = trace.inference.preference.trim()
          const items = inferred === "" ? [] : yield* part.decomposer.decompose(inferred)
          // An empty inference covers nothing: no model call is needed to know that.
          const [inferredRatings, goldRatings] = yield* Effect.all(
            [
              part.matcher.rate(items, gold.preference),
              inferred === ""
                ? Effect.succeed(gold.checklist.map(() => 0))
                : part.matcher.rate(gold.checklist, inferred)
            ],
            { concurrency: 2 }
          )
          if (record) {
            yield* Scorer.recordRatings([
              ...gold.checklist.map((item, i) => ({ side: "gold" as const, item, rating: goldRatings[i] ?? 0 })),
              ...items.map((item, i) => ({ side: "inferred" as const, item, rating: inferredRatings[i] ?? 0 }))
            ])
          }
          return fromRatings(inferredRatings, goldRatings)
        })
      const service: Scorer.Service = {
        metrics: metricsFor(decomposer, matcher, options.accounting),
        ...(options.accounting === "reference" ? { reference: "inference" as const } : {}),
        score: (input) =>
          parts.length === 1
            ? scoreOnce(parts[0]!, true, input)
            : Effect.flatMap(
                Effect.forEach(parts, (part, r) => scoreOnce(part, r === 0, input), { concurrency: parts.length }),
                Repeats.combine
              )
      }
      return service
    })
})
