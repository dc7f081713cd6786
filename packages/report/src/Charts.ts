/**
 * The reports' charts as Vega-Lite specs built from plain values, and {@link svg}, which renders one
 * to a static SVG in Node (Vega lays everything out; the same data gives the same bytes).
 *
 * @example
 * const chart = Charts.bars({ title: "recall", metric: "retrieval.recall", rows: [{ name: "bm25" }], panels: ["all"],
 *   values: [{ row: 0, panel: 0, value: 0.4, lo: 0.3, hi: 0.5, n: 24 }] })
 * const svg = yield* Charts.svg(chart) // `<svg class="chart chart-bars" ...>`
 */
import { Array as Arr, Effect } from "effect"
import { Exports } from "@cupid-lab/results"
import * as vega from "vega"
import { compile as compileLite, type TopLevelSpec } from "vega-lite"
import * as Format from "./Format.js"

export interface Series {
  readonly name: string
  /** Reads gold labels: drawn hollow or grey. */
  readonly oracle?: boolean
}

export interface Estimate {
  readonly value: number
  readonly lo: number | null
  readonly hi: number | null
  readonly n: number
}

export interface Chart {
  readonly kind: "bars" | "lines" | "scatter"
  readonly spec: TopLevelSpec
}

export const palette = [
  "#4e79a7",
  "#f28e2b",
  "#e15759",
  "#76b7b2",
  "#59a14f",
  "#edc948",
  "#b07aa1",
  "#ff9da7",
  "#9c755f",
  "#7f7f7f"
]
const shapes = [
  "circle",
  "square",
  "triangle-up",
  "diamond",
  "cross",
  "triangle-down",
  "triangle-left",
  "triangle-right"
]
const dashes: ReadonlyArray<ReadonlyArray<number>> = [
  [1, 0],
  [6, 3],
  [2, 2],
  [8, 3, 2, 3],
  [12, 4]
]

/** Series i's style: colours cycle every 10 series, shapes and dashes change at each cycle. */
export const style = (i: number) => ({
  color: palette[i % palette.length]!,
  shape: shapes[Math.floor(i / palette.length) % shapes.length]!,
  dash: dashes[Math.floor(i / palette.length) % dashes.length]!
})

/** Longest label line (px, as Vega measures it without a canvas) before it is cut with "…". */
export const labelLimit = 300

/**
 * A name in lines of at most `width` characters, broken after `,`, `(`, `;` or a space and before a
 * `(` after a space; at most `lines` lines, the last ending in "…" when more was left.
 */
