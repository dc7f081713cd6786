import winkNLP, { type ItsFunction } from "wink-nlp"
import model from "wink-eng-lite-web-model"
import type { WordNetPos } from "./WordNet.js"

// Content words of a text, as wink-nlp lemmas with their Porter stems and a WordNet part of speech.

export interface ContentWord {
  readonly lemma: string
  readonly stem: string
  readonly pos: WordNetPos | undefined
}

let loaded: ReturnType<typeof winkNLP> | undefined
// Loaded on first use: only the lexical matcher and the clause splitter need it. Lemmas need the
// POS tagger only; sentence splitting, entities and sentiment are left out of the pipe.
const nlp = () => (loaded ??= winkNLP(model, ["pos"]))

// Gold preferences and checklist items recur in every cell of a sweep: analyse each text once.
const memo = new Map<string, ReadonlyArray<ContentWord>>()
const memoLimit = 50_000

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
 */
export const contentWords = (text: string): ReadonlyArray<ContentWord> => {
  const hit = memo.get(text)
  if (hit !== undefined) return hit
  const words = analyse(text)
  if (memo.size >= memoLimit) memo.clear()
  memo.set(text, words)
  return words
}

const analyse = (text: string): ReadonlyArray<ContentWord> => {
  const doc = nlp().readDoc(text.toLowerCase().replace(/(\w)[-\u2010\u2011](?=\w)/g, "$1 "))
  const its = nlp().its
  // The published typings give lemma/stem a signature `out` does not accept; they work at runtime.
  const lemmas = doc.tokens().out(its.lemma as unknown as ItsFunction<string>) as Array<string>
  const stems = doc.tokens().out(its.stem as unknown as ItsFunction<string>) as Array<string>
  const tags = doc.tokens().out(its.pos) as Array<string>
  const types = doc.tokens().out(its.type) as Array<string>
  const stop = doc.tokens().out(its.stopWordFlag) as unknown as Array<boolean>
  const out: Array<ContentWord> = []
  for (let i = 0; i < lemmas.length; i++) {
    const tag = tags[i]!
    if (stop[i] || !(tag in contentPos) || (types[i] !== "word" && types[i] !== "number")) continue
    out.push({ lemma: lemmas[i]!, stem: stems[i]!, pos: contentPos[tag] })
  }
  return out
}

