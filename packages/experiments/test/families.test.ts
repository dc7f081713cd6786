import { Random, Scorer } from "@cupid-lab/core"
import { Paired } from "@cupid-lab/scorers"
import { Analysis, Families, Tables } from "@cupid-lab/report"
import { Columns, ResultLine } from "@cupid-lab/results"

import { describe, expect, it } from "vitest"

import { summaryFold } from "./report-fixtures.js"

const types = ["consistent", "contrastive", "changing"] as const

interface CellSpec {
  readonly name: string
  readonly usesGold?: boolean
  /** The cell's scores of instance k (persona k / 3, type k % 3). */
  readonly scores: (k: number) => Record<string, number>
}

/** A run built from generated result lines: 3 instances (one per type) per persona. */
const runOf = (
  personas: number,
  cells: ReadonlyArray<CellSpec>,
  metrics: ReadonlyArray<ReturnType<typeof Scorer.metric>>,
  families?: ResultLine.Summary["families"]
) => {
  const lines: Array<ResultLine.ResultLine> = cells.flatMap((c, ci) =>
    Array.from({ length: personas * 3 }, (_, k): ResultLine.ResultLine => ({
      cell: `c${ci}`,
      cellName: c.name,
      instance: `p${Math.floor(k / 3)}:${types[k % 3]}`,
      personaId: `p${Math.floor(k / 3)}`,
      type: types[k % 3]!,
      status: "ok",
      params: { retriever: { use: c.name } },
      meta: { sessions: 8, historyTokens: 100, relevantMeanPosition: null, relevant: [], stale: [] },
      selected: [],
      ranking: null,
      summaries: null,
      inference: null,
      generation: null,
      scores: c.scores(k),
      usage: { calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} },
      error: null
    }))
  )
  const acc = summaryFold({ metrics, seed: 5, resamples: 200 })
  for (const l of lines) acc.add(l)
  const summary: ResultLine.Summary = {
    config: { name: "generated", hash: "0" },
    dataset: { source: "generated", hash: "0", instances: personas * 3, skipped: [] },
    seed: 5,
    resamples: 200,
    baseline: "c0",
    ...(families !== undefined ? { families } : {}),
    metrics: acc.metrics(),
    cells: acc.cells(
      cells.map((c, ci) => ({
        id: `c${ci}`,
        name: c.name,
        params: { retriever: { use: c.name } },
        usesGold: c.usesGold ?? false,
        oracleRetrieval: c.usesGold ?? false,
        heuristicStages: [],
        plugins: []
      }))
    )
  }
  return { summary, index: Columns.index(lines) }
}

const metric = (name: string, mainRank?: number) =>
  Scorer.metric({
    name,
    description: `${name} (generated)`,
    family: "inference",
    headline: true,
    ...(mainRank !== undefined ? { mainRank } : {})
  })

