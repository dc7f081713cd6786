import { Scorer } from "@cupid-lab/core"
import { Analysis, AxisEffects, ByAxis, Document, Markdown } from "@cupid-lab/report"
import { Columns, type ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "vitest"

import { summaryFold } from "./report-fixtures.js"

const f1 = Scorer.metric({
  name: "retrieval.f1",
  description: "Per-instance F1 of the selection.",
  family: "retrieval",
  headline: true,
  mainRank: 1
})

/** Four instances; persona p1 has two (so the all-instances tests move p1's together). */
const instances = [
  { id: "p1:consistent", personaId: "p1", type: "consistent" },
  { id: "p1:changing", personaId: "p1", type: "changing" },
  { id: "p2:consistent", personaId: "p2", type: "consistent" },
  { id: "p3:contrastive", personaId: "p3", type: "contrastive" }
] as const

interface Spec {
  readonly id: string
  readonly name: string
  readonly retriever: Readonly<Record<string, unknown>>
  readonly values: ReadonlyArray<number>
  readonly gold?: boolean
}

const bm25 = { use: "bm25", k1: 1.2, b: 0.75 }
const recency = { use: "recency" }
/** The crossed grid, retriever x retriever.select, 2 x 2; values per instance in the order above. */
const grid: ReadonlyArray<Spec> = [
  { id: "c-a", name: "bm25(top=2)", retriever: { ...bm25, select: { top: 2 } }, values: [0.5, 1.0, 0.0, 0.5] },
  { id: "c-b", name: "bm25(top=4)", retriever: { ...bm25, select: { top: 4 } }, values: [0.7, 0.6, 0.4, 0.5] },
  { id: "c-c", name: "recency(top=2)", retriever: { ...recency, select: { top: 2 } }, values: [0.1, 0.2, 0.3, 0.4] },
  { id: "c-d", name: "recency(top=4)", retriever: { ...recency, select: { top: 4 } }, values: [0.3, 0.2, 0.1, 0.0] }
]
/** Explicit cells: the baseline without a selector, a ranker the sweep did not cross, and the oracle. */
const explicit: ReadonlyArray<Spec> = [
  { id: "c-all", name: "all", retriever: { use: "all" }, values: [0.2, 0.2, 0.2, 0.2] },
  {
    id: "c-tfidf",
    name: "tfidf(top=2)",
    retriever: { use: "tfidf", select: { top: 2 } },
    values: [0.9, 0.9, 0.9, 0.9]
  },
  { id: "c-oracle", name: "oracle", retriever: { use: "oracle" }, values: [1, 1, 1, 1], gold: true }
]

const runOf = (
  specs: ReadonlyArray<Spec>,
  axes: ReadonlyArray<string> | undefined,
  extra: (s: Spec) => Record<string, unknown> = () => ({})
) => {
  const params = (s: Spec) => ({
    retriever: s.retriever,
    summarizer: null,
    inferrer: null,
    generator: null,
    ...extra(s)
  })
  const lines: Array<ResultLine.ResultLine> = instances.flatMap((inst, i) =>
    specs.map((s): ResultLine.ResultLine => ({
      cell: s.id,
      cellName: s.name,
      instance: inst.id,
      personaId: inst.personaId,
      type: inst.type,
      status: "ok",
      params: params(s),
      meta: { sessions: 8, historyTokens: 100, relevantMeanPosition: null, relevant: [], stale: [] },
      selected: [],
      ranking: null,
      summaries: null,
      inference: null,
      generation: null,
      scores: { "retrieval.f1": s.values[i]! },
      usage: { calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} },
      error: null
    }))
  )
  const acc = summaryFold({ metrics: [f1], seed: 3, resamples: 200 })
  for (const l of lines) acc.add(l)
  const summary: ResultLine.Summary = {
    config: { name: "axes", hash: "0" },
    dataset: { source: "hand-made", hash: "0", instances: instances.length, skipped: [] },
    seed: 3,
    resamples: 200,
    baseline: specs[0]!.id,
    ...(axes !== undefined ? { axes } : {}),
    metrics: acc.metrics(),
    cells: acc.cells(
      specs.map((s) => ({
        id: s.id,
        name: s.name,
        params: params(s),
        usesGold: s.gold ?? false,
        oracleRetrieval: s.gold ?? false,
        heuristicStages: [],
        plugins: []
      }))
    )
  }
  return { summary, index: Columns.index(lines) }
}

