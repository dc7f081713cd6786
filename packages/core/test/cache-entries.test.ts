// Cache entries on disk are checked when read: one that is not JSON, is truncated or has the wrong
// shape is a miss reported once (naming its file), and the fresh answer replaces it.
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Logger, LogLevel, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as Domain from "../src/Domain.js"
import type * as EmbeddingModel from "../src/EmbeddingModel.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as LlmInferrer from "../src/LlmInferrer.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-entries-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const entryFile = (dir: string, key: string) => path.join(dir, key.slice(0, 2), `${key}.json`)
const onlyEntry = (dir: string): string => {
  const found = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile())
  expect(found).toHaveLength(1)
  return path.join(found[0]!.parentPath, found[0]!.name)
}

const preferenceModel = () => {
  let calls = 0
  const service: LanguageModel.Service = {
    info: { provider: "scripted", model: "m1", params: {} },
    complete: () =>
      Effect.sync(() => {
        calls++
        return {
          text: "Analysis: the user asked for steps twice.\nPreference: Use short numbered steps.",
          promptTokens: 10,
          completionTokens: 5
        }
      })
  }
  return { service, calls: () => calls }
}

const session: Domain.SessionView = {
  id: "s1",
  index: 1,
  hash: "h1",
  dialogue: [
    { role: "user", content: "Give me the steps, numbered please." },
    { role: "assistant", content: "1. Open. 2. Save." }
  ]
}

/** One run of an `llm` inferrer over a file cache in `dir` (a fresh cache, as a rerun has). */
const inferOnce = (dir: string, lm: LanguageModel.Service, warnings: Array<string>) =>
  Effect.gen(function* () {
    const inferrer = yield* LlmInferrer.make({
      model: "m",
      maxTokens: 512,
      temperature: 0,
      prompts: "project",
      thinking: "strip"
    })
    return yield* inferrer.infer({ request: "How do I export the report?", evidence: { sessions: [session] } })
  }).pipe(
    Effect.provide(
      Models.layer({ m: { languageModel: lm } }).pipe(
        Layer.provide(ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) }))
      )
    )
  )

