/**
 * The charts of the reports as Vega-Lite specs: the data and encodings each spec carries, the SVG
 * Vega renders from it (marks, names, tooltips, escaping, no ids, the same bytes twice), and the
 * figures of hand-made runs, at 2 cells with hand-computed values and at 30 cells.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { Analysis, Charts, Figures } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"

import { type CellSpec, cellA, cellB, hostile, instances, tempDir, writeRun } from "./report-fixtures.js"

const strategies = ["offline", "online", "hybrid"]
const policies = ["recent-first", "most-relevant", "round-robin", "oldest-first", "mixed"]

/** `n` cells whose names share a long prefix (as a sweep over one plugin's options does), with scores that repeat every few cells. */
const manyCells = (n: number): Array<CellSpec> =>
  Array.from({ length: n }, (_, k) => ({
    id: `c${String(k).padStart(15, "0")}`,
    name: `context-factor(strategy=${strategies[k % 3]},policy=${policies[k % 5]},window=${4 + k},summaries=per-session)`,
    retriever: k === 0 ? "all" : "bm25",
    usesGold: k === n - 1,
    results: instances.map((_, i) => ({
      recall: ((k + i) % 5) / 4,
      counts: [1 + ((k * (1 + i)) % 4), 4, 1 + ((2 * k + i) % 5), 5] as const
    })),
    usage: { calls: k % 4, promptTokens: 120 * (k % 7), completionTokens: 15 * (k % 3) }
  }))

const analysisOf = (cells: ReadonlyArray<CellSpec>) =>
  Effect.gen(function* () {
    const dir = tempDir("charts")
    writeRun(dir, { cells })
    return Analysis.analyze(yield* RunDir.read(dir))
  })

/** The data rows of a spec (every chart here inlines its values). */
const rows = (chart: Charts.Chart): Array<Record<string, unknown>> => {
  const data = chart.spec.data
  const values: ReadonlyArray<unknown> =
    data !== undefined && data !== null && "values" in data && Array.isArray(data.values) ? data.values : []
  return values.filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null)
}

/** Vega's escaping of text in SVG content and attributes. */
const svgText = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

const titles = (svg: string): Array<string> => [...svg.matchAll(/<title>([^<]*)<\/title>/g)].map((m) => m[1]!)
/** The marks Vega drew for a named layer (`<g class="... <name>_marks">`): their shapes. */
const marks = (svg: string, name: string): number =>
  [...svg.matchAll(new RegExp(`<g class="mark-[a-z]+ role-mark ${name}_marks"[^>]*>([\\s\\S]*?)</g>`, "g"))].reduce(
    (n, m) => n + (m[1]!.match(/<(path|line)\b/g)?.length ?? 0),
    0
  )

describe("names", () => {
  it("wraps a long cell name after its punctuation, keeps three lines and ends a cut one with …", () => {
    expect(Charts.wrap("context-factor(strategy=offline,policy=recent-first,window=4,summaries=per-session)")).toEqual([
      "context-factor(strategy=offline,",
      "policy=recent-first,window=4,",
      "summaries=per-session)"
    ])
    expect(
      Charts.wrap(
        "context-factor(strategy=offline,policy=recent-first,window=4,summaries=per-session,cut=0.6,threshold=0.35)"
      )
    ).toEqual(["context-factor(strategy=offline,", "policy=recent-first,window=4,", "summaries=per-session,cut=0.6,…"])
    expect(Charts.wrap("context-factor(policy=all-matching)")).toEqual(["context-factor(", "policy=all-matching)"])
    expect(Charts.wrap("bm25(b=0.5,top=4)")).toEqual(["bm25(b=0.5,top=4)"])
    expect(Charts.wrap("bm25 @ pad=0,position=early (baseline)")).toEqual(["bm25 @ pad=0,position=early", "(baseline)"])
    // one part longer than a line stays whole (Vega cuts it at labelLimit)
    expect(Charts.wrap("x".repeat(40))).toEqual(["x".repeat(40)])
    expect(Charts.wrap("")).toEqual([""])
  })

  it("makes repeated labels distinct", () => {
    expect(Charts.labels(["bm25", "bm25", "all (baseline)", "bm25"])).toEqual([
      "bm25",
      "bm25 (2)",
      "all (baseline)",
      "bm25 (3)"
    ])
    expect(Charts.labels(["context-factor(policy=all-matching)"])).toEqual(["context-factor(\npolicy=all-matching)"])
  })

  it("gives 30 series 30 different looks: palette colours up to 10, then the same colours with another shape and dash", () => {
    expect(Array.from({ length: 10 }, (_, i) => Charts.style(i).color)).toEqual(Charts.palette)
    expect(Charts.style(0)).toEqual({ color: "#4e79a7", shape: "circle", dash: [1, 0] })
    expect(Charts.style(10)).toEqual({ color: "#4e79a7", shape: "square", dash: [6, 3] })
    const looks = Array.from({ length: 30 }, (_, i) => Charts.style(i))
    expect(new Set(looks.map((s) => `${s.color} ${s.shape}`)).size).toBe(30)
    expect(new Set(looks.map((s) => `${s.color} ${s.dash.join(" ")}`)).size).toBe(30)
  })
})

