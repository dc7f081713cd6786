/**
 * `<out>/summary.json`: for every cell and slice (all, consistent, contrastive, changing), the
 * number of instances scored and failed, and for every metric its N, value and a seeded bootstrap
 * 95% interval. How a metric aggregates comes from its scorer (`MetricInfo.aggregate`):
 * `mean` of per-instance values, `pooled` ratio of summed `<name>:num` / `<name>:den` (micro
 * average), or `{ f1Of: [p, r] }`, the harmonic mean of two pooled ratios, resampled together.
 *
 * @example
 * import { Summary } from "@cupid-lab/experiments"
 * const acc = Summary.accumulator({ metrics, seed: 7, resamples: 1000 })
 * for (const line of lines) acc.add(JSON.parse(line))
 * const cells = acc.cells(grid) // CellSummary[]
 */
import type { Domain, Scorer } from "@cupid-lab/core"
import { Statistics } from "@cupid-lab/scorers"
import type { CellSummary, MetricDescription, MetricEstimate, ResultLine, Slice, SliceSummary, Summary } from "./ResultLine.js"
import { slices } from "./ResultLine.js"

const isHelper = (name: string): boolean => name.endsWith(":num") || name.endsWith(":den")

export const describe = (m: Scorer.MetricInfo): MetricDescription => ({
  name: m.name,
  description: m.description,
  higherIsBetter: m.higherIsBetter,
  heuristic: m.heuristic,
  aggregate: m.aggregate ?? "mean"
})

const nullable = (x: number): number | null => (Number.isFinite(x) ? x : null)

const toEstimate = (e: Statistics.Estimate): MetricEstimate => ({
  n: e.n,
  mean: nullable(e.mean),
  ci95: [nullable(e.ci95[0]), nullable(e.ci95[1])]
})

const f1 = (p: number, r: number): number => (Number.isNaN(p) || Number.isNaN(r) ? NaN : p + r === 0 ? 0 : (2 * p * r) / (p + r))

/**
 * Micro F1 from per-instance counts: F1 of (sum pNum / sum pDen, sum rNum / sum rDen), with a
 * bootstrap over instances drawn exactly as `Statistics.bootstrapRatio` draws them.
 */
export const bootstrapF1 = (
  p: { readonly num: ReadonlyArray<number>; readonly den: ReadonlyArray<number> },
  r: { readonly num: ReadonlyArray<number>; readonly den: ReadonlyArray<number> },
  options: Statistics.BootstrapOptions
): Statistics.Estimate => {
  const rows: Array<readonly [number, number, number, number]> = []
  for (let i = 0; i < p.num.length; i++) {
    const row = [p.num[i]!, p.den[i]!, r.num[i]!, r.den[i]!] as const
    if (row.every((x) => Number.isFinite(x))) rows.push(row)
  }
  const stat = (pick: (i: number) => number): number => {
    let pn = 0, pd = 0, rn = 0, rd = 0
    for (let i = 0; i < rows.length; i++) {
      const row = rows[pick(i)]!
      pn += row[0]
      pd += row[1]
      rn += row[2]
      rd += row[3]
    }
    return f1(pd === 0 ? NaN : pn / pd, rd === 0 ? NaN : rn / rd)
  }
  const m = stat((i) => i)
  if (rows.length < 2) return { n: rows.length, mean: m, ci95: [m, m] }
  const B = options.resamples ?? 1000
  const next = Statistics.rng(options.seed)
  const stats: Array<number> = []
  for (let b = 0; b < B; b++) {
    const s = stat(() => Math.floor(next() * rows.length))
    if (Number.isFinite(s)) stats.push(s)
  }
  stats.sort((x, y) => x - y)
  return { n: rows.length, mean: m, ci95: [Statistics.quantile(stats, 0.025), Statistics.quantile(stats, 0.975)] }
}

/** What the accumulator needs of a result line. */
export type LineScores = Pick<ResultLine, "cell" | "type" | "status" | "scores">

interface CellData {
  readonly types: Array<Domain.InstanceType>
  readonly failed: Record<Slice, number>
  /** metric key -> value per ok line (NaN when absent or null). */
  readonly values: Map<string, Array<number>>
}

