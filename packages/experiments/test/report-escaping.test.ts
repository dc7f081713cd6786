import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { parquetReadObjects } from "hyparquet"
import * as fs from "node:fs"
import * as path from "node:path"
import { NodeContext, NodeFileSystem } from "@effect/platform-node"
import { Exports, RunDir } from "@cupid-lab/results"
import { Report } from "@cupid-lab/report"

import { cellB, hostile, hostileDataset, tempDir, writeHostileRun } from "./report-fixtures.js"

describe("reports with markup in data, model output, cell names and errors", () => {
  const render = () =>
    Effect.gen(function* () {
      const dir = tempDir("hostile")
      writeHostileRun(dir)
      return yield* Report.render(yield* RunDir.read(dir), { openDataset: hostileDataset() })
    })

  it.effect("report.html holds no live markup: no script, image, event handler or broken-out SVG", () =>
    Effect.gen(function* () {
      const { html } = yield* render()
      expect(html).not.toMatch(/<script/i)
      expect(html).not.toMatch(/<img/i)
      expect(html).not.toMatch(/<svg onload/i)
      expect(html).not.toContain("<b>bold")
      // every tag in the page is one the report writes itself
      const tags = new Set([...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase()))
      const allowed = [
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "main",
        "h1",
        "h2",
        "h3",
        "p",
        "br",
        "dl",
        "dt",
        "dd",
        "code",
        "figure",
        "figcaption",
        "svg",
        "g",
        "rect",
        "path",
        "line",
        "circle",
        "text",
        "tspan",
        "div",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "span",
        "details",
        "summary",
        "ol",
        "ul",
        "li",
        "b"
      ]
      expect([...tags].filter((t) => !allowed.includes(t))).toEqual([])
      // the texts are there, escaped, in content and in attribute-free SVG text
      expect(html).toContain("&lt;script&gt;window.__pwned = &quot;name&quot;&lt;/script&gt;")
      expect(html).toContain("&lt;/svg&gt;&lt;/table&gt;&lt;script&gt;")
      expect(html).toContain("&lt;img src=x onerror=&quot;window.__pwned=&#39;dialogue&#39;&quot;&gt;")
      expect(html).toContain("&#39; onmouseover=&#39;alert(3)&#39; data-x=&quot;&lt;b&gt;bold&lt;/b&gt;&quot;")
      expect(html).toContain("&lt;svg onload=alert(4)&gt;")
      // a bidi override in a table cell is shown, not obeyed (as in report.md)
      expect(html).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
      expect(html).toContain("\\u202Egnp.exe</td>")
      // a policy that would block scripts even if one slipped through
      expect(html).toContain(
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "results.csv shows bidi controls as escapes, like every report; results.parquet keeps the data as it is",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("hostile-files")
        writeHostileRun(dir)
        const rows = (yield* RunDir.read(dir).pipe(Effect.provide(NodeFileSystem.layer))).index.table.map((r) => ({
          ...r,
          cellName: `${r.cellName} \u202Egnp.exe`,
          error: { stage: "infer", plugin: "x", tag: "StageError", message: "\u2066evil\u2069" }
        }))
        const csv = Exports.csv(rows)
        expect(csv).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
        expect(csv).toContain("\\u202Egnp.exe")
        expect(csv).toContain("\\u2066evil\\u2069")
        const file = path.join(dir, "hostile.parquet")
        yield* Exports.writeParquet(file, rows).pipe(Effect.provide(NodeFileSystem.layer))
        const bytes = fs.readFileSync(file)
        const back = yield* Effect.promise(() =>
          parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) })
        )
        // The same values as results.jsonl, byte for byte: escaping is for the files people read.
        expect(back.map((r) => r["cell_name"])).toEqual(rows.map((r) => r.cellName))
        expect(back.map((r) => r["cell_name"]).every((n) => String(n).includes("\u202E"))).toBe(true)
        expect(bytes.includes(Buffer.from("\\u202Egnp.exe", "utf8"))).toBe(false)
      })
  )

  it.effect("report.md neutralizes markup and keeps tables intact", () =>
    Effect.gen(function* () {
      const { markdown } = yield* render()
      expect(markdown).not.toMatch(/<script|<img|<svg/i)
      expect(markdown).toContain("&lt;script&gt;window.__pwned")
      // a table row per cell: the pipe-free name keeps the column count (the leaderboard's 8, the Cells table's 7, the every-pair table's 4)
      const rows = markdown.split("\n").filter((l) => l.startsWith("| 2 | &lt;script&gt;"))
      expect(rows.map((row) => row.split(" | ").length)).toEqual([8, 7, 4])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("report.md keeps links and images from data as text, and shows bidi controls as escapes", () =>
    Effect.gen(function* () {
      const { markdown } = yield* render()
      expect(markdown).toContain("\\[click\\](javascript:alert(5))")
      expect(markdown).toContain("!\\[x\\](http://127.0.0.1:9/x.png)")
      expect(markdown).not.toMatch(/(^|[^\\])\[click\]\(/)
      expect(markdown).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
      expect(markdown).toContain("\\u202Egnp.exe")
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("the failure is counted, grouped with its message, and its instance leaves the paired comparison", () =>
    Effect.gen(function* () {
      const { analysis, markdown } = yield* render()
      expect(analysis.index.failures.length).toBe(1)
      expect(analysis.failures).toEqual([
        {
          stage: "infer",
          plugin: "llm",
          tag: "StageError",
          count: 1,
          cells: [hostile.cellName],
          examples: [{ cell: hostile.cellName, instance: "p1:contrastive", message: hostile.error }]
        }
      ])
      const recall = analysis.deltas.find(
        (d) => d.cell === cellB.id && d.metric === "retrieval.recall" && d.slice === "all"
      )!
      // differences -0.5, -1, -0.5 on the three instances both cells scored
      expect(recall.comparison.n).toBe(3)
      expect(recall.comparison.delta).toBeCloseTo(-2 / 3, 12)
      expect(analysis.deltas.find((d) => d.cell === cellB.id && d.slice === "contrastive")!.comparison.n).toBe(0)
      expect(markdown).toContain("## Failures")
      expect(markdown).toContain("## Skipped dataset rows")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
