/**
 * Text analysis for the lexical retrievers: a linear tokenizer with Porter2 stems for indexing, and
 * wink-nlp's English pipeline (a statistical model bundled in an npm package: no downloads, no
 * weights) for parts of speech and lemmas.
 *
 * - {@link terms}: stemmed content words (Porter2 stems; wink-nlp's stopwords, punctuation and
 *   symbols dropped), what BM25 and the TF-IDF embedder index. A regular-expression tokenizer, about
 *   an order of magnitude faster than running wink's pipeline (`npm run bench -- text`).
 * - {@link lemmas}: the same words as lemmas (needs part-of-speech tagging, so slower).
 * - {@link analyze}: the content words of a text in order, as lemmas with their part of speech and
 *   whether they look like a name (proper noun, capitalized inside a sentence, or containing
 *   digits), with phrase breaks at punctuation: what the context-factor classifier matches phrases
 *   (noun chunks such as "Hartwell Family Foundation" or "toast for my parents' anniversary") on.
 *
 * An {@link Analyzer} built on a sweep's memo (`Text.analyzer(memo)`, core's `Memo`) remembers the
 * results for each text (bounded), because the same session text is analysed for every instance and
 * every cell that contains it; the plain functions ({@link terms}, {@link analyze}, {@link lemmas})
 * remember nothing. Cost is linear in the input: tokens over {@link maxTokenLength} characters and
 * text past {@link maxTextLength} are ignored.
 *
 * @example
 * import { Text } from "@cupid-lab/retrievers"
 * Text.terms("The players were running drills") // ["player", "run", "drill"]
 * const text = Text.analyzer(yield* Memo.current) // in a plugin's make: shared by the sweep
 * text.terms("The players were running drills")
 */
import { createRequire } from "node:module"
import type { ItemSentence, ItemToken, Model, WinkMethods } from "wink-nlp"
import type WinkNlp from "wink-nlp"
import { Memo } from "@cupid-lab/core"

interface Pipelines {
  /** Tokens only: enough for stems and stopwords. */
  readonly plain: WinkMethods
  /** Sentences and parts of speech: needed for lemmas. */
  readonly tagged: WinkMethods
}

let pipelines: Pipelines | undefined
let porter2Stem: ((word: string) => string) | undefined

const porter2 = (word: string): string => {
  if (porter2Stem === undefined)
    porter2Stem = createRequire(import.meta.url)("wink-porter2-stemmer") as (word: string) => string
  return porter2Stem(word)
}

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

/**
 * A token's lemma: `token.out(its.lemma)` called as at run time (the published typings give lemma a
 * signature `out` does not accept), and checked to be a string.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
const lemmaOf = (token: { readonly out: Function }, lemma: unknown): string => {
  const value: unknown = Reflect.apply(token.out, token, [lemma])
  if (typeof value !== "string") throw new Error(`wink-nlp gave a lemma that is not a string (${typeof value})`)
  return value
}

const stems = Memo.namespace<string>("text/stems", 200_000)
const termLists = Memo.namespace<ReadonlyArray<string>>("text/terms", 50_000)
const stopwords = Memo.namespace<boolean>("text/stopwords", 200_000)
const analyses = Memo.namespace<Analysis>("text/analyses", 50_000)

/** Tokens longer than this are not words (base64, hashes, minified code) and are skipped. */
export const maxTokenLength = 40
/** Texts are analysed up to this many characters (about 25k tokens); the rest is ignored. */
export const maxTextLength = 200_000