const swept = ["retriever", "retriever.select"]
const run = runOf([explicit[0]!, ...grid, explicit[1]!, explicit[2]!], swept)
const analysis = Analysis.analyze(run)
const effects = (): AxisEffects.Effects => {
  const fx = analysis.axes
  if (fx._tag !== "Effects") throw new Error(`expected axis effects, got ${JSON.stringify(fx)}`)
  return fx
}
const marginal = (axis: number, level: number, slice: string) =>
  effects().marginals.find((m) => m.axis === axis && m.level === level && m.slice === slice)!
const bestOf = (slice: string) => effects().best.find((b) => b.slice === slice)!

describe("marginal effects of crossed axes (2 x 2, hand-computed)", () => {
  it("reads the recorded axes, keeps the crossed cells and leaves the explicit and gold cells out", () => {
    const fx = effects()
    expect(fx.source).toBe("recorded")
    // the baseline (c-all) is outside the grid: each axis's reference is its first value
    expect(fx.axes.map((a) => [a.key, a.levels, a.reference])).toEqual([
      ["retriever", ["bm25", "recency"], 0],
      ["retriever.select", ["top=2", "top=4"], 0]
    ])
    expect(fx.cells.map((c) => c.id)).toEqual(["c-a", "c-b", "c-c", "c-d"])
    // all has no selector; tfidf is one cell of a retriever value the sweep did not cross; the oracle reads gold
    expect(fx.outside.map((c) => c.id)).toEqual(["c-all", "c-tfidf"])
    expect(fx.correction).toBe("bh")
  })

  it("averages each value's cells per instance, then over instances", () => {
    // bm25 per instance: mean(a, b) = [0.6, 0.8, 0.2, 0.5] -> 2.1 / 4; recency: mean(c, d) = 0.2 everywhere
    expect(marginal(0, 0, "all").estimate.mean).toBeCloseTo(0.525, 12)
    expect(marginal(0, 1, "all").estimate.mean).toBeCloseTo(0.2, 12)
    expect(marginal(0, 1, "all").estimate.ci95).toEqual([0.2, 0.2].map((x) => expect.closeTo(x, 12)))
    // top=2: mean(a, c) = [0.3, 0.6, 0.15, 0.45] -> 0.375; top=4: mean(b, d) = [0.5, 0.4, 0.25, 0.25] -> 0.35
    expect(marginal(1, 0, "all").estimate.mean).toBeCloseTo(0.375, 12)
    expect(marginal(1, 1, "all").estimate.mean).toBeCloseTo(0.35, 12)
    // consistent instances (1 and 3): bm25 (0.6 + 0.2) / 2
    expect(marginal(0, 0, "consistent").estimate).toMatchObject({ n: 2, mean: expect.closeTo(0.4, 12) })
    expect(marginal(0, 0, "all").estimate.n).toBe(4)
  })

  it("tests each value against the reference value on the paired per-instance means", () => {
    const recencyAll = marginal(0, 1, "all").test!
    // recency - bm25 = [-0.4, -0.6, 0, -0.3]: mean -0.325. Clustered by persona: p1 -1.0, p2 0 (no
    // pattern changes it), p3 -0.3; of the 4 sign patterns of (p1, p3), 2 are as extreme: p = 0.5
    expect(recencyAll.comparison.delta).toBeCloseTo(-0.325, 12)
    expect(recencyAll.comparison).toMatchObject({ n: 4, clusters: 3, test: "exact", p: 0.5 })
    const top4All = marginal(1, 1, "all").test!
    // top=4 - top=2 = [0.2, -0.2, 0.1, -0.2]: mean -0.025
    expect(top4All.comparison.delta).toBeCloseTo(-0.025, 12)
    // consistent: recency - bm25 = [-0.4, 0]; one instance differs, 2 patterns, both as extreme
    const recencyConsistent = marginal(0, 1, "consistent").test!
    expect(recencyConsistent.comparison.delta).toBeCloseTo(-0.2, 12)
    expect(recencyConsistent.comparison).toMatchObject({ n: 2, p: 1 })
    expect(marginal(0, 0, "all").test).toBeUndefined()
    expect(marginal(1, 0, "changing").test).toBeUndefined()
  })

  it("names the best cell per instance type and tests it against each axis's runner-up", () => {
    // all instances: a 0.5, b 0.55, c 0.25, d 0.15
    const all = bestOf("all")
    expect(all.cell.id).toBe("c-b")
    expect(all.estimate.mean).toBeCloseTo(0.55, 12)
    expect(all.estimate.n).toBe(4)
    const [retriever, select] = all.choices
    // retriever, select held at top=4: d; b - d = [0.4, 0.4, 0.3, 0.5], persona sums 0.8, 0.3, 0.5: 2 of 8 patterns
    expect(retriever).toMatchObject({ axis: 0, level: 0, runnerUp: { level: 1, cell: { id: "c-d" } } })
    expect(retriever!.runnerUp!.test.comparison.delta).toBeCloseTo(0.4, 12)
    expect(retriever!.runnerUp!.test.comparison.p).toBe(0.25)
    // select, retriever held at bm25: a; b - a = [0.2, -0.4, 0.4, 0]
    expect(select).toMatchObject({ axis: 1, level: 1, runnerUp: { level: 0, cell: { id: "c-a" } } })
    expect(select!.runnerUp!.test.comparison.delta).toBeCloseTo(0.05, 12)
    // changing (instance 2): a 1.0 leads; the select runner-up is b (0.6), the retriever one c (0.2)
    const changing = bestOf("changing")
    expect(changing.cell.id).toBe("c-a")
    expect(changing.choices.map((c) => c.runnerUp?.cell.id)).toEqual(["c-c", "c-b"])
    expect(changing.choices[1]!.runnerUp!.test.comparison.delta).toBeCloseTo(0.4, 12)
    // contrastive (instance 4): a and b tie at 0.5; the first in grid order leads
    expect(bestOf("contrastive").cell.id).toBe("c-a")
  })

  it("corrects its own tests as one exploratory family, apart from the baseline's", () => {
    const fx = effects()
    // 2 axes x 1 non-reference value x 4 slices, plus 2 runner-up tests x 4 slices
    expect(fx.tests).toBe(16)
    const baselineTests = analysis.deltas.filter((d) => d.family !== "none" && Number.isFinite(d.comparison.p))
    expect(analysis.families.exploratory.tests + analysis.families.primary.tests).toBe(baselineTests.length)
    const ps = [
      ...fx.marginals.flatMap((m) => (m.test === undefined ? [] : [m.test])),
      ...fx.best.flatMap((b) => b.choices.map((c) => c.runnerUp!.test))
    ]
    expect(ps).toHaveLength(16)
    for (const t of ps) expect(t.pAdjusted).toBeGreaterThanOrEqual(t.comparison.p)
  })
})

