// The extractive inferrer's heuristic: find the user's feedback sentences that carry requirements,
// score them, and compose the best ones into one preference statement. See docs/stages.md.
import type { Evidence } from "../../Evidence.js"
import { capitalized, continuing, cueScore, isPositiveClose, toClause } from "./cues.js"
import { orderedSummaries } from "./evidence.js"
import {
  contentStems,
  firstSentence,
  firstWords,
  isStopword,
  overlap,
  sentences,
  stem,
  wordCount,
  words
} from "./text.js"

export interface Settings {
  readonly maxWords: number
  readonly maxClauses: number
}

export const weights = { agreement: 1, recency: 1.5, requestOverlap: 0.5 } as const
/** A session is about the request's context when its opening has this share of the best session's request words. */
export const contextShare = 0.6
/** A sentence needs at least this cue strength to be a candidate. */
export const minCue = 2
/** Cue strength counts up to this much: past it a sentence is no more of a requirement. */
export const maxCue = 4
/** Summary preference bullets are requirements already: they enter with this cue strength. */
export const summaryCue = 3
/** Clauses after the first must score at least this share of the best one. */
export const keepRatio = 0.5
/** The first clause may run this many words past the budget before it is cut. */
export const firstClauseSlack = 10

interface Source {
  readonly sessionId: string
  /** Where the session names its context: the first user message (or the summary's context bullets). */
  readonly text: string
  readonly units: ReadonlyArray<{ readonly text: string; readonly cue?: number }>
}

interface Candidate {
  readonly sessionId: string
  /** Chronological position among the evidence sessions (0 = oldest). */
  readonly position: number
  /** Order of the sentence within its session, for deterministic ties. */
  readonly order: number
  readonly clause: string
  readonly stems: ReadonlySet<string>
  readonly cue: number
}

interface Scored extends Candidate {
  readonly score: number
  /** Other sessions with a candidate that shares this one's requirement words. */
  readonly agreeing: ReadonlySet<string>
}

/** Sentences longer than the budget are split at commas, semicolons, colons and dashes. */
const units = (sentence: string, maxWords: number): ReadonlyArray<string> =>
  wordCount(sentence) <= maxWords
    ? [sentence]
    : sentence.split(/\s*[,;:]\s+|\s+[-\u2013\u2014]\s+/).filter((s) => wordCount(s) >= 3)

const fromSessions = (evidence: Evidence, maxWords: number): ReadonlyArray<Source> =>
  [...evidence.sessions]
    .sort((a, b) => a.index - b.index)
    .map((s) => {
      const userTurns = s.dialogue.filter((m) => m.role === "user").map((m) => m.content)
      // The first user message states the task; a short positive last turn only closes the session.
      const feedback = userTurns.slice(1)
      const last = feedback[feedback.length - 1]
      if (last !== undefined && isPositiveClose(last)) feedback.pop()
      return {
        sessionId: s.id,
        text: userTurns[0] ?? "",
        units: feedback.flatMap((turn) =>
          sentences(turn).flatMap((sentence) => units(sentence, maxWords).map((text) => ({ text })))
        )
      }
    })

const fromSummaries = (evidence: Evidence): ReadonlyArray<Source> =>
  orderedSummaries(evidence).map((s) => ({
    sessionId: s.sessionId,
    text: s.context.join("\n"),
    units: s.preferences.map((text) => ({ text, cue: summaryCue }))
  }))

/**
 * Per source, how much its opening names what the request is about: the idf-weighted request
 * words it contains (names count double), relative to the best source (0..1; all 0 when no source
 * shares a word with the request).
 */
const relevance = (sources: ReadonlyArray<Source>, request: string): ReadonlyArray<number> => {
  const stems = sources.map((s) => contentStems(s.text))
  const names = nameStems(request)
  const weightOf = new Map(
    [...contentStems(request)].map((w) => {
      const df = stems.filter((st) => st.has(w)).length
      return [w, df === 0 ? 0 : Math.log(1 + sources.length / df) * (names.has(w) ? 2 : 1)] as const
    })
  )
  const raw = stems.map((own) => {
    let sum = 0
    for (const [w, weight] of weightOf) if (own.has(w)) sum += weight
    return sum
  })
  const best = Math.max(0, ...raw)
  return raw.map((r) => (best === 0 ? 0 : r / best))
}

/** Stems of the capitalized words inside sentences of a text: likely names (people, products, places). */
const nameStems = (text: string): Set<string> =>
  new Set(
    sentences(text).flatMap((sentence) =>
      words(sentence)
        .slice(1)
        .filter((w) => /^[A-Z]/.test(w) && !isStopword(w))
        .map(stem)
    )
  )

const agrees = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => {
  const shared = overlap(a, b)
  return shared >= 2 || (shared >= 1 && shared / Math.min(a.size, b.size) >= 0.5)
}

/** Two clauses say the same thing: mostly the same words, or (from different sessions) the same requirement restated. */
const duplicates = (a: Candidate, b: Candidate): boolean => {
  if (a.sessionId !== b.sessionId && agrees(a.stems, b.stems)) return true
  const smaller = Math.min(a.stems.size, b.stems.size)
  return smaller === 0 || overlap(a.stems, b.stems) / smaller >= 0.5
}

