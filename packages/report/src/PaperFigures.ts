/**
 * The CUPID paper's figures drawn from a run, for `paper.html` (paper.md keeps the tables): inference
 * F1 by the relevant sessions' mean position (Fig. 3) and by history length (Fig. 9), the mean over
 * models and per model; F1 against the generation score (Fig. 5); full history against summaries
 * (Fig. 6); and, when cells differ only in the `matcher` binding, per-instance F1 under one matcher
 * against the other with Pearson's r (Fig. 4). Every value comes from summary.json and the result
 * lines; every chart states its N; a figure the run cannot draw is left out with a sentence why.
 *
 * @example
 * const figures = yield* PaperFigures.blocks(run) // a "Figures" section to append to Reproduction.document(run.summary)
 * PaperFigures.byPosition(run)?.mean // per position bin: the mean over models of each model's F1 there
 */
import { Hash } from "@cupid-lab/core"
import type { ResultLine, RunDir } from "@cupid-lab/results"
import { Effect, Predicate } from "effect"
import type { TopLevelSpec } from "vega-lite"
import * as Bins from "./Bins.js"
import * as Charts from "./Charts.js"
import * as Doc from "./Document.js"
import * as Format from "./Format.js"
import { pearson } from "./Judges.js"
import * as Published from "./Published.js"
import { settingOf } from "./Analysis.js"
import { modelOf } from "./Reproduction.js"

type Cell = ResultLine.CellSummary
type Estimate = ResultLine.MetricEstimate

/** What the figures read of a run: its summary and its result lines as columns. */
export type Run = Pick<RunDir.Run, "summary" | "index">

/** The metrics drawn: the paper's pooled F1, the per-instance F1 (Fig. 4) and the judge's score. */
export const metrics = { f1: "inference.f1_micro", instance: "inference.f1", generation: "generation.score" } as const

const f1Title = "inference F1 (micro: pooled counts)"

export type Model = { readonly entry: string; readonly label: string; readonly cell: Cell }

const described = (s: ResultLine.Summary, name: string) => s.metrics.find((m) => m.name === name)
const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
const fmt = Format.number

/** Per model, its cell in the baseline's setting (the full history): the first such cell in grid order. */
export const fullHistory = (summary: ResultLine.Summary): Array<Model> => {
  const baseline = summary.cells.find((c) => c.id === summary.baseline)
  if (baseline === undefined) return []
  const seen = new Set<string>()
  return summary.cells.flatMap((cell) => {
    const m = modelOf(cell)
    if (m === undefined || settingOf(cell) !== settingOf(baseline) || seen.has(m.entry)) return []
    seen.add(m.entry)
    return [{ entry: m.entry, label: Published.modelOf(m.entry, m.id)?.label ?? m.entry, cell }]
  })
}

export interface ModelBins {
  readonly binned: Bins.Binned
  readonly models: ReadonlyArray<Model>
  /** Per bin: the mean of the models' values there, over `models` models and `n` (model, instance) pairs. */
  readonly mean: ReadonlyArray<{ readonly value: number; readonly models: number; readonly n: number } | undefined>
}

const modelBins = (run: Run, by: Bins.Binned["by"]): ModelBins | undefined => {
  const metric = described(run.summary, metrics.f1)
  const models = fullHistory(run.summary)
  if (metric === undefined || models.length === 0) return undefined
  const cells = models.map((m) => m.cell)
  const binned =
    by === "relevant position" ? Bins.recency(metric, cells, run.index) : Bins.history(metric, cells, run.index)
  if (binned === undefined || binned.bins.length === 0) return undefined
  const mean = binned.bins.map((bin) => {
    const vs = models.flatMap((m) => {
      const v = bin.values.get(m.cell.id)
      return v !== undefined && v.n > 0 && Number.isFinite(v.value) ? [v] : []
    })
    return vs.length === 0
      ? undefined
      : { value: sum(vs.map((v) => v.value)) / vs.length, models: vs.length, n: sum(vs.map((v) => v.n)) }
  })
  return { binned, models, mean }
}

/** Fig. 3: pooled F1 per bin of the relevant sessions' mean position (the report's recency bins). */
export const byPosition = (run: Run): ModelBins | undefined => modelBins(run, "relevant position")