describe("when the grid is not read by axis", () => {
  it("derives the axes from the cells when the run did not record them", () => {
    expect(AxisEffects.derive(runOf(grid, undefined).summary.cells)).toEqual(["retriever"])
    // model x retriever: the inferrer's plugin never changes, so its varying option is the axis
    const crossed = grid.map((s, i): Spec => ({ ...s, retriever: i < 2 ? bm25 : recency }))
    const models = runOf(crossed, undefined, (s) => ({
      inferrer: { use: "llm", model: s.id === "c-a" || s.id === "c-c" ? "m1" : "m2" }
    }))
    expect(AxisEffects.derive(models.summary.cells)).toEqual(["retriever", "inferrer.model"])
    const fx = Analysis.analyze(models).axes
    expect(fx._tag === "Effects" && fx.source).toBe("derived")
    expect(fx._tag === "Effects" && fx.axes.map((a) => a.levels)).toEqual([
      ["bm25", "recency"],
      ["m1", "m2"]
    ])
    // the same values as the recorded select axis above: m2 - m1 = top=4 - top=2
    expect(
      fx._tag === "Effects" &&
        fx.marginals.find((m) => m.axis === 1 && m.level === 1 && m.slice === "all")!.test!.comparison.delta
    ).toBeCloseTo(-0.025, 12)
  })

  const axisMarkdown = (a: Parameters<typeof ByAxis.blocks>[0]) => ByAxis.blocks(a).flatMap(Markdown.lines)

  it("is silent for one axis and says why when the recorded axes do not cross", () => {
    expect(Analysis.analyze(runOf(grid, ["retriever"])).axes).toEqual({ _tag: "Skipped", reason: undefined })
    const oneRetriever = Analysis.analyze(runOf(grid.slice(0, 2), swept)).axes
    expect(oneRetriever._tag).toBe("Skipped")
    expect(oneRetriever._tag === "Skipped" && oneRetriever.reason).toContain("(varied: retriever.select)")
    expect(axisMarkdown({ axes: oneRetriever })).toEqual([`> ${(oneRetriever as AxisEffects.Skipped).reason}`, ""])
    expect(axisMarkdown({ axes: { _tag: "Skipped", reason: undefined } })).toEqual([])
  })

  it("labels values by what differs among them", () => {
    expect(
      AxisEffects.labels([
        { use: "bm25", k1: 1.2, representation: "dialogue" },
        { use: "bm25", k1: 1.2, representation: "first" },
        { use: "recency" },
        null
      ])
    ).toEqual(["bm25(representation=dialogue)", "bm25(representation=first)", "recency", "none"])
    expect(AxisEffects.labels([{ top: 2 }, { threshold: 0.6 }, 8])).toEqual(["top=2", "threshold=0.6", "8"])
    expect(AxisEffects.pathOf("retriever.k")).toEqual(["retriever", "select"])
  })
})