export const wrap = (name: string, width = 34, lines = 3): ReadonlyArray<string> => {
  // A "(" after a space opens a part ("(baseline)") rather than ending one.
  const parts = name.match(/(?:[^,(;\s]|(?<=\s)\()*(?:[,;\s]|(?<!\s)\()*/g)?.filter((p) => p !== "") ?? []
  const out: Array<string> = []
  for (const part of parts) {
    const last = out[out.length - 1]
    if (last !== undefined && (last + part).trimEnd().length <= width) out[out.length - 1] = last + part
    else out.push(part)
  }
  const trimmed = out.map((l) => l.trim()).filter((l) => l !== "")
  if (trimmed.length <= lines) return trimmed.length === 0 ? [""] : trimmed
  return [...trimmed.slice(0, lines - 1), `${trimmed[lines - 1]}…`]
}

/** The series' labels: each name wrapped (lines joined by "\n"), repeats made distinct with ` (2)`, ` (3)`, ... */
export const labels = (names: ReadonlyArray<string>): Array<string> => {
  const seen = new Map<string, number>()
  return names.map((name) => {
    const label = wrap(name).join("\n")
    const k = (seen.get(label) ?? 0) + 1
    seen.set(label, k)
    return k === 1 ? label : `${label} (${k})`
  })
}

const multiline = { labelExpr: "split(datum.label, '\\n')", labelLimit } as const

const fmt = Format.number
const ci = (e: Estimate): string => (e.lo === null || e.hi === null ? "" : ` [${fmt(e.lo)}, ${fmt(e.hi)}]`)
/** The tooltip of one value: `name · where: 0.412 [0.301, 0.520] n=24`. */
export const tip = (name: string, where: string, e: Estimate): string =>
  `${name}${where === "" ? "" : ` · ${where}`}: ${fmt(e.value)}${ci(e)} n=${e.n}`

const plotted = (e: Estimate, tipText: string) => ({ value: e.value, lo: e.lo, hi: e.hi, n: e.n, tip: tipText })

type Layer = Extract<TopLevelSpec, { readonly layer: unknown }>["layer"][number]

const config = {
  font: "system-ui, sans-serif",
  view: { stroke: "#ddd" },
  axis: {
    labelFontSize: 11,
    titleFontSize: 12,
    titleFontWeight: "normal",
    labelColor: "#333",
    titleColor: "#333",
    gridColor: "#eee",
    domainColor: "#888",
    tickColor: "#888"
  },
  header: { labelFontSize: 12, labelFontWeight: "bold" },
  legend: { labelFontSize: 11, labelLimit, symbolLimit: 0, labelColor: "#333" },
  title: { fontSize: 13, anchor: "start", fontWeight: "bold" }
} as const

/** What every spec starts with. */
export const top = (title: string) => ({ $schema: "https://vega.github.io/schema/vega-lite/v6.json", title, config })

export const tooltip = { field: "tip", type: "nominal" } as const

/** The 95% CI whiskers (a rule from `lo` to `hi`), where both are known. */
export const whisker = <M extends object, E extends object>(mark: M, encoding: E) => ({
  name: "whisker",
  transform: [{ filter: "isValid(datum.lo) && isValid(datum.hi)" }],
  mark: { type: "rule" as const, ...mark },
  encoding: { ...encoding, tooltip, description: tooltip }
})

export interface Bars {
  readonly title: string
  /** The value axis' title. */
  readonly metric: string
  readonly rows: ReadonlyArray<Series>
  /** Side by side on one value axis. */
  readonly panels: ReadonlyArray<string>
  /** By row and panel index; a missing pair draws no bar. */
  readonly values: ReadonlyArray<Estimate & { readonly row: number; readonly panel: number }>
}

/** Horizontal bars with 95% CI whiskers, one row per series and one panel per entry of `panels`; oracle rows grey. */
export const bars = (input: Bars): Chart => {
  const rows = labels(input.rows.map((r) => r.name))
  const lines = Math.max(1, ...rows.map((l) => l.split("\n").length))
  const values = input.values
    .filter((v) => Number.isFinite(v.value))
    .map((v) => ({
      row: rows[v.row]!,
      panel: input.panels[v.panel]!,
      ...plotted(v, tip(input.rows[v.row]!.name, input.panels[v.panel]!, v)),
      oracle: input.rows[v.row]?.oracle === true
    }))
  const y = {
    field: "row",
    type: "nominal",
    sort: rows,
    title: null,
    axis: { ...multiline, labelLineHeight: 13 }
  } as const
  const x = {
    type: "quantitative",
    title: input.metric,
    scale: { zero: true, nice: true },
    axis: { tickCount: 4 }
  } as const
  return {
    kind: "bars",
    spec: {
      ...top(input.title),
      data: { values },
      facet: { column: { field: "panel", type: "nominal", sort: [...input.panels], title: null } },
      spacing: 14,
      spec: {
        width: Math.max(140, Math.min(220, Math.floor(680 / Math.max(1, input.panels.length)))),
        height: { step: Math.max(18, 13 * lines + 6) },
        layer: [
          {
            name: "bar",
            mark: { type: "bar", height: { band: 0.7 } },
            encoding: {
              y,
              x: { ...x, field: "value" },
              color: { condition: { test: "datum.oracle", value: "#b9b9c0" }, value: palette[0]! },
              tooltip,
              description: tooltip
            }
          },
          whisker({ color: "#222", strokeWidth: 1.2 }, { y, x: { ...x, field: "lo" }, x2: { field: "hi" } })
        ]
      }
    } satisfies TopLevelSpec
  }
}

export interface Lines {
  readonly title: string
  readonly x: string
  readonly y: string
  readonly categories: ReadonlyArray<string>
  readonly series: ReadonlyArray<Series>
  /** Small multiples on one y scale; none: one panel. */
  readonly panels?: ReadonlyArray<string>
  readonly points: ReadonlyArray<
    Estimate & { readonly series: number; readonly category: number; readonly panel?: number }
  >
}

/** One colour, shape and dash per series by {@link style}, and a legend of their labels. */
export const seriesEncoding = (names: ReadonlyArray<string>, legendOrient: "right" | "bottom") => {
  // Two columns under a chart, or beside it once one column would be much taller than the chart.
  const columns = legendOrient === "bottom" || names.length > 12 ? 2 : 1
  const base = {
    field: "series",
    type: "nominal",
    sort: [...names],
    legend: { ...multiline, title: null, orient: legendOrient, columns }
  } as const
  const by = <A>(of: (s: ReturnType<typeof style>) => A) => ({
    ...base,
    scale: { domain: [...names], range: names.map((_, i) => of(style(i))) }
  })
  return { color: by((s) => s.color), shape: by((s) => s.shape), strokeDash: by((s) => [...s.dash]) }
}

/** One line per series over ordinal categories, a point (with its 95% CI whisker when known) at each value. */
export const lines = (input: Lines): Chart => {
  const names = labels(input.series.map((s) => s.name))
  const panels = input.panels ?? []
  const kept = input.points
    .filter((p) => Number.isFinite(p.value) && p.n > 0)
    .map((p) => {
      const panel = p.panel === undefined ? "" : panels[p.panel]!
      const where = [panel, input.categories[p.category]!].filter((w) => w !== "").join(", ")
      return { ...p, panel, where, key: `${panel} ${p.category} ${fmt(p.value)} ${ci(p)} ${p.n}` }
    })
  // Marks on one spot share a tooltip that names them all.
  const spots = Arr.groupBy(kept, (p) => p.key)
  const values = kept.map((p) => ({
    series: names[p.series]!,
    category: input.categories[p.category]!,
    panel: p.panel,
    ...plotted(p, tip(spots[p.key]!.map((q) => input.series[q.series]!.name).join(", "), p.where, p))
  }))
  const x = {
    field: "category",
    type: "ordinal",
    sort: [...input.categories],
    title: input.x,
    scale: { padding: 0.4 },
    axis: { labelAngle: 0, labelLimit: 160 }
  } as const
  const y = { type: "quantitative", title: input.y, scale: { zero: true, nice: true } } as const
  const { color, shape, strokeDash } = seriesEncoding(names, panels.length > 1 ? "bottom" : "right")
  const layer: Array<Layer> = [
    {
      name: "line",
      mark: { type: "line", strokeWidth: 2 },
      encoding: { x, y: { ...y, field: "value" }, color, strokeDash }
    },
    whisker({ strokeWidth: 1.5, opacity: 0.7 }, { x, y: { ...y, field: "lo" }, y2: { field: "hi" }, color }),
    {
      name: "point",
      mark: { type: "point", filled: true, size: 45, opacity: 1 },
      encoding: { x, y: { ...y, field: "value" }, color, shape, tooltip, description: tooltip }
    }
  ]
  const width = (per: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, per * input.categories.length))
  const spec: TopLevelSpec =
    panels.length === 0
      ? { ...top(input.title), data: { values }, width: width(120, 300, 560), height: 240, layer }
      : {
          ...top(input.title),
          data: { values },
          facet: { field: "panel", type: "nominal", sort: [...panels], title: null },
          columns: Math.min(panels.length, 2),
          spec: { width: width(90, 240, 360), height: 200, layer }
        }
  return { kind: "lines", spec }
}

export interface Scatter {
  readonly title: string
  readonly x: string
  readonly y: string
  /** Oracle series are hollow. */
  readonly series: ReadonlyArray<Series>
  /** `front` points are ringed and joined by a dashed line in x order. */
  readonly points: ReadonlyArray<{
    readonly series: number
    readonly x: number
    readonly y: number
    readonly front?: boolean
    readonly detail: string
  }>
}

/** Points with a legend of the series' names. */
export const scatter = (input: Scatter): Chart => {
  const names = labels(input.series.map((s) => s.name))
  const kept = input.points
    .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y))
    .map((p) => ({ ...p, key: `${fmt(p.x)} ${fmt(p.y)}` }))
  const spots = Arr.groupBy(kept, (p) => p.key)
  const values = kept.map((p) => ({
    series: names[p.series]!,
    x: p.x,
    y: p.y,
    front: p.front === true,
    oracle: input.series[p.series]?.oracle === true,
    tip: spots[p.key]!.map((q) => `${input.series[q.series]!.name}: ${q.detail}`).join("\n")
  }))
  // All x at 0 (every cell ran without model calls) would collapse the axis to one tick.
  const x = {
    field: "x",
    type: "quantitative",
    title: input.x,
    scale: values.every((v) => v.x === 0) ? { domain: [0, 1] } : { zero: true, nice: true }
  } as const
  const y = { field: "y", type: "quantitative", title: input.y, scale: { zero: true, nice: true } } as const
  const { color, shape } = seriesEncoding(names, "right")
  const front: Array<Layer> = values.some((v) => v.front)
    ? [
        {
          name: "front",
          transform: [{ filter: "datum.front" }],
          mark: { type: "line", color: "#222", strokeDash: [5, 3], strokeWidth: 1.5 },
          encoding: { x, y, order: { field: "x", type: "quantitative" } }
        },
        {
          name: "ring",
          transform: [{ filter: "datum.front" }],
          mark: { type: "point", color: "#222", size: 220, strokeWidth: 1.5 },
          encoding: { x, y }
        }
      ]
    : []
  const points: Layer = {
    name: "point",
    mark: { type: "point", filled: false, size: 80, strokeWidth: 2, opacity: 1 },
    encoding: {
      x,
      y,
      color,
      shape,
      fill: color,
      fillOpacity: { condition: { test: "datum.oracle", value: 0 }, value: 1 },
      tooltip,
      description: tooltip
    }
  }
  return {
    kind: "scatter",
    spec: {
      ...top(input.title),
      width: 420,
      height: 320,
      data: { values },
      layer: [...front, points]
    } satisfies TopLevelSpec
  }
}

/** The Vega spec of a chart, with Vega-Lite's warnings. */
export const compile = (chart: Chart): { readonly spec: vega.Spec; readonly warnings: ReadonlyArray<string> } => {
  const warnings: Array<string> = []
  const logger = vega.logger(vega.Warn, undefined, (_method, _level, args) => warnings.push(args.map(String).join(" ")))
  return { spec: compileLite(chart.spec, { logger }).spec, warnings }
}

/** Vega's SVG with the class `chart chart-<kind>`, each mark's `aria-label` also as a `<title>` (a tooltip). */
export const svg = Effect.fn("Charts.svg")(function* (chart: Chart) {
  const view = new vega.View(vega.parse(compile(chart).spec), { renderer: "none", logLevel: vega.Error })
  const out = yield* Effect.promise(() => view.toSVG()).pipe(Effect.ensuring(Effect.sync(() => view.finalize())))
  return Exports.visibleControls(out)
    .replace(/^<svg ([^>]*?)class="marks"/, `<svg $1class="chart chart-${chart.kind}"`)
    .replace(
      /<(path|line|rect)( [^>]*?aria-label="([^"]*)"[^>]*?role="graphics-symbol"[^>]*?)\/>/g,
      "<$1$2><title>$3</title></$1>"
    )
})
