import { describe, expect, it } from "vitest"
import { Repeats } from "@cupid-lab/report"
import { Columns, type ResultLine, Results } from "@cupid-lab/results"

import { resultLine } from "./support.js"

const slice: ResultLine.SliceSummary = { n: 3, failed: 0, metrics: {} }
const summary = (id: string): ResultLine.CellSummary => ({
  id,
  name: `cell ${id}`,
  params: {},
  usesGold: false,
  oracleRetrieval: false,
  heuristicStages: [],
  plugins: [],
  slices: { all: slice, consistent: slice, contrastive: slice, changing: slice }
})

const row = (cell: string, instance: string, repeats?: ReadonlyArray<number | null>) => {
  const line = JSON.parse(resultLine(cell, instance)) as ResultLine.ResultLine
  return Results.toRow(repeats === undefined ? line : { ...line, repeats: { "generation.score": repeats } })
}

const analysis = (rows: ReadonlyArray<ReturnType<typeof row>>) => {
  const cells = ["c1", "c2"].map((id, index) => ({ index, summary: summary(id), oracle: undefined }))
  return { cells, baseline: cells[0]!.summary, index: Columns.index(rows) }
}

describe("the Repeated judgments table", () => {
  it("gives each repeated metric's spread, ICC(1) and judge share, hand-computed", () => {
    // Repeats [2,4], [6,6], [7,9] (and an instance with one finite repeat, left out): spread
    // 2 sqrt(2) / 3 = 0.943, ICC(1) 17/21 = 0.810, judge share 2/19 = 0.105 (see Agreement's test).
    const t = Repeats.table(
      analysis([
        row("c1", "p1:consistent", [2, 4]),
        row("c2", "p1:consistent"),
        row("c1", "p1:contrastive", [6, 6]),
        row("c1", "p1:changing", [7, 9]),
        row("c1", "p2:consistent", [5, null])
      ])
    )
    expect(t?.columns.map((c) => c.label)).toEqual([
      "cell",
      "metric",
      "instances",
      "repeats",
      "spread (SD)",
      "ICC(1)",
      "judge share"
    ])
    expect(t?.rows.map((r) => r.cells.map((c) => c.text))).toEqual([
      ["cell c1 (baseline)", "generation.score", "3", "2", "0.943", "0.810", "0.105"]
    ])
  })

  it("is absent when no line has repeats", () => {
    expect(Repeats.table(analysis([row("c1", "p1:consistent"), row("c2", "p1:consistent")]))).toBeUndefined()
  })
})
