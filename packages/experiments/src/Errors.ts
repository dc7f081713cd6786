/**
 * Errors of the experiments package. A config error names the config file, the key path inside it
 * and, where there is a closed set, the valid choices, so it can be fixed without reading code.
 *
 * @example
 * import { Errors } from "@cupid-lab/experiments"
 * new Errors.ConfigError({ file: "configs/a.yaml", path: "pipeline.retriever.k", reason: "Expected number, actual \"two\"" }).message
 * // configs/a.yaml: pipeline.retriever.k: Expected number, actual "two"
 */
import { Schema } from "effect"

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  file: Schema.String,
  /** Dotted key path (`sweep.retriever[2].use`); empty for whole-file problems. */
  path: Schema.String,
  reason: Schema.String,
  /** 1-based position, for YAML syntax errors. */
  line: Schema.optional(Schema.Number),
  column: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    if (this.line !== undefined) return `${this.file}:${this.line}:${this.column ?? 1}: ${this.reason}`
    return this.path === "" ? `${this.file}: ${this.reason}` : `${this.file}: ${this.path}: ${this.reason}`
  }
}

/** The run directory could not be read or written, or holds something the runner cannot use. */
export class RunError extends Schema.TaggedError<RunError>()("RunError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.reason}`
  }
}
