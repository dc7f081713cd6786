import { ModelCache, Models, Usage } from "@cupid-lab/core"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { type TinyBert, writeTinyBert } from "../src/testing/TinyBert.js"
import * as Transformers from "../src/Transformers.js"
import { build } from "./support.js"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-tiny-bert-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))
const encoder = writeTinyBert(path.join(root, "tiny", "encoder"), { kind: "encoder" })
const crossEncoder = writeTinyBert(path.join(root, "tiny", "cross-encoder"), { kind: "cross-encoder", seed: 2 })

// Reference forward pass, written from the graph's definition: per token,
// tanh((word[id] + type[typeId]) · dense + bias).
const tokenVector = (m: TinyBert, id: number, typeId: number): Array<number> =>
  Array.from({ length: m.hidden }, (_, j) => {
    let z = m.weights.denseBias[j]!
    for (let i = 0; i < m.hidden; i++)
      z += (m.weights.word[id]![i]! + m.weights.type[typeId]![i]!) * m.weights.dense[i]![j]!
    return Math.tanh(z)
  })
const mean = (rows: ReadonlyArray<ReadonlyArray<number>>) =>
  rows[0]!.map((_, j) => rows.reduce((s, r) => s + r[j]!, 0) / rows.length)
const unit = (v: ReadonlyArray<number>) => {
  const n = Math.hypot(...v)
  return v.map((x) => x / n)
}
const ids = (m: TinyBert, tokens: ReadonlyArray<string>) =>
  tokens.map((t) => {
    const id = m.vocab.indexOf(t)
    if (id < 0) throw new Error(`"${t}" is not in the tiny vocabulary`)
    return id
  })
const closeTo = (actual: ArrayLike<number>, expected: ReadonlyArray<number>) => {
  expect(actual.length).toBe(expected.length)
  expected.forEach((x, i) => expect(actual[i]).toBeCloseTo(x, 5))
}

// What the WordPiece tokenizer must produce (lower-casing, punctuation split, "##ing" continuation, [UNK]).
const helloTokens = ["[CLS]", "hello", "world", "[SEP]"]
const sentenceTokens = ["[CLS]", "the", "user", "prefers", "play", "##ing", "music", ".", "[SEP]"]
const unknownTokens = ["[CLS]", "[UNK]", "plan", "[SEP]"]

const embeddings = (raw: Record<string, unknown> = {}) =>
  Effect.map(build(Transformers.plugin, { path: encoder.dir, ...raw }), (b) => b.embeddingModel!)

