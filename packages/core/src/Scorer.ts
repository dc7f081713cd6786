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
import { Context, type Effect, Schema } from "effect"
import type { Instance } from "./Domain.js"
import type { StageError } from "./Errors.js"
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
}

export class Scorer extends Context.Tag("@cupid-lab/core/Scorer")<Scorer, Service>() {}
