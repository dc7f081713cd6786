/**
 * The `retrieval-at-k` scorer: LongMemEval's ranking metrics (Wu et al., ICLR 2025; their
 * `src/retrieval/eval_utils.py`), per instance and cut-off k:
 *
 * - `retrieval.recall_any@k`: 1 when a relevant session is among the first k ranked, else 0.
 * - `retrieval.recall_all@k`: 1 when every relevant session is, else 0.
 * - `retrieval.ndcg_any@k`: nDCG with binary gains and LongMemEval's discount: DCG =
 *   rel_1 + sum over positions i = 2..k of rel_i / log2(i) (the first two positions both count
 *   fully), ideal DCG from the instance's relevant sessions. It differs from `retrieval.ndcg@k`,
 *   whose discount is 1 / log2(i + 1).
 *
 * A retrieval with a turn ranking (`granularity: turn`) is scored at session level as LongMemEval
 * scores turn rankings: k grows until the first k ranked turns cover k distinct sessions (or the
 * turns run out), each turn stands for its session, and the nDCG counts every turn of a relevant
 * session as relevant, its ideal from all ranked turns of relevant sessions. With `levels: [turn]`
 * the same three metrics are computed over turns (`retrieval.turn_recall_any@k`, ...), a turn being
 * relevant when the benchmark marks it as evidence (LongMemEval `has_answer`, LoCoMo evidence ids).
 *
 * Instances without a relevant session (questions without evidence, Domain.WithoutEvidence) score
 * NaN, so means leave them out, as LongMemEval leaves out its abstention questions.
 *
 * @example
 * // scorers: [{ use: retrieval-at-k, ks: [5, 10] }]
 * import { RetrievalAtK } from "@cupid-lab/scorers"
 * RetrievalAtK.compute(instance, trace, [5], ["session"])["retrieval.recall_any@5"]
 */
import { type Domain, Plugin, type Retriever, Scorer, type Trace } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import { effectiveRetrieval, normalizeKs } from "./Retrieval.js"

export const name = "retrieval-at-k"

export const Level = Schema.Literal("session", "turn")
export type Level = typeof Level.Type

export const Options = Schema.Struct({
  ks: Schema.optionalWith(Schema.NonEmptyArray(Schema.Int.pipe(Schema.positive())), {
    default: () => [5, 10] as const
  }),
  /** `session` (always) and `turn` (evidence turns, for rankers that rank turns). */
  levels: Schema.optionalWith(Schema.NonEmptyArray(Level), { default: () => ["session"] as const })
})
export type Options = typeof Options.Type

/** LongMemEval's DCG of binary gains over the first k: rel_1 + sum_{i >= 2} rel_i / log2(i). */
export const dcg = (relevances: ReadonlyArray<number>, k: number): number => {
  let total = 0
  for (let i = 0; i < Math.min(k, relevances.length); i++)
    total += i === 0 ? relevances[0]! : relevances[i]! / Math.log2(i + 1)
  return total
}

export interface AtK {
  readonly recallAny: number
  readonly recallAll: number
  readonly ndcg: number
}

/**
 * The three metrics of a ranking of ids at k, given which ids are relevant and how many relevant
 * items the collection has (for the ideal DCG); repeated ids count at each place, as in
 * LongMemEval's turn-to-session scoring.
 */
export const atK = (
  ranking: ReadonlyArray<string>,
  relevant: ReadonlySet<string>,
  relevantItems: number,
  k: number
): AtK => {
  if (relevant.size === 0) return { recallAny: NaN, recallAll: NaN, ndcg: NaN }
  const top = ranking.slice(0, k)
  const found = new Set(top.filter((id) => relevant.has(id)))
  const ideal = dcg(
    Array.from({ length: relevantItems }, () => 1),
    k
  )
  return {
    recallAny: found.size > 0 ? 1 : 0,
    recallAll: found.size === relevant.size ? 1 : 0,
    ndcg:
      ideal === 0
        ? 0
        : dcg(
            top.map((id) => (relevant.has(id) ? 1 : 0)),
            k
          ) / ideal
  }
}

/** LongMemEval's cut-off for a turn ranking: the smallest k' >= k whose first k' turns cover k distinct sessions, or past the end. */
export const effectiveK = (sessions: ReadonlyArray<string>, k: number): number => {
  let effective = k
  while (effective <= sessions.length && new Set(sessions.slice(0, effective)).size < k) effective++
  return effective
}

