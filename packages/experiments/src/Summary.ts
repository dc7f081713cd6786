/**
 * `<out>/summary.json`: for every cell and slice (all, consistent, contrastive, changing), the
 * number of instances scored and failed, and for every metric its N, value and a seeded bootstrap
 * 95% interval. How a metric aggregates is its declared {@link Scorer.Aggregate}: the mean of
 * per-instance values, the pooled ratio of summed counts (micro average), or the F1 of two pooled
 * ratios, resampled together.
 *
 * The accumulator is a fold over result lines in their final order (the runner feeds it while it
 * writes the sorted results file); per line it keeps only the scores.
 *
 * @example
 * import { Summary } from "@cupid-lab/experiments"
 * const acc = Summary.accumulator({ metrics, seed: 7, resamples: 1000 })
 * for (const line of lines) acc.add(line)
 * const cells = acc.cells(cellInfos) // CellSummary[]
 */
import type { Domain, Scorer } from "@cupid-lab/core"
import { Statistics } from "@cupid-lab/scorers"
import * as Growable from "./internal/Growable.js"
import type { CellSummary, MetricDescription, MetricEstimate, PluginFact, ResultLine, Slice, SliceSummary } from "./ResultLine.js"

const nullable = (x: number): number | null => (Number.isFinite(x) ? x : null)

const toEstimate = (e: Statistics.Estimate): MetricEstimate => ({
  n: e.n,
  mean: nullable(e.mean),
  ci95: [nullable(e.ci95[0]), nullable(e.ci95[1])]
})

/** What the accumulator reads of a result line. */
export type LineScores = Pick<ResultLine, "cell" | "type" | "status" | "scores">

/**
 * Per-instance values of one metric over the ok lines of a cell, in line order (NaN when absent),
 * as typed columns that start with the first line that needs them.
 */
interface Column {
  readonly values: Growable.Column<Float64Array>
  readonly num: Growable.Column<Float64Array>
  readonly den: Growable.Column<Float64Array>
}

/** The instance types, numbered for a byte per line. */
const typeCodes: ReadonlyArray<Domain.InstanceType> = ["consistent", "contrastive", "changing"]

interface CellData {
  /** Per ok line, its instance type's number in {@link typeCodes}. */
  readonly types: Growable.Column<Uint8Array>
  readonly failed: Record<Slice, number>
  readonly columns: Map<string, Column>
}

export interface AccumulatorOptions {
  readonly metrics: ReadonlyArray<MetricDescription>
  readonly seed: number
  readonly resamples: number
  /** Instances from which intervals take their large-sample form (default: always bootstrap). */
  readonly largeSample?: number
}

export interface CellInfo {
  readonly id: string
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
  readonly usesGold: boolean
  readonly oracleRetrieval: boolean
  readonly heuristicStages: ReadonlyArray<string>
  readonly plugins: ReadonlyArray<PluginFact>
}

export interface Accumulator {
  readonly add: (line: LineScores) => void
  /** Metrics declared by the scorers, then any undeclared score keys, in a stable order. */
  readonly metrics: () => ReadonlyArray<MetricDescription>
  readonly cells: (cells: ReadonlyArray<CellInfo>) => Array<CellSummary>
}

/** A metric a scorer returned without declaring it: a mean of its numbers, or a ratio of its counts. */
const undeclared = (name: string, counts: boolean): MetricDescription => ({
  name,
  description: "(not declared by its scorer)",
  family: name.includes(".") ? name.slice(0, name.indexOf(".")) : "other",
  direction: "higher",
  heuristic: false,
  headline: false,
  aggregate: counts ? { _tag: "Ratio" } : { _tag: "Mean" }
})

