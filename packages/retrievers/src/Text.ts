/**
 * Text analysis for the lexical retrievers, on wink-nlp's English pipeline (a statistical model
 * bundled in an npm package: no downloads, no weights).
 *
 * - {@link terms}: stemmed content words (Porter2 stems, stopwords, punctuation and symbols
 *   dropped), what BM25 and the TF-IDF embedder index.
 * - {@link lemmas}: the same words as lemmas (needs part-of-speech tagging, so slower).
 * - {@link mentions}: what a text names: proper nouns, named entities and noun chunks, as lemma
 *   sequences, for the context-factor classifier.
 *
 * Results for one text are memoized (bounded), because the same session text is analysed for every
 * instance and every cell that contains it.
 *
 * @example
 * import { Text } from "@cupid-lab/retrievers"
 * Text.terms("The players were running drills") // ["player", "run", "drill"]
 */
import winkNLP, { type ItemSentence, type ItemToken, type ItsFunction, type WinkMethods } from "wink-nlp"
import model from "wink-eng-lite-web-model"
import { Memo } from "./internal/Memo.js"

interface Pipelines {
  /** Tokens only: enough for stems and stopwords. */
  readonly plain: WinkMethods
  /** Sentences, part of speech, entities and noun chunks: needed for lemmas and mentions. */
  readonly tagged: WinkMethods
}

let pipelines: Pipelines | undefined

// Both pipelines share the one model object; wink-nlp only learns custom entities (our noun-chunk
// patterns) on the first pipeline built from it, so the tagged one is always built first. Loading
// is lazy so that importing this module costs nothing until text is analysed.
const load = (): Pipelines => {
  if (pipelines === undefined) {
    const tagged = winkNLP(model, ["sbd", "pos", "ner", "cer"])
    tagged.learnCustomEntities([
      {
        name: "chunk",
        patterns: [
          "[ADJ|NOUN|PROPN] [ADJ|NOUN|PROPN] [NOUN|PROPN] [NOUN|PROPN]",
          "[ADJ|NOUN|PROPN] [NOUN|PROPN] [NOUN|PROPN]",
          "[ADJ|NOUN|PROPN] [NOUN|PROPN]"
        ]
      }
    ])
    pipelines = { tagged, plain: winkNLP(model, []) }
  }
  return pipelines
}

const isWordType = (type: string): boolean => type === "word" || type === "number" || type === "hashtag"

const stems = new Memo<string>(200_000)
const termsMemo = new Memo<ReadonlyArray<string>>(50_000)

/** Stemmed content words of a text, in order (repeats kept: term frequencies matter). */
export const terms = (text: string): ReadonlyArray<string> =>
  termsMemo.getOrSet(text, () => {
    const nlp = load().plain
    const its = nlp.its
    const out: Array<string> = []
    nlp.readDoc(text).tokens().each((t: ItemToken) => {
      if (t.out(its.stopWordFlag) === true || !isWordType(t.out(its.type) as string)) return
      const normal = t.out(its.normal) as string
      out.push(stems.getOrSet(normal, () => t.out(its.stem as unknown as ItsFunction<string>) as string))
    })
    return out
  })

/** One thing a text names: its words as lemmas, and what kind of mention it is. */
export interface Mention {
  readonly lemmas: ReadonlyArray<string>
  readonly kind: "proper-noun" | "entity" | "chunk"
}

/** Content words of a text as lemmas, with the mentions found in it. */
export interface Analysis {
  readonly lemmas: ReadonlyArray<string>
  readonly mentions: ReadonlyArray<Mention>
  /** Lemmas of name-like tokens: proper nouns, capitalized words inside a sentence, words with digits. */
  readonly names: ReadonlySet<string>
}

const analysisMemo = new Memo<Analysis>(50_000)

const contentPos = new Set(["NOUN", "PROPN", "VERB", "ADJ", "NUM", "X", "ADV"])

/** Lemmas and mentions of a text (part-of-speech tagged; about 3 ms per 900 tokens). */
export const analyze = (text: string): Analysis =>
  analysisMemo.getOrSet(text, () => {
    const nlp = load().tagged
    const its = nlp.its
    const doc = nlp.readDoc(text)
    const lemmaOf = (t: ItemToken): string | undefined => {
      if (t.out(its.stopWordFlag) === true || !isWordType(t.out(its.type) as string)) return undefined
      if (!contentPos.has(t.out(its.pos) as string)) return undefined
      const lemma = (t.out(its.lemma as unknown as ItsFunction<string>) as string).toLowerCase()
      // Contractions ("i'm", "'s") and lone letters carry no content.
      return lemma.length < 2 || lemma.includes("'") || lemma.includes("’") ? undefined : lemma
    }
    const names = new Set<string>()
    const lemmas: Array<string> = []
    const mentions: Array<Mention> = []
    const push = (kind: Mention["kind"], tokens: ReadonlyArray<ItemToken>) => {
      const ls = tokens.map(lemmaOf).filter((l): l is string => l !== undefined)
      if (ls.length > 0) mentions.push({ kind, lemmas: ls })
    }
    doc.sentences().each((sentence: ItemSentence) => {
      let first = true
      sentence.tokens().each((t: ItemToken) => {
        const sentenceStart = first
        if (isWordType(t.out(its.type) as string)) first = false
        const l = lemmaOf(t)
        if (l === undefined) return
        lemmas.push(l)
        const value = t.out() as string
        const proper = t.out(its.pos) === "PROPN"
        if (proper || /\d/.test(value) || (!sentenceStart && /[A-Z]/.test(value))) names.add(l)
        if (proper) push("proper-noun", [t])
      })
    })
    const collect = (items: { each: (cb: (e: { tokens: () => { each: (cb: (t: ItemToken) => void) => void } }) => void) => void }, kind: Mention["kind"]) =>
      items.each((e) => {
        const ts: Array<ItemToken> = []
        e.tokens().each((t) => ts.push(t))
        push(kind, ts)
      })
    collect(doc.entities(), "entity")
    collect(doc.customEntities(), "chunk")
    return { lemmas, mentions, names }
  })

/** Content words of a text as lemmas. */
export const lemmas = (text: string): ReadonlyArray<string> => analyze(text).lemmas