const relevantSessions = (instance: Domain.Instance): ReadonlySet<string> =>
  new Set(instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id))

/** Session level: the session ranking, or a turn ranking scored at session level. */
export const sessionAtK = (instance: Domain.Instance, retrieval: Retriever.Retrieval, k: number): AtK => {
  const relevant = relevantSessions(instance)
  if (retrieval.turns === undefined)
    return atK(
      retrieval.ranking.map((r) => r.sessionId),
      relevant,
      relevant.size,
      k
    )
  const sessions = retrieval.turns.map((t) => t.sessionId)
  return atK(sessions, relevant, sessions.filter((id) => relevant.has(id)).length, effectiveK(sessions, k))
}

const turnId = (sessionId: string, turn: number) => `${sessionId}#${turn}`

/** Turn level: the turn ranking against the evidence turns it ranks (NaN without either). */
export const turnAtK = (instance: Domain.Instance, retrieval: Retriever.Retrieval, k: number): AtK => {
  if (retrieval.turns === undefined) return { recallAny: NaN, recallAll: NaN, ndcg: NaN }
  const ranked = retrieval.turns.map((t) => turnId(t.sessionId, t.turn))
  const inRanking = new Set(ranked)
  const evidence = new Set(
    instance.gold.sessions
      .filter((s) => s.label === "relevant")
      .flatMap((s) => (s.evidenceTurns ?? []).map((t) => turnId(s.id, t)))
      .filter((id) => inRanking.has(id))
  )
  return atK(ranked, evidence, evidence.size, k)
}

const prefixes: Readonly<Record<Level, string>> = { session: "retrieval.", turn: "retrieval.turn_" }

/** The declared metrics for a set of cut-offs and levels. */
export const metricsFor = (ks: ReadonlyArray<number>, levels: ReadonlyArray<Level>): ReadonlyArray<Scorer.MetricInfo> =>
  (["session", "turn"] as const)
    .filter((l) => levels.includes(l))
    .flatMap((level) =>
      normalizeKs(ks).flatMap((k) => {
        const what = level === "session" ? "relevant session" : "evidence turn"
        const of =
          level === "session" ? "ranked sessions (a turn ranking: the first turns covering k sessions)" : "ranked turns"
        return [
          Scorer.metric({
            name: `${prefixes[level]}recall_any@${k}`,
            family: "retrieval",
            description: `1 when a ${what} is among the first ${k} ${of}, else 0 (LongMemEval).`
          }),
          Scorer.metric({
            name: `${prefixes[level]}recall_all@${k}`,
            family: "retrieval",
            description: `1 when every ${what} is among the first ${k} ${of}, else 0 (LongMemEval).`
          }),
          Scorer.metric({
            name: `${prefixes[level]}ndcg_any@${k}`,
            family: "retrieval",
            description: `nDCG of the first ${k} ${of}, LongMemEval's discount (positions 1 and 2 count fully, then 1/log2(i)).`
          })
        ]
      })
    )

/** Every metric for one instance. */
export const compute = (
  instance: Domain.Instance,
  trace: Trace.Trace,
  ks: ReadonlyArray<number>,
  levels: ReadonlyArray<Level>
): Record<string, number> => {
  const retrieval = effectiveRetrieval(instance, trace)
  const out: Record<string, number> = {}
  for (const level of levels) {
    for (const k of normalizeKs(ks)) {
      const m = level === "session" ? sessionAtK(instance, retrieval, k) : turnAtK(instance, retrieval, k)
      out[`${prefixes[level]}recall_any@${k}`] = m.recallAny
      out[`${prefixes[level]}recall_all@${k}`] = m.recallAll
      out[`${prefixes[level]}ndcg_any@${k}`] = m.ndcg
    }
  }
  return out
}

export const plugin = Plugin.scorer({
  name,
  description:
    "LongMemEval's recall_any@k, recall_all@k and nDCG@k of the ranking, turn rankings scored at session level.",
  options: Options,
  make: ({ ks, levels }) =>
    Effect.succeed(
      Scorer.plain({ metrics: metricsFor(ks, [...new Set(levels)]) }, ({ instance, trace }) =>
        compute(instance, trace, ks, [...new Set(levels)])
      )
    )
})