const candidatesOf = (sources: ReadonlyArray<Source>): ReadonlyArray<Candidate> =>
  sources.flatMap((source, position) =>
    source.units.flatMap((unit, order) => {
      const cue = unit.cue ?? cueScore(unit.text).score
      const clause = toClause(unit.text)
      if (cue < minCue || wordCount(clause) < 2) return []
      return [{ sessionId: source.sessionId, position, order, clause, stems: contentStems(clause), cue }]
    })
  )

const score = (
  candidates: ReadonlyArray<Candidate>,
  sources: ReadonlyArray<Source>,
  request: string
): ReadonlyArray<Scored> => {
  const requestStems = contentStems(request)
  const last = Math.max(1, sources.length - 1)
  return candidates.map((c) => {
    const agreeing = new Set(
      candidates.filter((d) => d.sessionId !== c.sessionId && agrees(c.stems, d.stems)).map((d) => d.sessionId)
    )
    const s =
      Math.min(maxCue, c.cue) +
      weights.agreement * Math.min(2, agreeing.size) +
      weights.recency * (sources.length === 1 ? 1 : c.position / last) +
      weights.requestOverlap * Math.min(2, overlap(c.stems, requestStems))
    return { ...c, score: Math.round(s * 1000) / 1000, agreeing }
  })
}

/**
 * The candidates from the sessions about the request's context: those whose opening shares at
 * least `contextShare` of the best session's request words. All candidates when none of those
 * sessions has one (or no session shares a word with the request).
 */
const inContext = (
  candidates: ReadonlyArray<Candidate>,
  sources: ReadonlyArray<Source>,
  request: string
): ReadonlyArray<Candidate> => {
  const rel = relevance(sources, request)
  const kept = candidates.filter((c) => rel[c.position]! >= contextShare)
  return kept.length > 0 ? kept : candidates
}

const byScore = (a: Scored, b: Scored): number =>
  b.score - a.score ||
  b.position - a.position ||
  a.order - b.order ||
  (a.clause < b.clause ? -1 : a.clause > b.clause ? 1 : 0)

/**
 * Greedy, best first. Later clauses come from the best clause's session or from sessions that echo
 * it (a CUPID session hints at every item of its preference, so one session and its echoes give a
 * coherent statement, and a stale or other-context session does not get mixed in); near-duplicates
 * and clauses that would break the word budget are skipped.
 */
const select = (scored: ReadonlyArray<Scored>, settings: Settings): ReadonlyArray<Scored> => {
  const ranked = [...scored].sort(byScore)
  const best = ranked[0]
  if (best === undefined) return []
  const linked = new Set([best.sessionId])
  for (const c of scored) if (c.sessionId === best.sessionId) for (const s of c.agreeing) linked.add(s)
  const chosen: Array<Scored> = [best]
  let words = Math.min(wordCount(best.clause), settings.maxWords + firstClauseSlack)
  for (const c of ranked.slice(1)) {
    if (chosen.length >= settings.maxClauses || c.score < keepRatio * best.score) break
    if (!linked.has(c.sessionId) || chosen.some((k) => duplicates(k, c))) continue
    const n = wordCount(c.clause)
    if (words + n > settings.maxWords) continue
    chosen.push(c)
    words += n
  }
  return chosen
}

const compose = (clauses: ReadonlyArray<string>, settings: Settings): string => {
  const [first, ...rest] = clauses
  if (first === undefined) return ""
  const limit = settings.maxWords + firstClauseSlack
  const head = wordCount(first) > limit ? firstWords(first, limit) : first
  return `${[capitalized(head), ...rest.map(continuing)].join("; ")}.`
}

export interface Extraction {
  readonly preference: string
  readonly analysis: string
}

/** No usable sentence: a plain statement that names the request and claims no requirement. */
const fallback = (request: string, sessions: number): Extraction => {
  const gist = firstWords(firstSentence(request).replace(/[\s.!?]+$/, ""), 20)
  const why =
    sessions === 0
      ? "no evidence sessions"
      : `no feedback sentence with a requirement cue in ${sessions} evidence session(s)`
  return {
    preference: `Respond to the request as stated ("${gist}"), with no earlier requirement to apply.`,
    analysis: `Extractive heuristic (no model): ${why}; fallback statement derived from the request.`
  }
}

/** The preference statement for a request from its evidence (summaries' preference bullets when present). */
export const extract = (request: string, evidence: Evidence, settings: Settings): Extraction => {
  const usesSummaries = evidence.summaries !== undefined
  const sources = usesSummaries ? fromSummaries(evidence) : fromSessions(evidence, settings.maxWords)
  const candidates = candidatesOf(sources)
  if (candidates.length === 0) return fallback(request, sources.length)
  const chosen = select(score(inContext(candidates, sources, request), sources, request), settings)
  const from = new Set(candidates.map((c) => c.sessionId)).size
  const picked = chosen.map((c) => `${c.sessionId} (${c.score.toFixed(2)})`).join(", ")
  const kind = usesSummaries ? "summary preference bullet(s)" : "feedback sentence(s)"
  return {
    preference: compose(
      chosen.map((c) => c.clause),
      settings
    ),
    analysis:
      `Extractive heuristic (no model): ${candidates.length} ${kind} from ${from} of ${sources.length} session(s); ` +
      `composed from ${picked}.`
  }
}