/** The bootstrap estimate of a metric over some rows of a cell. */
export const estimate = (
  metric: Pick<MetricDescription, "name" | "aggregate">,
  column: (name: string) => Column | undefined,
  rows: ReadonlyArray<number>,
  options: Statistics.BootstrapOptions
): Statistics.Estimate => {
  const pick = (xs: Growable.Column<Float64Array> | undefined) => rows.map((i) => xs?.at(i) ?? NaN)
  const agg: Scorer.Aggregate = metric.aggregate
  switch (agg._tag) {
    case "Mean":
      return Statistics.bootstrapMean(pick(column(metric.name)?.values), options)
    case "Ratio": {
      const c = column(metric.name)
      return Statistics.bootstrapRatio(pick(c?.num), pick(c?.den), options)
    }
    case "F1": {
      const p = column(agg.precision), r = column(agg.recall)
      return Statistics.bootstrapF1({ num: pick(p?.num), den: pick(p?.den) }, { num: pick(r?.num), den: pick(r?.den) }, options)
    }
  }
}

export const accumulator = (options: AccumulatorOptions): Accumulator => {
  const data = new Map<string, CellData>()
  // undeclared keys -> whether they carried counts
  const seen = new Map<string, boolean>()
  const declared = new Set(options.metrics.map((m) => m.name))
  const cellData = (id: string): CellData => {
    let d = data.get(id)
    if (d === undefined) {
      d = { types: Growable.bytes(), failed: { all: 0, consistent: 0, contrastive: 0, changing: 0 }, columns: new Map() }
      data.set(id, d)
    }
    return d
  }
  const metrics = (): ReadonlyArray<MetricDescription> => [
    ...options.metrics,
    ...[...seen.keys()].sort().map((name) => undeclared(name, seen.get(name) === true))
  ]
  const add = (line: LineScores) => {
    const d = cellData(line.cell)
    if (line.status === "failed") {
      d.failed.all++
      d.failed[line.type]++
      return
    }
    const row = d.types.length
    d.types.push(typeCodes.indexOf(line.type))
    for (const k in line.scores) {
      const v = line.scores[k]!
      const isCount = v !== null && typeof v === "object"
      if (!declared.has(k) && !seen.has(k)) seen.set(k, isCount)
      let column = d.columns.get(k)
      if (column === undefined) {
        column = { values: Growable.doubles(), num: Growable.doubles(), den: Growable.doubles() }
        d.columns.set(k, column)
      }
      // Lines before this one without the key read NaN (the pad).
      if (isCount) {
        column.num.fill(row)
        column.num.push(v.num)
        column.den.fill(row)
        column.den.push(v.den)
      } else if (v !== null) {
        column.values.fill(row)
        column.values.push(v)
      }
    }
  }
  const slice = (d: CellData, s: Slice, list: ReadonlyArray<MetricDescription>): SliceSummary => {
    const rows: Array<number> = []
    const code = s === "all" ? -1 : typeCodes.indexOf(s)
    for (let i = 0; i < d.types.length; i++) if (code < 0 || d.types.data[i] === code) rows.push(i)
    const bootstrap = { seed: options.seed, resamples: options.resamples, ...(options.largeSample !== undefined ? { largeSample: options.largeSample } : {}) }
    const out: Record<string, MetricEstimate> = {}
    for (const m of list) out[m.name] = toEstimate(estimate(m, (name) => d.columns.get(name), rows, bootstrap))
    return { n: rows.length, failed: d.failed[s], metrics: out }
  }
  return {
    add,
    metrics,
    cells: (cells) => {
      const list = metrics()
      return cells.map((c) => {
        const d = cellData(c.id)
        const bySlice = { all: slice(d, "all", list), consistent: slice(d, "consistent", list), contrastive: slice(d, "contrastive", list), changing: slice(d, "changing", list) }
        return {
          id: c.id,
          name: c.name,
          params: c.params,
          usesGold: c.usesGold,
          oracleRetrieval: c.oracleRetrieval,
          heuristicStages: c.heuristicStages,
          plugins: c.plugins,
          slices: bySlice
        }
      })
    }
  }
}

export { encodeSummary as encode } from "./ResultLine.js"
