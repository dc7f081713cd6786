/**
 * Which family each difference against the baseline belongs to, and how each family is corrected.
 *
 * - **primary**: the comparisons the run is about, declared before looking at the results
 *   (`report.primary`; default: the main metric on all instances and on each instance type),
 *   corrected together (`report.correction.primary`, default Holm: family-wise error);
 * - **exploratory**: every other difference the report shows, corrected as its own family
 *   (`report.correction.exploratory`, default Benjamini-Hochberg: false discovery rate);
 * - **none**: cells that read gold labels (oracles) and cells the config names as reference
 *   points (`report.reference`): shown with their intervals, never tested.
 *
 * Also the persona of each instance of a slice, for clustered tests: a persona's instances share
 * their sessions, so their scores are not independent.
 *
 * @example
 * const plan = Families.resolve(summary, "inference.f1_micro")
 * Families.familyOf(plan, cell, "inference.f1_micro", "all") // "primary"
 */
import type { Statistics } from "@cupid-lab/scorers"
import type { Index } from "../results/Columns.js"
import { sliceNumbers } from "../results/Columns.js"
import type { CellSummary, Families, Slice, Summary } from "../results/ResultLine.js"
import { slices } from "../results/ResultLine.js"

export type Family = "primary" | "exploratory" | "none"

export interface Plan {
  readonly primaryMetrics: ReadonlyArray<string>
  readonly primarySlices: ReadonlyArray<Slice>
  readonly correction: { readonly primary: Statistics.Correction; readonly exploratory: Statistics.Correction }
  /** Ids of the cells the config names as reference points. */
  readonly reference: ReadonlySet<string>
}

export const defaultCorrection = { primary: "holm", exploratory: "bh" } as const

/** The families a config declares, as the summary records them (nothing when it declares none). */
export const declared = (report: Families): { readonly families?: Families } => {
  const f: { -readonly [K in keyof Families]: Families[K] } = {}
  if (report.primary !== undefined) f.primary = report.primary
  if (report.correction !== undefined) f.correction = report.correction
  if (report.reference !== undefined) f.reference = report.reference
  return Object.keys(f).length === 0 ? {} : { families: f }
}

/**
 * The run's families with their defaults: primary metrics default to the main metric. A
 * reference cell or primary metric that is not in the run is an error naming the valid ones.
 */
export const resolve = (summary: Summary, main: string | undefined): Plan => {
  const f = summary.families ?? {}
  const metrics = f.primary?.metrics ?? (main === undefined ? [] : [main])
  for (const m of metrics) {
    if (!summary.metrics.some((x) => x.name === m)) {
      throw new Error(`report.primary.metrics: "${m}" is not a metric of this run; valid names: ${summary.metrics.map((x) => x.name).join(", ")}`)
    }
  }
  const reference = new Set<string>()
  for (const name of f.reference ?? []) {
    const c = summary.cells.find((x) => x.id === name) ?? summary.cells.find((x) => x.name === name)
    if (c === undefined) throw new Error(`report.reference: "${name}" is not a cell of this run; cells: ${summary.cells.map((x) => x.name).join(", ")}`)
    reference.add(c.id)
  }
  return {
    primaryMetrics: metrics,
    primarySlices: f.primary?.slices ?? slices,
    correction: {
      primary: f.correction?.primary ?? defaultCorrection.primary,
      exploratory: f.correction?.exploratory ?? defaultCorrection.exploratory
    },
    reference
  }
}

/** Why a cell is outside every family, or undefined when it is tested. */
export const untestedReason = (plan: Plan, cell: CellSummary): string | undefined =>
  cell.usesGold || cell.oracleRetrieval ? "reads gold labels" : plan.reference.has(cell.id) ? "reference point (report.reference)" : undefined

export const familyOf = (plan: Plan, cell: CellSummary, metric: string, slice: Slice): Family =>
  untestedReason(plan, cell) !== undefined
    ? "none"
    : plan.primaryMetrics.includes(metric) && plan.primarySlices.includes(slice)
    ? "primary"
    : "exploratory"

/** The persona of each row of a slice (rows as {@link sliceNumbers} orders them), as small integers. */
export const personas = (idx: Index, slice: Slice): Int32Array => {
  const ids = new Map<string, number>()
  return Int32Array.from(sliceNumbers(idx, slice), (k) => {
    const p = idx.instances[k]!.personaId
    let id = ids.get(p)
    if (id === undefined) ids.set(p, (id = ids.size))
    return id
  })
}