/** Fig. 9: pooled F1 per equal-size bin of the history's approximate tokens (the report's length bins). */
export const byLength = (run: Run): ModelBins | undefined => modelBins(run, "history tokens")

export type Scored = { readonly model: Model; readonly f1: Estimate; readonly generation: Estimate }

const valued = (e: Estimate | undefined): e is Estimate => e !== undefined && e.mean !== null && e.n > 0

/** Fig. 5: per model, F1 and the generation score of its full-history cell, on all instances. */
export const generationPoints = (summary: ResultLine.Summary): Array<Scored> =>
  fullHistory(summary).flatMap((model) => {
    const all = model.cell.slices.all.metrics
    const [f1, generation] = [all[metrics.f1], all[metrics.generation]]
    return valued(f1) && valued(generation) ? [{ model, f1, generation }] : []
  })

export interface Summarized {
  readonly model: Model
  readonly full: Estimate
  /** The cell that differs from the full-history one only by a summarizer, by its setting. */
  readonly setting: string
  readonly summaries: Estimate
}

const withoutSummarizer = (c: Cell): string => {
  const { summarizer: _s, ...rest } = c.params
  return Hash.canonicalJson(rest)
}

/** Fig. 6: per model, F1 from the full history and from the first cell that only adds a summarizer. */
export const summaryPairs = (summary: ResultLine.Summary): Array<Summarized> =>
  fullHistory(summary).flatMap((model) => {
    if (model.cell.params["summarizer"] != null) return []
    const s = summary.cells.find(
      (c) =>
        c.params["summarizer"] != null &&
        modelOf(c)?.entry === model.entry &&
        withoutSummarizer(c) === withoutSummarizer(model.cell)
    )
    const [full, summaries] = [model.cell.slices.all.metrics[metrics.f1], s?.slices.all.metrics[metrics.f1]]
    return s !== undefined && valued(full) && valued(summaries)
      ? [{ model, full, setting: settingOf(s), summaries }]
      : []
  })

const bindings = (c: Cell): Readonly<Record<string, unknown>> => {
  const m = c.params["models"]
  return Predicate.isRecord(m) ? m : {}
}

/** The cell's matcher entry: as its models record it, else as its parameters bind the role. */
export const matcherOf = (c: Cell): string | undefined => {
  const bound = bindings(c)["matcher"]
  return c.models?.["matcher"]?.entry ?? (typeof bound === "string" ? bound : undefined)
}

/** Everything of a cell but its matcher; with `inference`, but its generator too (cells that differ only there share an inference). */
const restOf = (c: Cell, inference = false): string => {
  const { matcher: _m, ...models } = c.models ?? {}
  const { matcher: _b, ...bound } = bindings(c)
  const { generator, ...params } = c.params
  return Hash.canonicalJson({ params: { ...params, models: bound, ...(inference ? {} : { generator }) }, models })
}

export interface MatcherCells {
  readonly matchers: readonly [string, string]
  readonly pairs: ReadonlyArray<readonly [Cell, Cell]>
}

/** The first two matcher entries in grid order, and the pairs of cells equal but for them (one per inference). */
export const matcherCells = (summary: ResultLine.Summary): MatcherCells | undefined => {
  const entries = [...new Set(summary.cells.flatMap((c) => matcherOf(c) ?? []))]
  if (entries.length < 2) return undefined
  const [a, b] = [entries[0]!, entries[1]!]
  const seen = new Set<string>()
  const pairs = summary.cells.flatMap((ca) => {
    if (matcherOf(ca) !== a || seen.has(restOf(ca, true))) return []
    seen.add(restOf(ca, true))
    const cb = summary.cells.find((c) => matcherOf(c) === b && restOf(c) === restOf(ca))
    return cb === undefined ? [] : [[ca, cb] as const]
  })
  return pairs.length === 0 ? undefined : { matchers: [a, b], pairs }
}

export interface MatcherAgreement {
  readonly matchers: readonly [string, string]
  readonly cells: number
  /** One per (pair of cells, instance) both scored: F1 under the first matcher (x) and the second (y). */
  readonly points: ReadonlyArray<{ readonly x: number; readonly y: number }>
  readonly r: number
}

