/**
 * Building and encoding result lines (see {@link ResultLine}) from pipeline traces.
 *
 * A line holds nothing that depends on wall-clock time or on the state of the model cache, so a
 * rerun over the same config, data and cache writes the same bytes. Non-finite numbers become
 * `null` (JSON has no NaN).
 *
 * @example
 * import { Results } from "@cupid-lab/experiments"
 * const encoder = Results.encoder({ id: cell.id, name: cell.name, params: cell.params })
 * const text = encoder.encode(instance, Results.instanceMeta(instance), trace) // one line, ending in "\n"
 */
import { type Domain, Tokens, type Trace, type Usage } from "@cupid-lab/core"
import type { InstanceMeta, ResultLine, UsageSummary } from "./ResultLine.js"

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

const emptyUsage = '{"calls":0,"promptTokens":0,"completionTokens":0,"byStage":{},"byModel":{}}'

export interface CellIdentity {
  readonly id: string
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
}

/** The result line of one (cell, instance), as a value. */
export const fromTrace = (cell: CellIdentity, instance: Domain.Instance, meta: InstanceMeta, trace: Trace.Trace): ResultLine => {
  const scores: Record<string, number | null> = {}
  for (const [k, v] of Object.entries(trace.scores)) scores[k] = Number.isFinite(v) ? v : null
  return {
    cell: cell.id,
    cellName: cell.name,
    instance: instance.id,
    personaId: instance.personaId,
    type: instance.type,
    status: trace.error === undefined ? "ok" : "failed",
    params: cell.params,
    meta,
    selected: trace.retrieval?.selected ?? null,
    ranking: trace.retrieval?.ranking.map((x) => ({ sessionId: x.sessionId, score: x.score })) ?? null,
    summaries: trace.summaries ?? null,
    inference: trace.inference === undefined ? null : { preference: trace.inference.preference, analysis: trace.inference.analysis },
    generation: trace.generation === undefined ? null : { text: trace.generation.text },
    scores,
    usage: usageSummary(trace.usage),
    error: trace.error === undefined
      ? null
      : { stage: trace.error.stage, plugin: trace.error.plugin, tag: trace.error.tag, message: trace.error.message }
  }
}

/** One line of results.jsonl: the JSON of {@link fromTrace}'s value and a newline. */
export const encodeLine = (line: ResultLine): string => `${JSON.stringify(line)}\n`

export interface Encoder {
  /** Same bytes as `encodeLine(fromTrace(cell, instance, meta, trace))`, with less work per line. */
  readonly encode: (instance: Domain.Instance, meta: InstanceMeta, trace: Trace.Trace) => string
}

const metaCache = new WeakMap<InstanceMeta, string>()
const metaJson = (meta: InstanceMeta): string => {
  let s = metaCache.get(meta)
  if (s === undefined) {
    s = JSON.stringify(meta)
    metaCache.set(meta, s)
  }
  return s
}

const rankingJson = (ranking: ReadonlyArray<{ readonly sessionId: string; readonly score: number }>): string => {
  let out = "["
  for (let i = 0; i < ranking.length; i++) {
    const x = ranking[i]!
    out += `${i === 0 ? "" : ","}{"sessionId":${JSON.stringify(x.sessionId)},"score":${Number.isFinite(x.score) ? String(x.score) : "null"}}`
  }
  return `${out}]`
}

/**
 * A per-cell encoder for the hot path of a sweep: the parts every line of a cell shares (id,
 * name, parameters) and of an instance (meta) are serialized once.
 */
export const encoder = (cell: CellIdentity): Encoder => {
  const head = `{"cell":${JSON.stringify(cell.id)},"cellName":${JSON.stringify(cell.name)},"instance":`
  const params = `,"params":${JSON.stringify(cell.params)},"meta":`
  return {
    encode: (instance, meta, trace) => {
      const failed = trace.error !== undefined
      const r = trace.retrieval
      let scores = "{"
      let first = true
      for (const k in trace.scores) {
        const v = trace.scores[k]!
        scores += `${first ? "" : ","}${JSON.stringify(k)}:${Number.isFinite(v) ? String(v) : "null"}`
        first = false
      }
      scores += "}"
      return head + JSON.stringify(instance.id) +
        `,"personaId":${JSON.stringify(instance.personaId)},"type":"${instance.type}","status":"${failed ? "failed" : "ok"}"` +
        params + metaJson(meta) +
        `,"selected":${r === undefined ? "null" : JSON.stringify(r.selected)}` +
        `,"ranking":${r === undefined ? "null" : rankingJson(r.ranking)}` +
        `,"summaries":${trace.summaries === undefined ? "null" : JSON.stringify(trace.summaries)}` +
        `,"inference":${trace.inference === undefined ? "null" : JSON.stringify({ preference: trace.inference.preference, analysis: trace.inference.analysis })}` +
        `,"generation":${trace.generation === undefined ? "null" : JSON.stringify({ text: trace.generation.text })}` +
        `,"scores":${scores}` +
        `,"usage":${trace.usage.length === 0 ? emptyUsage : JSON.stringify(usageSummary(trace.usage))}` +
        `,"error":${failed ? JSON.stringify({ stage: trace.error!.stage, plugin: trace.error!.plugin, tag: trace.error!.tag, message: trace.error!.message }) : "null"}}\n`
    }
  }
}

/** What the summary reads of a line: which cell, the instance type, the status and the scores. */
export interface LineScores {
  readonly cell: string
  readonly type: Domain.InstanceType
  readonly status: "ok" | "failed"
  readonly scores: Readonly<Record<string, number | null>>
}

const typeMarker = ',"type":"'
const scoresMarker = ',"scores":'
const usageMarker = ',"usage":{'

/**
 * Read the summary's fields from a line without parsing all of it. Relies on the key order the
 * encoders write (quotes inside string values are always escaped, so the markers can only be
 * keys); any other line is parsed in full.
 */
export const scoresOf = (line: string): LineScores => {
  const t = line.indexOf(typeMarker)
  const sc = line.lastIndexOf(scoresMarker)
  const u = sc === -1 ? -1 : line.indexOf(usageMarker, sc)
  if (line.startsWith('{"cell":"') && t !== -1 && u !== -1) {
    const typeEnd = line.indexOf('"', t + typeMarker.length)
    const rest = line.slice(typeEnd, typeEnd + 20)
    const status = rest.startsWith('","status":"ok"') ? "ok" : rest.startsWith('","status":"failed"') ? "failed" : undefined
    if (status !== undefined) {
      return {
        cell: line.slice(9, line.indexOf('"', 9)),
        type: line.slice(t + typeMarker.length, typeEnd) as Domain.InstanceType,
        status,
        scores: JSON.parse(line.slice(sc + scoresMarker.length, u)) as Record<string, number | null>
      }
    }
  }
  const full = JSON.parse(line) as ResultLine
  return { cell: full.cell, type: full.type, status: full.status, scores: full.scores }
}

