/**
 * Text analysis for the lexical retrievers, on wink-nlp's English pipeline (a statistical model
 * bundled in an npm package: no downloads, no weights).
 *
 * - {@link terms}: stemmed content words (Porter2 stems, stopwords, punctuation and symbols
 *   dropped), what BM25 and the TF-IDF embedder index.
 * - {@link lemmas}: the same words as lemmas (needs part-of-speech tagging, so slower).
 * - {@link analyze}: the content words of a text in order, as lemmas with their part of speech and
 *   whether they look like a name (proper noun, capitalized inside a sentence, or containing
 *   digits), with phrase breaks at punctuation: what the context-factor classifier matches phrases
 *   (noun chunks such as "Hartwell Family Foundation" or "toast for my parents' anniversary") on.
 *
 * Results for one text are memoized (bounded), because the same session text is analysed for every
 * instance and every cell that contains it.
 *
 * @example
 * import { Text } from "@cupid-lab/retrievers"
 * Text.terms("The players were running drills") // ["player", "run", "drill"]
 */
import { createRequire } from "node:module"
import type { ItemSentence, ItemToken, ItsFunction, Model, WinkMethods } from "wink-nlp"
import type WinkNlp from "wink-nlp"
import { Memo } from "./internal/Memo.js"

interface Pipelines {
  /** Tokens only: enough for stems and stopwords. */
  readonly plain: WinkMethods
  /** Sentences and parts of speech: needed for lemmas. */
  readonly tagged: WinkMethods
}

let pipelines: Pipelines | undefined

// The library and its English model are loaded on first use, so that importing this module (and
// the plugin list) costs nothing until text is analysed.
const load = (): Pipelines => {
  if (pipelines === undefined) {
    const require = createRequire(import.meta.url)
    const winkNLP = require("wink-nlp") as typeof WinkNlp
    const model = require("wink-eng-lite-web-model") as Model
    pipelines = { tagged: winkNLP(model, ["sbd", "pos"]), plain: winkNLP(model, []) }
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
      // Porter2 is for words: it mangles numbers and codes ("350" -> "y50"), which are kept as they are.
      out.push(/^[a-z]+$/.test(normal) ? stems.getOrSet(normal, () => t.out(its.stem as unknown as ItsFunction<string>) as string) : normal)
    })
    return out
  })

/** A content word: its lemma, part of speech, and whether it looks like a name. */
export interface Word {
  readonly lemma: string
  readonly pos: string
  readonly name: boolean
  /**
   * Whether the word starts a new phrase although no punctuation precedes it: a preposition,
   * conjunction or infinitive "to" separates it from the previous content word, or either is a verb
   * ("choose | the right settings | on my gravel bike"). What splits a noun chunk from the task
   * wording around it.
   */
  readonly chunkStart: boolean
}

/** The content words of a text in order; `undefined` marks a phrase break (punctuation). */
export interface Analysis {
  readonly words: ReadonlyArray<Word | undefined>
  /** Lemmas of the content words, in order. */
  readonly lemmas: ReadonlyArray<string>
}

const analysisMemo = new Memo<Analysis>(50_000)

const contentPos = new Set(["NOUN", "PROPN", "VERB", "ADJ", "NUM", "X", "ADV"])
/** Skipped tokens that end a noun chunk (besides infinitive "to"): prepositions, conjunctions, auxiliaries and verbs. */
const chunkSeparators = new Set(["ADP", "SCONJ", "CCONJ", "AUX", "VERB"])

/** Content words of a text, part-of-speech tagged and lemmatized (about 2 ms per 900 tokens). */
export const analyze = (text: string): Analysis =>
  analysisMemo.getOrSet(text, () => {
    const nlp = load().tagged
    const its = nlp.its
    const words: Array<Word | undefined> = []
    const lemmas: Array<string> = []
    const pause = () => {
      if (words.length > 0 && words[words.length - 1] !== undefined) words.push(undefined)
    }
    nlp.readDoc(text).sentences().each((sentence: ItemSentence) => {
      let sentenceStart = true
      let separated = false
      let previousPos = ""
      sentence.tokens().each((t: ItemToken) => {
        const type = t.out(its.type) as string
        if (!isWordType(type)) {
          if (type === "punctuation" || type === "symbol") pause()
          return
        }
        const atStart = sentenceStart
        sentenceStart = false
        const pos = t.out(its.pos) as string
        if (t.out(its.stopWordFlag) === true || !contentPos.has(pos)) {
          if (chunkSeparators.has(pos) || (pos === "PART" && t.out(its.normal) === "to")) separated = true
          return
        }
        const lemma = (t.out(its.lemma as unknown as ItsFunction<string>) as string).toLowerCase()
        // Contractions ("i'm", "'s") and lone letters carry no content.
        if (/^[a-z]$/.test(lemma) || lemma.includes("'") || lemma.includes("’")) return
        const value = t.out() as string
        // The tagger calls many sentence-initial capitalized words proper nouns; only trust it inside a sentence.
        const name = /\d/.test(value) || (!atStart && (pos === "PROPN" || /[A-Z]/.test(value)))
        const chunkStart = separated || pos === "VERB" || previousPos === "VERB"
        separated = false
        previousPos = pos
        words.push({ lemma, pos, name, chunkStart })
        lemmas.push(lemma)
      })
      pause()
      separated = false
      previousPos = ""
    })
    return { words, lemmas }
  })

/** Content words of a text as lemmas. */
export const lemmas = (text: string): ReadonlyArray<string> => analyze(text).lemmas
