/**
 * The scoring stage: metrics for one instance from its trace and gold. Scorers never mutate their
 * inputs and always return the metrics they declare (a metric that does not apply, e.g. precision
 * of an empty selection, is `NaN` and is reported with its own N).
 *
 * @example
 * import { Scorer } from "@cupid-lab/core"
 * const scores = yield* scorer.score({ instance, trace }) // { "retrieval.precision": 1, ... }
 */
import { Context, type Effect } from "effect"
import type { Instance } from "./Domain.js"
import type { StageError } from "./Errors.js"
import type { Trace } from "./Trace.js"

export interface MetricInfo {
  /** Namespaced: `retrieval.*`, `inference.*`, `generation.*`, `cost.*`. */
  readonly name: string
  readonly description: string
  readonly higherIsBetter: boolean
  /** True when computed by a heuristic rather than the paper's LLM procedure. */
  readonly heuristic: boolean
  /**
   * `mean` (default): the slice value is the mean of per-instance values. `pooled`: the scorer
   * also emits `<name>:num` and `<name>:den` per instance and the slice value is sum(num)/sum(den)
   * (micro average, as the reference harness pools counts). `{ f1Of: [p, r] }`: the harmonic mean
   * of two pooled metrics of the same scorer (micro F1).
   */
  readonly aggregate?: "mean" | "pooled" | { readonly f1Of: readonly [string, string] }
}

export interface ScoreInput {
  readonly instance: Instance
  readonly trace: Trace
}

export interface Service {
  readonly metrics: ReadonlyArray<MetricInfo>
  readonly score: (input: ScoreInput) => Effect.Effect<Readonly<Record<string, number>>, StageError>
}

export class Scorer extends Context.Tag("@cupid-lab/core/Scorer")<Scorer, Service>() {}
