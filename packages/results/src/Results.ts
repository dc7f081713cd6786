/**
 * A pipeline trace as a result line (see {@link ResultLine}): nothing in it depends on wall-clock
 * time or the state of the model cache, so a rerun writes the same bytes.
 *
 * @example
 * const text = Results.encodeLine(Results.fromTrace(cell, instance, Results.instanceMeta(instance), trace))
 */
import { type Domain, type Scorer, Tokens, type Trace, type Usage } from "@cupid-lab/core"
import {
  type CellInfo,
  finiteOrNull,
  type InstanceMeta,
  type ResultLine,
  type Row,
  type Score,
  type UsageSummary
} from "./ResultLine.js"

/**
 * Facts about an instance the analyses need. `tokens` memoizes session token counts by content
 * hash: pass one map for a sweep, whose instances share most of their sessions.
 */
export const instanceMeta = (instance: Domain.Instance, tokens: Map<string, number> = new Map()): InstanceMeta => {
  let historyTokens = 0
  for (const s of instance.query.sessions) {
    let n = tokens.get(s.hash)
    if (n === undefined) tokens.set(s.hash, (n = s.dialogue.reduce((t, m) => t + Tokens.count(m.content), 0)))
    historyTokens += n
  }
  const relevant: Array<string> = []
  const stale: Array<string> = []
  let positions = 0
  instance.gold.sessions.forEach((g, i) => {
    if (g.label === "relevant") {
      relevant.push(g.id)
      positions += i + 1
    } else if (g.label === "stale") stale.push(g.id)
  })
  return {
    sessions: instance.query.sessions.length,
    historyTokens,
    relevantMeanPosition: relevant.length === 0 ? null : positions / relevant.length,
    relevant,
    stale,
    ...(instance.gold.withoutEvidence === undefined ? {} : { withoutEvidence: instance.gold.withoutEvidence })
  }
}

type Counts = { calls: number; promptTokens: number; completionTokens: number }

/** Token usage per stage and per `provider/model`; a call counts the same whether the cache answered it. */
export const usageSummary = (entries: ReadonlyArray<Usage.UsageEntry>): UsageSummary => {
  const total = zero()
  const byStage: Record<string, Counts> = {}
  const byModel: Record<string, Counts> = {}
  for (const e of entries) {
    for (const c of [total, (byStage[e.stage] ??= zero()), (byModel[`${e.provider}/${e.model}`] ??= zero())]) {
      c.calls++
      c.promptTokens += e.promptTokens
      c.completionTokens += e.completionTokens
    }
  }
  return { ...total, byStage: sorted(byStage), byModel: sorted(byModel) }
}

const zero = (): Counts => ({ calls: 0, promptTokens: 0, completionTokens: 0 })

const sorted = <A>(record: Record<string, A>): Record<string, A> =>
  Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((k) => [k, record[k]!])
  )

export type CellIdentity = Pick<CellInfo, "id" | "name" | "params">

const repeatsOf = (repeats: Scorer.Repeats): Record<string, Array<number | null>> =>
  sorted(Object.fromEntries(Object.entries(repeats).map(([k, xs]) => [k, xs.map(finiteOrNull)])))

/** The result line of one (cell, instance), as a value ready to encode (non-finite numbers are null). */
export const fromTrace = (
  cell: CellIdentity,
  instance: Domain.Instance,
  meta: InstanceMeta,
  trace: Trace.Trace
): ResultLine => {
  const scores: Record<string, Score> = {}
  for (const k in trace.scores) {
    const v = trace.scores[k]!
    scores[k] = typeof v === "number" ? finiteOrNull(v) : { num: v.num, den: v.den }
  }
  const r = trace.retrieval
  return {
    cell: cell.id,
    cellName: cell.name,
    instance: instance.id,
    personaId: instance.personaId,
    type: instance.type,
    status: trace.error === undefined ? "ok" : "failed",
    params: cell.params,
    meta,
    selected: r?.selected ?? null,
    ranking: r === undefined ? null : r.ranking.map((x) => ({ sessionId: x.sessionId, score: finiteOrNull(x.score) })),
    summaries: trace.summaries ?? null,
    inference:
      trace.inference === undefined
        ? null
        : { preference: trace.inference.preference, analysis: trace.inference.analysis },
    generation: trace.generation === undefined ? null : { text: trace.generation.text },
    scores,
    usage: usageSummary(trace.usage),
    error:
      trace.error === undefined
        ? null
        : { stage: trace.error.stage, plugin: trace.error.plugin, tag: trace.error.tag, message: trace.error.message },
    ...(trace.ratings === undefined
      ? {}
      : { ratings: trace.ratings.map((r) => ({ side: r.side, item: r.item, rating: r.rating })) }),
    ...(trace.repeats === undefined ? {} : { repeats: repeatsOf(trace.repeats) })
  }
}

/** What reports keep of a line (see ResultLine.Row): without the ranking, the summaries and the analysis. */
export const toRow = (line: ResultLine): Row => ({
  // Spelled out: a rest-and-spread copy makes every later field access several times slower.
  cell: line.cell,
  cellName: line.cellName,
  instance: line.instance,
  personaId: line.personaId,
  type: line.type,
  status: line.status,
  params: line.params,
  meta: line.meta,
  selected: line.selected,
  inference: line.inference === null ? null : { preference: line.inference.preference },
  generation: line.generation,
  scores: line.scores,
  usage: line.usage,
  error: line.error,
  ...(line.ratings === undefined ? {} : { ratings: line.ratings }),
  ...(line.repeats === undefined ? {} : { repeats: line.repeats })
})

/** One line of results.jsonl: a {@link ResultLine} is its own encoded form (plain JSON), tested against the Schema. */
export const encodeLine = (line: ResultLine): string => `${JSON.stringify(line)}\n`