/** Fig. 4: per-instance F1 of every instance both cells of a matcher pair scored, and Pearson's r over them. */
export const matcherAgreement = (run: Run): MatcherAgreement | undefined => {
  const metric = described(run.summary, metrics.instance)
  const found = matcherCells(run.summary)
  if (metric === undefined || metric.aggregate._tag !== "Mean" || found === undefined) return undefined
  const values = (c: Cell) => run.index.columns(c.id)?.metric(metric.name).values
  const points = found.pairs.flatMap(([ca, cb]) => {
    const [fa, fb] = [values(ca), values(cb)]
    if (fa === undefined || fb === undefined) return []
    return Array.from(fa, (x, k) => ({ x, y: fb[k]! })).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y))
  })
  if (points.length === 0) return undefined
  const [xs, ys] = [points.map((p) => p.x), points.map((p) => p.y)]
  return { matchers: found.matchers, cells: found.pairs.length, points, r: pearson(xs, ys) }
}

export interface Planned {
  readonly figure: string
  readonly chart: Charts.Chart
  readonly caption: string
}

/** "8" or "6–8": the N of several values. */
const nRange = (ns: ReadonlyArray<number>): string =>
  Math.min(...ns) === Math.max(...ns) ? `${ns[0]}` : `${Math.min(...ns)}–${Math.max(...ns)}`

/** A binned figure: its number and what its title and its x axis call the bins. */
type Binning = readonly [figure: string, title: string, axis: string]
const positionBins: Binning = ["Fig. 3", "relevant sessions' mean position (1 = oldest)", "mean position"]
const lengthBins: Binning = ["Fig. 9", "history length, approximate tokens", "history tokens"]

/** Why a figure is left out: what every figure needs, else its own reason. */
const leftOut = (run: Run, figure: string, reason: string): string => {
  const unscored = described(run.summary, metrics.f1) === undefined ? `the run scored no ${metrics.f1}` : undefined
  const unbound = fullHistory(run.summary).length === 0 ? "no cell of the baseline's setting binds a model" : undefined
  return `${figure} is left out: ${unscored ?? unbound ?? reason}.`
}

const binnedFigure = (run: Run, [figure, what, axis]: Binning, mb: ModelBins | undefined, none: string) => {
  if (mb === undefined) return leftOut(run, figure, none)
  const names = mb.models.map((m) => m.label)
  const bins = mb.binned.bins
  const title = `${figure}: ${f1Title} by ${what} (N = ${sum(bins.map((b) => b.instances))} instances, ${names.length} models)`
  const point = (series: number, category: number, panel: number, v: { value: number; n: number }) =>
    ({ series, category, panel, value: v.value, lo: null, hi: null, n: v.n }) as const
  const chart = Charts.lines({
    title,
    x: `${axis} (bin, instances)`,
    y: f1Title,
    categories: bins.map((b) => `${b.label} (${b.instances})`),
    // the models first, so that each keeps its colour of Fig. 5
    series: [...names.map((name) => ({ name })), { name: `mean of ${names.length} models` }],
    panels: ["mean over models", "per model"],
    points: [
      ...mb.mean.flatMap((v, category) => (v === undefined ? [] : [point(names.length, category, 0, v)])),
      ...mb.models.flatMap((m, i) =>
        bins.flatMap((bin, category) => {
          const v = bin.values.get(m.cell.id)
          return v === undefined ? [] : [point(i, category, 1, v)]
        })
      )
    ]
  })
  const caption = `${title}. Each model's cell in the baseline's setting (${settingOf(mb.models[0]!.cell)}); per bin, its F1 pools the counts of its scored instances there. Left panel: the mean of the models' values per bin (its n counts model-instance pairs); right panel: one line per model. ${bins.length} bins; instances per bin in parentheses; hover a point for its value and n.`
  return { figure, chart, caption }
}

