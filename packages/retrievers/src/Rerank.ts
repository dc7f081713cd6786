/**
 * `rerank`: a second stage. A first retriever proposes candidates (its selection), a configured
 * reranker (Cohere rerank, a local cross-encoder, ... under `models:`) scores each candidate
 * against the request, and the top `k` by that score are selected. The ranking lists the
 * candidates only: they are the sessions the reranker scored.
 *
 * @example
 * // config: retriever: { use: rerank, candidates: { use: bm25, select: { top: 8 } }, model: rerank-v3, select: { top: 2 } }
 */
import { Errors, Memo, Models, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import { buildPart, PartSpec } from "./Hybrid.js"
import * as RetrieverOptions from "./RetrieverOptions.js"

export const options = Schema.Struct({
  candidates: Schema.optionalWith(PartSpec, { default: () => ({ use: "bm25", select: { top: 8 } }) }),
  /** The name of a reranker entry of the config's `models:`. */
  model: Schema.String,
  representation: RetrieverOptions.representation("dialogue")
})
export type Options = typeof options.Type

export const plugin = Plugin.retriever({
  name: "rerank",
  description: "Rerank another retriever's candidates with a configured reranker model.",
  options,
  defaultSelect: { top: 2 },
  make: (o: Options) =>
    // The parts share one memo (the sweep's when there is one).
    Memo.shared(
      Effect.gen(function* () {
        const first = yield* buildPart("rerank", o.candidates)
        const reranker = yield* (yield* Models.Models).reranker(o.model)
        return {
          needsSummaries: first.needsSummaries || o.representation === "summary",
          retrieve: (input: Retriever.RetrievalInput) =>
            Effect.gen(function* () {
              const candidates = new Set((yield* first.retrieve(input)).selected)
              if (candidates.size === 0) return { ranking: [], selected: [] }
              const docs = (yield* RetrieverOptions.sessionDocs(input, o.representation, "rerank")).filter((d) =>
                candidates.has(d.id)
              )
              const { scores } = yield* reranker
                .rerank(
                  input.query.request,
                  docs.map((d) => d.text)
                )
                .pipe(Effect.mapError(Errors.stageErrorFromModel("retrieve", "rerank")))
              if (scores.length !== docs.length) {
                return yield* new Errors.StageError({
                  stage: "retrieve",
                  plugin: "rerank",
                  reason: `reranker ${o.model} returned ${scores.length} scores for ${docs.length} candidates`
                })
              }
              return Retriever.fromScores(docs.map((d, i) => [d.id, scores[i]!] as const))
            })
        } satisfies Retriever.Service
      })
    )
})