describe("declared families on generated data (20 cells, 300 instances of 100 personas)", () => {
  const rng = Random.mulberry32(2024)
  const n = 300
  const base = Array.from({ length: n }, () => 0.3 + 0.4 * rng())
  const noise = () => Array.from({ length: n }, () => 0.2 * (rng() - 0.5))
  // The planted cell: +0.04 on the main metric, plus +-w per instance whose signs cancel within
  // every type (complementary patterns for personas 2j and 2j+1) and sum to +-1 within a persona.
  // Persona sums D = 3 x 0.04 +- w, so the clustered permutation z = sum D / sqrt(sum D^2)
  // = 12 / sqrt(100 (0.12^2 + w^2)) = 3.62 for w = 0.309: p about 3e-4, below 0.05 / 76 (the
  // primary Holm family's first step) and above 0.05 / 380 (one family of every difference).
  const w = 0.309
  const patterns = [
    [1, 1, -1],
    [1, -1, 1],
    [-1, 1, 1]
  ] as const
  const planted = Array.from({ length: n }, (_, k) => {
    const persona = Math.floor(k / 3)
    const sign = patterns[Math.floor(persona / 2) % 3]![k % 3]! * (persona % 2 === 0 ? 1 : -1)
    return base[k]! + 0.04 + w * sign
  })
  const others = ["other.a", "other.b", "other.c", "other.d"]
  const otherValues = Array.from({ length: 20 }, () => others.map(() => Array.from({ length: n }, () => rng())))
  const cells: Array<CellSpec> = Array.from({ length: 20 }, (_, ci) => {
    const e = noise()
    const main = ci === 0 ? base : ci === 7 ? planted : base.map((b, k) => b + e[k]!)
    return {
      name: `cell${ci}`,
      scores: (k) => ({
        "main.score": main[k]!,
        ...Object.fromEntries(others.map((o, j) => [o, otherValues[ci]![j]![k]!]))
      })
    }
  })
  const metrics = [metric("main.score", 1), ...others.map((o) => metric(o))]
  const run = runOf(100, cells, metrics)
  const a = Analysis.analyze(run, { permutations: 20000 })
  const delta = (cell: string, m: string, slice: ResultLine.Slice) =>
    a.deltas.find((d) => d.cell === cell && d.metric === m && d.slice === slice)!

  it("generated data: the planted +0.04 is significant after the primary Holm family, and would not be in one family of every difference", () => {
    expect(a.main?.name).toBe("main.score")
    expect(a.families.primary).toMatchObject({ correction: "holm", tests: 19 * 4 })
    expect(a.families.exploratory).toMatchObject({ correction: "bh", tests: 19 * 4 * 4 })
    const d = delta("c7", "main.score", "all")
    expect(d.family).toBe("primary")
    expect(d.comparison).toMatchObject({ n: 300, clusters: 100, test: "monte-carlo", permutations: 20000 })
    expect(d.comparison.delta).toBeCloseTo(0.04, 12)
    expect(d.comparison.p).toBeGreaterThan(0.05 / 380)
    expect(d.pAdjusted).toBeLessThan(0.05)
    // No null cell passes the primary family.
    expect(a.deltas.filter((x) => x.family === "primary" && x.cell !== "c7" && x.pAdjusted < 0.05)).toEqual([])

    // The old report: every delta (all cells, metrics, slices) in one Holm family, the same tests.
    const clusters = new Map<string, Int32Array>(ResultLine.slices.map((s) => [s, Families.personas(run.index, s)]))
    const all = a.deltas.map((x) => ({
      a: Columns.sliceOf(run.index, "c0", x.slice)(a.compared.find((m) => m.name === x.metric)!),
      b: Columns.sliceOf(run.index, x.cell, x.slice)(a.compared.find((m) => m.name === x.metric)!),
      clusters: clusters.get(x.slice)!
    }))
    const old = Paired.family(all, { seed: run.summary.seed, resamples: 200, permutations: 20000, correction: "holm" })
    expect(old.tests).toBe(380)
    const at = a.deltas.indexOf(d)
    expect(old.adjusted[at]!).toBeGreaterThan(0.05)
    // (the old family did not refine this test: at 380 tests it could not pass; with the refined
    // p of the primary family, Holm's first step over 380 tests still gives more than 0.05)
    expect(old.comparisons[at]!.permutations).toBe(Paired.screening)
    expect(380 * d.comparison.p).toBeGreaterThan(0.05)
  })

  it("generated data: the primary comparison's MDE is the closed form at the family's level, from the persona-level standard error", () => {
    const d = delta("c7", "main.score", "all")
    // level 0.05 / 76; z_{1 - level/2} = 3.406550, z_0.8 = 0.841621
    expect(a.families.primary.level).toBeCloseTo(0.05 / 76, 15)
    // persona-level se of the mean difference: u_c = (D_c - 0.04 x 3) / 300 = +-w / 300, so
    // se = sqrt(100 x var(u)) = sqrt(100 x (w / 300)^2 x 100 / 99) = w / 30 x sqrt(100 / 99)
    const se = (w / 30) * Math.sqrt(100 / 99)
    expect(d.mde).toBeCloseTo((3.40655 + 0.841621) * se, 5)
    expect(delta("c7", "other.a", "all").mde).toBeNaN()
  })

  it("generated data: the delta tables name each entry's family and correction", () => {
    const t = Tables.deltas(a, a.compared[0]!)
    expect(t.notes[0]).toContain(
      "Families: primary = main.score on all instances, consistent instances, contrastive instances, changing instances, each cell against the baseline, 76 tests, Holm; exploratory = every other difference, 304 tests, Benjamini-Hochberg;"
    )
    const row = t.rows.find((r) => r.cells[0]!.text === "cell7")!
    expect(row.cells[1]!.detail).toMatch(/^p=\S+ Holm=0\.0\d\d n=300 \(primary, MDE 0\.\d{3}\)$/)
    expect(row.cells[1]!.significant).toBe(true)
    const other = Tables.deltas(a, a.compared[1]!).rows.find((r) => r.cells[0]!.text === "cell7")!
    expect(other.cells[1]!.detail).toMatch(/^p=\d\.\d{3} BH=\d\.\d{3} n=300 \(exploratory\)$/)
  })
})

