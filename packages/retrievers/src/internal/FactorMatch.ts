import * as Text from "../Text.js"

/**
 * How strongly each text names the factor the request names, in [0, 1].
 *
 * Texts and request are compared as runs of consecutive content words (lemmas; stopwords skipped,
 * punctuation breaks runs). The request is split into noun chunks (at prepositions, conjunctions,
 * "to" and around verbs: "choose | the right settings | on my gravel bike"). A run's value is, per
 * chunk it covers, the summed weight of its words there times their number, so multi-word names
 * outweigh single words while task wording joined to the factor phrase only adds to it rather than
 * multiplying it (the task phrase must not outweigh the factor phrase in the sessions that word the
 * task differently): nouns weigh 1, adjectives 0.75, verbs and adverbs 0.5;
 * name-like words of the request (proper nouns, capitalized, with digits) double; words found in
 * more than half of the texts (the user's own project, employer or stock phrasing) lose weight.
 *
 * The anchor is the most valuable run (or part of a run) the request shares with at least two
 * texts: a factor recurs across the user's sessions, while a task phrase the request happens to
 * share with one other session does not (when nothing is shared twice, the most valuable run shared
 * once is used). Among candidates, value times the square root of the number of texts sharing the
 * run decides. Each text scores the value of the largest part of the anchor it contains, relative
 * to the anchor's value.
 */
export const scores = (
  request: string,
  texts: ReadonlyArray<string>,
  analyzer: Text.Analyzer = Text.fresh()
): Array<number> => {
  const req = analyzer.analyze(request).words
  const docs = texts.map((t) => analyzer.analyze(t))
  const n = docs.length
  const df = new Map<string, number>()
  for (const d of docs) for (const l of new Set(d.lemmas)) df.set(l, (df.get(l) ?? 0) + 1)
  const half = Math.max(1, n / 2)
  const spread = (l: string): number => {
    const d = df.get(l) ?? 0
    return d <= half ? 1 : Math.log((n + 1) / (d + 0.5)) / Math.log((n + 1) / (half + 0.5))
  }
  const weights = req.map((w) => (w === undefined ? 0 : posWeight(w.pos) * (w.name ? 2 : 1) * spread(w.lemma)))
  // A phrase's value: per noun chunk it covers, the chunk part's weight times its length.
  const value = (from: number, to: number): number => {
    let total = 0,
      sum = 0,
      length = 0
    for (let i = from; i < to; i++) {
      if (i > from && req[i]!.chunkStart) {
        total += sum * length
        sum = 0
        length = 0
      }
      sum += weights[i]!
      length++
    }
    return total + sum * length
  }

  // Per text, the maximal runs it shares with the request, as request spans [from, to).
  const runs = docs.map((d) => {
    const positions = new Map<string, Array<number>>()
    d.words.forEach((w, j) => {
      if (w !== undefined) positions.set(w.lemma, [...(positions.get(w.lemma) ?? []), j])
    })
    const spans: Array<readonly [number, number]> = []
    req.forEach((w, i) => {
      if (w === undefined) return
      for (const j of positions.get(w.lemma) ?? []) {
        // Only runs that start here: the previous words differ (or either text starts a phrase).
        const before = req[i - 1],
          other = d.words[j - 1]
        if (before !== undefined && other !== undefined && before.lemma === other.lemma) continue
        let length = 0
        while (req[i + length] !== undefined && req[i + length]!.lemma === d.words[j + length]?.lemma) length++
        spans.push([i, i + length])
      }
    })
    return spans
  })
  const covers = (spans: ReadonlyArray<readonly [number, number]>, from: number, to: number) =>
    spans.some(([a, b]) => a <= from && to <= b)

  let anchor: readonly [number, number] | undefined
  let anchorValue = 0,
    anchorSupport = 0,
    anchorMerit = 0
  const seen = new Set<string>()
  for (const spans of runs) {
    for (const [a, b] of spans) {
      for (let from = a; from < b; from++) {
        for (let to = from + 1; to <= b; to++) {
          const key = `${from}:${to}`
          if (seen.has(key)) continue
          seen.add(key)
          const v = value(from, to)
          if (v <= 0) continue
          const texts = runs.reduce((s, r) => s + (covers(r, from, to) ? 1 : 0), 0)
          const support = Math.min(2, texts)
          // Among runs shared as often, the more valuable wins; being shared by more texts helps a little.
          const merit = v * Math.sqrt(texts)
          if (support > anchorSupport || (support === anchorSupport && merit > anchorMerit)) {
            anchorMerit = merit
            anchor = [from, to]
            anchorValue = v
            anchorSupport = support
          }
        }
      }
    }
  }
  if (anchor === undefined) return docs.map(() => 0)
  const [from, to] = anchor
  return runs.map((spans) => {
    let best = 0
    for (const [a, b] of spans) {
      const lo = Math.max(a, from),
        hi = Math.min(b, to)
      if (hi > lo) best = Math.max(best, value(lo, hi))
    }
    return best / anchorValue
  })
}

const posWeight = (pos: string): number =>
  pos === "NOUN" || pos === "PROPN" || pos === "NUM" || pos === "X" ? 1 : pos === "ADJ" ? 0.75 : 0.5
