/**
 * The chat-completion contract. Providers (OpenAI and compatible servers, Cohere, local models)
 * implement it; stages and scorers depend only on it.
 *
 * @example
 * import { LanguageModel } from "@cupid-lab/core"
 * const out = yield* lm.complete({ messages: [{ role: "user", content: "Hi" }], temperature: 0 })
 * out.text
 */
import type { Effect } from "effect"
import type { ModelError } from "./Errors.js"

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export interface CompletionRequest {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  readonly seed?: number
  readonly stop?: ReadonlyArray<string>
  /** `json` asks the provider for a JSON object (structured output) where it supports it. */
  readonly responseFormat?: "text" | "json"
  /**
   * A well-formed example answer in the format the caller parses. Used only by dry runs (which
   * return it instead of calling the model, so the rest of the pipeline runs on); never part of the
   * cache key and never sent to a provider.
   */
  readonly dryRunAnswer?: string
  /**
   * Whether the caller can use an answer (e.g. it parses). An answer it rejects is returned but
   * never cached, so that a rerun asks the model again instead of repeating a recorded failure.
   * Not part of the cache key; never sent to a provider.
   */
  readonly accept?: (text: string) => boolean
}

export interface Completion {
  readonly text: string
  readonly promptTokens: number
  readonly completionTokens: number
}

export interface ModelInfo {
  readonly provider: string
  readonly model: string
  /** Generation parameters fixed by configuration; part of every cache key. */
  readonly params: Readonly<Record<string, unknown>>
}

export interface Service {
  readonly info: ModelInfo
  readonly complete: (request: CompletionRequest) => Effect.Effect<Completion, ModelError>
}
