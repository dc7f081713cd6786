/**
 * The `transformers` provider: local sentence embeddings (`task: embeddings`; token vectors pooled
 * and normalized) or cross-encoder relevance scores (`task: rerank`; the classifier logit of each
 * (query, document) pair) from an ONNX model folder, run on the CPU by @huggingface/transformers.
 * Nothing is ever downloaded: remote loading is switched off and the folder is read directly.
 *
 * The folder has the Hugging Face layout (`config.json`, `tokenizer.json`,
 * `tokenizer_config.json`, `onnx/model.onnx` or a quantized variant chosen by `dtype`). It is
 * `path` when given, else `<modelDir>/<model>` with `modelDir` defaulting to
 * `TRANSFORMERS_MODEL_DIR`, then `./models`. The runtime and weights load on the first call, so
 * building the provider (and dry runs) stays fast.
 *
 * The runtime is an optional install (with onnxruntime, about 470 MB), so a plain `npm install`
 * stays small: `npm install --no-save @huggingface/transformers@4.3.1`. Without it, building the
 * provider fails with that command in the message, before any work.
 *
 * @example
 * # config: models/Xenova/all-MiniLM-L6-v2 holds the exported files
 * models:
 *   minilm: { provider: transformers, model: Xenova/all-MiniLM-L6-v2 }
 *   msmarco: { provider: transformers, model: Xenova/ms-marco-MiniLM-L-6-v2, task: rerank }
 */
import { type LanguageModel, type Models, Errors, Plugin } from "@cupid-lab/core"

import { Effect, Schema, type Scope } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import * as Pooling from "./internal/Pooling.js"
import * as Secret from "./internal/Secret.js"
import * as Text from "./internal/Text.js"

/** The optional runtime package, the version the provider is tested with, and how to add it. */
export const runtimePackage = "@huggingface/transformers"
export const runtimeVersion = "4.3.1"
export const installHint = `npm install --no-save ${runtimePackage}@${runtimeVersion}`

const PositiveInt = Schema.Int.pipe(Schema.positive())

const dtypeSuffix = {
  fp32: "",
  fp16: "_fp16",
  int8: "_int8",
  uint8: "_uint8",
  q8: "_quantized",
  q4: "_q4",
  q4f16: "_q4f16",
  bnb4: "_bnb4"
} as const

export const Options = Schema.Struct({
  /** The model folder; overrides `modelDir`. */
  path: Schema.optional(Schema.String),
  /** Folder holding model folders named like the model (e.g. `Xenova/all-MiniLM-L6-v2`). */
  modelDir: Schema.optional(Schema.String),
  task: Schema.optionalWith(Schema.Literal("embeddings", "rerank"), { default: () => "embeddings" as const }),
  pooling: Schema.optionalWith(Schema.Literal("mean", "cls"), { default: () => "mean" as const }),
  normalize: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** Which ONNX file: `fp32` reads `onnx/model.onnx`, `q8` `onnx/model_quantized.onnx`, ... */
  dtype: Schema.optionalWith(Schema.Literal(...(Object.keys(dtypeSuffix) as Array<keyof typeof dtypeSuffix>)), {
    default: () => "fp32" as const
  }),
  /** Truncate inputs to this many tokens (default: the tokenizer's `model_max_length`). */
  maxLength: Schema.optional(PositiveInt),
  /** Texts (or pairs) per forward pass. */
  batchSize: Schema.optionalWith(PositiveInt, { default: () => 16 }),
  /** ONNX runtime threads per forward pass (default: the runtime's choice, all cores). */
  threads: Schema.optional(PositiveInt),
  /** Forward passes at once. */
  concurrency: Schema.optionalWith(PositiveInt, { default: () => 1 }),
  /** Free text added to the cache key: change it when the folder's weights change. */
  revision: Schema.optional(Schema.String)
})
export type Options = Schema.Schema.Type<typeof Options>

/** The parameters fixed by configuration: exactly those that can change an answer. */
export const params = (options: Options): Record<string, unknown> => ({
  task: options.task,
  dtype: options.dtype,
  ...(options.task === "embeddings" ? { pooling: options.pooling, normalize: options.normalize } : {}),
  ...(options.maxLength !== undefined ? { maxLength: options.maxLength } : {}),
  ...(options.revision !== undefined ? { revision: options.revision } : {})
})

