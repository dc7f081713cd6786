import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { Analysis, Paper, Table } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"

import { cellA, cellB, tempDir, writeRun } from "./report-fixtures.js"

describe("report.tex", () => {
  it("escapes every character LaTeX treats specially", () => {
    expect(Table.latexEscape("a&b %c $d #e _f {g} ~h ^i \\j")).toBe(
      "a\\&b \\%c \\$d \\#e \\_f \\{g\\} \\textasciitilde{}h \\textasciicircum{}i \\textbackslash{}j"
    )
    expect(Table.latexEscape("tab\there\u0007")).toBe("tab here ")
    // glyphs that other font encodings print as something else; bidi controls pdflatex cannot typeset
    expect(Table.latexEscape("a|b <c> \u202Ed\u2066")).toBe("a\\textbar{}b \\textless{}c\\textgreater{} d")
  })

  it.effect("puts P / R / F1 per instance type in percent, one row per cell, with marks and a balanced tabular", () =>
    Effect.gen(function* () {
      const dir = tempDir("latex")
      writeRun(dir, { name: "tiny_run", cells: [cellA, { ...cellB, name: "bm25 & 50% {k=2}" }] })
      const run = yield* RunDir.read(dir)
      const tex = Paper.latex(Analysis.analyze(run))
      const lines = tex.split("\n")
      expect(lines).toContain("\\begin{tabular}{lrrrrrrrrrrrr}")
      expect(lines).toContain(
        " & \\multicolumn{3}{c}{Consistent} & \\multicolumn{3}{c}{Contrastive} & \\multicolumn{3}{c}{Changing} & \\multicolumn{3}{c}{All} \\\\"
      )
      // A over all instances: P 4/6, R 4/8, F1 4/7 (the extractive inferrer's metrics are heuristic)
      const rowA = lines.find((l) => l.startsWith("all &"))!
      expect(rowA.endsWith("& 66.7 & 50.0 & 57.1 \\\\")).toBe(true)
      expect(lines.some((l) => l.startsWith("bm25 \\& 50\\% \\{k=2\\} &"))).toBe(true)
      expect(tex).toContain("P$^\\dagger$ & R$^\\dagger$ & F1$^\\dagger$")
      expect(tex).toContain("\\caption{tiny\\_run: inference (preference match) P / R / F1 (\\%) per instance type.")
      expect(tex).toContain("\\label{tab:tiny-run}")
      // every row has the header's number of cells
      const body = lines.slice(lines.indexOf("\\midrule") + 1, lines.indexOf("\\bottomrule"))
      expect(body).toHaveLength(2)
      for (const l of body) expect(l.split(/(?<!\\)&/)).toHaveLength(13)
      for (const [open, close] of [
        ["{", "}"],
        ["\\begin", "\\end"]
      ] as const) {
        const unescaped = (s: string) => tex.split(s).length - 1 - (open === "{" ? tex.split(`\\${s}`).length - 1 : 0)
        expect(unescaped(open)).toBe(unescaped(close))
      }
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
