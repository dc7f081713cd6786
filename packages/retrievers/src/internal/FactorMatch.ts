import * as Text from "../Text.js"

/**
 * How strongly each text names the same thing as the request: the best match between one mention
 * of the request (proper noun, named entity or noun chunk) and one mention of the text.
 *
 * A match scores the summed weight of the shared lemmas times how many there are, so a shared
 * multi-word name ("Hartwell Family Foundation", "Prusa MK4") outweighs a shared single word.
 * Name-like words of the request (proper nouns, capitalized or with digits) weigh double. Words
 * found in more than half of the texts (the user's own project, employer, hobby) lose weight
 * smoothly: they say who the user is, not which factor a session is about.
 */
export const scores = (request: string, texts: ReadonlyArray<string>): Array<number> => {
  const req = Text.analyze(request)
  const docs = texts.map((t) => Text.analyze(t))
  const n = docs.length
  const df = new Map<string, number>()
  for (const d of docs) for (const l of new Set(d.lemmas)) df.set(l, (df.get(l) ?? 0) + 1)
  const half = Math.max(1, n / 2)
  const spread = (l: string): number => {
    const d = df.get(l) ?? 0
    return d <= half ? 1 : Math.log((n + 1) / (d + 0.5)) / Math.log((n + 1) / (half + 0.5))
  }
  const weights = new Map<string, number>()
  for (const m of req.mentions) for (const l of m.lemmas) weights.set(l, (req.names.has(l) ? 2 : 1) * spread(l))
  const requestMentions = req.mentions.map((m) => [...new Set(m.lemmas)])
  return docs.map((d) => {
    let best = 0
    for (const dm of d.mentions) {
      const lemmas = new Set(dm.lemmas)
      for (const rm of requestMentions) {
        let sum = 0, shared = 0
        for (const l of rm) {
          if (!lemmas.has(l)) continue
          sum += weights.get(l)!
          shared++
        }
        if (sum * shared > best) best = sum * shared
      }
    }
    return best
  })
}
