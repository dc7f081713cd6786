/**
 * `embedding`: dense ranking of the prior sessions by cosine similarity to the current request.
 *
 * The embedder defaults to the offline TF-IDF + SVD model fitted on the dataset's own text
 * (`{ use: tfidf-svd, dims: 128 }`); `{ use: model, model: <name> }` uses a configured embedding
 * model instead. Vectors live in memory (exact search) unless `store` names a Qdrant server.
 * With `granularity: turn` every turn is embedded and each session ranks at its best turn; with
 * `expand` each session's key phrases, summary or facts are joined to its text (Expansion).
 *
 * @example
 * // config: retriever: { use: embedding, k: 2, representation: user-turns, embedder: { use: model, model: minilm } }
 * import { Embedding } from "@cupid-lab/retrievers"
 * const service = yield* Embedding.plugin.make({ k: 2, representation: "dialogue", embedder: Embedder.defaultSpec, store: "memory" })
 */
import { Errors, Memo, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as Embedder from "./Embedder.js"
import * as Expansion from "./Expansion.js"
import * as RetrieverOptions from "./RetrieverOptions.js"
import * as VectorStore from "./VectorStore.js"

export const options = Schema.Struct({
  representation: RetrieverOptions.representation("dialogue"),
  embedder: Embedder.option,
  store: VectorStore.option,
  granularity: RetrieverOptions.granularity,
  ...Expansion.fields
})
export type Options = typeof options.Type

export const plugin = Plugin.retriever({
  name: "embedding",
  description:
    "Cosine similarity of session and request embeddings (default: TF-IDF + SVD fitted on the dataset, offline).",
  options,
  defaultSelect: { top: 2 },
  make: (o: Options) =>
    // One memo for the build and its embedder (the sweep's when there is one).
    Memo.shared(
      Effect.gen(function* () {
        yield* RetrieverOptions.checkGranularity("embedding", o.representation, o.granularity)
        const expander = yield* Expansion.make("embedding", o)
        const keys = RetrieverOptions.keys(yield* Memo.current)
        const embedder = yield* Embedder.make(o.embedder)
        const store = yield* VectorStore.make(o.store, embedder.dimensions, "embedding")
        return {
          needsSummaries: o.representation === "summary" || expander?.needsSummaries === true,
          retrieve: (input: Retriever.RetrievalInput) =>
            Effect.gen(function* () {
              const turns =
                o.granularity === "turn" && o.representation !== "summary"
                  ? RetrieverOptions.turnDocs(input, o.representation)
                  : undefined
              const sessionDocs = turns ?? (yield* RetrieverOptions.sessionDocs(input, o.representation, "embedding"))
              const docs =
                expander === undefined ? sessionDocs : Expansion.join(sessionDocs, yield* expander.texts(input), o.join)
              const request = { key: keys.request(input.query), text: input.query.request }
              const vectors = yield* embedder
                .embed([request, ...docs])
                .pipe(Effect.mapError(Errors.stageErrorFromModel("retrieve", "embedding")))
              if (turns === undefined) {
                // With join: separate a session has two documents: they are told apart by their place.
                const ids =
                  docs.length === sessionDocs.length ? docs.map((d) => d.id) : docs.map((d, i) => `${d.id}@${i}`)
                const items = docs.map((_, i) => ({ id: ids[i]!, vector: vectors[i + 1]! }))
                // The expansions may differ per cell (summaries, facts): a joined history is hashed per call.
                const historyKey =
                  expander === undefined
                    ? keys.history(input, o.representation, docs)
                    : RetrieverOptions.historyKey(docs)
                const scores = new Map(yield* store.rank(historyKey, items, vectors[0]!))
                return Retriever.fromScores(
                  Expansion.bestPerSession(
                    docs,
                    ids.map((id) => scores.get(id)!)
                  )
                )
              }
              const turnOf = new Map<string, RetrieverOptions.TurnDoc>(turns.map((t) => [`${t.id}#${t.turn}`, t]))
              const items = turns.map((t, i) => ({ id: `${t.id}#${t.turn}`, vector: vectors[i + 1]! }))
              const scores = yield* store.rank(keys.turns(input, o.representation, turns), items, vectors[0]!)
              return Retriever.fromTurnScores(
                scores.map(([id, score]) => [turnOf.get(id)!.id, turnOf.get(id)!.turn, score] as const)
              )
            })
        } satisfies Retriever.Service
      })
    )
})
