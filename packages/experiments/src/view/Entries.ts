/**
 * What the viewer's run list and run page say of a run: its entry, its cells and its metric columns.
 *
 * @example
 * const entry = Entries.entryOf(found, summary, info, identity, [])
 */
import { Struct } from "effect"
import * as Analysis from "../analysis/Analysis.js"
import * as Format from "../render/Format.js"
import * as Tables from "../render/Tables.js"
import type { MetricDescription, Summary } from "../results/ResultLine.js"
import type * as RunDir from "../results/RunDir.js"
import type * as RunId from "../run/RunId.js"
import type * as Api from "./Api.js"

/** A run directory found below the viewer's root. */
export interface Found {
  readonly id: string
  readonly dir: string
  readonly latest: boolean
}

export const cellEntries = (summary: Summary): Array<Api.CellEntry> =>
  summary.cells.map((c, i) => {
    const retriever = c.params["retriever"]
    const use = typeof retriever === "object" && retriever !== null && "use" in retriever && typeof retriever.use === "string" ? retriever.use : null
    return { id: c.id, k: i + 1, name: c.name, baseline: c.id === summary.baseline, oracle: c.oracleRetrieval, heuristicStages: [...c.heuristicStages], retriever: use }
  })

export const metricColumns = (summary: Summary, main: MetricDescription | undefined): Array<MetricDescription> => {
  const rest = summary.metrics.filter((m) => m !== main)
  return [...(main === undefined ? [] : [main]), ...rest.filter((m) => m.headline), ...rest.filter((m) => !m.headline)]
}

export const column = (m: MetricDescription): Api.MetricColumn =>
  Struct.pick(m, "name", "family", "direction", "heuristic", "headline", "description")

/** The first cell the reports' headline table marks best on the main metric over all instances. */
export const headline = (summary: Summary, main: MetricDescription | undefined): Api.HeadlineBest | null => {
  if (main === undefined) return null
  const best = Tables.bestShown(summary.cells, "all", main)
  const cell = summary.cells.find((c) => {
    const mean = c.slices.all.metrics[main.name]?.mean
    return !c.usesGold && mean !== null && mean !== undefined && Format.number(mean) === best
  })
  const e = cell?.slices.all.metrics[main.name]
  return { metric: main.name, heuristic: main.heuristic, cell: cell?.name ?? null, value: e?.mean ?? null, n: e?.n ?? 0 }
}

export const entryOf = (
  found: Found,
  summary: Summary,
  info: RunDir.RunInfo | undefined,
  identity: RunId.Identity | undefined,
  problems: ReadonlyArray<string>
): Api.RunEntry => {
  const { main } = safeMain(summary)
  return {
    id: found.id,
    config: summary.config.name,
    configHash: summary.config.hash,
    data: summary.dataset.source,
    fingerprint: summary.dataset.hash,
    transform: identity?.data.transform === undefined ? null : JSON.stringify(identity.data.transform),
    started: info?.startedAt ?? null,
    durationMs: info?.durationMs ?? null,
    cells: summary.cells.length,
    instances: summary.dataset.instances,
    failed: summary.cells.reduce((n, c) => n + c.slices.all.failed, 0),
    latest: found.latest,
    main: headline(summary, main),
    problems
  }
}

/** The main metric as reports choose it; a summary naming a metric it lacks gets none, with the reason. */
export const safeMain = (summary: Summary): { readonly main: MetricDescription | undefined; readonly mainReason: string } => {
  try {
    return Analysis.mainMetric(summary)
  } catch (e) {
    return { main: undefined, mainReason: e instanceof Error ? e.message : String(e) }
  }
}

