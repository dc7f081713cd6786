import * as Text from "../Text.js"

/**
 * How strongly each text names the same thing as the request: the best phrase the two share, where
 * a phrase is a run of consecutive content words (lemmas; stopwords skipped, punctuation breaks
 * runs) found in both.
 *
 * A shared run scores the summed weight of its words times its length, so a shared multi-word name
 * ("Hartwell Family Foundation", "toast for my parents' anniversary") outweighs shared single
 * words and short task phrases ("plan a meeting"). Nouns weigh 1, adjectives 0.75, verbs and
 * adverbs 0.5; name-like words of the request (proper nouns, capitalized, with digits) double.
 * Words found in more than half of the texts (the user's own project, employer, hobby, or stock
 * phrasing) lose weight smoothly: they say who the user is, not which factor a session is about.
 */
export const scores = (request: string, texts: ReadonlyArray<string>): Array<number> => {
  const req = Text.analyze(request).words
  const docs = texts.map((t) => Text.analyze(t))
  const n = docs.length
  const df = new Map<string, number>()
  for (const d of docs) for (const l of new Set(d.lemmas)) df.set(l, (df.get(l) ?? 0) + 1)
  const half = Math.max(1, n / 2)
  const spread = (l: string): number => {
    const d = df.get(l) ?? 0
    return d <= half ? 1 : Math.log((n + 1) / (d + 0.5)) / Math.log((n + 1) / (half + 0.5))
  }
  const weights = req.map((w) => (w === undefined ? 0 : posWeight(w.pos) * (w.name ? 2 : 1) * spread(w.lemma)))
  return docs.map((d) => {
    const positions = new Map<string, Array<number>>()
    d.words.forEach((w, j) => {
      if (w !== undefined) positions.set(w.lemma, [...(positions.get(w.lemma) ?? []), j])
    })
    let best = 0
    req.forEach((w, i) => {
      if (w === undefined) return
      for (const j of positions.get(w.lemma) ?? []) {
        let sum = 0, length = 0
        for (;;) {
          const a = req[i + length], b = d.words[j + length]
          if (a === undefined || b === undefined || a.lemma !== b.lemma) break
          sum += weights[i + length]!
          length++
        }
        if (sum * length > best) best = sum * length
      }
    })
    return best
  })
}

const posWeight = (pos: string): number =>
  pos === "NOUN" || pos === "PROPN" || pos === "NUM" || pos === "X" ? 1 : pos === "ADJ" ? 0.75 : 0.5
