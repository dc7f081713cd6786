import { Domain, Tokens } from "@cupid-lab/core"

export interface Range {
  readonly min: number
  readonly mean: number
  readonly max: number
}

export type LabelCounts = Readonly<Record<Domain.RelevanceLabel, number>>

/** Dataset statistics for `data inspect`, accumulated one instance at a time. */
export interface Stats {
  readonly instances: number
  /** Instances per type, in the benchmark's order, then any other type seen. */
  readonly byType: ReadonlyArray<readonly [string, number]>
  /** Prior sessions per instance. */
  readonly sessions: Range
  /** Tokens (Tokens.count) of each session's dialogue text (Domain.dialogueText). */
  readonly sessionTokens: Range
  /** Tokens of all prior sessions of an instance. */
  readonly historyTokens: Range
  /** Session label totals per instance type and over all instances (`all`). */
  readonly labels: ReadonlyMap<string, LabelCounts>
  /** How many relevant sessions sit at each 1-based position (index 0 = position 1), up to the longest history. */
  readonly relevantPositions: ReadonlyArray<number>
  /** Mean 1-based position of the relevant sessions. */
  readonly meanRelevantPosition: number
  /** Mean of position / history length over the relevant sessions (1 = the most recent session). */
  readonly meanRelativePosition: number
  /**
   * Instances none of whose prior sessions is relevant under the gold labels (CUPID: factor and
   * preference equal to the current ones, as exact strings) although the benchmark does not say
   * they have no evidence: the oracle has nothing to give them.
   */
  readonly withoutRelevant: { readonly count: number; readonly firstIds: ReadonlyArray<string> }
  /** Questions the benchmark itself gives no evidence for (Domain.WithoutEvidence), by reason. */
  readonly withoutEvidence: {
    readonly count: number
    readonly byReason: ReadonlyArray<readonly [Domain.WithoutEvidence, number]>
    readonly firstIds: ReadonlyArray<string>
  }
  /** Evidence ids that name no turn of the history: how many, and the first few as `<instance id> <evidence id>`. */
  readonly unresolvedEvidence: { readonly count: number; readonly first: ReadonlyArray<string> }
  /** Sessions (over all histories) and requests that carry a date, and all sessions. */
  readonly dated: { readonly sessions: number; readonly requests: number; readonly allSessions: number }
}

/** How many ids of instances without a relevant session the statistics keep. */
export const idsShown = 5

class RangeAcc {
  min = Infinity
  max = -Infinity
  sum = 0
  n = 0
  add(x: number) {
    if (x < this.min) this.min = x
    if (x > this.max) this.max = x
    this.sum += x
    this.n++
  }
  get(): Range {
    return this.n === 0 ? { min: 0, mean: 0, max: 0 } : { min: this.min, mean: this.sum / this.n, max: this.max }
  }
}

const zeroLabels = (): Record<Domain.RelevanceLabel, number> => ({ relevant: 0, stale: 0, other: 0 })

class IdList {
  count = 0
  readonly first: Array<string> = []
  add(id: string) {
    this.count++
    if (this.first.length < idsShown) this.first.push(id)
  }
}

/** Statistics of instances of a benchmark whose types are `types` (CUPID's by default). */
export const accumulator = (types: ReadonlyArray<string> = Domain.cupidTypes) => {
  const byType = new Map<string, number>(types.map((t) => [t, 0]))
  const labels = new Map<string, Record<Domain.RelevanceLabel, number>>([...types, "all"].map((t) => [t, zeroLabels()]))
  const sessions = new RangeAcc()
  const sessionTokens = new RangeAcc()
  const historyTokens = new RangeAcc()
  const positions: Array<number> = []
  let positionSum = 0
  let positionN = 0
  let relativeSum = 0
  let instances = 0
  let datedSessions = 0
  let allSessions = 0
  let datedRequests = 0
  const withoutRelevant = new IdList()
  const withoutEvidence = new IdList()
  const reasons = new Map<Domain.WithoutEvidence, number>()
  const unresolved = new IdList()
  return {
    add(instance: Domain.Instance): void {
      instances++
      byType.set(instance.type, (byType.get(instance.type) ?? 0) + 1)
      sessions.add(instance.query.sessions.length)
      if (instance.query.date !== undefined) datedRequests++
      let history = 0
      for (const s of instance.query.sessions) {
        const tokens = Tokens.count(Domain.dialogueText(s.dialogue))
        sessionTokens.add(tokens)
        history += tokens
        allSessions++
        if (s.date !== undefined) datedSessions++
      }
      historyTokens.add(history)
      let typeLabels = labels.get(instance.type)
      if (typeLabels === undefined) labels.set(instance.type, (typeLabels = zeroLabels()))
      const all = labels.get("all")!
      for (const g of instance.gold.sessions) {
        typeLabels[g.label]++
        all[g.label]++
      }
      const reason = instance.gold.withoutEvidence
      if (reason !== undefined) {
        withoutEvidence.add(instance.id)
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
      } else if (!instance.gold.sessions.some((g) => g.label === "relevant")) {
        withoutRelevant.add(instance.id)
      }
      for (const e of instance.gold.unresolvedEvidence ?? []) unresolved.add(`${instance.id} ${JSON.stringify(e)}`)
      instance.gold.sessions.forEach((g, i) => {
        if (g.label !== "relevant") return
        positions[i] = (positions[i] ?? 0) + 1
        positionSum += i + 1
        positionN++
        relativeSum += (i + 1) / instance.query.sessions.length
      })
    },
    result(): Stats {
      return {
        instances,
        byType: [...byType],
        sessions: sessions.get(),
        sessionTokens: sessionTokens.get(),
        historyTokens: historyTokens.get(),
        labels: new Map([...labels].map(([t, l]) => [t, { ...l }])),
        relevantPositions: Array.from({ length: Math.max(0, sessions.get().max) }, (_, i) => positions[i] ?? 0),
        meanRelevantPosition: positionN === 0 ? 0 : positionSum / positionN,
        meanRelativePosition: positionN === 0 ? 0 : relativeSum / positionN,
        withoutRelevant: { count: withoutRelevant.count, firstIds: [...withoutRelevant.first] },
        withoutEvidence: {
          count: withoutEvidence.count,
          byReason: [...reasons].sort(),
          firstIds: [...withoutEvidence.first]
        },
        unresolvedEvidence: { count: unresolved.count, first: [...unresolved.first] },
        dated: { sessions: datedSessions, requests: datedRequests, allSessions }
      }
    }
  }
}