describe("specs", () => {
  const barsInput: Charts.Bars = {
    title: "recall per cell",
    metric: "retrieval.recall",
    rows: [
      { name: "all (baseline)" },
      { name: "context-factor(policy=all-matching)" },
      { name: "oracle ‡", oracle: true }
    ],
    panels: ["all", "changing"],
    values: [
      { row: 0, panel: 0, value: 0.4125, lo: 0.3, hi: 0.52, n: 24 },
      { row: 0, panel: 1, value: 0.5, lo: null, hi: null, n: 8 },
      { row: 1, panel: 0, value: 0.25, lo: 0.1, hi: 0.4, n: 24 },
      { row: 2, panel: 0, value: 1, lo: 1, hi: 1, n: 24 },
      { row: 2, panel: 1, value: NaN, lo: null, hi: null, n: 0 }
    ]
  }

  it("bars: one data row per value (none for NaN), rows by wrapped name in input order, panels as columns, CI whiskers", () => {
    const chart = Charts.bars(barsInput)
    expect(chart.kind).toBe("bars")
    expect(rows(chart)).toEqual([
      {
        row: "all (baseline)",
        panel: "all",
        value: 0.4125,
        lo: 0.3,
        hi: 0.52,
        n: 24,
        oracle: false,
        tip: "all (baseline) · all: 0.412 [0.300, 0.520] n=24"
      },
      {
        row: "all (baseline)",
        panel: "changing",
        value: 0.5,
        lo: null,
        hi: null,
        n: 8,
        oracle: false,
        tip: "all (baseline) · changing: 0.500 n=8"
      },
      {
        row: "context-factor(\npolicy=all-matching)",
        panel: "all",
        value: 0.25,
        lo: 0.1,
        hi: 0.4,
        n: 24,
        oracle: false,
        tip: "context-factor(policy=all-matching) · all: 0.250 [0.100, 0.400] n=24"
      },
      {
        row: "oracle ‡",
        panel: "all",
        value: 1,
        lo: 1,
        hi: 1,
        n: 24,
        oracle: true,
        tip: "oracle ‡ · all: 1.000 [1.000, 1.000] n=24"
      }
    ])
    const y = { field: "row", sort: ["all (baseline)", "context-factor(\npolicy=all-matching)", "oracle ‡"] }
    expect(chart.spec).toMatchObject({
      facet: { column: { field: "panel", sort: ["all", "changing"] } },
      spec: {
        layer: [
          { name: "bar", mark: { type: "bar" }, encoding: { y, x: { field: "value" }, tooltip: { field: "tip" } } },
          {
            name: "whisker",
            mark: { type: "rule" },
            transform: [{ filter: "isValid(datum.lo) && isValid(datum.hi)" }],
            encoding: { y, x: { field: "lo" }, x2: { field: "hi" } }
          }
        ]
      }
    })
    expect(Charts.compile(chart).warnings).toEqual([])
  })

  it("lines: series styled by index, coincident points share one tooltip, empty bins left out, panels as facets", () => {
    const chart = Charts.lines({
      title: "t",
      x: "bin",
      y: "recall",
      categories: ["1–<3 (2)", "3–<5 (2)"],
      series: [{ name: "bm25" }, { name: "recency" }],
      panels: ["all", "consistent"],
      points: [
        { series: 0, category: 0, panel: 0, value: 0.5, lo: null, hi: null, n: 2 },
        { series: 1, category: 0, panel: 0, value: 0.5, lo: null, hi: null, n: 2 },
        { series: 1, category: 1, panel: 1, value: 0.25, lo: 0, hi: 0.5, n: 2 },
        { series: 0, category: 1, panel: 1, value: 0, lo: null, hi: null, n: 0 }
      ]
    })
    expect(rows(chart)).toEqual([
      {
        series: "bm25",
        category: "1–<3 (2)",
        panel: "all",
        value: 0.5,
        lo: null,
        hi: null,
        n: 2,
        tip: "bm25, recency · all, 1–<3 (2): 0.500 n=2"
      },
      {
        series: "recency",
        category: "1–<3 (2)",
        panel: "all",
        value: 0.5,
        lo: null,
        hi: null,
        n: 2,
        tip: "bm25, recency · all, 1–<3 (2): 0.500 n=2"
      },
      {
        series: "recency",
        category: "3–<5 (2)",
        panel: "consistent",
        value: 0.25,
        lo: 0,
        hi: 0.5,
        n: 2,
        tip: "recency · consistent, 3–<5 (2): 0.250 [0.000, 0.500] n=2"
      }
    ])
    expect(chart.spec).toMatchObject({
      facet: { field: "panel", sort: ["all", "consistent"] },
      spec: {
        layer: [
          {
            name: "line",
            encoding: {
              x: { field: "category", sort: ["1–<3 (2)", "3–<5 (2)"] },
              y: { field: "value" },
              color: { field: "series", scale: { domain: ["bm25", "recency"], range: ["#4e79a7", "#f28e2b"] } },
              strokeDash: {
                field: "series",
                scale: {
                  domain: ["bm25", "recency"],
                  range: [
                    [1, 0],
                    [1, 0]
                  ]
                }
              }
            }
          },
          { name: "whisker", encoding: { y: { field: "lo" }, y2: { field: "hi" } } },
          {
            name: "point",
            encoding: { shape: { field: "series", scale: { range: ["circle", "circle"] } }, tooltip: { field: "tip" } }
          }
        ]
      }
    })
    expect(Charts.compile(chart).warnings).toEqual([])
  })

  it("scatter: the front is drawn only when a point is on it; all-zero x gets the domain [0, 1]; points on one spot list every series", () => {
    const series = [{ name: "a" }, { name: "b" }, { name: "oracle", oracle: true }]
    const chart = Charts.scatter({
      title: "t",
      x: "tokens",
      y: "f1",
      series,
      points: [
        { series: 0, x: 0, y: 0.5, front: true, detail: "0.500" },
        { series: 1, x: 0, y: 0.5, detail: "0.500" },
        { series: 2, x: 0, y: 1, detail: "1.000" }
      ]
    })
    expect(rows(chart)).toEqual([
      { series: "a", x: 0, y: 0.5, front: true, oracle: false, tip: "a: 0.500\nb: 0.500" },
      { series: "b", x: 0, y: 0.5, front: false, oracle: false, tip: "a: 0.500\nb: 0.500" },
      { series: "oracle", x: 0, y: 1, front: false, oracle: true, tip: "oracle: 1.000" }
    ])
    expect(chart.spec).toMatchObject({
      layer: [
        {
          name: "front",
          transform: [{ filter: "datum.front" }],
          mark: { type: "line", strokeDash: [5, 3] },
          encoding: { order: { field: "x" } }
        },
        { name: "ring", transform: [{ filter: "datum.front" }] },
        {
          name: "point",
          encoding: {
            x: { field: "x", scale: { domain: [0, 1] } },
            y: { field: "y" },
            fillOpacity: { condition: { test: "datum.oracle", value: 0 } }
          }
        }
      ]
    })
    const noFront = Charts.scatter({
      title: "t",
      x: "x",
      y: "y",
      series,
      points: [{ series: 0, x: 0.2, y: 0.5, detail: "" }]
    })
    expect("layer" in noFront.spec && noFront.spec.layer.length).toBe(1)
    expect(noFront.spec).toMatchObject({
      layer: [{ name: "point", encoding: { x: { scale: { zero: true, nice: true } } } }]
    })
    expect(Charts.compile(chart).warnings).toEqual([])
  })
})

