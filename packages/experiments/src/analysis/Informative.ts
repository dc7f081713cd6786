/**
 * Metrics that cannot tell the cells apart on all instances (no cell has a value, every cell has
 * the same, or every cell's 95% CI contains 0), with the reason, so a report does not lead with them.
 *
 * @example
 * Informative.uninformative(summary) // [{ metric: "retrieval.stale", reason: "every cell has the same value 0.000 on all instances" }]
 */
import type { Summary } from "../results/ResultLine.js"

export interface Uninformative {
  readonly metric: string
  readonly reason: string
}

const reason = (summary: Summary, metric: string): string | undefined => {
  const estimates = summary.cells
    .map((c) => c.slices.all.metrics[metric])
    .filter((e): e is NonNullable<typeof e> => e !== undefined && e.n > 0 && Number.isFinite(e.mean))
  if (estimates.length === 0) return "no cell has a value on all instances"
  const values = estimates.map((e) => e.mean!)
  const lo = Math.min(...values), hi = Math.max(...values)
  if (estimates.length === summary.cells.length && summary.cells.length > 1 && lo === hi) return `every cell has the same value ${lo.toFixed(3)} on all instances`
  const containsZero = (e: (typeof estimates)[number]) => e.ci95[0] !== null && e.ci95[1] !== null && e.ci95[0] <= 0 && e.ci95[1] >= 0
  if (estimates.every(containsZero)) {
    return `every cell's 95% CI on all instances${summary.cells.some((c) => c.usesGold) ? ", the oracle's included," : ""} contains 0 (largest |value| ${Math.max(Math.abs(lo), Math.abs(hi)).toFixed(3)})`
  }
  return undefined
}

export const uninformative = (summary: Summary): Array<Uninformative> =>
  summary.metrics.flatMap((m) => {
    const r = reason(summary, m.name)
    return r === undefined ? [] : [{ metric: m.name, reason: r }]
  })