describe("a stored entry of the wrong shape", () => {
  it.effect("does not fail the rerun: it is a miss, named once in a warning, and replaced by the fresh answer", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = preferenceModel()
      const warnings: Array<string> = []
      const first = yield* inferOnce(dir, model.service, warnings)
      expect(first.preference).toBe("Use short numbered steps.")
      const file = onlyEntry(dir)
      const key = path.basename(file, ".json")
      // Valid JSON, right key, wrong value: what another tool or an old version might leave.
      fs.writeFileSync(file, JSON.stringify({ key, value: { text: 42, promptTokens: 10 } }))

      const second = yield* inferOnce(dir, model.service, warnings)
      expect(second).toEqual(first)
      expect(model.calls()).toBe(2)
      expect(warnings).toEqual([
        `model cache: ignoring ${file}: the stored value does not fit: text: Expected string, actual 42; completionTokens: is missing; the call is made again and the entry replaced`
      ])
      expect(JSON.parse(fs.readFileSync(file, "utf8")).value).toEqual({
        text: "Analysis: the user asked for steps twice.\nPreference: Use short numbered steps.",
        promptTokens: 10,
        completionTokens: 5
      })

      // The replaced entry answers the next rerun, silently.
      const third = yield* inferOnce(dir, model.service, warnings)
      expect(third).toEqual(first)
      expect(model.calls()).toBe(2)
      expect(warnings).toHaveLength(1)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("every kind of unusable entry", () => {
  const Answer = Schema.Struct({ answer: Schema.Number })
  const k = ModelCache.key({ case: "bad entries" })
  const cases: ReadonlyArray<readonly [string, (key: string) => string, string]> = [
    ["an empty file", () => "", "not valid JSON (Unexpected end of JSON input; the file may be truncated)"],
    // Cut where a write interrupted by a full disk might stop (JSON.parse's wording elsewhere varies by Node version).
    [
      "a truncated file",
      (key) => JSON.stringify({ key, value: { answer: 1 } }).replace(/\{"answer":1\}\}$/, ""),
      "not valid JSON (Unexpected end of JSON input; the file may be truncated)"
    ],
    [
      "JSON that is not an entry",
      () => "[1, 2]",
      'not a cache entry (expected {"key": ..., "value": ...}; Expected { readonly key: string; readonly value: unknown }, actual [1,2])'
    ],
    [
      "an object without a key",
      () => '{"answer": 1}',
      'not a cache entry (expected {"key": ..., "value": ...}; key: is missing)'
    ],
    ["an entry without a value", (key) => JSON.stringify({ key }), 'not a cache entry (it has no "value")'],
    [
      "the entry of another key",
      () => JSON.stringify({ key: "abc", value: { answer: 1 } }),
      "it holds the entry of key abc, not of its file name"
    ],
    [
      "a value of the wrong shape",
      (key) => JSON.stringify({ key, value: { answer: "one" } }),
      'the stored value does not fit: answer: Expected number, actual "one"'
    ]
  ]
  for (const [name, content, reason] of cases) {
    it.effect(`${name}: a miss with the reason, then replaced`, () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = entryFile(dir, k)
        fs.mkdirSync(path.dirname(file), { recursive: true })
        fs.writeFileSync(file, content(k))
        const warnings: Array<string> = []
        const cache = yield* Effect.provide(
          ModelCache.ModelCache,
          ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) })
        )
        const result = yield* cache.getOrCompute(k, Effect.succeed({ answer: 7 }), { schema: Answer })
        expect(result).toEqual({ value: { answer: 7 }, cached: false })
        expect(warnings).toEqual([
          `model cache: ignoring ${file}: ${reason}; the call is made again and the entry replaced`
        ])
        expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ key: k, value: { answer: 7 } })
        expect(yield* cache.stats).toEqual({ hits: 0, misses: 1, writes: 1, invalid: 1, rejected: 0, writeErrors: 0 })
        // A fresh cache (a rerun) reads the replaced entry.
        const rerun = yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerFile(dir))
        expect(yield* rerun.getOrCompute(k, Effect.succeed({ answer: 8 }), { schema: Answer })).toEqual({
          value: { answer: 7 },
          cached: true
        })
      }).pipe(Effect.provide(NodeContext.layer))
    )
  }

  it.effect("one line per bad file, however many calls read it", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const keys = [ModelCache.key({ n: 1 }), ModelCache.key({ n: 2 })]
      for (const key of keys) {
        fs.mkdirSync(path.dirname(entryFile(dir, key)), { recursive: true })
        fs.writeFileSync(entryFile(dir, key), '{"key":')
      }
      const warnings: Array<string> = []
      const cache = yield* Effect.provide(
        ModelCache.ModelCache,
        ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) })
      )
      let computed = 0
      const compute = Effect.sync(() => ({ answer: ++computed }))
      // Ten concurrent calls per key all read the bad file before any answer is stored.
      yield* Effect.forEach(
        [...keys, ...keys, ...keys, ...keys, ...keys],
        (key) => cache.getOrCompute(key, compute, { schema: Answer }),
        {
          concurrency: "unbounded"
        }
      )
      expect(computed).toBe(2)
      expect(warnings.sort()).toEqual(
        keys
          .map(
            (key) =>
              `model cache: ignoring ${entryFile(dir, key)}: not valid JSON (Unexpected end of JSON input; the file may be truncated); the call is made again and the entry replaced`
          )
          .sort()
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("embeddings: a stored vector of the wrong shape is embedded again", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const sent: Array<ReadonlyArray<string>> = []
      const embedder: EmbeddingModel.Service = {
        info: { provider: "local", model: "tiny", params: {} },
        embed: (texts) =>
          Effect.sync(
            () => (
              sent.push(texts),
              { vectors: texts.map((t) => Float32Array.from([t.length, 1])), promptTokens: 2 * texts.length }
            )
          )
      }
      const key = Models.embeddingKey(embedder.info, "abc")
      fs.mkdirSync(path.dirname(entryFile(dir, key)), { recursive: true })
      fs.writeFileSync(entryFile(dir, key), JSON.stringify({ key, value: { v: "not a vector", t: 2 } }))
      const warnings: Array<string> = []
      const cache = yield* Effect.provide(
        ModelCache.ModelCache,
        ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) })
      )
      const em = yield* Models.make({ e: { embeddingModel: embedder } }, cache).embeddingModel("e")
      const out = yield* em.embed(["abc"])
      expect(out.vectors.map((v) => [...v])).toEqual([[3, 1]])
      expect(sent).toEqual([["abc"]])
      expect(warnings).toEqual([
        `model cache: ignoring ${entryFile(dir, key)}: the stored value does not fit: v: Expected ReadonlyArray<number>, actual "not a vector"; the call is made again and the entry replaced`
      ])
      expect(JSON.parse(fs.readFileSync(entryFile(dir, key), "utf8")).value).toEqual({ v: [3, 1], t: 2 })
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("without onWarning the line goes to Effect's logger at level Warning", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = entryFile(dir, k)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, "")
      const logged: Array<string> = []
      const capture = Logger.make(({ logLevel, message }) => {
        logged.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
      })
      yield* Effect.gen(function* () {
        const cache = yield* ModelCache.ModelCache
        yield* cache.getOrCompute(k, Effect.succeed({ answer: 1 }), { schema: Answer })
      }).pipe(
        Effect.provide(ModelCache.layerFile(dir)),
        Effect.provide(Logger.replace(Logger.defaultLogger, capture)),
        Logger.withMinimumLogLevel(LogLevel.Warning)
      )
      expect(logged).toEqual([
        `WARN model cache: ignoring ${file}: not valid JSON (Unexpected end of JSON input; the file may be truncated); the call is made again and the entry replaced`
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
