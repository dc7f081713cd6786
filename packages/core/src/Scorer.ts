/**
 * The scoring stage: metrics for one instance from its trace and gold. Scorers never mutate their
 * inputs and always return the metrics they declare (a metric that does not apply, e.g. precision
 * of an empty selection, is `NaN` and is reported with its own N).
 *
 * A metric is typed by how it aggregates over instances ({@link Aggregate}): a `Mean` metric scores
 * each instance with a number; a `Ratio` metric scores it with a {@link Count} `{ num, den }` and
 * its value over a set of instances is `sum(num) / sum(den)` (a micro average, as the reference
 * harness pools counts); an `F1` metric is the harmonic mean of two `Ratio` metrics of the same
 * scorer and is not emitted per instance. Its metadata ({@link MetricInfo}) says what reports need
 * to know: family, direction, whether a heuristic computes it and whether it is a headline metric.
 *
 * @example
 * import { Scorer } from "@cupid-lab/core"
 * const scores = yield* scorer.score({ instance, trace })
 * // { "retrieval.precision": 1, "inference.precision_micro": { num: 2, den: 3 }, ... }
 * Scorer.metric({ name: "retrieval.mrr", description: "...", family: "retrieval" })
 */
import { Effect, FiberRef, Schema } from "effect"
import type { Instance } from "./Domain.js"
import { attempt, type StageError } from "./Errors.js"
import type { Trace } from "./Trace.js"

export const Aggregate = Schema.Union(
  Schema.TaggedStruct("Mean", {}),
  Schema.TaggedStruct("Ratio", {}),
  Schema.TaggedStruct("F1", {
    /** Names of two `Ratio` metrics of the same scorer. */
    precision: Schema.String,
    recall: Schema.String
  })
)
export type Aggregate = typeof Aggregate.Type

export const mean: Aggregate = { _tag: "Mean" }
export const ratio: Aggregate = { _tag: "Ratio" }
export const f1Of = (precision: string, recall: string): Aggregate => ({ _tag: "F1", precision, recall })

export const MetricInfo = Schema.Struct({
  /** Namespaced: `retrieval.*`, `inference.*`, `generation.*`, `cost.*`. */
  name: Schema.String,
  description: Schema.String,
  /** What the metric measures: `retrieval`, `inference`, `generation`, `cost`, or a scorer's own. */
  family: Schema.String,
  direction: Schema.Literal("higher", "lower"),
  /** True when computed by a heuristic rather than the paper's LLM procedure. */
  heuristic: Schema.Boolean,
  /** Shown in the paper-layout tables and tested against the baseline. */
  headline: Schema.Boolean,
  /** Candidate for the report's main metric: the lowest rank present wins (absent: not a candidate). */
  mainRank: Schema.optionalWith(Schema.Number, { exact: true }),
  aggregate: Aggregate
})
export type MetricInfo = typeof MetricInfo.Type

/** A metric declaration with the common defaults: higher is better, not heuristic, not headline, a mean. */
export const metric = (
  m: Pick<MetricInfo, "name" | "description" | "family"> & Partial<Omit<MetricInfo, "name" | "description" | "family">>
): MetricInfo => ({
  direction: "higher",
  heuristic: false,
  headline: false,
  aggregate: mean,
  ...m
})

/** Per-instance counts of a `Ratio` metric. */
export const Count = Schema.Struct({ num: Schema.Number, den: Schema.Number })
export type Count = typeof Count.Type

/** One instance's score for one metric: a number (`Mean`) or counts (`Ratio`). */
export type Value = number | Count

export const isCount = (v: Value): v is Count => typeof v !== "number"

export interface ScoreInput {
  readonly instance: Instance
  readonly trace: Trace
}

export interface Service {
  readonly metrics: ReadonlyArray<MetricInfo>
  readonly score: (input: ScoreInput) => Effect.Effect<Readonly<Record<string, Value>>, StageError>
  /**
   * `inference`: the scorer reproduces the CUPID authors' scoring of the inference
   * (preference-match with `accounting: reference`), and the pipeline runs the pair in the order
   * of their evaluate(): the inferrer reads its answer as their code does, and this scorer runs
   * right after it, before the generator, so that a failure there (their decomposition is part of
   * their inference step) ends the pair before any response is generated or judged.
   */
  readonly reference?: "inference"
  /**
   * The same scores as a plain function, for a scorer that waits on nothing and records no item
   * ratings or repeats: see `Retriever.Service.now`. Made by {@link plain}, which derives `score`.
   */
  readonly now?: (input: ScoreInput) => Readonly<Record<string, Value>>
}

/** A scorer computed at once (see {@link Service.now}): `score` runs `now`; a thrown StageError is its failure. */
export const plain = (
  service: Omit<Service, "score" | "now" | "reference">,
  now: (input: ScoreInput) => Readonly<Record<string, Value>>
): Service => ({ ...service, now, score: (input) => attempt(() => now(input)) })

/**
 * How a scorer rated one checklist item (preference match): a gold item by how far the inferred
 * preference covers it, or an inferred item by how far the gold preference covers it (1, 0.5, 0).
 * Kept in the result line, so a reader sees which items a score is made of.
 */
export const ItemRating = Schema.Struct({
  side: Schema.Literal("gold", "inferred"),
  item: Schema.String,
  rating: Schema.Number
})
export type ItemRating = typeof ItemRating.Type

const currentRatings = FiberRef.unsafeMake<Array<ItemRating> | undefined>(undefined)

/** Record item ratings for the instance being scored (a no-op outside {@link collectRatings}, e.g. in a scorer's own tests). */
export const recordRatings = (ratings: ReadonlyArray<ItemRating>): Effect.Effect<void> =>
  Effect.map(FiberRef.get(currentRatings), (into) => void into?.push(...ratings))

/** Run `effect` (scorers of one instance) and return what it produced with the item ratings recorded meanwhile. */
export const collectRatings = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<readonly [A, ReadonlyArray<ItemRating>], E, R> =>
  Effect.suspend(() => {
    const ratings: Array<ItemRating> = []
    return Effect.map(Effect.locally(effect, currentRatings, ratings), (a) => [a, ratings] as const)
  })

/**
 * The per-repeat values behind a metric a scorer asked for more than once (the judge's `repeats`):
 * metric name -> the value of each repeat, in repeat order. The score itself is their mean; these
 * are kept in the result line, so reports can show how far repeated judgments disagree.
 */
export type Repeats = Readonly<Record<string, ReadonlyArray<number>>>

const currentRepeats = FiberRef.unsafeMake<Record<string, ReadonlyArray<number>> | undefined>(undefined)

/** Record the per-repeat values of `metric` for the instance being scored (a no-op outside {@link collectRepeats}). */
export const recordRepeats = (metric: string, values: ReadonlyArray<number>): Effect.Effect<void> =>
  Effect.map(FiberRef.get(currentRepeats), (into) => {
    if (into !== undefined) into[metric] = [...values]
  })

/** Run `effect` (scorers of one instance) and return what it produced with the repeats recorded meanwhile. */
export const collectRepeats = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<readonly [A, Repeats], E, R> =>
  Effect.suspend(() => {
    const repeats: Record<string, ReadonlyArray<number>> = {}
    return Effect.map(Effect.locally(effect, currentRepeats, repeats), (a) => [a, repeats] as const)
  })
