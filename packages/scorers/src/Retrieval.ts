/**
 * The `retrieval` scorer: how well a cell's retriever found the prior sessions that share the
 * current factor and preference (gold label `relevant`), and how many stale (same factor, old
 * preference) or other sessions it passed on.
 *
 * A trace without a retrieval (a cell with no retriever) counts every session as selected and
 * ranks them most recent first, which is what the later stages then see.
 *
 * @example
 * // scorers: [{ use: retrieval, ks: [2, 4] }]
 * import { Retrieval } from "@cupid-lab/scorers"
 * Retrieval.compute(instance, trace, [2, 4])["retrieval.ndcg@2"]
 */
import { type Domain, Plugin, type Retriever, Scorer, type Trace } from "@cupid-lab/core"
import { Effect, Schema } from "effect"

export const name = "retrieval"

export const Options = Schema.Struct({
  /** Cut-offs for nDCG@k. */
  ks: Schema.optionalWith(Schema.NonEmptyArray(Schema.Int.pipe(Schema.positive())), {
    default: () => [2, 4] as const
  })
})
export type Options = typeof Options.Type

const info = (
  metric: string,
  description: string,
  more: Partial<Pick<Scorer.MetricInfo, "direction" | "headline" | "mainRank" | "family">> = {}
): Scorer.MetricInfo => Scorer.metric({ name: `retrieval.${metric}`, description, family: "retrieval", ...more })

/** The declared metrics for a set of cut-offs (duplicates removed, ascending). */
export const metricsFor = (ks: ReadonlyArray<number>): ReadonlyArray<Scorer.MetricInfo> => [
  info("precision", "Relevant selected sessions / selected sessions (NaN when nothing is selected).", {
    headline: true
  }),
  info("recall", "Relevant selected sessions / relevant sessions (NaN when the instance has no relevant session).", {
    headline: true
  }),
  info(
    "f1",
    "Per-instance F1 of the selection's precision and recall (0 when nothing relevant is selected, NaN without relevant sessions), macro mean. The main metric of retrieval-only sweeps: passing every session on scores recall 1 but a low F1.",
    { headline: true, mainRank: 2 }
  ),
  info("recall_all", "1 when every relevant session is selected, else 0 (NaN without relevant sessions)."),
  info("recall_any", "1 when at least one relevant session is selected, else 0 (NaN without relevant sessions)."),
  ...normalizeKs(ks).map((k) =>
    info(
      `ndcg@${k}`,
      `nDCG over the first ${k} ranked sessions, binary gains, ideal DCG from the number of relevant sessions.`
    )
  ),
  info(
    "mrr",
    "1 / rank of the first relevant session in the ranking (0 when none is ranked; NaN without relevant sessions)."
  ),
  info("stale_rate", "Stale selected sessions (same factor, outdated preference) / selected sessions.", {
    direction: "lower"
  }),
  info("distractor_rate", "Selected sessions about another factor / selected sessions.", { direction: "lower" }),
  info("selected", "Number of sessions passed on to the next stage.", { direction: "lower" }),
  info(
    "relevant_position",
    "Mean 1-based chronological position of the relevant sessions (an instance property, for the recency analysis).",
    {
      direction: "lower",
      family: "instance"
    }
  )
]

export const normalizeKs = (ks: ReadonlyArray<number>): ReadonlyArray<number> => [...new Set(ks)].sort((a, b) => a - b)

/** The retrieval a trace implies: its own, or all sessions ranked most recent first. */
export const effectiveRetrieval = (instance: Domain.Instance, trace: Trace.Trace): Retriever.Retrieval => {
  if (trace.retrieval !== undefined) return trace.retrieval
  const sessions = instance.query.sessions
  return {
    ranking: [...sessions]
      .sort((a, b) => b.index - a.index)
      .map((s, i) => ({ sessionId: s.id, score: sessions.length - i })),
    selected: sessions.map((s) => s.id)
  }
}

const ratio = (a: number, b: number) => (b === 0 ? NaN : a / b)

/** F1 of set precision (found / selected) and recall (found / relevant): 2 found / (selected + relevant). */
const f1 = (found: number, selected: number, relevant: number): number =>
  found === 0 ? 0 : (2 * found) / (selected + relevant)

/**
 * Every retrieval metric for one instance. The ranking is read in the order given (the retriever's
 * own tie-breaking stands); a session listed twice counts at its first place.
 */
export const compute = (
  instance: Domain.Instance,
  trace: Trace.Trace,
  ks: ReadonlyArray<number>
): Record<string, number> => {
  const retrieval = effectiveRetrieval(instance, trace)
  const label = new Map(instance.gold.sessions.map((s) => [s.id, s.label]))
  const selected = [...new Set(retrieval.selected)]
  const ranking = [...new Set(retrieval.ranking.map((r) => r.sessionId))]
  const relevant = instance.gold.sessions.filter((s) => s.label === "relevant")
  const R = relevant.length
  const count = (l: Domain.RelevanceLabel) => selected.filter((id) => label.get(id) === l).length
  const relSelected = count("relevant")
  const noRel = R === 0

  const out: Record<string, number> = {
    "retrieval.precision": ratio(relSelected, selected.length),
    "retrieval.recall": noRel ? NaN : relSelected / R,
    "retrieval.f1": noRel ? NaN : f1(relSelected, selected.length, R),
    "retrieval.recall_all": noRel ? NaN : relSelected === R ? 1 : 0,
    "retrieval.recall_any": noRel ? NaN : relSelected > 0 ? 1 : 0
  }
  for (const k of normalizeKs(ks)) {
    let dcg = 0,
      ideal = 0
    for (let i = 0; i < Math.min(k, ranking.length); i++) {
      if (label.get(ranking[i]!) === "relevant") dcg += 1 / Math.log2(i + 2)
    }
    for (let i = 0; i < Math.min(k, R); i++) ideal += 1 / Math.log2(i + 2)
    out[`retrieval.ndcg@${k}`] = noRel ? NaN : dcg / ideal
  }
  const first = ranking.findIndex((id) => label.get(id) === "relevant")
  out["retrieval.mrr"] = noRel ? NaN : first < 0 ? 0 : 1 / (first + 1)
  out["retrieval.stale_rate"] = ratio(count("stale"), selected.length)
  out["retrieval.distractor_rate"] = ratio(count("other"), selected.length)
  out["retrieval.selected"] = selected.length
  const position = new Map(instance.query.sessions.map((s) => [s.id, s.index + 1]))
  out["retrieval.relevant_position"] = noRel
    ? NaN
    : relevant.reduce((acc, s) => acc + (position.get(s.id) ?? NaN), 0) / R
  return out
}

export const plugin = Plugin.scorer({
  name,
  description: "Retrieval precision, recall, nDCG@k, MRR, stale and distractor rates against the gold session labels.",
  options: Options,
  make: ({ ks }) =>
    Effect.succeed(Scorer.plain({ metrics: metricsFor(ks) }, ({ instance, trace }) => compute(instance, trace, ks)))
})
