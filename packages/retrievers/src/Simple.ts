/**
 * The retrievers that need no text: `all` (the paper's full-history setting) and `recency` (the k
 * most recent sessions). Both rank by recency, newest first.
 *
 * @example
 * // config: retriever: { use: recency, k: 4 }
 * import { Simple } from "@cupid-lab/retrievers"
 * const service = yield* Simple.recency.make({ k: 4 })
 */
import { Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"

const byRecency = (input: Retriever.RetrievalInput, k?: number): Retriever.Retrieval =>
  Retriever.fromScores(
    input.query.sessions.map((s) => [s.id, s.index + 1] as const),
    k
  )

export const all = Plugin.retriever({
  name: "all",
  description: "Every prior session (the full-history setting).",
  options: Schema.Struct({}),
  make: () => Effect.succeed(Retriever.plain({ needsSummaries: false }, (input) => byRecency(input)))
})

export const recencyOptions = Schema.Struct({})

export const recency = Plugin.retriever({
  name: "recency",
  description: "Ranks sessions newest first (with the default cut: the 2 most recent).",
  options: recencyOptions,
  defaultSelect: { top: 2 },
  make: () => Effect.succeed(Retriever.plain({ needsSummaries: false }, (input) => byRecency(input)))
})
