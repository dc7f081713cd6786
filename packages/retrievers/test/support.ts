// Scripted models for tests: deterministic answers and a count of what reached them.
import {
  Corpus,
  type Domain,
  type EmbeddingModel,
  type LanguageModel,
  ModelCache,
  Models,
  Plugin,
  type Reranker
} from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Builtins from "../src/Builtins.js"

/** Everything a plugin's make may ask for: models (none unless given), cache, corpus, registry, the Node platform. */
export const env = (
  options: {
    readonly models?: Readonly<Record<string, Models.ModelBundle>>
    readonly queries?: ReadonlyArray<Domain.Query>
    readonly dryRun?: boolean
  } = {}
) =>
  Layer.mergeAll(
    Models.layer(options.models ?? {}, { dryRun: options.dryRun ?? false }),
    Corpus.layerFromQueries(options.queries ?? [], `test-${(options.queries ?? []).map((q) => q.key).join(",")}`),
    Layer.succeed(Plugin.Plugins, Plugin.makeRegistry(Builtins.plugins)),
    NodeContext.layer
  ).pipe(Layer.provideMerge(ModelCache.layerMemory))

/** Topic words the scripted embedder knows: each is one dimension; a text gets 1 where it mentions the word. */
export const topics = ["garden", "invoice", "travel", "recipe"] as const

export const vectorOf = (text: string): Float32Array => {
  const lower = text.toLowerCase()
  return Float32Array.from([...topics.map((t) => (lower.includes(t) ? 1 : 0)), 0.01])
}

export const countingEmbedder = (name = "topics") => {
  const texts: Array<string> = []
  let calls = 0
  const service: EmbeddingModel.Service = {
    info: { provider: "scripted", model: name, params: {} },
    embed: (batch) =>
      Effect.sync(() => {
        calls++
        texts.push(...batch)
        return { vectors: batch.map(vectorOf), promptTokens: batch.length }
      })
  }
  return { service, texts, calls: () => calls }
}

/** Scores a document by how many of the query's words it contains. */
export const wordOverlapReranker = (): { service: Reranker.Service; calls: () => number } => {
  let calls = 0
  return {
    calls: () => calls,
    service: {
      info: { provider: "scripted", model: "overlap", params: {} },
      rerank: (query, documents) =>
        Effect.sync(() => {
          calls++
          const words = new Set(query.toLowerCase().match(/[a-z]+/g) ?? [])
          return {
            scores: documents.map(
              (d) => new Set((d.toLowerCase().match(/[a-z]+/g) ?? []).filter((w) => words.has(w))).size
            ),
            promptTokens: documents.length
          }
        })
    }
  }
}

/** A chat model answering with `answer(prompt)`; records every request. */
export const scriptedChat = (answer: (request: LanguageModel.CompletionRequest) => string) => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const service: LanguageModel.Service = {
    info: { provider: "scripted", model: "chat", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        const text = answer(request)
        return { text, promptTokens: 1, completionTokens: 1 }
      })
  }
  return { service, requests }
}