describe("cells outside every family, configured families, uninformative metrics", () => {
  const values = (shift: number) => (k: number) => ({
    "main.score": 0.5 + shift + 0.1 * Math.sin(k),
    "zero.score": 0,
    "tiny.score": k % 50 === 0 ? 0.01 + shift / 10 : 0
  })
  const cells: Array<CellSpec> = [
    { name: "base", scores: values(0) },
    { name: "method", scores: values(0.05) },
    { name: "oracle", usesGold: true, scores: values(0.3) },
    { name: "ref", scores: values(0.1) }
  ]
  const metrics = [metric("main.score", 1), metric("zero.score"), metric("tiny.score")]

  it("gold-reading and reference cells are shown with intervals but not tested", () => {
    const a = Analysis.analyze(runOf(10, cells, metrics, { reference: ["ref"] }))
    const untested = a.deltas.filter((d) => d.family === "none")
    expect(new Set(untested.map((d) => d.cell))).toEqual(new Set(["c2", "c3"]))
    for (const d of untested) {
      expect(d.pAdjusted).toBeNaN()
      expect(Number.isFinite(d.comparison.ci95[0])).toBe(true)
    }
    expect(a.families.primary.tests).toBe(4)
    expect(Tables.deltaCell(untested[0]!).detail).toBe("n=30 (not tested)")
    expect(Tables.deltas(a, a.compared[0]!).notes[0]).toContain(
      "not tested (interval only): cells that read gold labels and the reference cells ref."
    )
  })

  it("takes the primary metrics, slices and corrections the config declares", () => {
    const a = Analysis.analyze(
      runOf(10, cells, metrics, {
        primary: { slices: ["all"] },
        correction: { primary: "bonferroni", exploratory: "none" }
      })
    )
    const primary = a.deltas.filter((d) => d.family === "primary")
    expect(primary.map((d) => [d.cell, d.metric, d.slice])).toEqual([
      ["c1", "main.score", "all"],
      ["c3", "main.score", "all"]
    ])
    expect(a.families.primary).toMatchObject({ correction: "bonferroni", tests: 2, level: 0.025 })
    for (const d of primary) expect(d.pAdjusted).toBe(Math.min(1, 2 * d.comparison.p))
    for (const d of a.deltas.filter((x) => x.family === "exploratory")) expect(d.pAdjusted).toBe(d.comparison.p)
    expect(() => Analysis.analyze(runOf(10, cells, metrics, { reference: ["nobody"] }))).toThrow(
      /report\.reference: "nobody" is not a cell of this run; cells: base, method, oracle, ref/
    )
  })

  it("marks metrics that cannot tell the cells apart, and leaves them out of the headline lists", () => {
    const a = Analysis.analyze(runOf(10, cells, metrics))
    // zero.score is 0 everywhere; tiny.score is 0.01 on 1 instance of 30: every cell's CI reaches 0
    expect(a.uninformative).toEqual([
      { metric: "zero.score", reason: "every cell has the same value 0.000 on all instances" },
      {
        metric: "tiny.score",
        reason: "every cell's 95% CI on all instances, the oracle's included, contains 0 (largest |value| 0.001)"
      }
    ])
    expect(a.inference.map((m) => m.name)).toEqual(["main.score"])
    expect(a.compared.map((m) => m.name)).toEqual(["main.score"])
  })
})
