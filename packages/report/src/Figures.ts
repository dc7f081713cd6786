/**
 * The figures of report.html and compare.html: what each chart plots, taken from an analysis or a
 * comparison and handed to {@link Charts}, with a caption that states what is plotted and its N.
 *
 * @example
 * Html.render(analysis, examples, info, yield* Figures.report(analysis))
 */
import { Effect } from "effect"
import { type Comparison, matchLabel } from "./Compare.js"
import type { ResultLine } from "@cupid-lab/results"

import type { Analysis } from "./Analysis.js"
import type { Binned } from "./Bins.js"
import * as Format from "./Format.js"
import * as Interventions from "./Interventions.js"
import { paretoFront } from "./Inventory.js"
import * as Notes from "./Notes.js"
import * as Charts from "./Charts.js"
import * as Slices from "./Slices.js"
import * as Verdict from "./Verdict.js"

const e = Format.html

const figure = (svg: string, caption: string) => `<figure>${svg}<figcaption>${e(caption)}</figcaption></figure>`

/** A figure's caption on a page that shows the chart as inline SVG, whose marks have tooltips (report.html, compare.html). */
export const captionWithTooltips = (p: Planned): string =>
  p.hover === undefined ? p.caption : `${p.caption} ${p.hover}`

/** Cells per panel of a binned line chart: beyond it, small multiples of this many cells each. */
const linesPerPanel = 10

const series = (a: Analysis, cells: ReadonlyArray<Analysis["cells"][number]> = a.cells): Array<Charts.Series> =>
  cells.map((c) => ({ name: Notes.cellLabel(c.summary, a.baseline.id), oracle: c.summary.usesGold }))

/** The cells in leaderboard order (ceilings last), so that a chart reads from the winner down; grid order without a main metric. */
export const ranked = (a: Analysis): Array<Analysis["cells"][number]> => {
  const board = Verdict.verdict(a).boards.find((b) => b.slice === "all")
  if (board === undefined) return [...a.cells]
  const byId = new Map(a.cells.map((c) => [c.summary.id, c]))
  return [...board.contenders.map((s) => s.cell), ...board.ceilings.map((s) => s.cell), ...board.shared].map((c) =>
    byId.get(c.id)!
  )
}

/** An estimate to plot at `where` (a row and panel, a series and category...); none without a value. */
const plotted = <W>(est: ResultLine.MetricEstimate | undefined, where: W): Array<Charts.Estimate & W> =>
  est === undefined || est.mean === null
    ? []
    : [{ value: est.mean, lo: est.ci95[0], hi: est.ci95[1], n: est.n, ...where }]

/** The slices a chart of `metric` has a panel for: those some cell has a value on. */
const panelsOf = (a: Pick<Analysis, "summary">, metric: string) =>
  Slices.valued(a.summary.cells, Slices.of(a.summary), metric)

/** "all 18, consistent 6, ..." or ranges when cells differ. */
const nCaption = (a: Analysis, metric: string, shown: ReadonlyArray<Slices.Slice> = panelsOf(a, metric)): string =>
  shown
    .map((s) => {
      const ns = a.cells.map((c) => Slices.estimate(c.summary, s, metric)?.n ?? 0)
      const lo = Math.min(...ns),
        hi = Math.max(...ns)
      return `${s} ${lo === hi ? lo : `${lo}–${hi}`}`
    })
    .join(", ")

export interface Planned {
  readonly chart: Charts.Chart
  /** What is plotted and its N: true on every page that shows the chart. */
  readonly caption: string
  /** What hovering shows: only where the chart is inline SVG (report.html), not where it is an image (the viewer). */
  readonly hover?: string
}

/** Bars of a metric: one row per cell, one panel per instance type, with CI whiskers. */
export const bars = (a: Analysis, m: ResultLine.MetricDescription): Planned => {
  const order = ranked(a)
  const panels = panelsOf(a, m.name)
  return {
    chart: Charts.bars({
      title: `${Notes.metricLabel(m)} per cell and instance type`,
      metric: m.name,
      rows: series(a, order),
      panels,
      values: order.flatMap((c, row) =>
        panels.flatMap((s, panel) => plotted(Slices.estimate(c.summary, s, m.name), { row, panel }))
      )
    }),
    caption: `${Notes.metricLabel(m)} (${Notes.aggregateNote(m)}) per cell (rows, in leaderboard order: best on the main metric first, ceilings last) and instance type (panels), with 95% bootstrap CI whiskers; oracle cells in grey. N per cell (instances scored): ${nCaption(a, m.name, panels)}.`,
    hover: "Hover a bar for its value, CI and N."
  }
}

