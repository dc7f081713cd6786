import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Schema } from "effect"
import { Analysis, Table, Paper, Tables } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"

import { cellA, cellB, type CellSpec, tempDir, writeRun } from "./report-fixtures.js"

/** One table with every escaping hazard of the three formats, a group, marks, a best value and superscripts. */
const hazards: Table.Table = {
  id: "demo_1%",
  title: "Recall & F1 of <script>",
  notes: ["† heuristic; 50% of rows.", "‡ reads gold."],
  columns: [
    { label: "cell", align: "left" },
    { label: "P", align: "right", group: "All", marks: ["†"] },
    { label: "R|x", align: "right", group: "All" },
    { label: "n_pairs", align: "right" }
  ],
  rows: [
    {
      kinds: ["baseline"],
      cells: [
        { text: "a|b <script>alert(1)</script>", marks: ["‡"] },
        { text: "0.500 [0.250, 0.750]", value: 0.5, best: true, superscripts: ["2", "3"] },
        { text: "-0.100", value: -0.1, detail: "p=0.010 Holm=0.040 n=12", significant: true, tooltip: `say "hi"` },
        { text: "12", value: 12 }
      ]
    },
    {
      kinds: [],
      cells: [
        { text: "R&D_50% \u202Eexe [click](javascript:alert(1))" },
        { text: "–", value: null },
        { text: "id_1", code: true },
        { text: "[line 1]\nline 2" }
      ]
    }
  ]
}

describe("one table, three renderings", () => {
  it("Markdown: pipes, markup, links and bidi controls neutralized; groups prefix their labels", () => {
    expect(Table.markdown(hazards)).toBe(
      [
        "| cell | All P † | All R\\|x | n_pairs |",
        "|---|---|---|---|",
        "| a\\|b &lt;script&gt;alert(1)&lt;/script&gt; ‡ | **0.500 [0.250, 0.750]** <sup>2,3</sup> | -0.100 p=0.010 Holm=0.040 n=12 * | 12 |",
        "| R&D_50% \\u202Eexe \\[click\\](javascript:alert(1)) | – | `id_1` | [line 1]<br>line 2 |"
      ].join("\n")
    )
  })

  it("HTML: everything escaped, a spanning group heading, classes for kinds, best and significance", () => {
    expect(Table.html(hazards)).toBe(
      `<div class="scroll"><table><thead>` +
        `<tr><th rowspan="2">cell</th><th colspan="2">All</th><th rowspan="2">n_pairs</th></tr><tr><th>P †</th><th>R|x</th></tr>` +
        `</thead><tbody>` +
        `<tr class="baseline"><td>a|b &lt;script&gt;alert(1)&lt;/script&gt; ‡</td><td class="num best">0.500 [0.250, 0.750]<sup>2,3</sup></td>` +
        `<td class="num sig" title="say &quot;hi&quot;">-0.100 *<div class="muted">p=0.010 Holm=0.040 n=12</div></td><td class="num">12</td></tr>` +
        `<tr><td>R&amp;D_50% \\u202Eexe [click](javascript:alert(1))</td><td class="num">–</td><td class="num"><code>id_1</code></td><td class="num">[line 1]<br>line 2</td></tr>` +
        `</tbody></table></div>`
    )
  })

  it("LaTeX: special characters escaped, bidi controls dropped, marks as math, the group as a multicolumn with its rule", () => {
    expect(Table.latex(hazards)).toBe(
      [
        "\\begin{table}[t]",
        "\\centering",
        "\\small",
        "\\setlength{\\tabcolsep}{3pt}",
        "\\begin{tabular}{lrrr}",
        "\\toprule",
        " & \\multicolumn{2}{c}{All} &  \\\\",
        "\\cmidrule(lr){2-3}",
        "cell & P$^\\dagger$ & R\\textbar{}x & n\\_pairs \\\\",
        "\\midrule",
        "a\\textbar{}b \\textless{}script\\textgreater{}alert(1)\\textless{}/script\\textgreater{}$^\\ddagger$ & \\textbf{0.500 [0.250, 0.750]}$^{2,3}$ & -0.100$^{*}$ p=0.010 Holm=0.040 n=12 & 12 \\\\",
        "R\\&D\\_50\\% exe [click](javascript:alert(1)) & – & \\texttt{id\\_1} & {}[line 1] line 2 \\\\",
        "\\bottomrule",
        "\\end{tabular}",
        "\\caption{Recall \\& F1 of \\textless{}script\\textgreater{} $^\\dagger$ heuristic; 50\\% of rows. $^\\ddagger$ reads gold.}",
        "\\label{tab:demo-1-}",
        "\\end{table}"
      ].join("\n")
    )
  })

  it("Markdown keeps a bracket only where no link can form", () => {
    const one = (text: string) =>
      Table.markdown({
        id: "x",
        title: "x",
        notes: [],
        columns: [{ label: "x", align: "left" }],
        rows: [{ kinds: [], cells: [{ text }] }]
      }).split("\n")[2]
    expect(one("0.5 [0.1, 0.9] (n=3)")).toBe("| 0.5 \\[0.1, 0.9\\] (n=3) |")
    expect(one("0.5 [0.1, 0.9] n=3")).toBe("| 0.5 [0.1, 0.9] n=3 |")
    expect(one("![x](http://127.0.0.1/x.png)")).toBe("| !\\[x\\](http://127.0.0.1/x.png) |")
    expect(one("[a][ref] and [b] [ref]")).toBe("| \\[a\\]\\[ref\\] and \\[b\\] \\[ref\\] |")
    // a backslash before a bracket stays escaped itself
    expect(one("\\[x]")).toBe("| \\\\[x] |")
  })

  it("is plain data: JSON and back through the Schema gives the same table", () => {
    const json = JSON.parse(JSON.stringify(hazards))
    expect(Schema.decodeUnknownSync(Table.Table)(json)).toEqual(hazards)
    expect(() => Schema.decodeUnknownSync(Table.Table)({ ...json, rows: [{ kinds: ["winner"], cells: [] }] })).toThrow(
      /winner/
    )
  })
})

