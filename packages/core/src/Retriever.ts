/**
 * The retrieval stage: rank the prior sessions of a query and select the ones passed on.
 *
 * A retriever receives a {@link RetrievalInput} built from the visible {@link Query} only. The one
 * exception is a plugin that declares `needsGold: true` (the oracle): it is built as a
 * {@link GoldService} and is the only retriever the pipeline hands the gold labels to.
 *
 * @example
 * import { Retriever } from "@cupid-lab/core"
 * const service: Retriever.Service = {
 *   needsSummaries: false,
 *   retrieve: ({ query }) => Effect.succeed(Retriever.fromScores(query.sessions.map((s) => [s.id, s.index]), 2))
 * }
 */
import type { Effect } from "effect"
import type { Gold, Query, SessionSummary } from "./Domain.js"
import { attempt, type StageError } from "./Errors.js"

export interface RankedSession {
  readonly sessionId: string
  readonly score: number
}

/** A turn a ranker scored: its session, its 0-based place in the session's dialogue, its score. */
export interface RankedTurn {
  readonly sessionId: string
  readonly turn: number
  readonly score: number
}

export interface Retrieval {
  /** Every session the retriever scored, best first. */
  readonly ranking: ReadonlyArray<RankedSession>
  /** The sessions passed on to the next stage, in chronological order. */
  readonly selected: ReadonlyArray<string>
  /**
   * Rankers that score turns (`granularity: turn`): every turn they scored, best first; `ranking`
   * then holds each session at its best turn's score. Metrics that follow LongMemEval score this
   * turn ranking at session level (docs/metrics.md).
   */
  readonly turns?: ReadonlyArray<RankedTurn>
}

export interface RetrievalInput {
  readonly query: Query
  /** Present when the retriever asked for summaries (`needsSummaries`) and a summarizer is configured. */
  readonly summaries?: ReadonlyMap<string, SessionSummary>
}

/** What a retriever learned before the sweep (a fit on training data), recorded in the run's run.json. */
export interface Fit {
  /** The training source as configured, and its fingerprint. */
  readonly train: string
  readonly trainFingerprint: string
  /** Fitted parameters and facts about the fit (sizes, weights), as plain JSON. */
  readonly parameters: Readonly<Record<string, unknown>>
}

export interface Service {
  /** True when the retriever ranks session summaries: the pipeline summarizes every session first. */
  readonly needsSummaries: boolean
  /** Present when the plugin fitted something on training data. */
  readonly fit?: Fit
  readonly retrieve: (input: RetrievalInput) => Effect.Effect<Retrieval, StageError>
  /**
   * The same retrieval as a plain function, for a retriever that waits on nothing (no model, no
   * file, no summary): a sweep runs a cell whose every stage has one without Effect, pairs in
   * batches. It throws a StageError where `retrieve` fails. Made by {@link plain}, which derives
   * `retrieve` from it, so that the two are one definition.
   */
  readonly now?: (input: RetrievalInput) => Retrieval
}

/** Only for plugins that declare `needsGold: true`. */
export interface GoldService {
  readonly needsSummaries: boolean
  readonly retrieve: (input: RetrievalInput, gold: Gold) => Effect.Effect<Retrieval, StageError>
  /** As {@link Service.now}, with the gold labels; made by {@link plainGold}. */
  readonly now?: (input: RetrievalInput, gold: Gold) => Retrieval
}

/** A retriever computed at once (see {@link Service.now}): `retrieve` runs `now`. */
export const plain = (
  service: Omit<Service, "retrieve" | "now">,
  now: (input: RetrievalInput) => Retrieval
): Service => ({ ...service, now, retrieve: (input) => attempt(() => now(input)) })

/** A gold-reading retriever computed at once: `retrieve` runs `now`. */
export const plainGold = (
  service: Omit<GoldService, "retrieve" | "now">,
  now: (input: RetrievalInput, gold: Gold) => Retrieval
): GoldService => ({ ...service, now, retrieve: (input, gold) => attempt(() => now(input, gold)) })

const byIndex = (id: string): number => Number(id.slice(1))

/**
 * Build a retrieval from per-session scores: ranking sorted by score (ties broken by the more recent
 * session first, then id, so results are deterministic); the top `k` are selected (all when k is
 * undefined), returned in chronological order.
 */
export const fromScores = (scores: ReadonlyArray<readonly [string, number]>, k?: number): Retrieval => {
  const ranking = scores
    .map(([sessionId, score]) => ({ sessionId, score }))
    .sort(
      (a, b) => b.score - a.score || byIndex(b.sessionId) - byIndex(a.sessionId) || (a.sessionId < b.sessionId ? -1 : 1)
    )
  const top = k === undefined ? ranking : ranking.slice(0, Math.max(0, k))
  return { ranking, selected: chronological(top.map((r) => r.sessionId)) }
}

/**
 * Build a retrieval from per-turn scores: the turn ranking sorted by score (ties: the more recent
 * session first, then the earlier turn), and each session ranked at its best turn's score, as
 * {@link fromScores} ranks sessions, so the sessions come in the order their first turn appears
 * in the turn ranking. Sessions with no scored turn are not ranked. The top `k` sessions are
 * selected (all when k is undefined).
 */
export const fromTurnScores = (
  scores: ReadonlyArray<readonly [sessionId: string, turn: number, score: number]>,
  k?: number
): Retrieval => {
  const turns = scores
    .map(([sessionId, turn, score]) => ({ sessionId, turn, score }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        byIndex(b.sessionId) - byIndex(a.sessionId) ||
        (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0) ||
        a.turn - b.turn
    )
  const best = new Map<string, number>()
  for (const t of turns) if (!best.has(t.sessionId)) best.set(t.sessionId, t.score)
  return { ...fromScores([...best], k), turns }
}

/** Session ids sorted by their chronological position. */
export const chronological = (ids: ReadonlyArray<string>): ReadonlyArray<string> =>
  [...ids].sort((a, b) => byIndex(a) - byIndex(b))