interface Tensor {
  readonly dims: ReadonlyArray<number>
  readonly data: ArrayLike<number | bigint>
}
type Encoded = Record<string, Tensor> & { readonly attention_mask: Tensor }
/**
 * The parts of the runtime this provider uses. The package is optional, so its own types may be
 * absent: the import is typed by this, and the tests against a real ONNX model check it.
 */
interface Model {
  (inputs: Encoded): Promise<Record<string, Tensor>>
  readonly dispose: () => Promise<unknown>
}
interface Pretrained<A> {
  readonly from_pretrained: (folder: string, options: Record<string, unknown>) => Promise<A>
}
interface Runtime {
  readonly env: { allowRemoteModels: boolean }
  readonly AutoTokenizer: Pretrained<(texts: Array<string>, options: Record<string, unknown>) => Encoded>
  readonly AutoModel: Pretrained<Model>
  readonly AutoModelForSequenceClassification: Pretrained<Model>
}
interface Loaded {
  readonly tokenize: (texts: Array<string>, pairs: Array<string> | undefined) => Encoded
  readonly forward: (inputs: Encoded) => Promise<Record<string, Tensor>>
  readonly dispose: () => Promise<unknown>
}

/**
 * The runtime must be importable from `from` (this module's location unless given); a plugin error
 * with the install command otherwise.
 */
export const requireRuntime = (from: string = import.meta.url): Effect.Effect<void, Errors.PluginError> =>
  Effect.try({
    try: () => void createRequire(from).resolve(runtimePackage),
    catch: () =>
      new Errors.PluginError({
        plugin: "transformers",
        reason:
          `the transformers provider needs the optional package ${runtimePackage} (with onnxruntime, about 470 MB), ` +
          `which is not installed; add it with: ${installHint}`
      })
  })

/** Where the model's files must be; a clear error naming the missing file otherwise. */
const locate = (options: Options, model: string): Effect.Effect<string, Errors.PluginError> =>
  Effect.gen(function* () {
    const base = yield* Secret.setting(options.modelDir, "TRANSFORMERS_MODEL_DIR")
    const folder = path.resolve(options.path ?? path.join(base ?? "models", model))
    const onnx = path.join("onnx", `model${dtypeSuffix[options.dtype]}.onnx`)
    for (const file of ["config.json", "tokenizer.json", onnx]) {
      if (!(yield* Effect.sync(() => fs.existsSync(path.join(folder, file))))) {
        return yield* new Errors.PluginError({
          plugin: "transformers",
          reason:
            `model "${model}": ${path.join(folder, file)} does not exist; the folder must hold a Hugging Face ` +
            `ONNX export (config.json, tokenizer.json, ${onnx}); see docs/providers.md for how to obtain one`
        })
      }
    }
    return folder
  })

const load = (folder: string, options: Options): Promise<Loaded> =>
  import(runtimePackage).then(async (tf: Runtime) => {
    tf.env.allowRemoteModels = false
    const pretrained = {
      local_files_only: true,
      dtype: options.dtype,
      device: "cpu" as const,
      ...(options.threads !== undefined ? { session_options: { intraOpNumThreads: options.threads } } : {})
    }
    // An absolute folder is read as is: no hub lookup and no dependence on the global env.localModelPath.
    const tokenizer = await tf.AutoTokenizer.from_pretrained(folder, { local_files_only: true })
    const model =
      options.task === "rerank"
        ? await tf.AutoModelForSequenceClassification.from_pretrained(folder, pretrained)
        : await tf.AutoModel.from_pretrained(folder, pretrained)
    // Tokenizers and models of transformers.js are callable objects (their class extends Callable).
    return {
      tokenize: (texts, pairs) =>
        tokenizer(texts, {
          padding: true,
          truncation: true,
          ...(pairs !== undefined ? { text_pair: pairs } : {}),
          ...(options.maxLength !== undefined ? { max_length: options.maxLength } : {})
        }),
      forward: (inputs) => model(inputs),
      dispose: () => model.dispose()
    }
  })

const tokenCount = (mask: Tensor) => {
  let n = 0
  for (let i = 0; i < mask.data.length; i++) n += Number(mask.data[i])
  return n
}

