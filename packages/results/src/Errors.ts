/**
 * Errors of reading and writing a run directory: the file and what is wrong with it.
 *
 * @example
 * new Errors.RunError({ path: "runs/x/results.jsonl", reason: "line 3: not JSON" }).message
 * // runs/x/results.jsonl: line 3: not JSON
 */
import { Schema } from "effect"

export class RunError extends Schema.TaggedError<RunError>()("RunError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.reason}`
  }
}

/** A coding sheet (`cupid-lab errors`) that cannot be drawn, written or read: the file and what is wrong. */
export class SheetError extends Schema.TaggedError<SheetError>()("SheetError", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.path}: ${this.reason}`
  }
}
