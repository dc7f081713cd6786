/**
 * Errors of the reports: two runs that cannot be compared like for like.
 *
 * @example
 * new Errors.MismatchError({ first: "runs/a", second: "runs/b", differences: ["judge model (judge.model): first openai/x, second openai/y"] }).message
 */
import { Schema } from "effect"

/** `compare` of two runs that differ in what makes their numbers comparable (LikeForLike), without `--allow-mismatch`. */
export class MismatchError extends Schema.TaggedError<MismatchError>()("MismatchError", {
  first: Schema.String,
  second: Schema.String,
  /** One line per difference (LikeForLike.lines). */
  differences: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return (
      `${this.first} and ${this.second} differ in what makes their numbers comparable, so they are not compared:\n` +
      this.differences.map((d) => `  ${d}\n`).join("") +
      `Pass --allow-mismatch to compare them anyway: compare.md then lists these differences above every number.`
    )
  }
}