/** Build the embedding model or reranker of one configured model folder. */
export const make = (
  options: Options,
  model: string
): Effect.Effect<Models.ModelBundle, Errors.PluginError, Scope.Scope> =>
  Effect.gen(function* () {
    yield* requireRuntime()
    const folder = yield* locate(options, model)
    const info: LanguageModel.ModelInfo = { provider: "transformers", model, params: params(options) }
    const failure = (what: string) => (e: unknown) =>
      new Errors.ModelError({
        provider: "transformers",
        model,
        reason: `${what}: ${e instanceof Error ? e.message : String(e)}`,
        retryable: false
      })
    let loaded: Loaded | undefined
    const ready = yield* Effect.cached(
      Effect.tryPromise({ try: () => load(folder, options), catch: failure(`cannot load ${folder}`) }).pipe(
        Effect.tap((l) => {
          loaded = l
        })
      )
    )
    yield* Effect.addFinalizer(() =>
      loaded === undefined ? Effect.void : Effect.promise(() => loaded!.dispose()).pipe(Effect.ignore)
    )
    const permits = yield* Effect.makeSemaphore(options.concurrency)
    const run = (texts: Array<string>, pairs: Array<string> | undefined) =>
      Effect.flatMap(ready, (m) =>
        permits.withPermits(1)(
          Effect.tryPromise({
            try: async () => {
              const inputs = m.tokenize(texts, pairs)
              return { inputs, outputs: await m.forward(inputs) }
            },
            catch: failure("forward pass failed")
          })
        )
      )

    const embedBatch = (batch: ReadonlyArray<string>) =>
      Effect.flatMap(run([...batch], undefined), ({ inputs, outputs }) => {
        const hidden = outputs.last_hidden_state ?? Object.values(outputs)[0]
        if (hidden === undefined || hidden.dims.length !== 3) {
          return Effect.fail(failure("unexpected model output")("expected token vectors [batch, tokens, width]"))
        }
        const [b, s, w] = hidden.dims as [number, number, number]
        return Effect.succeed({
          vectors: Pooling.pool(
            hidden.data as ArrayLike<number>,
            [b, s, w],
            inputs.attention_mask.data,
            options.pooling,
            options.normalize
          ),
          promptTokens: tokenCount(inputs.attention_mask)
        })
      })

    const rerankBatch = (query: string, batch: ReadonlyArray<string>) =>
      Effect.flatMap(
        run(
          batch.map(() => query),
          [...batch]
        ),
        ({ inputs, outputs }) => {
          const logits = outputs.logits
          const scores =
            logits === undefined || logits.dims.length !== 2
              ? "expected logits [pairs, labels]"
              : Pooling.relevance(logits.data as ArrayLike<number>, logits.dims[0]!, logits.dims[1]!)
          return typeof scores === "string"
            ? Effect.fail(failure("unexpected model output")(scores))
            : Effect.succeed({ scores, promptTokens: tokenCount(inputs.attention_mask) })
        }
      )

    const inBatches = <A extends { readonly promptTokens: number }>(
      items: ReadonlyArray<string>,
      one: (batch: ReadonlyArray<string>) => Effect.Effect<A, Errors.ModelError>
    ) => Effect.forEach(Text.chunks(items, options.batchSize), one, { concurrency: "unbounded" })

    if (options.task === "rerank") {
      return {
        reranker: {
          info,
          rerank: (query, documents) =>
            documents.length === 0
              ? Effect.succeed({ scores: [], promptTokens: 0 })
              : Effect.map(
                  inBatches(documents, (b) => rerankBatch(query, b)),
                  (parts) => ({
                    scores: parts.flatMap((p) => p.scores),
                    promptTokens: parts.reduce((n, p) => n + p.promptTokens, 0)
                  })
                )
        }
      }
    }
    return {
      embeddingModel: {
        info,
        embed: (texts) =>
          texts.length === 0
            ? Effect.succeed({ vectors: [], promptTokens: 0 })
            : Effect.map(inBatches(texts, embedBatch), (parts) => ({
                vectors: parts.flatMap((p) => p.vectors),
                promptTokens: parts.reduce((n, p) => n + p.promptTokens, 0)
              }))
      }
    }
  })

export const plugin = Plugin.provider({
  name: "transformers",
  description:
    "Local embeddings or cross-encoder rerank scores from an ONNX model folder (transformers.js, CPU, offline).",
  options: Options,
  make
})
