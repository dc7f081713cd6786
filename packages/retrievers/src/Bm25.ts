/**
 * `bm25`: Okapi BM25 ranking of the prior sessions against the current request, on stemmed content
 * words (see {@link Text.terms}).
 *
 * Statistics (document frequencies, average length) are those of the instance's own history: the
 * sessions being ranked are the collection. IDF is `ln(1 + (N - n + 0.5) / (n + 0.5))`, which stays
 * positive when a term occurs in more than half of a short history (the classic Robertson-Sparck
 * Jones form goes negative there and would penalize matching the request).
 *
 * Each session's term counts are computed once per session text, and each history's inverted index
 * once per history (in the sweep's memo, core's `Memo`), so a query costs the postings of its terms:
 * 10,000-session histories rank in milliseconds once their texts have been analysed.
 *
 * With `granularity: turn` the documents are the history's turns (statistics over the turns), and
 * each session ranks at its best turn's score; the retrieval keeps the turn ranking. With `expand`
 * each session's key phrases, summary or facts are joined to its text ({@link Expansion}).
 *
 * @example
 * // config: retriever: { use: bm25, representation: user-turns, k1: 1.2, b: 0.75, select: { top: 2 } }
 * // turns:  retriever: { use: bm25, representation: user-turns, granularity: turn }
 * import { Bm25 } from "@cupid-lab/retrievers"
 * Bm25.scores(["band"], [Bm25.document(["band", "drill"]), Bm25.document(["email"])], { k1: 1.2, b: 0.75 })
 */
import { Memo, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as Expansion from "./Expansion.js"
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

/**
 * An inverted index of a collection: for each term, the documents holding it and its count there,
 * built once per history so a query costs the postings of its terms, not a scan of every document.
 */
export interface Index {
  readonly size: number
  readonly lengths: Float64Array
  readonly avgLength: number
  readonly postings: ReadonlyMap<string, { readonly docs: Int32Array; readonly tfs: Float64Array }>
}

export const index = (documents: ReadonlyArray<Document>): Index => {
  const lists = new Map<string, { docs: Array<number>; tfs: Array<number> }>()
  const lengths = new Float64Array(documents.length)
  let total = 0
  documents.forEach((d, i) => {
    lengths[i] = d.length
    total += d.length
    for (const [term, tf] of d.counts) {
      let list = lists.get(term)
      if (list === undefined) lists.set(term, (list = { docs: [], tfs: [] }))
      list.docs.push(i)
      list.tfs.push(tf)
    }
  })
  const postings = new Map<string, { docs: Int32Array; tfs: Float64Array }>()
  for (const [term, list] of lists)
    postings.set(term, { docs: Int32Array.from(list.docs), tfs: Float64Array.from(list.tfs) })
  return { size: documents.length, lengths, avgLength: documents.length === 0 ? 0 : total / documents.length, postings }
}

/** BM25 score of every document of an index for a query (each distinct query term counts once). */
export const scoresIndexed = (query: ReadonlyArray<string>, ix: Index, params: Params): Array<number> => {
  const out = new Array<number>(ix.size).fill(0)
  if (ix.size === 0) return out
  for (const term of new Set(query)) {
    const list = ix.postings.get(term)
    if (list === undefined) continue
    const w = idf(ix.size, list.docs.length)
    for (let p = 0; p < list.docs.length; p++) {
      const i = list.docs[p]!
      const tf = list.tfs[p]!
      const norm = ix.avgLength === 0 ? 1 : 1 - params.b + params.b * (ix.lengths[i]! / ix.avgLength)
      out[i]! += (w * tf * (params.k1 + 1)) / (tf + params.k1 * norm)
    }
  }
  return out
}

/** BM25 score of every document for a query (each distinct query term counts once). */
export const scores = (
  query: ReadonlyArray<string>,
  documents: ReadonlyArray<Document>,
  params: Params
): Array<number> => scoresIndexed(query, index(documents), params)

const documents = Memo.namespace<Document>("bm25/documents", 50_000)
/** Indexes of recent histories (a sweep asks about the same history once per cell). */
const indexes = Memo.namespace<Index>("bm25/indexes", 256)

export const options = Schema.Struct({
  representation: RetrieverOptions.representation("dialogue"),
  k1: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 10)), { default: () => 1.2 }),
  b: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0.75 }),
  granularity: RetrieverOptions.granularity,
  ...Expansion.fields
})
export type Options = typeof options.Type

export const plugin = Plugin.retriever({
  name: "bm25",
  description: "Okapi BM25 over stemmed content words, statistics from the instance's own history.",
  options,
  defaultSelect: { top: 2 },
  make: (o: Options) =>
    // One memo for the build and its expander (the sweep's when there is one).
    Memo.shared(
      Effect.gen(function* () {
        yield* RetrieverOptions.checkGranularity("bm25", o.representation, o.granularity)
        const expander = yield* Expansion.make("bm25", o)
        const memo = yield* Memo.current
        const text = Text.analyzer(memo)
        const keys = RetrieverOptions.keys(memo)
        const docMemo = memo.store(documents)
        const indexMemo = memo.store(indexes)
        const ranked = (
          input: Retriever.RetrievalInput,
          historyKey: string,
          docs: ReadonlyArray<RetrieverOptions.SessionDoc>
        ) => {
          const ix = indexMemo.getOrSet(historyKey, () =>
            index(docs.map((d) => docMemo.getOrSet(d.key, () => document(text.terms(d.text)))))
          )
          return scoresIndexed(text.terms(input.query.request), ix, o)
        }
        const needsSummaries = o.representation === "summary" || expander?.needsSummaries === true
        const turnLevel = o.granularity === "turn" && o.representation !== "summary" ? o.representation : undefined
        const byTurn = (input: Retriever.RetrievalInput, representation: NonNullable<typeof turnLevel>) => {
          const turns = RetrieverOptions.turnDocs(input, representation)
          const s = ranked(input, keys.turns(input, representation, turns), turns)
          return Retriever.fromTurnScores(turns.map((d, i) => [d.id, d.turn, s[i]!] as const))
        }
        // Without an expander (a model or a summary per session) BM25 is plain code.
        if (expander === undefined) {
          return Retriever.plain({ needsSummaries }, (input) => {
            if (turnLevel !== undefined) return byTurn(input, turnLevel)
            const docs = RetrieverOptions.sessionDocsNow(input, o.representation, "bm25")
            const s = ranked(input, keys.history(input, o.representation, docs), docs)
            return Retriever.fromScores(docs.map((d, i) => [d.id, s[i]!] as const))
          })
        }
        return {
          needsSummaries,
          retrieve: (input: Retriever.RetrievalInput) => {
            if (turnLevel !== undefined) return Effect.sync(() => byTurn(input, turnLevel))
            return Effect.flatMap(RetrieverOptions.sessionDocs(input, o.representation, "bm25"), (docs) =>
              Effect.map(expander.texts(input), (texts) => {
                const joined = Expansion.join(docs, texts, o.join)
                // The expansions may differ per cell (summaries, facts): the joined history is hashed per call.
                return Retriever.fromScores(
                  Expansion.bestPerSession(joined, ranked(input, RetrieverOptions.historyKey(joined), joined))
                )
              })
            )
          }
        } satisfies Retriever.Service
      })
    )
})
