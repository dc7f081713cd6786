/**
 * The reranking contract: a relevance score for every document against one query, in input order.
 *
 * @example
 * import type { Reranker } from "@cupid-lab/core"
 * const { scores } = yield* reranker.rerank("query", ["doc a", "doc b"])
 */
import type { Effect } from "effect"
import type { ModelError } from "./Errors.js"
import type { ModelInfo } from "./LanguageModel.js"

export interface Rerank {
  readonly scores: ReadonlyArray<number>
  readonly promptTokens: number
  /** HTTP requests this took, retries included (providers that send requests set it). */
  readonly requests?: number
  /** Milliseconds spent waiting for the model's rate limiters (providers with a limiter set it). */
  readonly limiterMs?: number
}

export interface Service {
  readonly info: ModelInfo
  readonly rerank: (query: string, documents: ReadonlyArray<string>) => Effect.Effect<Rerank, ModelError>
}
