/**
 * Building and encoding result lines (see {@link ResultLine}) from pipeline traces.
 *
 * A line holds nothing that depends on wall-clock time or on the state of the model cache, so a
 * rerun over the same config, data and cache writes the same bytes. Non-finite numbers become
 * `null` (JSON has no NaN).
 *
 * @example
 * import { Results } from "@cupid-lab/experiments"
 * const line = Results.fromTrace({ id: cell.id, name: cell.name, params: cell.params }, instance, Results.instanceMeta(instance), trace)
 * const text = Results.encodeLine(line) // one line, ending in "\n"
 */
import { type Domain, type Scorer, Tokens, type Trace, type Usage } from "@cupid-lab/core"
import type { InstanceMeta, ResultLine, Row, Score, UsageSummary } from "./ResultLine.js"

const sessionTokens = (session: Domain.SessionView): number => {
  let n = 0
  for (const m of session.dialogue) n += Tokens.count(m.content)
  return n
}

/** Facts about an instance the analyses need; computed once per instance, shared by its cells. */
export const instanceMeta = (instance: Domain.Instance, tokensOf: (s: Domain.SessionView) => number = sessionTokens): InstanceMeta => {
  let historyTokens = 0
  for (const s of instance.query.sessions) historyTokens += tokensOf(s)
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
    stale
  }
}

/**
 * {@link instanceMeta} with session token counts memoized by content hash: the instances of a
 * persona share most of their sessions, so each is counted once.
 */
export const metaMaker = (): ((instance: Domain.Instance) => InstanceMeta) => {
  const memo = new Map<string, number>()
  const tokensOf = (s: Domain.SessionView) => {
    let n = memo.get(s.hash)
    if (n === undefined) {
      n = sessionTokens(s)
      memo.set(s.hash, n)
    }
    return n
  }
  return (instance) => instanceMeta(instance, tokensOf)
}

type Counts = { calls: number; promptTokens: number; completionTokens: number }

const sortedRecord = (m: Map<string, Counts>): Record<string, Counts> => {
  const out: Record<string, Counts> = {}
  for (const k of [...m.keys()].sort()) out[k] = m.get(k)!
  return out
}

/** Token usage without cache flags: a call counts the same whether it was answered by the cache. */
export const usageSummary = (entries: ReadonlyArray<Usage.UsageEntry>): UsageSummary => {
  const byStage = new Map<string, Counts>()
  const byModel = new Map<string, Counts>()
  let promptTokens = 0, completionTokens = 0
  for (const e of entries) {
    promptTokens += e.promptTokens
    completionTokens += e.completionTokens
    for (const [map, key] of [[byStage, e.stage], [byModel, `${e.provider}/${e.model}`]] as const) {
      const c = map.get(key) ?? { calls: 0, promptTokens: 0, completionTokens: 0 }
      c.calls++
      c.promptTokens += e.promptTokens
      c.completionTokens += e.completionTokens
      map.set(key, c)
    }
  }
  return { calls: entries.length, promptTokens, completionTokens, byStage: sortedRecord(byStage), byModel: sortedRecord(byModel) }
}

export interface CellIdentity {
  readonly id: string
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
}

const finiteOrNull = (x: number): number | null => (Number.isFinite(x) ? x : null)

const repeatsOf = (repeats: Scorer.Repeats): Record<string, Array<number | null>> => {
  const out: Record<string, Array<number | null>> = {}
  for (const k of Object.keys(repeats).sort()) out[k] = repeats[k]!.map(finiteOrNull)
  return out
}

/** The result line of one (cell, instance), as a value ready to encode (non-finite numbers are null). */
export const fromTrace = (cell: CellIdentity, instance: Domain.Instance, meta: InstanceMeta, trace: Trace.Trace): ResultLine => {
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
    inference: trace.inference === undefined ? null : { preference: trace.inference.preference, analysis: trace.inference.analysis },
    generation: trace.generation === undefined ? null : { text: trace.generation.text },
    scores,
    usage: usageSummary(trace.usage),
    error: trace.error === undefined
      ? null
      : { stage: trace.error.stage, plugin: trace.error.plugin, tag: trace.error.tag, message: trace.error.message },
    ...(trace.ratings === undefined ? {} : { ratings: trace.ratings.map((r) => ({ side: r.side, item: r.item, rating: r.rating })) }),
    ...(trace.repeats === undefined ? {} : { repeats: repeatsOf(trace.repeats) })
  }
}

/** What reports keep of a line (see ResultLine.Row): without the ranking, the summaries and the analysis. */
export const toRow = (line: ResultLine): Row => ({
  // Spelled out, in the Schema's field order: rows built by a rest-and-spread copy get a hidden
  // class that makes every later field access several times slower (the reports read each row
  // many times).
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

/**
 * One line of results.jsonl: the JSON of a {@link ResultLine} value and a newline. The value's
 * encoded form is itself (every field is plain JSON), so no Schema transform runs on the hot path;
 * the round trip is tested against the Schema.
 */
export const encodeLine = (line: ResultLine): string => `${JSON.stringify(line)}\n`
