/**
 * `bm25`: Okapi BM25 ranking of the prior sessions against the current request, on stemmed content
 * words (see {@link Text.terms}).
 *
 * Statistics (document frequencies, average length) are those of the instance's own history: the
 * sessions being ranked are the collection. IDF is `ln(1 + (N - n + 0.5) / (n + 0.5))`, which stays
 * positive when a term occurs in more than half of a short history (the classic Robertson-Sparck
 * Jones form goes negative there and would penalize matching the request).
 *
 * Each session's term counts are computed once per session text and memoized, so a query costs
 * O(sessions x distinct request terms): 10,000-session histories rank in milliseconds once their
 * texts have been analysed.
 *
 * @example
 * // config: retriever: { use: bm25, k: 2, representation: user-turns, k1: 1.2, b: 0.75 }
 * import { Bm25 } from "@cupid-lab/retrievers"
 * Bm25.scores(["band"], [Bm25.document(["band", "drill"]), Bm25.document(["email"])], { k1: 1.2, b: 0.75 })
 */
import { Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import { Memo } from "./internal/Memo.js"
import * as RetrieverOptions from "./RetrieverOptions.js"
import * as Text from "./Text.js"

export interface Params {
  /** Term-frequency saturation (>= 0); 0 turns BM25 into a binary-match IDF sum. */
  readonly k1: number
  /** Length normalization in [0, 1]; 0 ignores document length. */
  readonly b: number
}

/** A document as BM25 sees it: its length in terms and its term counts. */
export interface Document {
  readonly length: number
  readonly counts: ReadonlyMap<string, number>
}

export const document = (terms: ReadonlyArray<string>): Document => {
  const counts = new Map<string, number>()
  for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1)
  return { length: terms.length, counts }
}

/** `ln(1 + (N - n + 0.5) / (n + 0.5))` for a term in `n` of `N` documents. */
export const idf = (documents: number, containing: number): number =>
  Math.log(1 + (documents - containing + 0.5) / (containing + 0.5))

/** BM25 score of every document for a query (each distinct query term counts once). */
export const scores = (query: ReadonlyArray<string>, documents: ReadonlyArray<Document>, params: Params): Array<number> => {
  const out = new Array<number>(documents.length).fill(0)
  const n = documents.length
  if (n === 0) return out
  let total = 0
  for (const d of documents) total += d.length
  const avgLength = total / n
  for (const term of new Set(query)) {
    let containing = 0
    for (const d of documents) if (d.counts.has(term)) containing++
    if (containing === 0) continue
    const w = idf(n, containing)
    for (let i = 0; i < n; i++) {
      const d = documents[i]!
      const tf = d.counts.get(term)
      if (tf === undefined) continue
      const norm = avgLength === 0 ? 1 : 1 - params.b + params.b * (d.length / avgLength)
      out[i]! += (w * tf * (params.k1 + 1)) / (tf + params.k1 * norm)
    }
  }
  return out
}

const documents = new Memo<Document>(50_000)

export const options = Schema.Struct({
  k: RetrieverOptions.k(2),
  representation: RetrieverOptions.representation("dialogue"),
  k1: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 10)), { default: () => 1.2 }),
  b: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0.75 })
})
export type Options = typeof options.Type

export const plugin = Plugin.retriever({
  name: "bm25",
  description: "Okapi BM25 over stemmed content words (wink-nlp), statistics from the instance's own history.",
  options,
  make: (o: Options) =>
    Effect.succeed({
      needsSummaries: o.representation === "summary",
      retrieve: (input) =>
        Effect.map(RetrieverOptions.sessionDocs(input, o.representation, "bm25"), (docs) => {
          const ds = docs.map((d) => documents.getOrSet(d.key, () => document(Text.terms(d.text))))
          const s = scores(Text.terms(input.query.request), ds, o)
          return Retriever.fromScores(docs.map((d, i) => [d.id, s[i]!] as const), o.k)
        })
    })
})