const oracle: CellSpec = {
  id: "oooo000000000004",
  name: "oracle",
  retriever: "oracle",
  usesGold: true,
  results: [
    { recall: 1, counts: [3, 3, 3, 3] },
    { recall: 1, counts: [2, 2, 2, 2] },
    { recall: 1, counts: [1, 1, 1, 2] },
    { recall: 1, counts: [1, 1, 1, 1] }
  ]
}
const twin: CellSpec = { ...cellA, id: "cccc000000000003", name: "all again" }

describe("the headline tables of a run", () => {
  const analysis = Effect.gen(function* () {
    const dir = tempDir("tables")
    writeRun(dir, { cells: [cellA, cellB, twin, oracle] })
    return Analysis.analyze(yield* RunDir.read(dir))
  })

  it.effect(
    "one per instance type: the main metric, then the other headline metrics, the best non-oracle value of each column marked (ties share it)",
    () =>
      Effect.gen(function* () {
        const a = yield* analysis
        const tables = Tables.tables(a)
        expect(tables.map((t) => t.id)).toEqual([
          "headline-all",
          "headline-consistent",
          "headline-contrastive",
          "headline-changing"
        ])
        const all = tables[0]!
        // the inference is heuristic and no model made it: retrieval recall leads (Analysis.mainMetric)
        expect(all.columns.map((c) => [c.label, c.marks ?? []])).toEqual([
          ["cell", []],
          ["N", []],
          ["retrieval.recall", []],
          ["inference.f1_micro", ["†"]]
        ])
        expect(all.rows.map((r) => r.kinds)).toEqual([["baseline"], [], [], ["oracle"]])
        expect(all.rows.map((r) => r.cells[0]!.text)).toEqual(["all (baseline)", "bm25(k=2)", "all again", "oracle ‡"])
        // recall: A and its twin 1, B 0.5, the oracle 1 but never best
        expect(all.rows.map((r) => [r.cells[2]!.value, r.cells[2]!.best ?? false])).toEqual([
          [1, true],
          [0.5, false],
          [1, true],
          [1, false]
        ])
        expect(all.rows[0]!.cells[2]!.text).toBe("1.000 [1.000, 1.000]")
        // micro F1: A and its twin 4/7, B 2/7, the oracle higher (P 7/7, R 7/8: 14/15) but never best
        expect(all.rows.map((r) => r.cells[3]!.best ?? false)).toEqual([true, false, true, false])
        expect(all.rows[3]!.cells[3]!.value).toBeCloseTo(14 / 15, 12)
        expect(all.rows[0]!.cells[3]!.value).toBeCloseTo(4 / 7, 12)
        expect(Table.markdown(all).split("\n")[2]).toMatch(
          /^\| all \(baseline\) \| 4 \| \*\*1\.000 \[1\.000, 1\.000\]\*\* \| \*\*0\.571 \[\d\.\d{3}, \d\.\d{3}\]\*\* \|$/
        )
        // on the changing instance B beats A on F1 (2/3 against 0); the oracle ties B and stays unmarked
        const changing = tables[3]!
        expect(changing.rows.map((r) => r.cells[3]!.best ?? false)).toEqual([false, true, false, false])
        for (const t of tables) expect(Schema.decodeUnknownSync(Table.Table)(JSON.parse(JSON.stringify(t)))).toEqual(t)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("need no paired test: a viewer builds them from the summary alone", () =>
    Effect.gen(function* () {
      const a = yield* analysis
      const summary = a.summary
      const { main } = Analysis.mainMetric(summary)
      const fromSummary = Tables.tables({
        summary,
        baseline: Analysis.chooseBaseline(summary).cell,
        main,
        compared: Analysis.comparedMetrics(summary, main)
      })
      expect(fromSummary).toEqual(Tables.tables(a))
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a lower-is-better metric marks its smallest value and carries ↓", () =>
    Effect.gen(function* () {
      const a = yield* analysis
      const lower = a.compared.map((m) => (m.name === "retrieval.recall" ? { ...m, direction: "lower" as const } : m))
      const t = Tables.headline(
        { ...a, compared: lower, main: lower.find((m) => m.name === "retrieval.recall") },
        "all"
      )
      expect(t.columns[2]).toEqual({ label: "retrieval.recall", align: "right", marks: ["↓"] })
      expect(t.rows.map((r) => r.cells[2]!.best ?? false)).toEqual([false, true, false, false])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "report.tex renders the paper table of the same model: groups per instance type, the F1 of the oracle, marks",
    () =>
      Effect.gen(function* () {
        const a = yield* analysis
        const paper = Paper.paper(a)
        expect(paper.columns.map((c) => `${c.group ?? ""}:${c.label}`)).toEqual([
          ":Cell",
          ...["Consistent", "Contrastive", "Changing", "All"].flatMap((g) => ["P", "R", "F1"].map((l) => `${g}:${l}`)),
          "Oracle:F1"
        ])
        const tex = Table.latex(paper)
        expect(tex).toContain(
          " & \\multicolumn{3}{c}{Consistent} & \\multicolumn{3}{c}{Contrastive} & \\multicolumn{3}{c}{Changing} & \\multicolumn{3}{c}{All} & Oracle \\\\"
        )
        expect(tex).toContain("\\cmidrule(lr){2-4}\\cmidrule(lr){5-7}\\cmidrule(lr){8-10}\\cmidrule(lr){11-13}\n")
        expect(tex).toContain("\noracle$^\\ddagger$ & ")
        expect(tex).toContain("$^\\ddagger$ reads gold labels (an upper bound). Data: tiny, 4 instances.}")
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
