/**
 * What the viewer shows of a run before its instances: its entry in the run list (with the headline
 * best cell), its cells, its metric columns in report order, and its charts as SVG.
 *
 * @example
 * const entry = Entries.entryOf(found, summary, { info, identity, problems: [] })
 */
import { Effect, Schema, Struct } from "effect"
import { Analysis, Charts, Figures, Format, Tables } from "@cupid-lab/report"
import type { ResultLine, RunDir, RunId } from "@cupid-lab/results"

/** A run directory found below the viewer's root. */
export interface Found {
  readonly id: string
  readonly dir: string
  readonly latest: boolean
}

const RetrieverUse = Schema.Struct({ use: Schema.String })

/** The main metric as reports choose it; a summary naming a metric it lacks gets none, with the reason. */
export const safeMain = (
  summary: ResultLine.Summary
): { readonly main: ResultLine.MetricDescription | undefined; readonly mainReason: string } => {
  try {
    return Analysis.mainMetric(summary)
  } catch (e) {
    return { main: undefined, mainReason: e instanceof Error ? e.message : String(e) }
  }
}

export const cellEntries = (summary: ResultLine.Summary) =>
  summary.cells.map((c) => {
    const retriever = c.params["retriever"]
    const use = Schema.is(RetrieverUse)(retriever) ? retriever.use : null
    return { id: c.id, name: c.name, baseline: c.id === summary.baseline, oracle: c.oracleRetrieval, retriever: use }
  })

/** The main metric first, then the headline metrics, then the rest. */
export const metricColumns = (summary: ResultLine.Summary, main: ResultLine.MetricDescription | undefined) => {
  const rest = summary.metrics.filter((m) => m !== main)
  return [
    ...(main === undefined ? [] : [main]),
    ...rest.filter((m) => m.headline),
    ...rest.filter((m) => !m.headline)
  ].map((m) => Struct.pick(m, "name", "heuristic", "headline", "description"))
}

/** The first cell the reports' headline table marks best on the main metric over all instances. */
const headline = (summary: ResultLine.Summary, main: ResultLine.MetricDescription | undefined) => {
  if (main === undefined) return null
  const best = Tables.bestShown(summary.cells, "all", main)
  const cell = summary.cells.find((c) => {
    const mean = c.slices.all.metrics[main.name]?.mean
    return !c.usesGold && mean !== null && mean !== undefined && Format.number(mean) === best
  })
  const e = cell?.slices.all.metrics[main.name]
  return {
    metric: main.name,
    heuristic: main.heuristic,
    cell: cell?.name ?? null,
    value: e?.mean ?? null,
    n: e?.n ?? 0
  }
}

export const entryOf = (
  found: Found,
  summary: ResultLine.Summary,
  records: {
    readonly info: RunDir.RunInfo | undefined
    readonly identity: RunId.Identity | undefined
    readonly problems: ReadonlyArray<string>
  }
) => {
  const { info, identity, problems } = records
  return {
    id: found.id,
    config: summary.config.name,
    configHash: summary.config.hash,
    data: summary.dataset.source,
    fingerprint: summary.dataset.hash,
    transform: identity?.data.transform === undefined ? null : JSON.stringify(identity.data.transform),
    started: info?.startedAt ?? null,
    cells: summary.cells.length,
    instances: summary.dataset.instances,
    failed: summary.cells.reduce((n, c) => n + c.slices.all.failed, 0),
    latest: found.latest,
    main: headline(summary, safeMain(summary).main),
    problems
  }
}

/** The report's charts as SVG, in report.html's order. */
export const figuresOf = Effect.fn("Entries.figures")(function* (a: Analysis.Analysis) {
  const p = Figures.planned(a)
  const all = [
    ...p.overview.map((planned) => ["overview", planned] as const),
    ["recency", p.recency] as const,
    ["history", p.history] as const,
    ...p.interventions.map((planned) => ["intervention", planned] as const),
    ["cost", p.cost] as const
  ]
  const shown = all.flatMap(([section, planned]) => (planned === undefined ? [] : [{ section, planned }]))
  const figures = yield* Effect.forEach(shown, ({ section, planned }) =>
    Effect.map(Charts.svg(planned.chart), (svg) => ({ section, caption: planned.caption, svg }))
  )
  return { figures }
})

/** The JSON of `GET /api/figures`, and the parts of other answers built here. */
export type FiguresView = Effect.Effect.Success<ReturnType<typeof figuresOf>>

export type RunEntry = ReturnType<typeof entryOf>

export type CellEntry = ReturnType<typeof cellEntries>[number]

export type MetricColumn = ReturnType<typeof metricColumns>[number]
