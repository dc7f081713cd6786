/**
 * The text-embedding contract. `embed` returns one vector per input text, in order.
 *
 * @example
 * import type { EmbeddingModel } from "@cupid-lab/core"
 * const { vectors } = yield* embedder.embed(["first text", "second text"])
 */
import type { Effect } from "effect"
import type { ModelError } from "./Errors.js"
import type { ModelInfo } from "./LanguageModel.js"

export interface Embeddings {
  readonly vectors: ReadonlyArray<Float32Array>
  readonly promptTokens: number
  /** HTTP requests this took, retries included (providers that send requests set it). */
  readonly requests?: number
  /** Milliseconds spent waiting for the model's rate limiters (providers with a limiter set it). */
  readonly limiterMs?: number
}

export interface Service {
  readonly info: ModelInfo
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<Embeddings, ModelError>
}
