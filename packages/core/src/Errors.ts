/**
 * Errors of the core package. Every failure is data with a message a user can act on: it names the
 * file, row and field, or the stage, plugin and model, and what was expected.
 */
import { Effect, Schema } from "effect"

/** A dataset could not be read or a row violates the released schema. */
export class DatasetError extends Schema.TaggedError<DatasetError>()("DatasetError", {
  source: Schema.String,
  /** 1-based row number (or file name for directory sources) when the error is about one row. */
  row: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  field: Schema.optional(Schema.String),
  reason: Schema.String
}) {
  override get message(): string {
    const where = [this.source, this.row !== undefined ? `row ${this.row}` : undefined, this.field]
      .filter((x) => x !== undefined)
      .join(", ")
    return `${where}: ${this.reason}`
  }
}

/** A plugin was named that does not exist, or its options do not decode, or it could not be built. */
export class PluginError extends Schema.TaggedError<PluginError>()("PluginError", {
  plugin: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `plugin "${this.plugin}": ${this.reason}`
  }
}

/**
 * A plugin asked for a model by a name that no `models:` entry of the config gives, or for a
 * capability (chat completion, embeddings, reranking) that entry's provider does not offer.
 * Raised by `Models`; the runner matches it by tag to point at the option that names the model.
 */
export class ModelNotConfigured extends Schema.TaggedError<ModelNotConfigured>()("ModelNotConfigured", {
  /** The name the plugin asked for. */
  model: Schema.String,
  /** What it asked the model for: `chat completion`, `embeddings` or `reranking`. */
  capability: Schema.String,
  /** Every configured model name, sorted. */
  configured: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return this.configured.includes(this.model)
      ? `model "${this.model}": its provider offers no ${this.capability}`
      : `model "${this.model}": no model of that name is configured (configured: ${this.configured.length === 0 ? "none" : this.configured.join(", ")})`
  }
}

/** A model call failed (after retries, where retries apply). Never carries secrets. */
export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  provider: Schema.String,
  model: Schema.String,
  reason: Schema.String,
  /** HTTP status, when the failure came from an HTTP response. */
  status: Schema.optional(Schema.Number),
  retryable: Schema.Boolean,
  /** Server-advised wait before retrying, in milliseconds. */
  retryAfterMs: Schema.optional(Schema.Number),
  /** HTTP requests sent for this call before it failed, retries included. */
  requests: Schema.optional(Schema.Number),
  /** Milliseconds the call waited for its model's rate limiters, over its attempts (absent without one). */
  limiterMs: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    return `${this.provider}/${this.model}: ${this.reason}${this.status !== undefined ? ` (HTTP ${this.status})` : ""}`
  }
}

/** A pipeline stage failed for one instance: recorded in the trace and counted, never dropped. */
export class StageError extends Schema.TaggedError<StageError>()("StageError", {
  stage: Schema.String,
  plugin: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.stage} (${this.plugin}): ${this.reason}`
  }
}

/**
 * A stage's plain function (a retriever's or scorer's `now`) as the effect the stage's contract
 * asks for: a thrown StageError is its failure, anything else thrown a defect, as in an effect.
 */
export const attempt = <A>(now: () => A): Effect.Effect<A, StageError> =>
  Effect.suspend(() => {
    try {
      return Effect.succeed(now())
    } catch (e) {
      return e instanceof StageError ? Effect.fail(e) : Effect.die(e)
    }
  })

/** Lift a model failure into the stage that made the call. */
export const stageErrorFromModel =
  (stage: string, plugin: string) =>
  (e: ModelError): StageError =>
    new StageError({ stage, plugin, reason: e.message })
