/**
 * Errors of the synthesis package. A config error names the file and the key path; a run error
 * names the file it could not read or write. Failures of one persona or session are not errors:
 * they are {@link Records.Failure} values, recorded and reported, and the run goes on.
 *
 * @example
 * import { Errors } from "@cupid-lab/synthesis"
 * new Errors.SynthConfigError({ file: "configs/synth.yaml", path: "sessions.length", reason: "expected at least 8" }).message
 * // configs/synth.yaml: sessions.length: expected at least 8
 */
import { Schema } from "effect"

/** `synth.yaml` could not be read, or a key does not hold what it should. */
export class SynthConfigError extends Schema.TaggedError<SynthConfigError>()("SynthConfigError", {
  file: Schema.String,
  /** Dotted key path (`roles.user.model`); empty for whole-file problems. */
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return this.path === "" ? `${this.file}: ${this.reason}` : `${this.file}: ${this.path}: ${this.reason}`
  }
}

/** An output or raw file could not be read or written, or belongs to another configuration. */
export class SynthesisRunError extends Schema.TaggedError<SynthesisRunError>()("SynthesisRunError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.reason}`
  }
}

export type SynthesisError = SynthConfigError | SynthesisRunError