/** Precision against recall (inference's, else retrieval's) on all instances, one point per cell; undefined without both metrics. */
export const precisionRecall = (a: Analysis): Planned | undefined => {
  const p =
    a.inference.find((m) => m.name.startsWith("inference.precision")) ??
    a.retrieval.find((m) => m.name === "retrieval.precision")
  const r =
    a.inference.find((m) => m.name.startsWith("inference.recall")) ??
    a.retrieval.find((m) => m.name === "retrieval.recall")
  if (p === undefined || r === undefined) return undefined
  return {
    chart: Charts.scatter({
      title: "Precision against recall",
      x: r.name,
      y: p.name,
      series: series(a),
      points: a.cells.map((c, i) => {
        const pe = c.summary.slices.all.metrics[p.name],
          re = c.summary.slices.all.metrics[r.name]
        return {
          series: i,
          x: re?.mean ?? NaN,
          y: pe?.mean ?? NaN,
          detail: `${r.name} ${Format.number(re?.mean)} (n=${re?.n ?? 0}), ${p.name} ${Format.number(pe?.mean)} (n=${pe?.n ?? 0})`
        }
      })
    }),
    caption: `${p.name} against ${r.name}, all instances, one point per cell (hollow: oracle); cells on the same spot overlap. N per cell: ${nCaption(a, r.name, ["all"])}.`,
    hover: "Hover a point for its values; a point's tooltip names every cell on that spot."
  }
}

/** A binned metric per cell: up to {@link linesPerPanel} cells in one panel, beyond that panels of that many on one y scale. */
export const binned = (a: Analysis, b: Binned): Planned => {
  const order = ranked(a)
  const panelled = order.length > linesPerPanel
  // Contenders come first, so cell k of the order has rank k + 1 until the ceilings.
  const contenders = order.filter((c) => !c.summary.usesGold).length
  const panels = Array.from({ length: Math.ceil(order.length / linesPerPanel) }, (_, k) => {
    const from = k * linesPerPanel,
      to = Math.min(order.length, from + linesPerPanel) - 1
    const ranks = from < contenders ? `ranks ${from + 1}–${Math.min(to, contenders - 1) + 1}` : ""
    return to >= contenders ? (ranks === "" ? "ceilings" : `${ranks} and ceilings`) : ranks
  })
  const total = b.bins.reduce((n, x) => n + x.instances, 0)
  const layout = panelled
    ? `; ${a.cells.length} cells in panels of up to ${linesPerPanel} in leaderboard order (ranks on the main metric, ceilings last), on one y scale`
    : ""
  return {
    chart: Charts.lines({
      title: Notes.binHeader(b),
      x:
        b.by === "relevant position"
          ? "mean position of the relevant sessions (bin, instances)"
          : "history length, approximate tokens (bin, instances)",
      y: b.metric.name,
      categories: b.bins.map((x) => `${x.label} (${x.instances})`),
      series: series(a, order),
      ...(panelled ? { panels } : {}),
      points: order.flatMap((c, series) =>
        b.bins.flatMap((bin, category) => {
          const v = bin.values.get(c.summary.id)
          return v === undefined
            ? []
            : [
                {
                  series,
                  category,
                  value: v.value,
                  lo: null,
                  hi: null,
                  n: v.n,
                  ...(panelled ? { panel: Math.floor(series / linesPerPanel) } : {})
                }
              ]
        })
      )
    }),
    caption: `${Notes.binHeader(b)}. ${b.bins.length} bins over ${total} instances (instances per bin in parentheses)${layout}; one line per cell; each point aggregates a cell's scored instances in the bin (${Notes.aggregateNote(b.metric)}); cells with the same value share the point.`,
    hover: "Hover a point for its value and N."
  }
}

/** A transform curve: one line per series, one panel per instance type. */
export const intervention = (curve: Interventions.Curve, slices: ReadonlyArray<Slices.Slice>): Planned => {
  const at = (c: ResultLine.CellSummary | undefined, slice: Slices.Slice) =>
    c === undefined ? undefined : Slices.estimate(c, slice, curve.metric.name)
  const ns = curve.series.flatMap((s) => s.cells.flatMap((c) => slices.map((slice) => at(c, slice)?.n ?? 0)))
  return {
    chart: Charts.lines({
      title: `${Notes.metricLabel(curve.metric)} against ${curve.axis}`,
      x: Interventions.axisTitle(curve.axis),
      y: curve.metric.name,
      categories: curve.categories,
      series: curve.series.map((s) => ({ name: s.label })),
      panels: slices,
      points: curve.series.flatMap((s, series) =>
        slices.flatMap((slice, panel) =>
          s.cells.flatMap((c, category) => plotted(at(c, slice), { series, category, panel }))
        )
      )
    }),
    caption: `${Notes.metricLabel(curve.metric)} (${Notes.aggregateNote(curve.metric)}) against ${Interventions.axisTitle(curve.axis)}, one panel per instance type; one line per series; whiskers: 95% bootstrap CI. N per point: ${Math.min(...ns)}–${Math.max(...ns)}.`
  }
}

