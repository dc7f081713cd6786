import { Scorer } from "@cupid-lab/core"
import { Pairwise } from "@cupid-lab/report"
import { Columns, type ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "vitest"

import { summaryFold } from "./report-fixtures.js"

const metric = Scorer.metric({ name: "m", description: "a mean", family: "retrieval", headline: true })

const row = (cell: string, i: number, m: number): ResultLine.Row => ({
  cell,
  cellName: cell,
  instance: `p${i}:consistent`,
  personaId: `p${i}`,
  type: "consistent",
  status: "ok",
  params: {},
  meta: { sessions: 8, historyTokens: 100, relevantMeanPosition: 2, relevant: [], stale: [] },
  selected: [],
  inference: null,
  generation: null,
  scores: { m },
  usage: { calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} },
  error: null
})

/** Cells X (1 everywhere), Y (0 everywhere) and Z (1 on the first half, 0 on the rest) over n instances. */
const run = (n: number): { summary: ResultLine.Summary; idx: Columns.Index } => {
  const rows = ["X", "Y", "Z"].flatMap((c) =>
    Array.from({ length: n }, (_, i) => row(c, i, c === "X" ? 1 : c === "Y" ? 0 : i < n / 2 ? 1 : 0))
  )
  const acc = summaryFold({ metrics: [metric], seed: 1, resamples: 50 })
  rows.forEach(acc.add)
  const cells = acc.cells(
    ["X", "Y", "Z"].map((id) => ({
      id,
      name: id,
      params: {},
      usesGold: false,
      oracleRetrieval: false,
      heuristicStages: [],
      plugins: []
    }))
  )
  const summary: ResultLine.Summary = {
    config: { name: "t", hash: "h" },
    dataset: { source: "s", hash: "d", instances: n, skipped: [] },
    seed: 1,
    resamples: 50,
    baseline: "X",
    metrics: [metric],
    cells
  }
  return { summary, idx: Columns.index(rows) }
}

describe("every cell against every other", () => {
  it("marks the cells each one beats after Holm over the whole family, by hand", () => {
    // 12 instances. X - Y: twelve differences of 1, exact p = 2 / 2^12 = 0.00049. X - Z and Z - Y:
    // six differences of 1 and six of 0, p = 2 / 2^6 = 0.03125. Slices all and consistent hold the
    // same instances, and the run has no other type: 6 tests. Holm: 6 x 0.00049 and 5 x 0.00049 pass; 4 x 0.03125
    // = 0.125 does not, and Holm stops there.
    const { idx, summary } = run(12)
    const pw = Pairwise.compute(summary, idx, [metric], { seed: 1, resamples: 50 })
    expect(pw.tests).toBe(6)
    expect(pw.forms).toEqual({ exact: 6, normal: 0, monteCarlo: 0 })
    const all = pw.slices.find((s) => s.slice === "all")!
    expect(Object.fromEntries(all.beats.get("m")!)).toEqual({ X: [2], Y: [], Z: [] })
    // 12 shared instances reach the 8 that 6 tests need
    expect(all.tooSmall).toBeUndefined()
    // only the slices the run has: no contrastive or changing slice (they would share n = 0, "2/2^0 = 2.000")
    expect(pw.slices.map((s) => s.slice)).toEqual(["all", "consistent"])
  })

  it("says when the slice is too small for any difference to survive Holm, and the n that could", () => {
    // 4 instances: the smallest exact p is 2 / 2^4 = 0.125; 6 tests need 2^(n-1) > 6 / 0.05 = 120, n = 8
    const { idx, summary } = run(4)
    const pw = Pairwise.compute(summary, idx, [metric], { seed: 1, resamples: 50 })
    const all = pw.slices.find((s) => s.slice === "all")!
    expect(all.tooSmall).toEqual({ n: 4, needed: 8, tests: 6, correction: "holm" })
    expect(Object.fromEntries(all.beats.get("m")!)).toEqual({ X: [], Y: [], Z: [] })
  })

  it("the smallest useful n for a Holm family of m tests: 2^(n-1) > m / 0.05", () => {
    expect(Pairwise.neededN(1)).toBe(6) // 2^5 = 32 > 20
    expect(Pairwise.neededN(6)).toBe(8) // 2^7 = 128 > 120
    expect(Pairwise.neededN(84)).toBe(12) // 2^11 = 2048 > 1680
  })

  it("pairs that differ on more than 20 instances take the normal form, the others stay exact", () => {
    // 40 instances: X and Y differ on all 40 (z = 40 / sqrt(40)); Z differs from each on 20
    const { idx, summary } = run(40)
    const pw = Pairwise.compute(summary, idx, [metric], { seed: 1, resamples: 50 })
    expect(pw.forms).toEqual({ exact: 4, normal: 2, monteCarlo: 0 })
    // exact p of Z against either: 2 / 2^20, times Holm's 6 at most: all pairs significant
    expect(Object.fromEntries(pw.slices.find((s) => s.slice === "all")!.beats.get("m")!)).toEqual({
      X: [2, 3],
      Y: [],
      Z: [2]
    })
  })

  it("a lower-is-better metric reverses who beats whom", () => {
    const lower = { ...metric, direction: "lower" as const }
    const { idx, summary } = run(12)
    const pw = Pairwise.compute({ ...summary, metrics: [lower] }, idx, [lower], { seed: 1, resamples: 50 })
    expect(Object.fromEntries(pw.slices.find((s) => s.slice === "all")!.beats.get("m")!)).toEqual({
      X: [],
      Y: [1],
      Z: []
    })
  })
})
