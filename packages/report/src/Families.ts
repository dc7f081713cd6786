/**
 * Which family each difference against the baseline belongs to (primary: `report.primary`, Holm by
 * default; exploratory: the rest, BH by default; none: oracle and reference cells, never tested), how
 * the tests are resampled, and each instance's persona for clustered tests.
 *
 * @example
 * const plan = Families.resolve(summary, "inference.f1_micro")
 * Families.familyOf(plan, cell, "inference.f1_micro", "all") // "primary"
 */
import type { Statistics } from "@cupid-lab/scorers"
import { Columns, type ResultLine } from "@cupid-lab/results"

import * as Slices from "./Slices.js"

export type Family = "primary" | "exploratory" | "none"

export interface Plan {
  readonly primaryMetrics: ReadonlyArray<string>
  readonly primarySlices: ReadonlyArray<Slices.Slice>
  readonly correction: { readonly primary: Statistics.Correction; readonly exploratory: Statistics.Correction }
  /** Ids of the cells the config names as reference points. */
  readonly reference: ReadonlySet<string>
}

const defaultCorrection = { primary: "holm", exploratory: "bh" } as const

/** The cell with this id, else with this name. */
export const cellNamed = (
  cells: ReadonlyArray<ResultLine.CellSummary>,
  key: string
): ResultLine.CellSummary | undefined => cells.find((c) => c.id === key) ?? cells.find((c) => c.name === key)

/** A run's resampling settings for Paired, with the permutations asked for. */
export const resampling = (
  summary: { readonly seed: number; readonly resamples: number; readonly largeSample?: number | undefined },
  permutations: number | undefined
) => ({
  seed: summary.seed,
  resamples: summary.resamples,
  ...(summary.largeSample !== undefined ? { largeSample: summary.largeSample } : {}),
  ...(permutations !== undefined ? { permutations } : {})
})

/** The metric of this name; else throws, naming the valid ones (`what`: where the name was given). */
export const metricNamed = (summary: ResultLine.Summary, name: string, what: string) => {
  const m = summary.metrics.find((x) => x.name === name)
  if (m === undefined)
    throw new Error(
      `${what} "${name}" is not a metric of this run; valid names: ${summary.metrics.map((x) => x.name).join(", ")}`
    )
  return m
}

/** The run's families with their defaults; a reference cell or primary metric not in the run is an error. */
export const resolve = (summary: ResultLine.Summary, main: string | undefined): Plan => {
  const f = summary.families ?? {}
  const metrics = f.primary?.metrics ?? (main === undefined ? [] : [main])
  for (const m of metrics) metricNamed(summary, m, "report.primary.metrics:")
  const reference = new Set(
    (f.reference ?? []).map((name) => {
      const c = cellNamed(summary.cells, name)
      if (c === undefined)
        throw new Error(
          `report.reference: "${name}" is not a cell of this run; cells: ${summary.cells.map((x) => x.name).join(", ")}`
        )
      return c.id
    })
  )
  return {
    primaryMetrics: metrics,
    primarySlices: f.primary?.slices ?? Slices.of(summary),
    correction: {
      primary: f.correction?.primary ?? defaultCorrection.primary,
      exploratory: f.correction?.exploratory ?? defaultCorrection.exploratory
    },
    reference
  }
}

export const familyOf = (plan: Plan, cell: ResultLine.CellSummary, metric: string, slice: Slices.Slice): Family =>
  cell.usesGold || cell.oracleRetrieval || plan.reference.has(cell.id)
    ? "none"
    : plan.primaryMetrics.includes(metric) && plan.primarySlices.includes(slice)
      ? "primary"
      : "exploratory"

/** The persona of each row of a slice, as small integers: a persona's instances share sessions. */
export const personas = (idx: Columns.Index, slice: Slices.Slice): Int32Array => {
  const ids = new Map<string, number>()
  return Int32Array.from(Columns.sliceNumbers(idx, slice), (k) => {
    const p = idx.instances[k]!.personaId
    if (!ids.has(p)) ids.set(p, ids.size)
    return ids.get(p)!
  })
}
