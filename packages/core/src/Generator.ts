/**
 * The generation stage: answer the current request. The preference passed in is the inferred one,
 * or the gold one when the generator was configured for the oracle-preference setting
 * (`usesGoldPreference`), or absent.
 *
 * @example
 * import { Generator } from "@cupid-lab/core"
 * const { text } = yield* generator.generate({ request, evidence, preference })
 */
import type { Effect } from "effect"
import type { Evidence } from "./Evidence.js"
import type { StageError } from "./Errors.js"

export interface GeneratedResponse {
  readonly text: string
}

export interface GenerationInput {
  readonly request: string
  readonly evidence: Evidence
  readonly preference?: string
  /** When the request is made (`Query.date`, `YYYY-MM-DDTHH:MM`), when the benchmark dates it (LongMemEval). */
  readonly date?: string
}

export interface Service {
  /** True for the oracle-preference setting: the pipeline passes the gold preference. */
  readonly usesGoldPreference: boolean
  readonly generate: (input: GenerationInput) => Effect.Effect<GeneratedResponse, StageError>
}
