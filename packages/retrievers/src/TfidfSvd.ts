/**
 * An offline text embedder fitted on the data itself: TF-IDF over stemmed content words
 * ({@link Text.terms}; sublinear term frequency, smoothed IDF, unit-length rows), reduced to `dims`
 * dimensions by truncated SVD (latent semantic analysis). It needs no pretrained weights.
 *
 * New texts are folded in: their TF-IDF vector is projected on the right singular vectors, so a
 * text and the documents it shares vocabulary with land close together even when they share few
 * exact words.
 *
 * @example
 * import { TfidfSvd } from "@cupid-lab/retrievers"
 * const model = TfidfSvd.fit(["first document", "second document"], { dims: 64, minDf: 1, maxTerms: 20000 })
 * // in a plugin: TfidfSvd.fit(documents, options, Text.analyzer(memo)) shares the sweep's term lists
 * const vector = model.embed("a document") // Float32Array(model.dims)
 */
import { type Csr, truncated } from "./internal/Svd.js"
import { topK } from "./internal/TopK.js"
import * as Text from "./Text.js"

export interface FitOptions {
  /** Dimensions kept (fewer when the data has lower rank). */
  readonly dims: number
  /** A term must occur in at least this many documents to enter the vocabulary. */
  readonly minDf: number
  /** At most this many terms, the most frequent by document frequency. */
  readonly maxTerms: number
  /** Seed of the random projection (results are deterministic given the seed). */
  readonly seed?: number
}

export interface Model {
  readonly dims: number
  readonly vocabulary: ReadonlyMap<string, number>
  /** Singular values of the kept dimensions, descending. */
  readonly singularValues: ReadonlyArray<number>
  /** The unit-length TF-IDF vector of a text as sparse (column, weight) pairs. */
  readonly tfidf: (text: string) => ReadonlyArray<readonly [number, number]>
  readonly embed: (text: string) => Float32Array
}

/** What a fit computed: enough to rebuild the model without the documents (kept in the model cache). */
export interface Parts {
  /** The vocabulary, in column order. */
  readonly terms: ReadonlyArray<string>
  readonly idf: Float64Array
  readonly singularValues: ReadonlyArray<number>
  readonly dims: number
  /** The components by term: term t's coordinates at [t * dims, (t + 1) * dims). */
  readonly byTerm: Float32Array
}

/** Fit on documents; `text` analyses them and every text embedded later (default: an analyzer of the model's own). */
export const fit = (documents: ReadonlyArray<string>, options: FitOptions, text: Text.Analyzer = Text.fresh()): Model =>
  fromParts(fitParts(documents, options, text), text)

/** A row's unit-length TF-IDF weights, by column (sublinear term frequency). */
const weigh = (
  vocabulary: ReadonlyMap<string, number>,
  idf: Float64Array,
  terms: ReadonlyArray<string>
): Array<readonly [number, number]> => {
  const counts = new Map<number, number>()
  for (const t of terms) {
    const c = vocabulary.get(t)
    if (c !== undefined) counts.set(c, (counts.get(c) ?? 0) + 1)
  }
  const entries = [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([c, tf]) => [c, (1 + Math.log(tf)) * idf[c]!] as const)
  const norm = Math.sqrt(entries.reduce((s, [, w]) => s + w * w, 0))
  return norm === 0 ? [] : entries.map(([c, w]) => [c, w / norm] as const)
}

/** The vocabulary, IDF and SVD components of documents. */
export const fitParts = (documents: ReadonlyArray<string>, options: FitOptions, text: Text.Analyzer): Parts => {
  const tokenized = documents.map((d) => text.terms(d))
  const df = new Map<string, number>()
  for (const terms of tokenized) for (const t of new Set(terms)) df.set(t, (df.get(t) ?? 0) + 1)
  // The maxTerms most frequent, ties by term: a top-k selection, not a sort of the whole vocabulary.
  const kept = topK(
    [...df.entries()].filter(([, n]) => n >= options.minDf),
    options.maxTerms,
    (a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)
  )
  const vocabulary = new Map<string, number>()
  kept.forEach(([t], i) => vocabulary.set(t, i))
  const n = documents.length
  const idf = new Float64Array(kept.length)
  kept.forEach(([, d], i) => (idf[i] = Math.log((1 + n) / (1 + d)) + 1))

  const rows = tokenized.map((terms) => weigh(vocabulary, idf, terms))
  const nnz = rows.reduce((s, r) => s + r.length, 0)
  const csr: Csr = {
    rows: n,
    cols: kept.length,
    rowStart: new Int32Array(n + 1),
    colIndex: new Int32Array(nnz),
    values: new Float64Array(nnz)
  }
  let p = 0
  rows.forEach((r, i) => {
    for (const [c, w] of r) {
      csr.colIndex[p] = c
      csr.values[p] = w
      p++
    }
    csr.rowStart[i + 1] = p
  })
  const svd = truncated(csr, { rank: options.dims, seed: options.seed ?? 7 })
  const dims = svd.right.length
  // Column-major copy of the components so folding a sparse vector in touches one row per term.
  const byTerm = new Float32Array(kept.length * dims)
  svd.right.forEach((v, j) => {
    for (let t = 0; t < kept.length; t++) byTerm[t * dims + j] = v[t]!
  })
  return { terms: kept.map(([t]) => t), idf, singularValues: svd.values, dims, byTerm }
}

/** The model a fit's parts make; `text` analyses every text embedded. */
export const fromParts = (parts: Parts, text: Text.Analyzer): Model => {
  const vocabulary = new Map<string, number>()
  parts.terms.forEach((t, i) => vocabulary.set(t, i))
  const { dims, byTerm } = parts
  const tfidf = (t: string) => weigh(vocabulary, parts.idf, text.terms(t))
  return {
    dims,
    vocabulary,
    singularValues: parts.singularValues,
    tfidf,
    embed: (t) => {
      const out = new Float32Array(dims)
      for (const [c, w] of tfidf(t)) {
        const base = c * dims
        for (let j = 0; j < dims; j++) out[j]! += w * byTerm[base + j]!
      }
      return out
    }
  }
}
