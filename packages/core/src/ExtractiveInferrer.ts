/**
 * Inferrer `extractive`: the offline default, no model. It reads the user's feedback in the
 * evidence sessions (every user turn but the first, which states the task, and a short positive
 * last turn, which only closes the session), keeps the sentences that carry a requirement cue
 * (instructions, "I need/want/prefer", "please", "don't", "too long", "instead", "make sure",
 * "next time", comparatives, ...) in the sessions whose opening message matches the request's
 * context, scores them by cue strength, agreement across sessions, recency and overlap with the
 * request, and joins the best few, de-duplicated, into one statement of at most `maxWords` words
 * (the first clause alone may run 10 words over before it is cut). With summaries as evidence it
 * uses their preference bullets. With no usable sentence it derives a statement from the request
 * and says so in the analysis. Deterministic; marked `heuristic`, so reports label its scores. The
 * rules in full are in docs/stages.md.
 *
 * In a config: `inferrer: { use: extractive }` (options: maxWords = 30, maxClauses = 3).
 *
 * @example
 * import { ExtractiveInferrer } from "@cupid-lab/core"
 * const inferrer = yield* ExtractiveInferrer.make({ maxWords: 30, maxClauses: 3 })
 * const { preference, analysis } = yield* inferrer.infer({ request, evidence })
 */
import { Effect, Schema } from "effect"
import type * as Inferrer from "./Inferrer.js"
import { extract } from "./internal/stages/extractive.js"
import * as Plugin from "./Plugin.js"

export const Options = Schema.Struct({
  maxWords: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(5, 100)).annotations({
      description: "Word budget of the statement (the paper asks for at most 30)."
    }),
    { default: () => 30 }
  ),
  maxClauses: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(1, 8)).annotations({
      description: "At most this many feedback sentences are joined."
    }),
    { default: () => 3 }
  )
})
export type Options = typeof Options.Type

/** The statement and an analysis naming the sessions and scores it came from; pure and deterministic. */
export const infer = (input: Inferrer.InferenceInput, options: Options): Inferrer.InferredPreference =>
  extract(input.request, input.evidence, options)

export const make = (options: Options): Effect.Effect<Inferrer.Service> =>
  Effect.succeed({
    infer: (input) => Effect.sync(() => infer(input, options)).pipe(Effect.withSpan("ExtractiveInferrer.infer"))
  })

export const plugin = Plugin.inferrer({
  name: "extractive",
  description:
    "Offline, no model: composes the preference from the user's requirement sentences in the evidence (heuristic).",
  heuristic: true,
  options: Options,
  make
})