export interface AccumulatorOptions {
  readonly metrics: ReadonlyArray<MetricDescription>
  readonly seed: number
  readonly resamples: number
}

export interface CellInfo {
  readonly id: string
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
  readonly usesGold: boolean
  readonly heuristicStages: ReadonlyArray<string>
}

export interface Accumulator {
  readonly add: (line: LineScores) => void
  /** Metrics declared by the scorers, then any undeclared score keys (as means), in a stable order. */
  readonly metrics: () => ReadonlyArray<MetricDescription>
  readonly cells: (cells: ReadonlyArray<CellInfo>) => Array<CellSummary>
}

export const accumulator = (options: AccumulatorOptions): Accumulator => {
  const data = new Map<string, CellData>()
  const seenKeys = new Set<string>()
  const cellData = (id: string): CellData => {
    let d = data.get(id)
    if (d === undefined) {
      d = { types: [], failed: { all: 0, consistent: 0, contrastive: 0, changing: 0 }, values: new Map() }
      data.set(id, d)
    }
    return d
  }
  const metrics = (): ReadonlyArray<MetricDescription> => {
    const declared = new Set(options.metrics.map((m) => m.name))
    const extra = [...seenKeys].filter((k) => !declared.has(k) && !isHelper(k)).sort()
    return [
      ...options.metrics,
      ...extra.map((name): MetricDescription => ({
        name,
        description: "(not declared by its scorer)",
        higherIsBetter: true,
        heuristic: false,
        aggregate: "mean"
      }))
    ]
  }
  const add = (line: LineScores) => {
    const d = cellData(line.cell)
    if (line.status === "failed") {
      d.failed.all++
      d.failed[line.type]++
      return
    }
    const row = d.types.length
    d.types.push(line.type)
    for (const k in line.scores) {
      if (!seenKeys.has(k)) seenKeys.add(k)
      let column = d.values.get(k)
      if (column === undefined) {
        column = []
        d.values.set(k, column)
      }
      // A key first seen on a later line is absent (NaN) on the earlier ones.
      while (column.length < row) column.push(NaN)
      const v = line.scores[k]
      column.push(v === null || v === undefined ? NaN : v)
    }
  }
  const slice = (d: CellData, s: Slice, list: ReadonlyArray<MetricDescription>): SliceSummary => {
    const rows: Array<number> = []
    d.types.forEach((t, i) => {
      if (s === "all" || t === s) rows.push(i)
    })
    const column = (key: string): Array<number> => {
      const c = d.values.get(key)
      return rows.map((i) => c?.[i] ?? NaN)
    }
    const bootstrap = { seed: options.seed, resamples: options.resamples }
    const out: Record<string, MetricEstimate> = {}
    for (const m of list) {
      const agg = m.aggregate
      const est = agg === "mean"
        ? Statistics.bootstrapMean(column(m.name), bootstrap)
        : agg === "pooled"
        ? Statistics.bootstrapRatio(column(`${m.name}:num`), column(`${m.name}:den`), bootstrap)
        : bootstrapF1(
          { num: column(`${agg.f1Of[0]}:num`), den: column(`${agg.f1Of[0]}:den`) },
          { num: column(`${agg.f1Of[1]}:num`), den: column(`${agg.f1Of[1]}:den`) },
          bootstrap
        )
      out[m.name] = toEstimate(est)
    }
    return { n: rows.length, failed: d.failed[s], metrics: out }
  }
  return {
    add,
    metrics,
    cells: (cells) => {
      const list = metrics()
      return cells.map((c) => {
        const d = cellData(c.id)
        const bySlice = {} as Record<Slice, SliceSummary>
        for (const s of slices) bySlice[s] = slice(d, s, list)
        return { id: c.id, name: c.name, params: c.params, usesGold: c.usesGold, heuristicStages: c.heuristicStages, slices: bySlice }
      })
    }
  }
}

/** Serialize a summary (stable key order, 2-space indent, trailing newline). */
export const encode = (summary: Summary): string => `${JSON.stringify(summary, null, 2)}\n`