describe("rendered SVG", () => {
  it.effect("draws one bar per value and one whisker per CI, labels rows by name and gives each mark a tooltip", () =>
    Effect.gen(function* () {
      const svg = yield* Charts.svg(Charts.bars(barsOf(["all (baseline)", "context-factor(policy=all-matching)"])))
      expect(svg).toMatch(/^<svg [^>]*class="chart chart-bars"/)
      expect(marks(svg, "bar")).toBe(4)
      expect(marks(svg, "whisker")).toBe(4)
      expect(titles(svg)).toContain("context-factor(policy=all-matching) · consistent: 0.600 [0.500, 0.700] n=6")
      expect(titles(svg)).toHaveLength(8)
      // the wrapped name on two lines of one label, the panels' headers, the axis title
      expect(svg).toContain(">context-factor(</tspan>")
      expect(svg).toContain(">policy=all-matching)</tspan>")
      for (const text of [">all (baseline)</text>", ">all</text>", ">consistent</text>", ">retrieval.recall</text>"])
        expect(svg).toContain(text)
    })
  )

  it.effect(
    "renders the same bytes twice, with no id, no NaN, no script, and markup and bidi controls in names as text",
    () =>
      Effect.gen(function* () {
        const chart = Charts.bars(barsOf(["bm25", hostile.cellName, "rtl\u202Egnp.exe"]))
        const svg = yield* Charts.svg(chart)
        expect(yield* Charts.svg(chart)).toBe(svg)
        expect(svg).not.toMatch(/\sid="|NaN|<script|<img|[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
        expect(svg).toContain(svgText(`${hostile.cellName} · all: 0.300`))
        expect(svg).toContain("rtl\\u202Egnp.exe")
      })
  )
})

/** Bars of `names` in two panels with hand-picked values: row r has 0.2 + 0.1 r (all) and 0.5 + 0.1 r (consistent). */
const barsOf = (names: ReadonlyArray<string>): Charts.Bars => ({
  title: "recall",
  metric: "retrieval.recall",
  rows: names.map((name) => ({ name })),
  panels: ["all", "consistent"],
  values: names.flatMap((_, row) => [
    { row, panel: 0, value: 0.2 + 0.1 * row, lo: 0.1 + 0.1 * row, hi: 0.3 + 0.1 * row, n: 24 },
    { row, panel: 1, value: 0.5 + 0.1 * row, lo: 0.4 + 0.1 * row, hi: 0.6 + 0.1 * row, n: 6 }
  ])
})

describe("the figures of a report", () => {
  it.effect("two cells: the plotted values are the run's (hand-computed) and both cells are on the cost front", () =>
    Effect.gen(function* () {
      const a = yield* analysisOf([cellA, cellB])
      expect(a.main?.name).toBe("retrieval.recall")
      // recall of A is 1 everywhere; B: 0.5, 1, 0, 0.5 on p1:consistent, p1:contrastive, p1:changing, p2:consistent
      const bars = rows(Figures.bars(a, a.main!).chart).map((r) => [r["row"], r["panel"], r["value"], r["n"]])
      expect(bars).toEqual([
        ["all (baseline)", "all", 1, 4],
        ["all (baseline)", "consistent", 1, 2],
        ["all (baseline)", "contrastive", 1, 1],
        ["all (baseline)", "changing", 1, 1],
        ["bm25(k=2)", "all", 0.5, 4],
        ["bm25(k=2)", "consistent", 0.5, 2],
        ["bm25(k=2)", "contrastive", 1, 1],
        ["bm25(k=2)", "changing", 0, 1]
      ])
      // one instance per position bin: 1.5, 3.5, 5 and 7.5
      const recency = rows(Figures.binned(a, a.recency!).chart)
        .filter((r) => r["series"] === "bm25(k=2)")
        .map((r) => [r["category"], r["value"]])
      expect(recency).toEqual([
        ["1–<3 (1)", 0.5],
        ["3–<5 (1)", 1],
        ["5–<7 (1)", 0.5],
        ["7–8 (1)", 0]
      ])
      // tokens per instance: A 100 + 10, B 40 + 5; B is cheaper, A better: neither dominates
      const cost = rows(Figures.frontier(a)!.chart).map((r) => [r["series"], r["x"], r["y"], r["front"]])
      expect(cost).toEqual([
        ["all (baseline)", 110, 1, true],
        ["bm25(k=2)", 45, 0.5, true]
      ])
      const figures = yield* Figures.report(a)
      expect(figures.overview.match(/class="chart chart-/g)).toHaveLength(2)
      expect(figures.cost).toContain("Pareto front")
      expect(figures.recency).toContain("4 bins over 4 instances")
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "30 cells: every chart compiles without a warning, names every cell, puts the lines in 3 panels, and renders the same bytes twice",
    () =>
      Effect.gen(function* () {
        const cells = manyCells(30)
        const a = yield* analysisOf(cells)
        const planned = [
          Figures.bars(a, a.main!),
          Figures.precisionRecall(a)!,
          Figures.binned(a, a.recency!),
          Figures.binned(a, a.history!),
          Figures.frontier(a)!
        ]
        const charts = planned.map((f) => f.chart)
        for (const chart of charts) expect(Charts.compile(chart).warnings).toEqual([])
        const figures = yield* Figures.report(a)
        const again = yield* Figures.report(yield* analysisOf(cells))
        expect(again).toEqual(figures)
        const html = [figures.overview, figures.recency, figures.history, figures.cost].join("")
        const svgs = html.match(/<svg[\s\S]*?<\/svg>/g) ?? []
        expect(svgs).toHaveLength(5)
        for (const svg of svgs) expect(svg).not.toMatch(/\sid="|NaN/)
        // each cell's full name is in the tooltips, and each has one legend entry per chart with a legend
        for (const c of cells) expect(html).toContain(svgText(c.name))
        expect(figures.cost.match(/class="mark-text role-legend-label"/g)).toHaveLength(30)
        // panels in leaderboard order: the 29 contenders by rank, the gold-reading cell last
        for (const panel of ["ranks 1–10", "ranks 11–20", "ranks 21–29 and ceilings"])
          expect(figures.recency).toContain(`>${panel}</text>`)
        expect(marks(figures.recency, "point")).toBe(30 * a.recency!.bins.length)
        expect(figures.recency).toContain("30 cells in panels of up to 10")
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