describe("the Markdown section", () => {
  const text = ByAxis.blocks(analysis).flatMap(Markdown.lines).join("\n")
  const lines = text.split("\n")

  it("has a table per axis and the best settings, with the hand-computed values", () => {
    expect(lines[0]).toBe("## By sweep axis")
    expect(lines[2]).toMatch(
      /^The grid crosses retriever \(2 values\) x retriever\.select \(2 values\): 4 cells\. 2 cells outside that crossing/
    )
    expect(lines[2]).toContain("These 16 tests are exploratory, corrected as a family of their own (BH)")
    expect(text).toContain(
      "### retriever\n\n| retriever | all | consistent | contrastive | changing |\n|---|---|---|---|---|\n| bm25 (reference) | 0.525 ["
    )
    const recencyRow = lines.find((l) => l.startsWith("| recency |"))!
    expect(recencyRow).toMatch(
      /^\| recency \| 0\.200 \[0\.200, 0\.200\] n=4<br>Δ -0\.325 \[-?\d\.\d{3}, -?[+]?\d\.\d{3}\] p=0\.500 BH=\d\.\d{3} n=4 \|/
    )
    expect(lines.find((l) => l.startsWith("| top=4 |"))).toMatch(/^\| top=4 \| 0\.350 \[[^\]]+\] n=4<br>Δ -0\.025 /)
    expect(text).toContain(
      "### Best setting per instance type\n\n| instances | best cell | value [95% CI] | N | retriever: best vs runner-up | retriever.select: best vs runner-up |"
    )
    expect(lines.find((l) => l.startsWith("| all |"))).toMatch(
      /^\| all \| bm25\(top=4\) \| 0\.550 \[[^\]]+\] \| 4 \| bm25 vs recency: \+0\.400 \[[^\]]+\] p=0\.250 BH=[\d.]+ n=4 \| top=4 vs top=2: \+0\.050 \[[^\]]+\] p=[\d.]+ BH=[\d.]+ n=4 \|$/
    )
    expect(lines.find((l) => l.startsWith("| changing |"))).toMatch(
      /^\| changing \| bm25\(top=2\) \| 1\.000 \[n\/a\] \| 1 \| bm25 vs recency: \+0\.800 /
    )
  })

  it("sits after the differences against the baseline in report.md", () => {
    const md = Markdown.render(Document.report(analysis, { metric: undefined, examples: [], note: "none" }))
    const at = (s: string) => md.indexOf(s)
    expect(at("## By sweep axis")).toBeGreaterThan(at("## Differences against the baseline"))
    expect(at("## By sweep axis")).toBeLessThan(at("## Retrieval"))
  })
})
