import { dialogueText, type Instance, type InstanceType, instanceTypes, type RelevanceLabel } from "../../Domain.js"
import { count } from "../../Tokens.js"

export interface Range {
  readonly min: number
  readonly mean: number
  readonly max: number
}

export type LabelCounts = Readonly<Record<RelevanceLabel, number>>

/** Dataset statistics for `data inspect`, accumulated one instance at a time. */
export interface Stats {
  readonly instances: number
  readonly byType: Readonly<Record<InstanceType, number>>
  /** Prior sessions per instance. */
  readonly sessions: Range
  /** Tokens (Tokens.count) of each session's dialogue text (Domain.dialogueText). */
  readonly sessionTokens: Range
  /** Tokens of all prior sessions of an instance. */
  readonly historyTokens: Range
  /** Session label totals per instance type and over all instances. */
  readonly labels: Readonly<Record<InstanceType | "all", LabelCounts>>
  /** How many relevant sessions sit at each 1-based position (index 0 = position 1), up to the longest history. */
  readonly relevantPositions: ReadonlyArray<number>
  /** Mean 1-based position of the relevant sessions. */
  readonly meanRelevantPosition: number
  /** Mean of position / history length over the relevant sessions (1 = the most recent session). */
  readonly meanRelativePosition: number
  /**
   * Instances none of whose prior sessions is relevant under the gold labels (factor and preference
   * equal to the current ones, as exact strings): the oracle has nothing to give them.
   */
  readonly withoutRelevant: { readonly count: number; readonly firstIds: ReadonlyArray<string> }
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

const zeroLabels = (): Record<RelevanceLabel, number> => ({ relevant: 0, stale: 0, other: 0 })

export const accumulator = () => {
  const byType: Record<InstanceType, number> = { consistent: 0, contrastive: 0, changing: 0 }
  const sessions = new RangeAcc()
  const sessionTokens = new RangeAcc()
  const historyTokens = new RangeAcc()
  const labels = { consistent: zeroLabels(), contrastive: zeroLabels(), changing: zeroLabels(), all: zeroLabels() }
  const positions: Array<number> = []
  let positionSum = 0
  let positionN = 0
  let relativeSum = 0
  let instances = 0
  let withoutRelevant = 0
  const withoutRelevantIds: Array<string> = []
  return {
    add(instance: Instance): void {
      instances++
      byType[instance.type]++
      sessions.add(instance.query.sessions.length)
      let history = 0
      for (const s of instance.query.sessions) {
        const tokens = count(dialogueText(s.dialogue))
        sessionTokens.add(tokens)
        history += tokens
      }
      historyTokens.add(history)
      for (const g of instance.gold.sessions) {
        labels[instance.type][g.label]++
        labels.all[g.label]++
      }
      if (!instance.gold.sessions.some((g) => g.label === "relevant")) {
        withoutRelevant++
        if (withoutRelevantIds.length < idsShown) withoutRelevantIds.push(instance.id)
      }
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
        byType: { ...byType },
        sessions: sessions.get(),
        sessionTokens: sessionTokens.get(),
        historyTokens: historyTokens.get(),
        labels,
        relevantPositions: Array.from({ length: Math.max(0, sessions.get().max) }, (_, i) => positions[i] ?? 0),
        meanRelevantPosition: positionN === 0 ? 0 : positionSum / positionN,
        meanRelativePosition: positionN === 0 ? 0 : relativeSum / positionN,
        withoutRelevant: { count: withoutRelevant, firstIds: [...withoutRelevantIds] }
      }
    }
  }
}

const fixed = (x: number, digits = 1) => Number.isInteger(x) ? String(x) : x.toFixed(digits)
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
  return bins.map((b) => `  ${b.label.padStart(labelWidth)} | ${"#".repeat(Math.round((b.n / most) * 40)).padEnd(40)} ${b.n}`)
}

export const format = (stats: Stats): string => {
  const lines: Array<string> = []
  const types = instanceTypes.map((t) => `${t} ${stats.byType[t]}`).join(", ")
  lines.push(`instances: ${stats.instances} (${types})`)
  lines.push(`sessions per instance: ${range(stats.sessions)}`)
  lines.push(`tokens per session: ${range(stats.sessionTokens)}`)
  lines.push(`tokens per history: ${range(stats.historyTokens)}`)
  lines.push("relevance labels per instance (mean; total in parentheses):")
  lines.push(`  ${pad("type", 12)} ${pad("relevant", 14)} ${pad("stale", 14)} other`)
  for (const t of [...instanceTypes, "all"] as const) {
    const n = t === "all" ? stats.instances : stats.byType[t]
    if (n === 0) continue
    const cell = (label: RelevanceLabel) => `${(stats.labels[t][label] / n).toFixed(2)} (${stats.labels[t][label]})`
    lines.push(`  ${pad(t, 12)} ${pad(cell("relevant"), 14)} ${pad(cell("stale"), 14)} ${cell("other")}`)
  }
  const without = stats.withoutRelevant
  const more = without.count - without.firstIds.length
  lines.push(
    `instances without a relevant session: ${without.count}` +
      (without.count === 0 ? "" : ` (${without.firstIds.join(", ")}${more > 0 ? `, and ${more} more` : ""})`)
  )
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
