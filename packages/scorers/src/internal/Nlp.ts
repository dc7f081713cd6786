import { Memo } from "@cupid-lab/core"
import { createRequire } from "node:module"
import type WinkNlp from "wink-nlp"
import type { Model } from "wink-nlp"
import type { WordNetPos } from "./WordNet.js"

// Content words of a text, as wink-nlp lemmas with their Porter stems and a WordNet part of speech.

export interface ContentWord {
  readonly lemma: string
  readonly stem: string
  readonly pos: WordNetPos | undefined
}

let loaded: ReturnType<typeof WinkNlp> | undefined
// Loaded on first use, package and model alike: only the lexical matcher and the clause splitter
// need it, and importing the scorers (a report, the command line's help) must not load a model.
// Lemmas need the POS tagger only; sentence splitting, entities and sentiment are left out of the pipe.
const nlp = () => {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url)
    const winkNLP = require("wink-nlp") as typeof WinkNlp
    loaded = winkNLP(require("wink-eng-lite-web-model") as Model, ["pos"])
  }
  return loaded
}

// Gold preferences and checklist items recur in every cell of a sweep: analysed once per text in
// the sweep's memo.
const lists = Memo.namespace<ReadonlyArray<ContentWord>>("scorers/content-words", 50_000)

const contentPos: Readonly<Record<string, WordNetPos | undefined>> = {
  NOUN: "noun",
  PROPN: "noun",
  VERB: "verb",
  ADJ: "adj",
  ADV: "adv",
  NUM: undefined
}

/**
 * Lowercased first, because the lite model leaves capitalized words (a sentence-initial noun)
 * unlemmatized; hyphens inside words become spaces so that "step-by-step" yields "step".
 * Remembered in `memo` (a sweep's) when one is given.
 */
export const contentWords = (text: string, memo?: Memo.Service): ReadonlyArray<ContentWord> =>
  memo === undefined ? analyse(text) : memo.store(lists).getOrSet(text, () => analyse(text))

/**
 * `tokens.out(its)`, called as at run time. The published typings give lemma and stem a signature
 * `out` does not accept, and type the results loosely: what comes back is checked instead.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
const read = (tokens: { readonly out: Function }, its: unknown): unknown => Reflect.apply(tokens.out, tokens, [its])

const strings = (value: unknown, what: string): Array<string> => {
  if (Array.isArray(value) && value.every((x): x is string => typeof x === "string")) return value
  throw new Error(`wink-nlp gave no ${what} string for every token`)
}

const booleans = (value: unknown, what: string): Array<boolean> => {
  if (Array.isArray(value) && value.every((x): x is boolean => typeof x === "boolean")) return value
  throw new Error(`wink-nlp gave no ${what} for every token`)
}

const analyse = (text: string): ReadonlyArray<ContentWord> => {
  const doc = nlp().readDoc(text.toLowerCase().replace(/(\w)[-\u2010\u2011](?=\w)/g, "$1 "))
  const its = nlp().its
  const tokens = doc.tokens()
  const lemmas = strings(read(tokens, its.lemma), "lemma")
  const stems = strings(read(tokens, its.stem), "stem")
  const tags = strings(read(tokens, its.pos), "part of speech")
  const types = strings(read(tokens, its.type), "type")
  const stop = booleans(read(tokens, its.stopWordFlag), "stop-word flag")
  const out: Array<ContentWord> = []
  for (let i = 0; i < lemmas.length; i++) {
    const tag = tags[i]!
    if (stop[i] || !(tag in contentPos) || (types[i] !== "word" && types[i] !== "number")) continue
    out.push({ lemma: lemmas[i]!, stem: stems[i]!, pos: contentPos[tag] })
  }
  return out
}
