/**
 * `<out>/summary.json`: per cell and slice (all, the CUPID types, another benchmark's types), the
 * instances scored and failed, and per metric its N, value (as its scorer aggregates it) and a
 * seeded 95% interval whose bootstrap resamples personas (their instances share sessions).
 *
 * @example
 * const { metrics, cells } = Summary.of(Columns.index(rows), { metrics, seed: 7, resamples: 1000 }, cellInfos)
 */
import { Domain } from "@cupid-lab/core"
import { Paired } from "@cupid-lab/scorers"

import { Schema } from "effect"
import * as Columns from "./Columns.js"
import * as ResultLine from "./ResultLine.js"
import { type CellSummary, finiteOrNull, type MetricDescription, type SliceSummary } from "./ResultLine.js"

export type Options = Pick<ResultLine.Summary, "seed" | "resamples" | "largeSample"> & {
  readonly metrics: ReadonlyArray<MetricDescription>
}

const undeclaredDescription = "(not declared by its scorer)"

/** A metric a scorer returned without declaring it: a mean of its numbers, or a ratio of its counts. */
const undeclared = (name: string, counts: boolean): MetricDescription => ({
  name,
  description: undeclaredDescription,
  family: name.includes(".") ? name.slice(0, name.indexOf(".")) : "other",
  direction: "higher",
  heuristic: false,
  headline: false,
  aggregate: counts ? { _tag: "Ratio" } : { _tag: "Mean" }
})

/** The scorers' declared metrics out of a summary's list, which also names the undeclared score keys its lines had. */
export const declaredOf = (metrics: ReadonlyArray<MetricDescription>): Array<MetricDescription> =>
  metrics.filter((m) => m.description !== undeclaredDescription)

/** The declared metrics, then each undeclared score key of the ok lines: a mean or a ratio as its first ok line scored it. */
const metricsOf = (index: Columns.Index, options: Options): ReadonlyArray<MetricDescription> => {
  const declared = new Set(options.metrics.map((m) => m.name))
  const others = [...index.okScoreKinds.keys()].filter((k) => !declared.has(k)).sort()
  return [...options.metrics, ...others.map((k) => undeclared(k, index.okScoreKinds.get(k) === true))]
}

/** The summary's metrics and cells from a run's columns. */
export const of = (
  index: Columns.Index,
  options: Options,
  cells: ReadonlyArray<ResultLine.CellInfo>
): { readonly metrics: ReadonlyArray<MetricDescription>; readonly cells: Array<CellSummary> } => {
  const metrics = metricsOf(index, options)
  const bootstrap = {
    seed: options.seed,
    resamples: options.resamples,
    ...(options.largeSample !== undefined ? { largeSample: options.largeSample } : {})
  }
  const typeOf = (k: number) => index.instances[k]!.type
  const failed = new Map<string, number>()
  for (const f of index.failures) {
    for (const key of [`${f.cell}\u0000all`, `${f.cell}\u0000${typeOf(index.number.get(f.instance)!)}`])
      failed.set(key, (failed.get(key) ?? 0) + 1)
  }
  const personaNumbers = new Map<string, number>()
  for (const f of index.instances)
    if (!personaNumbers.has(f.personaId)) personaNumbers.set(f.personaId, personaNumbers.size)
  /** A cell's ok lines of one type (or all), each metric resampled by persona. */
  const slice = (cell: string, type: string): SliceSummary => {
    const at = [...(index.columns(cell)?.instances ?? [])].filter((k) => type === "all" || typeOf(k) === type)
    const clusters = Float64Array.from(at, (k) => personaNumbers.get(index.instances[k]!.personaId)!)
    const data = Columns.columnsOf(index, cell, at)
    return {
      n: at.length,
      failed: failed.get(`${cell}\u0000${type}`) ?? 0,
      metrics: Object.fromEntries(
        metrics.map((m) => {
          const e = Paired.estimate(data(m), { ...bootstrap, clusters })
          return [
            m.name,
            { n: e.n, mean: finiteOrNull(e.mean), ci95: [finiteOrNull(e.ci95[0]), finiteOrNull(e.ci95[1])] as const }
          ]
        })
      )
    }
  }
  const otherTypes = [...new Set(index.instances.map((f) => f.type).filter((t) => !Domain.isCupidType(t)))].sort()
  return {
    metrics,
    cells: cells.map((c) => ({
      ...c,
      slices: {
        all: slice(c.id, "all"),
        consistent: slice(c.id, "consistent"),
        contrastive: slice(c.id, "contrastive"),
        changing: slice(c.id, "changing")
      },
      ...(otherTypes.length === 0 ? {} : { types: Object.fromEntries(otherTypes.map((t) => [t, slice(c.id, t)])) })
    }))
  }
}

/** Serialize a summary (stable key order, 2-space indent, trailing newline). */
export const encode = (summary: ResultLine.Summary): string =>
  `${JSON.stringify(Schema.encodeSync(ResultLine.Summary)(summary), null, 2)}\n`
