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
import { Errors, Plugin, Scorer } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as Checklist from "./Checklist.js"
import * as Coverage from "./Coverage.js"

export const name = "preference-match"

export const Options = Schema.Struct({
  /** `clauses` (offline heuristic) or `{ model, template?, json? }`. */
  decomposer: Schema.optionalWith(Schema.Union(Schema.Literal("clauses"), Checklist.LlmSpec), {
    default: () => "clauses" as const
  }),
  /** `lexical` (offline heuristic) or `{ model, template?, json? }`. */
  matcher: Schema.optionalWith(Schema.Union(Schema.Literal("lexical"), Checklist.LlmSpec), {
    default: () => "lexical" as const
  }),
  /** Thresholds and ignored words of the lexical matcher (unused with an LLM matcher). */
  lexical: Schema.optionalWith(Coverage.LexicalOptions, { default: () => Coverage.defaultLexical })
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
): Record<string, Scorer.Value> => {
  const pNum = sum(inferredRatings), pDen = inferredRatings.length
  const rNum = sum(goldRatings), rDen = goldRatings.length
  const p = pDen > 0 ? pNum / pDen : 0
  const r = rDen > 0 ? rNum / rDen : NaN
  return {
    "inference.precision": p,
    "inference.recall": r,
    "inference.f1": f1(p, r),
    "inference.precision_micro": { num: pNum, den: pDen },
    "inference.recall_micro": { num: rNum, den: rDen }
  }
}

/** The metrics declared for a decomposer/matcher pair. */
export const metricsFor = (
  decomposer: Pick<Checklist.Decomposer, "heuristic" | "label">,
  matcher: Pick<Coverage.Matcher, "heuristic" | "label">
): ReadonlyArray<Scorer.MetricInfo> => {
  const how = (heuristic: boolean) =>
    `[decomposer ${decomposer.label}, matcher ${matcher.label}${heuristic ? "; HEURISTIC, not the paper's LLM metric" : ""}]`
  const pH = decomposer.heuristic || matcher.heuristic
  const rH = matcher.heuristic
  const m = (
    metric: string,
    heuristic: boolean,
    text: string,
    aggregate: Scorer.Aggregate,
    more: Partial<Pick<Scorer.MetricInfo, "headline" | "mainRank">> = {}
  ): Scorer.MetricInfo => Scorer.metric({ name: `inference.${metric}`, description: `${text} ${how(heuristic)}`, family: "inference", heuristic, aggregate, ...more })
  return [
    m("precision", pH, "Mean coverage of the inferred checklist items by the gold preference, per instance (macro mean).", Scorer.mean),
    m("recall", rH, "Mean coverage of the gold checklist items by the inferred preference, per instance (macro mean).", Scorer.mean),
    m("f1", pH, "Per-instance F1 of inference precision and recall (macro mean).", Scorer.mean),
    m("precision_micro", pH, "Inference precision pooled over instances: summed item ratings / inferred items (micro, as the reference harness).", Scorer.ratio),
    m("recall_micro", rH, "Inference recall pooled over instances: summed item ratings / gold items (micro, as the reference harness).", Scorer.ratio),
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
  description: "Inference precision / recall / F1 by preference match (macro and pooled micro); offline defaults are heuristic.",
  options: Options,
  make: (options) =>
    Effect.gen(function*() {
      const decomposer = options.decomposer === "clauses" ? Checklist.clauses : yield* Checklist.llm(name, options.decomposer)
      const matcher = options.matcher === "lexical" ? Coverage.lexical(options.lexical) : yield* Coverage.llm(name, options.matcher)
      const service: Scorer.Service = {
        metrics: metricsFor(decomposer, matcher),
        score: ({ instance, trace }) =>
          Effect.gen(function*() {
            if (trace.inference === undefined) {
              return yield* new Errors.StageError({
                stage: "score",
                plugin: name,
                reason: "the trace has no inferred preference: this cell has no inferrer (add pipeline.inferrer or drop this scorer)"
              })
            }
            const inferred = trace.inference.preference.trim()
            const gold = instance.gold
            const items = inferred === "" ? [] : yield* decomposer.decompose(inferred)
            // An empty inference covers nothing: no model call is needed to know that.
            const [inferredRatings, goldRatings] = yield* Effect.all(
              [
                matcher.rate(items, gold.preference),
                inferred === "" ? Effect.succeed(gold.checklist.map(() => 0)) : matcher.rate(gold.checklist, inferred)
              ],
              { concurrency: 2 }
            )
            yield* Scorer.recordRatings([
              ...gold.checklist.map((item, i) => ({ side: "gold" as const, item, rating: goldRatings[i] ?? 0 })),
              ...items.map((item, i) => ({ side: "inferred" as const, item, rating: inferredRatings[i] ?? 0 }))
            ])
            return fromRatings(inferredRatings, goldRatings)
          })
      }
      return service
    })
})
