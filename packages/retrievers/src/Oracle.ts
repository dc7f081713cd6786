/**
 * `oracle`: the prior sessions that share the current preference (same factor and same
 * preference as the request's), read from the gold labels. It is the only retriever that reads
 * gold, and it declares so (`needsGold: true`): reports mark its cells, and the pipeline hands the
 * labels to no other retriever.
 *
 * Ranking: relevant sessions first, then stale ones (same factor, older preference), then the rest,
 * each group newest first; the relevant ones are selected.
 *
 * @example
 * // config: retriever: { use: oracle }
 */
import { Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"

const weight = { relevant: 2, stale: 1, other: 0 } as const

export const plugin = Plugin.goldRetriever({
  name: "oracle",
  description: "The sessions that share the current preference, from gold labels (reads gold).",
  options: Schema.Struct({}),
  make: () =>
    Effect.succeed(
      Retriever.plainGold({ needsSummaries: false }, (input, gold) => {
        const labels = new Map(gold.sessions.map((s) => [s.id, s.label]))
        const ranking = Retriever.fromScores(
          input.query.sessions.map((s) => [s.id, weight[labels.get(s.id) ?? "other"]] as const)
        ).ranking
        const selected = input.query.sessions.filter((s) => labels.get(s.id) === "relevant").map((s) => s.id)
        return { ranking, selected }
      })
    )
})