const generationFigure = (run: Run): Planned | string => {
  const points = generationPoints(run.summary)
  if (points.length === 0)
    return leftOut(run, "Fig. 5", `no model's full-history cell has both ${metrics.generation} and F1`)
  const names = Charts.labels(points.map((p) => p.model.label))
  const title = `Fig. 5: ${f1Title} against the generation score, per model (N = ${nRange(points.map((p) => p.f1.n))} instances per model)`
  const values = points.map(({ model, generation: g, f1 }, i) => {
    const [[xlo, xhi], [ylo, yhi]] = [g.ci95, f1.ci95]
    const tip = `${model.label}: generation ${Format.estimate(g)}; F1 ${Format.estimate(f1)}`
    return { series: names[i]!, x: g.mean, xlo, xhi, y: f1.mean, ylo, yhi, tip }
  })
  const x = {
    type: "quantitative",
    title: "generation score (1-10), mean",
    scale: { domainMin: 1, domainMax: 10 }
  } as const
  const y = { type: "quantitative", title: f1Title, scale: { zero: true, nice: true } } as const
  const { color, shape } = Charts.seriesEncoding(names, "right")
  const at = { x: { ...x, field: "x" }, y: { ...y, field: "y" } } as const
  const ci = <E extends object>(name: string, a: "x" | "y", encoding: E) => ({
    name,
    transform: [{ filter: `isValid(datum.${a}lo) && isValid(datum.${a}hi)` }],
    mark: { type: "rule", strokeWidth: 1.2, opacity: 0.7 } as const,
    encoding: { ...at, ...encoding, color }
  })
  const spec: TopLevelSpec = {
    ...Charts.top(title),
    width: 420,
    height: 320,
    data: { values },
    layer: [
      ci("whisker", "x", { x: { ...x, field: "xlo" }, x2: { field: "xhi" } }),
      ci("ywhisker", "y", { y: { ...y, field: "ylo" }, y2: { field: "yhi" } }),
      {
        name: "point",
        mark: { type: "point", filled: true, size: 80, opacity: 1 },
        encoding: { ...at, color, shape, tooltip: Charts.tooltip, description: Charts.tooltip }
      }
    ]
  }
  const caption = `${title}. One point per model (its cell in the baseline's setting, all instances): the judge's mean score (x) and the pooled F1 (y), each with its 95% CI from summary.json as a whisker. N of the generation score: ${nRange(points.map((p) => p.generation.n))} per model.`
  return { figure: "Fig. 5", chart: { kind: "scatter", spec }, caption }
}

const summariesFigure = (run: Run): Planned | string => {
  const pairs = summaryPairs(run.summary)
  if (pairs.length === 0)
    return leftOut(run, "Fig. 6", "no cell differs from a model's full-history cell only by a summarizer")
  const rows = Charts.labels(pairs.map((p) => p.model.label))
  const full = settingOf(pairs[0]!.model.cell)
  const settings = [full, ...new Set(pairs.map((p) => p.setting))]
  const values = pairs.flatMap((p, i) =>
    [full, p.setting].map((setting, k) => {
      const e = k === 0 ? p.full : p.summaries
      const v = { value: e.mean ?? NaN, lo: e.ci95[0], hi: e.ci95[1], n: e.n }
      return { row: rows[i]!, setting, ...v, tip: Charts.tip(p.model.label, setting, v) }
    })
  )
  const title = `Fig. 6: ${f1Title}, full history against summaries, per model (N = ${nRange(values.map((v) => v.n))} instances per bar)`
  const y = { field: "row", type: "nominal", sort: rows, title: null } as const
  const yOffset = { field: "setting", type: "nominal", sort: settings } as const
  const x = { type: "quantitative", title: f1Title, scale: { zero: true, nice: true } } as const
  const colors = { domain: settings, range: settings.map((_, i) => Charts.style(i).color) }
  const color = { field: "setting", type: "nominal", scale: colors, legend: { title: null, orient: "bottom" } } as const
  const tips = { tooltip: Charts.tooltip, description: Charts.tooltip }
  const spec: TopLevelSpec = {
    ...Charts.top(title),
    width: 420,
    height: { step: 14 * settings.length + 8 },
    data: { values },
    layer: [
      { name: "bar", mark: { type: "bar" }, encoding: { y, yOffset, x: { ...x, field: "value" }, color, ...tips } },
      Charts.whisker({ color: "#222", strokeWidth: 1.2 }, { y, yOffset, x: { ...x, field: "lo" }, x2: { field: "hi" } })
    ]
  }
  const caption = `${title}. Per model, the pooled F1 on all instances of its cell in the baseline's setting (${full}) and of the cell that differs from it only by a summarizer (${settings.slice(1).join(", ")}), with 95% CI whiskers from summary.json.`
  return { figure: "Fig. 6", chart: { kind: "bars", spec }, caption }
}

