/**
 * One n on every leaderboard: when the main metric has no value on some instances (retrieval
 * metrics on instances without a relevant session, as on LoCoMo's 450 questions without evidence),
 * the console's n, report.md's and report.html's N are the main metric's n, and each table's note
 * says so; the failed column still counts failed pairs.
 */
import { Leaderboard, Report } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"

import { cellA, cellB, type CellSpec, dataset, tempDir, writeRun } from "./report-fixtures.js"

/** The cell with no recall (no relevant session) on instances 2 and 4; B also fails instance 3. */
const withoutRelevant = (c: CellSpec, failOn?: number): CellSpec => ({
  ...c,
  results: c.results.map((r, i) =>
    i === failOn ? { error: "boom" } : "counts" in r && (i === 1 || i === 3) ? { ...r, recall: null } : r
  )
})

describe("n on the leaderboard when the main metric is undefined for some instances", () => {
  it.effect("the console, report.md and report.html give the main metric's n and say so", () =>
    Effect.gen(function* () {
      const dir = tempDir("leaderboard-n")
      const summary = writeRun(dir, { cells: [withoutRelevant(cellA), withoutRelevant(cellB, 2)] })
      // The premise: 4 instances scored for A, but recall is defined on 2 of them.
      const a = summary.cells[0]!.slices.all
      expect([a.n, a.metrics["retrieval.recall"]!.n]).toEqual([4, 2])
      const r = yield* Report.render(yield* RunDir.read(dir), { openDataset: dataset() })
      expect(r.verdict.metric?.name).toBe("retrieval.recall")

      const board = Leaderboard.table(r.analysis, r.verdict)
      const nColumn = board.columns.findIndex((c) => c.label === "N")
      const boardN = new Map(board.rows.map((row) => [row.cells[1]!.text.split(" ")[0], row.cells[nColumn]!.text]))
      expect(boardN).toEqual(
        new Map([
          ["all", "2"],
          ["bm25(k=2)", "1"]
        ])
      )

      const text = Leaderboard.console(r.analysis, r.verdict)
      const lines = text.split("\n")
      const header = lines.findIndex((l) => l.startsWith("rank"))
      const columns = lines[header]!.trim().split(/ {2,}/)
      const row = (name: string) =>
        lines
          .slice(header + 2)
          .find((l) => l.trim().split(/ {2,}/)[1] === name)!
          .trim()
          .split(/ {2,}/)
      for (const [name, n] of boardN) expect(row(name!)[columns.indexOf("n")]).toBe(n)
      expect(row("bm25(k=2)")[columns.indexOf("failed")]).toBe("1")
      const note = Leaderboard.nNote(r.verdict.metric!)
      expect(text).toContain(`n = ${note}`)
      expect(text).not.toContain("n = instances scored")

      // report.md and report.html state the same definition under their leaderboard.
      expect(r.markdown).toContain(`N: ${note}`)
      expect(r.html).toContain(`N: ${note}`)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
