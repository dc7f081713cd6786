/**
 * Errors of the runner. A config error names the file, the key path and the problem.
 *
 * @example
 * new Errors.ConfigError({ file: "configs/a.yaml", path: "pipeline.retriever.k", reason: "Expected number, actual \"two\"" }).message
 * // configs/a.yaml: pipeline.retriever.k: Expected number, actual "two"
 */
import { Schema } from "effect"

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  file: Schema.String,
  path: Schema.String,
  reason: Schema.String,
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number),
  /** Further problems of the same pass, one line each in the message. */
  more: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, reason: Schema.String })))
}) {
  override get message(): string {
    if (this.line !== undefined) return `${this.file}:${this.line}:${this.column ?? 1}: ${this.reason}`
    const line = (path: string, reason: string) =>
      path === "" ? `${this.file}: ${reason}` : `${this.file}: ${path}: ${reason}`
    return [line(this.path, this.reason), ...(this.more ?? []).map((p) => line(p.path, p.reason))].join("\n")
  }

  /** Every problem at once: the first is `path` and `reason`, the rest `more`. */
  static all(file: string, problems: ReadonlyArray<{ readonly path: string; readonly reason: string }>): ConfigError {
    const [first, ...rest] = problems
    return new ConfigError({
      file,
      path: first?.path ?? "",
      reason: first?.reason ?? "invalid config",
      ...(rest.length > 0 ? { more: rest } : {})
    })
  }
}

export class TooManyFailures extends Schema.TaggedError<TooManyFailures>()("TooManyFailures", {
  message: Schema.String
}) {}

export class BudgetError extends Schema.TaggedError<BudgetError>()("BudgetError", { message: Schema.String }) {}
