/**
 * `<out>/summary.json`: for every cell and slice (all, consistent, contrastive, changing), the
 * number of instances scored and failed, and for every metric its N, value and a seeded bootstrap
 * 95% interval. Where a persona has several instances in a slice (all instances, on CUPID), the
 * bootstrap resamples personas, a persona's instances together: they share their sessions. How a metric aggregates is its declared {@link Scorer.Aggregate}: the mean of
 * per-instance values, the pooled ratio of summed counts (micro average), or the F1 of two pooled
 * ratios, resampled together.
 *
 * It is computed from the reports' columns (results/Columns.ts) with {@link fromIndex}: a sweep folds
 * them as its lines go out, so the numbers are held once. {@link accumulator} folds lines into
 * such columns itself (tools and tests).
 *
 * @example
 * import { Summary } from "@cupid-lab/experiments"
 * const acc = Summary.accumulator({ metrics, seed: 7, resamples: 1000 })
 * for (const line of lines) acc.add(line)
 * const cells = acc.cells(cellInfos) // CellSummary[]
 */
import type { Domain, Scorer } from "@cupid-lab/core"
import { isCupidType } from "@cupid-lab/core/Domain"
import { Statistics } from "@cupid-lab/scorers"
import * as Columns from "./Columns.js"
import type { CellSummary, MetricDescription, MetricEstimate, PluginFact, Row, Slice, SliceSummary } from "./ResultLine.js"

const nullable = (x: number): number | null => (Number.isFinite(x) ? x : null)

const toEstimate = (e: Statistics.Estimate): MetricEstimate => ({
  n: e.n,
  mean: nullable(e.mean),
  ci95: [nullable(e.ci95[0]), nullable(e.ci95[1])]
})

/** The instance types, numbered for a byte per line. */
const typeCodes: ReadonlyArray<Domain.CupidType> = ["consistent", "contrastive", "changing"]

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
  readonly add: (line: Row) => void
  /** Metrics declared by the scorers, then any undeclared score keys, in a stable order. */
  readonly metrics: () => ReadonlyArray<MetricDescription>
  readonly cells: (cells: ReadonlyArray<CellInfo>) => Array<CellSummary>
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
export const declaredOf = (metrics: ReadonlyArray<MetricDescription>): Array<MetricDescription> => metrics.filter((m) => m.description !== undeclaredDescription)

/** A column read by row (NaN past its end). */
interface At {
  readonly at: (i: number) => number
}

/** A metric's columns over a cell's ok lines, read by row. */
interface ColumnsAt {
  readonly values: At
  readonly num: At
  readonly den: At
}

/** What a summary reads of one cell. */
interface CellSource {
  /** Its ok lines. */
  readonly ok: number
  /** The instance type's number ({@link typeCodes}) of ok line i. */
  readonly typeAt: (i: number) => number
  /** The instance type of ok line i, as the data names it. */
  readonly typeOf: (i: number) => string
  /** Failed lines per type of another benchmark. */
  readonly failedOther: ReadonlyMap<string, number>
  /** The persona's number of ok line i: the cluster its interval resamples with (see Statistics.Clustering). */
  readonly personaAt: (i: number) => number
  readonly failed: Readonly<Record<Slice, number>>
  readonly column: (name: string) => ColumnsAt | undefined
}