/** The main metric against the pipeline's tokens per instance, with the Pareto front of the non-oracle cells. */
export const frontier = (a: Analysis): Planned | undefined => {
  const m = a.main
  if (m === undefined) return undefined
  const points = a.cells.map((c, i) => {
    const r = a.cost[i]!
    const est = c.summary.slices.all.metrics[m.name]
    return {
      c,
      cost: r.pairs === 0 ? NaN : (r.promptTokens + r.completionTokens) / r.pairs,
      value: est?.mean ?? NaN,
      n: est?.n ?? 0
    }
  })
  const front = paretoFront(
    points.filter((p) => !p.c.summary.usesGold).map((p) => ({ id: p.c.summary.id, cost: p.cost, value: p.value }))
  )
  const free = a.cost.every((r) => r.promptTokens + r.completionTokens === 0)
  return {
    chart: Charts.scatter({
      title: "Quality against tokens",
      x: "pipeline tokens per instance (prompt + completion)",
      y: m.name,
      series: series(a),
      points: points.map((p, i) => {
        const on = front.has(p.c.summary.id)
        return {
          series: i,
          x: p.cost,
          y: p.value,
          front: on,
          detail: `${Format.number(p.cost)} tokens per instance, ${m.name} ${Format.number(p.value)} (n=${p.n})${on ? ", on the front" : ""}`
        }
      })
    }),
    caption: `Cost frontier: ${m.name} (all instances) against the pipeline's tokens per instance (scoring excluded). Ringed points joined by a dashed line: the Pareto front (no other non-oracle cell is cheaper and at least as good). Hollow: oracle cells, left out of the front. N per cell: ${nCaption(a, m.name, ["all"])}.${free ? " Every cell ran without model calls (0 tokens), so cost does not separate them." : ""}`
  }
}

/** The charts of a report with their captions, by the report section that shows them. */
export const planned = (a: Analysis) => {
  const headline = [a.main, a.generation[0], a.retrieval.find((m) => m.name === "retrieval.recall")].filter(
    (m, i, all): m is ResultLine.MetricDescription => m !== undefined && all.indexOf(m) === i
  )
  const pr = precisionRecall(a)
  return {
    overview: [...headline.map((m) => bars(a, m)), ...(pr === undefined ? [] : [pr])],
    recency: a.recency === undefined ? undefined : binned(a, a.recency),
    history: a.history === undefined ? undefined : binned(a, a.history),
    interventions: a.interventions.map((curve) => intervention(curve, panelsOf(a, curve.metric.name))),
    cost: frontier(a)
  }
}

const rendered = (p: Planned | undefined) =>
  p === undefined ? Effect.succeed("") : Effect.map(Charts.svg(p.chart), (svg) => figure(svg, captionWithTooltips(p)))

export const report = Effect.fn("Figures.report")(function* (a: Analysis) {
  const p = planned(a)
  return {
    overview: `<h2 id="charts">Overview</h2>${(yield* Effect.forEach(p.overview, rendered)).join("")}`,
    recency: yield* rendered(p.recency),
    history: yield* rendered(p.history),
    interventions: yield* Effect.forEach(p.interventions, rendered),
    cost: yield* rendered(p.cost)
  }
})

/** The rendered figures of one report, each a `<figure>` ("" when there is nothing to plot); `overview` with its heading. */
export type ReportFigures = Effect.Effect.Success<ReturnType<typeof report>>

/** compare.html's figure ("" when nothing was matched): the main metric of each matched cell in both runs, on the instances both scored. */
export const compare = (c: Comparison): Effect.Effect<string> => {
  const main = c.metrics[0]
  return rendered(
    main === undefined || c.matches.length === 0
      ? undefined
      : {
          chart: Charts.bars({
            title: `${main.name}: first and second run`,
            metric: main.name,
            rows: c.matches.map((m) => ({ name: matchLabel(m), oracle: m.a.usesGold })),
            panels: ["first run", "second run"],
            values: c.matches.flatMap((match, row) => {
              const r = c.rows.find(
                (x) => x.match.a.id === match.a.id && x.metric.name === main.name && x.slice === "all"
              )
              if (r === undefined || r.a.n === 0) return []
              return [r.a, r.b].map((v, panel) => ({ row, panel, value: v.value, lo: null, hi: null, n: v.n }))
            })
          }),
          caption: `${main.name} on all shared instances, per matched cell (N per cell in the tables).`,
          hover: "Hover a bar for its value and N."
        }
  )
}