describe("transformers provider: embeddings from a tiny BERT-shaped ONNX model", () => {
  it.scopedLive("mean-pools the real tokens (not the padding) and normalizes, as computed by hand", () =>
    Effect.gen(function* () {
      const model = yield* embeddings()
      const out = yield* model.embed(["Hello world", "The user prefers playing music.", "Xylophone plan"])
      const expected = [helloTokens, sentenceTokens, unknownTokens].map((tokens) =>
        unit(mean(ids(encoder, tokens).map((id) => tokenVector(encoder, id, 0))))
      )
      out.vectors.forEach((v, i) => closeTo(v, expected[i]!))
      expect(out.promptTokens).toBe(4 + 9 + 4)
    })
  )

  it.scopedLive("gives the same vectors one text at a time as in a padded batch", () =>
    Effect.gen(function* () {
      const batched = yield* (yield* embeddings()).embed(["hello world", "the user prefers short answers"])
      const single = yield* (yield* embeddings({ batchSize: 1 })).embed([
        "hello world",
        "the user prefers short answers"
      ])
      single.vectors.forEach((v, i) => closeTo(v, Array.from(batched.vectors[i]!)))
    })
  )

  it.scopedLive("cls pooling without normalizing returns the first token's vector", () =>
    Effect.gen(function* () {
      const model = yield* embeddings({ pooling: "cls", normalize: false })
      const out = yield* model.embed(["code review"])
      closeTo(out.vectors[0]!, tokenVector(encoder, ids(encoder, ["[CLS]"])[0]!, 0))
      expect(model.info).toStrictEqual({
        provider: "transformers",
        model: "test-model",
        params: { task: "embeddings", dtype: "fp32", pooling: "cls", normalize: false }
      })
    })
  )

  it.scopedLive("finds the folder as <modelDir>/<model> and records usage through the registry", () =>
    Effect.gen(function* () {
      const bundle = yield* build(Transformers.plugin, { modelDir: path.join(root, "tiny") }, {}, "encoder")
      const model = yield* Models.make({ local: bundle }, yield* ModelCache.ModelCache).embeddingModel("local")
      const [out, usage] = yield* Usage.track(model.embed(["hello world"]))
      closeTo(out.vectors[0]!, unit(mean(ids(encoder, helloTokens).map((id) => tokenVector(encoder, id, 0)))))
      expect(usage.map((u) => [u.provider, u.model, u.kind, u.promptTokens])).toStrictEqual([
        ["transformers", "encoder", "embed", 4]
      ])
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.scoped("a missing model folder fails to build, naming the missing file", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(build(Transformers.plugin, { modelDir: root }, {}, "Xenova/all-MiniLM-L6-v2"))
      expect(error.message).toBe(
        `plugin "transformers": model "Xenova/all-MiniLM-L6-v2": ${path.join(root, "Xenova/all-MiniLM-L6-v2", "config.json")} ` +
          "does not exist; the folder must hold a Hugging Face ONNX export (config.json, tokenizer.json, onnx/model.onnx); " +
          "see docs/providers.md for how to obtain one"
      )
      const quantized = yield* Effect.flip(build(Transformers.plugin, { path: encoder.dir, dtype: "q8" }))
      expect(quantized.message).toContain(`${path.join(encoder.dir, "onnx", "model_quantized.onnx")} does not exist`)
    })
  )
})

describe("transformers provider: cross-encoder rerank", () => {
  // Pair input: [CLS] query [SEP] (type 0), document [SEP] (type 1); masked mean; linear head.
  const logit = (query: ReadonlyArray<string>, doc: ReadonlyArray<string>) => {
    const first = ids(crossEncoder, ["[CLS]", ...query, "[SEP]"]).map((id) => tokenVector(crossEncoder, id, 0))
    const second = ids(crossEncoder, [...doc, "[SEP]"]).map((id) => tokenVector(crossEncoder, id, 1))
    const pooled = mean([...first, ...second])
    const head = crossEncoder.weights.head!
    return pooled.reduce((s, x, i) => s + x * head.weight[i]!, head.bias)
  }

  it.scopedLive("scores each (query, document) pair with the classifier logit, in document order", () =>
    Effect.gen(function* () {
      const bundle = yield* build(Transformers.plugin, { path: crossEncoder.dir, task: "rerank", batchSize: 2 })
      expect(bundle.embeddingModel).toBeUndefined()
      const reranker = bundle.reranker!
      const docs = ["short answers", "the recipe plan with a budget", "music", "travel plan for my budget"]
      const out = yield* reranker.rerank("recipe for travel", docs)
      const query = ["recipe", "for", "travel"]
      const expected = docs.map((d) => logit(query, d.split(" ")))
      closeTo(out.scores, expected)
      expect(out.promptTokens).toBe(docs.reduce((n, d) => n + 5 + d.split(" ").length + 1, 0))
      expect(reranker.info.params).toStrictEqual({ task: "rerank", dtype: "fp32" })
      expect(yield* reranker.rerank("q", [])).toStrictEqual({ scores: [], promptTokens: 0 })
    })
  )
})

// The runtime is an optional install. Without it each test above fails with the command that adds
// it (never a skip), and so does this one.
describe("transformers provider: its optional runtime", () => {
  it.effect("is installed here", () => Transformers.requireRuntime())

  it.effect("when it cannot be found, building stops with the install command", () =>
    Effect.gen(function* () {
      // Resolved from a folder with no node_modules above it, where the package cannot be.
      const error = yield* Effect.flip(Transformers.requireRuntime(pathToFileURL(path.join(root, "nowhere.js")).href))
      expect(error.message).toBe(
        `plugin "transformers": the transformers provider needs the optional package @huggingface/transformers ` +
          "(with onnxruntime, about 470 MB), which is not installed; add it with: npm install --no-save @huggingface/transformers@4.3.1"
      )
    })
  )
})