const fixed = (x: number, digits = 1) => (Number.isInteger(x) ? String(x) : x.toFixed(digits))
const range = (r: Range) => `min ${fixed(r.min)}, mean ${fixed(r.mean)}, max ${fixed(r.max)}`
const pad = (s: string, n: number) => s.padEnd(n)

/** Histogram rows: one per position up to 40 positions, else 10 equal bins of positions. */
const histogram = (counts: ReadonlyArray<number>): Array<string> => {
  if (counts.length === 0) return ["  (no relevant sessions)"]
  const bins: Array<{ label: string; n: number }> = []
  if (counts.length <= 40) {
    counts.forEach((n, i) => bins.push({ label: String(i + 1), n }))
  } else {
    const width = Math.ceil(counts.length / 10)
    for (let start = 0; start < counts.length; start += width) {
      const end = Math.min(counts.length, start + width)
      bins.push({ label: `${start + 1}-${end}`, n: counts.slice(start, end).reduce((a, b) => a + b, 0) })
    }
  }
  const most = Math.max(1, ...bins.map((b) => b.n))
  const labelWidth = Math.max(...bins.map((b) => b.label.length))
  return bins.map(
    (b) => `  ${b.label.padStart(labelWidth)} | ${"#".repeat(Math.round((b.n / most) * 40)).padEnd(40)} ${b.n}`
  )
}

const ids = (list: { readonly count: number; readonly firstIds: ReadonlyArray<string> }) => {
  const more = list.count - list.firstIds.length
  return list.count === 0 ? "" : ` (${list.firstIds.join(", ")}${more > 0 ? `, and ${more} more` : ""})`
}

/** The `data inspect` lines; `evidence` adds the lines about evidence labels (every benchmark but CUPID). */
export const format = (stats: Stats, evidence = false): string => {
  const lines: Array<string> = []
  lines.push(`instances: ${stats.instances} (${stats.byType.map(([t, n]) => `${t} ${n}`).join(", ")})`)
  lines.push(`sessions per instance: ${range(stats.sessions)}`)
  lines.push(`tokens per session: ${range(stats.sessionTokens)}`)
  lines.push(`tokens per history: ${range(stats.historyTokens)}`)
  if (stats.dated.sessions > 0 || stats.dated.requests > 0) {
    lines.push(
      `dated: ${stats.dated.sessions} of ${stats.dated.allSessions} sessions, ${stats.dated.requests} of ${stats.instances} requests`
    )
  }
  const width = Math.max(12, ...stats.byType.map(([t]) => t.length + 1))
  lines.push("relevance labels per instance (mean; total in parentheses):")
  lines.push(`  ${pad("type", width)} ${pad("relevant", 14)} ${pad("stale", 14)} other`)
  for (const [t, n] of [...stats.byType, ["all", stats.instances] as const]) {
    const counts = stats.labels.get(t)
    if (n === 0 || counts === undefined) continue
    const cell = (label: Domain.RelevanceLabel) => `${(counts[label] / n).toFixed(2)} (${counts[label]})`
    lines.push(`  ${pad(t, width)} ${pad(cell("relevant"), 14)} ${pad(cell("stale"), 14)} ${cell("other")}`)
  }
  if (evidence || stats.withoutEvidence.count > 0) {
    const reasons = stats.withoutEvidence.byReason.map(([r, n]) => `${r} ${n}`).join(", ")
    lines.push(
      `questions without evidence (kept, not scored by retrieval metrics): ${stats.withoutEvidence.count}` +
        (stats.withoutEvidence.count === 0 ? "" : ` [${reasons}]${ids(stats.withoutEvidence)}`)
    )
  }
  if (evidence || stats.unresolvedEvidence.count > 0) {
    lines.push(
      `evidence ids that name no turn of the history: ${stats.unresolvedEvidence.count}${ids({
        count: stats.unresolvedEvidence.count,
        firstIds: stats.unresolvedEvidence.first
      })}`
    )
  }
  lines.push(`instances without a relevant session: ${stats.withoutRelevant.count}${ids(stats.withoutRelevant)}`)
  lines.push("positions of relevant sessions (1 = oldest):")
  lines.push(...histogram(stats.relevantPositions))
  if (stats.meanRelevantPosition > 0) {
    lines.push(
      `mean relevant position: ${stats.meanRelevantPosition.toFixed(2)} ` +
        `(relative to history length: ${stats.meanRelativePosition.toFixed(2)}, 1 = most recent)`
    )
  }
  return lines.join("\n")
}