/** The bootstrap estimate of a metric over some rows of a cell. */
export const estimate = (
  metric: Pick<MetricDescription, "name" | "aggregate">,
  column: (name: string) => ColumnsAt | undefined,
  rows: ReadonlyArray<number>,
  bootstrap: Statistics.BootstrapOptions,
  personaAt?: (i: number) => number
): Statistics.Estimate => {
  const pick = (xs: At | undefined): Float64Array => {
    const out = new Float64Array(rows.length)
    for (let k = 0; k < rows.length; k++) out[k] = xs === undefined ? NaN : xs.at(rows[k]!)
    return out
  }
  const options: Statistics.BootstrapOptions & Statistics.Clustering = personaAt === undefined ? bootstrap : { ...bootstrap, clusters: Float64Array.from(rows, personaAt) }
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

/** The summary as a fold of its own over result lines in their final order: {@link fromIndex} over the lines' columns. */
export const accumulator = (options: AccumulatorOptions): Accumulator => {
  const rows: Array<Row> = []
  let summarized: Omit<Accumulator, "add"> | undefined
  const current = () => (summarized ??= fromIndex(Columns.index(rows), options))
  return {
    add: (line) => {
      rows.push(line)
      summarized = undefined
    },
    metrics: () => current().metrics(),
    cells: (cells) => current().cells(cells)
  }
}

const noFailures: Readonly<Record<Slice, number>> = { all: 0, consistent: 0, contrastive: 0, changing: 0 }

/**
 * The same summary from a run's columns (results/Columns.ts), which the sweep folds anyway: its metrics
 * (the declared ones, then any undeclared score key of the ok lines, a mean or a ratio as its first
 * ok line scored it, as {@link accumulator} decides) and its cells.
 */
export const fromIndex = (index: Columns.Index, options: AccumulatorOptions): Omit<Accumulator, "add"> => {
  const declared = new Set(options.metrics.map((m) => m.name))
  const metrics = (): ReadonlyArray<MetricDescription> => [
    ...options.metrics,
    ...[...index.okScoreKinds.keys()].filter((k) => !declared.has(k)).sort().map((k) => undeclared(k, index.okScoreKinds.get(k) === true))
  ]
  const failed = new Map<string, Record<Slice, number>>()
  const failedOther = new Map<string, Map<string, number>>()
  for (const f of index.failures) {
    const counts = failed.get(f.cell) ?? { ...noFailures }
    const type = index.instances[index.number.get(f.instance)!]!.type
    counts.all++
    if (isCupidType(type)) counts[type]++
    else {
      // Other benchmarks' types are summarized in `types`.
      const other = failedOther.get(f.cell) ?? new Map<string, number>()
      other.set(type, (other.get(type) ?? 0) + 1)
      failedOther.set(f.cell, other)
    }
    failed.set(f.cell, counts)
  }
  const otherTypes = [...new Set(index.instances.map((f) => f.type).filter((t) => !isCupidType(t)))].sort()
  const codes = index.instances.map((f) => typeCodes.findIndex((t) => t === f.type))
  const personaNumbers = new Map<string, number>()
  const personas = index.instances.map((f) => {
    let k = personaNumbers.get(f.personaId)
    if (k === undefined) personaNumbers.set(f.personaId, (k = personaNumbers.size))
    return k
  })
  const source = (id: string): CellSource => {
    const c = index.columns(id)
    // The columns are by instance number; the summary reads them by ok line.
    const at = (xs: Float64Array): At => ({ at: (i) => xs[c!.instances[i]!]! })
    return c === undefined
      ? { ok: 0, typeAt: () => -1, typeOf: () => "", failedOther: failedOther.get(id) ?? new Map(), personaAt: () => -1, failed: failed.get(id) ?? noFailures, column: () => undefined }
      : {
        ok: c.instances.length,
        typeAt: (i) => codes[c.instances[i]!]!,
        typeOf: (i) => index.instances[c.instances[i]!]!.type,
        failedOther: failedOther.get(id) ?? new Map(),
        personaAt: (i) => personas[c.instances[i]!]!,
        failed: failed.get(id) ?? noFailures,
        column: (name) => {
          const m = c.metric(name)
          return { values: at(m.values), num: at(m.num), den: at(m.den) }
        }
      }
  }
  return { metrics, cells: (cells) => summarize(options, metrics(), cells, source, otherTypes) }
}

/** The summary's metrics and cells from a run's columns (see {@link fromIndex}). */
export const of = (index: Columns.Index, options: AccumulatorOptions, cells: ReadonlyArray<CellInfo>): { readonly metrics: ReadonlyArray<MetricDescription>; readonly cells: Array<CellSummary> } => {
  const s = fromIndex(index, options)
  return { metrics: s.metrics(), cells: s.cells(cells) }
}

/** Every cell's summary per slice, from what `source` says of it. */
const summarize = (
  options: AccumulatorOptions,
  list: ReadonlyArray<MetricDescription>,
  cells: ReadonlyArray<CellInfo>,
  source: (id: string) => CellSource,
  otherTypes: ReadonlyArray<string>
): Array<CellSummary> => {
  const bootstrap = { seed: options.seed, resamples: options.resamples, ...(options.largeSample !== undefined ? { largeSample: options.largeSample } : {}) }
  const over = (d: CellSource, rows: ReadonlyArray<number>, failedRows: number): SliceSummary => {
    const out: Record<string, MetricEstimate> = {}
    for (const m of list) out[m.name] = toEstimate(estimate(m, d.column, rows, bootstrap, d.personaAt))
    return { n: rows.length, failed: failedRows, metrics: out }
  }
  const slice = (d: CellSource, s: Slice): SliceSummary => {
    const rows: Array<number> = []
    const code = s === "all" ? -1 : typeCodes.indexOf(s)
    for (let i = 0; i < d.ok; i++) if (code < 0 || d.typeAt(i) === code) rows.push(i)
    return over(d, rows, d.failed[s])
  }
  const types = (d: CellSource): Record<string, SliceSummary> => {
    const out: Record<string, SliceSummary> = {}
    for (const t of otherTypes) {
      const rows: Array<number> = []
      for (let i = 0; i < d.ok; i++) if (d.typeOf(i) === t) rows.push(i)
      out[t] = over(d, rows, d.failedOther.get(t) ?? 0)
    }
    return out
  }
  return cells.map((c) => {
    const d = source(c.id)
    return {
      id: c.id,
      name: c.name,
      params: c.params,
      usesGold: c.usesGold,
      oracleRetrieval: c.oracleRetrieval,
      heuristicStages: c.heuristicStages,
      plugins: c.plugins,
      slices: { all: slice(d, "all"), consistent: slice(d, "consistent"), contrastive: slice(d, "contrastive"), changing: slice(d, "changing") },
      ...(otherTypes.length === 0 ? {} : { types: types(d) })
    }
  })
}

export { encodeSummary as encode } from "./ResultLine.js"
