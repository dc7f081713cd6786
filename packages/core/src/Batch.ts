/**
 * Provider batch jobs behind the completion contract. A provider that can send its calls as a
 * batch job (a JSONL file of requests answered within a window, at a discount) offers an
 * {@link Endpoint}; the sweep offers a {@link Queue} in its `ProviderContext`, and a batched
 * model's `complete` hands each request to the queue and waits for its answer. Stages do not
 * change: they ask for a completion and wait for it.
 *
 * Every request line's custom id is the call's cache key, so an answer is placed by its key,
 * never by its position in a file.
 *
 * @example
 * // inside a provider's make, when its entry says `batch: true` and the context has a queue
 * const answer = yield* context.batch.call(endpoint, { key, body, promptTokens: 120, completionTokens: 256 })
 */
import type { Effect } from "effect"
import type { ModelError } from "./Errors.js"

/** One call to send in a batch: its cache key (the custom id), the provider's request body and its token estimate. */
export interface Request {
  readonly key: string
  readonly body: Readonly<Record<string, unknown>>
  /** Estimated prompt tokens, for the budget's check of a wave before it is submitted. */
  readonly promptTokens: number
  /** The most completion tokens the call can take (its token limit; 0 when unknown). */
  readonly completionTokens: number
}

/** A batch's state as its provider reports it. */
export interface Status {
  readonly id: string
  /** The provider's word for it (`validating`, `in_progress`, `completed`, `expired`, ...). */
  readonly state: string
  /** No more progress will come: its results can be read. */
  readonly terminal: boolean
  readonly total: number
  readonly completed: number
  readonly failed: number
  /** Unix seconds the provider says it started and will expire (absent when it does not say). */
  readonly createdAt?: number
  readonly expiresAt?: number
  /** Why the whole batch failed (a file that did not validate), when it did. */
  readonly error?: string
}

/** One line's outcome: the provider's answer body, or its error for that line. */
export type Outcome =
  | { readonly ok: true; readonly body: unknown }
  | { readonly ok: false; readonly error: string; readonly status?: number }

/** A provider's batch endpoint for one configured model. */
export interface Endpoint {
  readonly provider: string
  readonly model: string
  /** Where its batches live, without credentials (a base URL): recorded batches are found again by it. */
  readonly at: string
  /** The provider's limits on one input file. */
  readonly maxLines: number
  readonly maxBytes: number
  /** Milliseconds between the first polls of a pending batch; the wait grows to `pollMaxMs`. */
  readonly pollMs: number
  readonly pollMaxMs: number
  /** The price of a batched call as a fraction of the synchronous price (0.5: half). */
  readonly rate: number
  /** The JSONL line (without its newline) that asks for `request`. */
  readonly line: (request: Request) => string
  /** Upload a file of lines; its id. */
  readonly upload: (jsonl: string) => Effect.Effect<string, ModelError>
  /** Start a batch on an uploaded file; the batch's id. */
  readonly create: (fileId: string) => Effect.Effect<string, ModelError>
  /** The batch started on a file, if any (after a crash between upload and record). */
  readonly findByFile: (fileId: string) => Effect.Effect<string | undefined, ModelError>
  readonly status: (batchId: string) => Effect.Effect<Status, ModelError>
  /** Every line's outcome of a terminal batch, by custom id; a line with neither answer nor error is absent. */
  readonly results: (batchId: string) => Effect.Effect<ReadonlyMap<string, Outcome>, ModelError>
  readonly cancel: (batchId: string) => Effect.Effect<void, ModelError>
}

/** What a batched call gives back: the provider's answer body and the batch that carried it. */
export interface Answer {
  readonly body: unknown
  readonly batch: string
}

/** The sweep's side: collects calls into waves, submits, records and polls them. */
export interface Queue {
  readonly call: (endpoint: Endpoint, request: Request) => Effect.Effect<Answer, ModelError>
}

/** Options every provider with batch jobs accepts under a model entry's `batch:`. */
export interface Settings {
  readonly rate: number
  readonly pollMs: number
  readonly pollMaxMs: number
  readonly maxLines: number
  readonly maxBytes: number
}
