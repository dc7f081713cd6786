import * as Text from "../Text.js"

/** What the user said after their opening message: the feedback that reveals the preference. */
export const feedbackText = (dialogue: ReadonlyArray<{ readonly role: string; readonly content: string }>): string =>
  dialogue
    .filter((m) => m.role === "user")
    .slice(1)
    .map((m) => m.content)
    .join("\n")

type Vector = ReadonlyMap<string, number>

const bag = (text: string, analyzer: Text.Analyzer): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const l of analyzer.lemmas(text)) counts.set(l, (counts.get(l) ?? 0) + 1)
  return counts
}

/** Unit TF-IDF vectors of `texts`, with document frequencies taken from `background`. */
const tfidf = (
  texts: ReadonlyArray<string>,
  background: ReadonlyArray<string>,
  analyzer: Text.Analyzer
): Array<Vector> => {
  const df = new Map<string, number>()
  for (const t of background) for (const l of new Set(analyzer.lemmas(t))) df.set(l, (df.get(l) ?? 0) + 1)
  const n = background.length
  return texts.map((t) => {
    const v = new Map<string, number>()
    let norm = 0
    for (const [l, c] of bag(t, analyzer)) {
      const w = (1 + Math.log(c)) * Math.log((n + 1) / ((df.get(l) ?? 0) + 0.5))
      v.set(l, w)
      norm += w * w
    }
    if (norm > 0) for (const [l, w] of v) v.set(l, w / Math.sqrt(norm))
    return v
  })
}

const cosine = (a: Vector, b: Vector): number => {
  let s = 0
  for (const [l, w] of a) s += w * (b.get(l) ?? 0)
  return s
}

export interface Split {
  /** Index (in the given order) of the first session of the later group. */
  readonly at: number
  readonly within: number
  readonly across: number
}

/**
 * The chronological split of same-factor sessions into an earlier and a later group that best
 * separates their feedback: mean similarity within the groups against mean similarity across.
 * Feedback vectors are TF-IDF over lemmas, with document frequencies from `background` (the
 * feedback of every session of the history), so words the user says everywhere count little.
 * Each group holds at least `minGroup` sessions. Returns undefined when no split has a pair inside a
 * group to compare (fewer than 3 sessions, or fewer than 2 x minGroup).
 */
export const bestSplit = (
  feedback: ReadonlyArray<string>,
  background: ReadonlyArray<string>,
  minGroup = 1,
  analyzer: Text.Analyzer = Text.fresh()
): Split | undefined => {
  const vectors = tfidf(feedback, background, analyzer)
  const n = vectors.length
  const sim = vectors.map((a) => vectors.map((b) => cosine(a, b)))
  let best: Split | undefined
  for (let at = Math.max(1, minGroup); at <= n - Math.max(1, minGroup); at++) {
    let within = 0,
      withinPairs = 0,
      across = 0,
      acrossPairs = 0
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        if (i < at === j < at) {
          within += sim[i]![j]!
          withinPairs++
        } else {
          across += sim[i]![j]!
          acrossPairs++
        }
      }
    }
    if (withinPairs === 0) continue
    const split = { at, within: within / withinPairs, across: across / acrossPairs }
    if (best === undefined || split.within - split.across > best.within - best.across) best = split
  }
  return best
}

/**
 * The later group when the feedback of later sessions departs from the earlier ones: the best
 * split's within-group similarity must be at least `minContrast` times its across-group
 * similarity. Otherwise every session is kept.
 */
export const currentGroup = <S>(
  sessions: ReadonlyArray<S>,
  feedback: ReadonlyArray<string>,
  background: ReadonlyArray<string>,
  minContrast: number,
  minGroup: number,
  analyzer: Text.Analyzer
): ReadonlyArray<S> => {
  const split = bestSplit(feedback, background, minGroup, analyzer)
  if (split === undefined) return sessions
  const changed = split.within > 0 && split.within >= minContrast * split.across
  return changed ? sessions.slice(split.at) : sessions
}
