/**
 * The inference stage: state the user's preference for the current request from the evidence.
 *
 * @example
 * import { Inferrer } from "@cupid-lab/core"
 * const { preference } = yield* inferrer.infer({ request, evidence })
 */
import type { Effect } from "effect"
import type { Evidence } from "./Evidence.js"
import type { StageError } from "./Errors.js"

export interface InferredPreference {
  /** One sentence. */
  readonly preference: string
  /** The short analysis that preceded it (may be empty for non-model inferrers). */
  readonly analysis: string
}

export interface InferenceInput {
  readonly request: string
  readonly evidence: Evidence
  /**
   * `reference`: read a model's answer only as the CUPID authors' code reads it. The pipeline sets
   * it when a scorer reproduces their scoring of the inference (`Scorer.Service.reference`);
   * absent, the inferrer reads answers its own way.
   */
  readonly reading?: "reference"
}

export interface Service {
  readonly infer: (input: InferenceInput) => Effect.Effect<InferredPreference, StageError>
}