const matcherFigure = (run: Run): Planned | string => {
  const m = matcherAgreement(run)
  if (m === undefined)
    return `Fig. 4 is left out: the run has no two cells that differ only in the matcher model binding (models.matcher) and both score ${metrics.instance}, so there is no pair of matchers to compare.`
  const [a, b] = m.matchers
  const spots = new Map<string, { x: number; y: number; count: number }>()
  for (const p of m.points) {
    const key = `${fmt(p.x)} ${fmt(p.y)}`
    spots.set(key, { x: p.x, y: p.y, count: (spots.get(key)?.count ?? 0) + 1 })
  }
  const values = [...spots.values()]
    .sort((p, q) => p.x - q.x || p.y - q.y)
    .map((s) => ({ ...s, tip: `${a} ${fmt(s.x)}, ${b} ${fmt(s.y)}: ${s.count} instance${s.count === 1 ? "" : "s"}` }))
  const title = `Fig. 4: per-instance inference F1, matcher ${a} against ${b} (Pearson's r = ${fmt(m.r)}, N = ${m.points.length})`
  const axis = (who: string) => ({ type: "quantitative", title: `inference F1 per instance, matcher ${who}` }) as const
  const at = { x: { ...axis(a), field: "x" }, y: { ...axis(b), field: "y" } } as const
  const diagonal = { values: [0, 1].map((v) => ({ x: v, y: v })) }
  const counts = [...new Set(values.map((v) => v.count))].sort((p, q) => p - q)
  const legend = { title: "instances", values: counts, format: "d" }
  const size = { field: "count", type: "quantitative" as const, legend }
  const spec: TopLevelSpec = {
    ...Charts.top(title),
    width: 360,
    height: 360,
    data: { values },
    layer: [
      { name: "diagonal", data: diagonal, mark: { type: "line", color: "#999", strokeDash: [4, 3] }, encoding: at },
      {
        name: "point",
        mark: { type: "circle", opacity: 0.75, color: Charts.palette[0]! },
        encoding: { ...at, size, tooltip: Charts.tooltip, description: Charts.tooltip }
      }
    ]
  }
  const caption = `${title}. One point per instance scored by both cells of each of the ${m.cells} pair${m.cells === 1 ? "" : "s"} of cells that differ only in the matcher (${a} or ${b}); the per-instance F1 (${metrics.instance}) under each. Instances on one spot share a circle sized by their count; dashed: equal F1.`
  return { figure: "Fig. 4", chart: { kind: "scatter", spec }, caption }
}

export interface Plan {
  readonly figures: ReadonlyArray<Planned>
  /** A sentence per figure left out, saying why. */
  readonly missing: ReadonlyArray<string>
}

/** The figures the run can draw, in the paper's order, and a sentence for each it cannot. */
export const plan = (run: Run): Plan => {
  const all = [
    binnedFigure(run, positionBins, byPosition(run), "no instance has relevant sessions"),
    matcherFigure(run),
    generationFigure(run),
    summariesFigure(run),
    binnedFigure(run, lengthBins, byLength(run), "the run has no instance")
  ]
  return { figures: all.filter((p) => typeof p !== "string"), missing: all.filter((p) => typeof p === "string") }
}

/** paper.md's and paper.html's "Figures" section: the charts in HTML, a pointer to them in Markdown, and why any is missing. */
export const blocks = Effect.fn("PaperFigures.blocks")(function* (run: Run) {
  const p = plan(run)
  const svgs = yield* Effect.forEach(p.figures, (f) => Charts.svg(f.chart))
  const drawn = p.figures.map((f) => f.figure).join(", ")
  const pointer = [Doc.p(`The figures (${drawn}) are in paper.html:`), Doc.list(p.figures.map((f) => [f.caption]))]
  const section: Doc.Block = Doc.section("Figures", [
    { _tag: "only", format: "markdown", blocks: p.figures.length === 0 ? [] : pointer },
    ...p.figures.map((f, i): Doc.Block => {
      return { _tag: "html", html: `<figure>${svgs[i]}<figcaption>${Format.html(f.caption)}</figcaption></figure>` }
    }),
    ...(p.missing.length === 0 ? [] : [Doc.p(p.missing.join(" "))])
  ])
  return [section]
})