const tokenPattern = /\p{N}+(?:[.,:]\p{N}+)*|[\p{L}\p{N}]+(?:['\u2019][\p{L}]+)*/gu

/**
 * wink-nlp's stopword flags for words not seen before, asked in one batch per text (one tagger
 * call over the new words, not one per word), then remembered.
 */
const learnStopwords = (stopMemo: Memo.Store<boolean>, words: ReadonlyArray<string>): void => {
  const unseen = [...new Set(words.filter((w) => stopMemo.get(w) === undefined))]
  if (unseen.length === 0) return
  const nlp = load().plain
  const its = nlp.its
  const flags: Array<boolean> = []
  nlp
    .readDoc(unseen.join(" "))
    .tokens()
    .each((t: ItemToken) => {
      flags.push(t.out(its.stopWordFlag) === true || !isWordType(t.out(its.type) as string))
    })
  // One token per word is the rule for plain lowercase words; otherwise ask word by word.
  if (flags.length === unseen.length) unseen.forEach((w, i) => stopMemo.set(w, flags[i]!))
  else for (const w of unseen) stopMemo.set(w, isStopAlone(w))
}

const isStopAlone = (word: string): boolean => {
  const nlp = load().plain
  const its = nlp.its
  let stop = true
  nlp
    .readDoc(word)
    .tokens()
    .each((t: ItemToken) => {
      if (t.out(its.stopWordFlag) !== true && isWordType(t.out(its.type) as string)) stop = false
    })
  return stop
}

const termsOf = (text: string, stopMemo: Memo.Store<boolean>, stemMemo: Memo.Store<string>): ReadonlyArray<string> => {
  const input = text.length > maxTextLength ? text.slice(0, maxTextLength) : text
  const words: Array<string> = []
  for (const match of input.matchAll(tokenPattern)) {
    let word = match[0].toLowerCase()
    if (word.length > maxTokenLength) continue
    if (/['\u2019]s$/.test(word)) word = word.slice(0, -2)
    if (/['\u2019]/.test(word)) continue
    words.push(word)
  }
  learnStopwords(
    stopMemo,
    words.filter((w) => /^[a-z]+$/.test(w))
  )
  const out: Array<string> = []
  for (const word of words) {
    if (!/^[a-z]+$/.test(word)) out.push(word)
    else if (stopMemo.get(word) !== true) out.push(stemMemo.getOrSet(word, () => porter2(word)))
  }
  return out
}

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

const contentPos = new Set(["NOUN", "PROPN", "VERB", "ADJ", "NUM", "X", "ADV"])
/** Skipped tokens that end a noun chunk (besides infinitive "to"): prepositions, conjunctions, auxiliaries and verbs. */
const chunkSeparators = new Set(["ADP", "SCONJ", "CCONJ", "AUX", "VERB"])

/**
 * The text as the tagger may see it: at most {@link maxTextLength} characters, and every unbroken
 * run of more than {@link maxTokenLength} non-space characters cut to that length (the tagger's
 * tokenizer is quadratic in the length of such a run).
 */
export const bounded = (text: string): string => {
  const head = text.length > maxTextLength ? text.slice(0, maxTextLength) : text
  return head.replace(longRun, (run) => run.slice(0, maxTokenLength))
}
const longRun = new RegExp(`\\S{${maxTokenLength + 1},}`, "g")

const analysisOf = (text: string): Analysis => {
  const nlp = load().tagged
  const its = nlp.its
  const words: Array<Word | undefined> = []
  const lemmas: Array<string> = []
  const pause = () => {
    if (words.length > 0 && words[words.length - 1] !== undefined) words.push(undefined)
  }
  nlp
    .readDoc(bounded(text))
    .sentences()
    .each((sentence: ItemSentence) => {
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
        const lemma = lemmaOf(t, its.lemma).toLowerCase()
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
}

/** Text analysis that remembers its results in a memo (bounded, per text). */
export interface Analyzer {
  /** See {@link terms}. */
  readonly terms: (text: string) => ReadonlyArray<string>
  /** See {@link analyze}. */
  readonly analyze: (text: string) => Analysis
  /** See {@link lemmas}. */
  readonly lemmas: (text: string) => ReadonlyArray<string>
}

/** An analyzer whose results live in `memo` (a sweep's), under the namespaces `text/...`. */
export const analyzer = (memo: Memo.Service): Analyzer => {
  const stopMemo = memo.store(stopwords)
  const stemMemo = memo.store(stems)
  const termMemo = memo.store(termLists)
  const analysisMemo = memo.store(analyses)
  const analyze = (text: string) => analysisMemo.getOrSet(text, () => analysisOf(text))
  return {
    terms: (text) => termMemo.getOrSet(text, () => termsOf(text, stopMemo, stemMemo)),
    analyze,
    lemmas: (text) => analyze(text).lemmas
  }
}

/** An analyzer with a memo of its own, shared with nothing. */
export const fresh = (): Analyzer => analyzer(Memo.unsafeMake())

/**
 * Stemmed content words of a text, in order (repeats kept: term frequencies matter). A linear
 * tokenizer (numbers with their inner separators, as in "3.5" and "9:30"; words of letters and
 * digits with inner apostrophes), lowercased; possessive "'s" dropped; contractions and wink-nlp's
 * stopwords dropped; Porter2 stems for alphabetic words (numbers and codes are kept as they are:
 * Porter2 would turn "350" into "y50"). Tokens over {@link maxTokenLength} characters and text past
 * {@link maxTextLength} are ignored, so the cost stays linear in the input.
 */
export const terms = (text: string): ReadonlyArray<string> => fresh().terms(text)

/** Content words of a text, part-of-speech tagged and lemmatized (about 2 ms per 900 tokens). */
export const analyze = (text: string): Analysis => analysisOf(text)

/** Content words of a text as lemmas. */
export const lemmas = (text: string): ReadonlyArray<string> => analysisOf(text).lemmas
