import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Analysis, Compare } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"

import * as Commands from "../src/cli/Commands.js"

import { type CellSpec, cellA, cellB, metrics, tempDir, writeRun } from "./report-fixtures.js"
import { runPromise } from "./support.js"

/** Only in the first run. */
const cellD: CellSpec = { ...cellA, id: "dddd000000000004", name: "recency", retriever: "recency" }
/** Same name as B, other parameters (so another id): matched by name. Fails on p2:consistent. */
const cellB2: CellSpec = {
  ...cellB,
  id: "bbbb00000000000f",
  results: [
    { recall: 1, counts: [0, 1, 0, 3] },
    { recall: 1, counts: [1, 2, 1, 2] },
    { recall: 0.5, counts: [1, 1, 1, 2] },
    { error: "rate limited" }
  ]
}
/** Only in the second run. */
const cellC: CellSpec = { ...cellA, id: "cccc000000000003", name: "oracle", retriever: "oracle", usesGold: true }

const runs = () => {
  const a = tempDir("cmp-a"),
    b = tempDir("cmp-b")
  writeRun(a, { name: "before", cells: [cellA, cellB, cellD] })
  writeRun(b, {
    name: "after",
    cells: [cellA, cellB2, cellC],
    datasetHash: "beef",
    metrics: metrics.map((m) =>
      m.name === "retrieval.recall" ? { ...m, description: "Recall, another definition." } : m
    )
  })
  return { a, b }
}

const { a, b } = runs()
const c = Compare.compare(await runPromise(RunDir.read(a)), await runPromise(RunDir.read(b)))

describe("compare two runs", () => {
  const row = (cell: string, metric: string, slice: string) =>
    c.rows.find((r) => r.match.a.id === cell && r.metric.name === metric && r.slice === slice)!

  it("matches cells by id, then by name, and lists the rest", () => {
    expect(c.matches.map((m) => [m.a.name, m.b.id, m.by])).toEqual([
      ["all", cellA.id, "id"],
      ["bm25(k=2)", cellB2.id, "name"]
    ])
    expect(c.onlyA.map((x) => x.name)).toEqual(["recency"])
    expect(c.onlyB.map((x) => x.name)).toEqual(["oracle"])
  })

  it("compares on the instances both cells scored, with the paired statistics", () => {
    const recall = row(cellB.id, "retrieval.recall", "all")
    // shared: the first three instances; recall 0.5, 1, 0 -> 1, 1, 0.5; differences +0.5, 0, +0.5
    expect(recall.comparison.n).toBe(3)
    expect(recall.a).toEqual({ n: 3, value: 0.5 })
    expect(recall.b.value).toBeCloseTo(2.5 / 3, 12)
    expect(recall.comparison.delta).toBeCloseTo(1 / 3, 12)
    // two equal non-zero differences keep one sign in 2 of 4 patterns
    expect(Math.abs(recall.comparison.p - 0.5)).toBeLessThan(0.04)
    expect(row(cellB.id, "retrieval.recall", "consistent").comparison.n).toBe(1)
    // an unchanged cell: no difference anywhere
    for (const r of c.rows.filter((x) => x.match.a.id === cellA.id)) {
      expect(r.comparison.delta).toBe(0)
      expect(r.comparison.p).toBe(1)
    }
    // micro F1: the two cells' counts agree on the three shared instances
    const f1 = row(cellB.id, "inference.f1_micro", "all")
    expect(f1.a.value).toBeCloseTo(f1.b.value, 12)
    expect(f1.comparison.delta).toBeCloseTo(0, 12)
  })

  it("applies Holm over every comparison and lists what differs in the data and the metrics' definitions", () => {
    expect(c.rows).toHaveLength(2 * 2 * 4)
    expect(c.tests).toBe(16)
    for (const r of c.rows) expect(r.pAdjusted).toBeGreaterThanOrEqual(r.comparison.p)
    // These hand-made runs record no scoring (as runs before cells[].scoring): unknown, not a difference.
    expect(c.differences.map((d) => [d.field, d.kind, d.cells])).toEqual([
      ["data fingerprint", "differs", []],
      ["definition of retrieval.recall", "differs", []],
      ["scorers' settings and models", "unknown", []]
    ])
    expect(c.differences[1]!.second).toBe("Recall, another definition.")
  })

  it.effect(
    "refuses runs that differ unless allowed, then writes compare.md and compare.html, the same bytes every time",
    () =>
      Effect.gen(function* () {
        const out = tempDir("cmp-out")
        const refused = yield* Effect.flip(Compare.write(a, b, out))
        expect(refused.message).toContain(`${a} and ${b} differ in what makes their numbers comparable`)
        expect(refused.message).toContain("  data fingerprint: first tiny, ")
        expect(refused.message).toContain(", second tiny, beef\n")
        const allow = { allowMismatch: true }
        const files = yield* Compare.write(a, b, out, allow)
        const first = [fs.readFileSync(files.markdown, "utf8"), fs.readFileSync(files.html, "utf8")]
        yield* Compare.write(a, b, out, allow)
        expect([fs.readFileSync(files.markdown, "utf8"), fs.readFileSync(files.html, "utf8")]).toEqual(first)
        const md = first[0]!
        expect(md).toContain("# Comparison: before vs after\n\n## What differs between the runs\n")
        expect(md).toContain("Unknown: scorers' settings and models (every matched cell): first run not recorded")
        expect(md).toContain(
          "| definition of retrieval.recall | Relevant selected / relevant. | Recall, another definition. | all |"
        )
        expect(md).toContain("- Only in the first run: recency")
        expect(md).toMatch(/\| bm25\(k=2\) \| 0\.500 → 0\.833: \+0\.333 \[/)
        expect(md).toContain(
          "Holm's correction over all 16 tests of this comparison (2 matched cells x 2 metrics x 4 slices)"
        )
        // the chart plots the main metric, which the comparison lists first
        expect(c.metrics.map((m) => m.name)).toHaveLength(2)
        expect(first[1]).toContain(`${c.metrics[0]!.name}: first and second run`)
        expect(first[1]).not.toContain(`${c.metrics[1]!.name}: first and second run`)
      }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("the compare and report commands", () => {
  const io = () => {
    const out: Array<string> = [],
      err: Array<string> = []
    return {
      out,
      err,
      io: {
        stop: { stopped: false },
        configDirs: [],
        stdout: (t: string) => void out.push(t),
        stderr: { write: (t: string) => err.push(t) }
      }
    }
  }

  it.effect("compare --runs a,b --out dir writes both files and prints where", () =>
    Effect.gen(function* () {
      const { a, b } = runs()
      const target = path.join(tempDir("cmp-cli"), "x")
      const t = io()
      const code = yield* Commands.main(["compare", "--runs", `${a},${b}`, "--out", target, "--allow-mismatch"], t.io)
      expect(code).toBe(0)
      expect(t.err.join("")).toContain(
        "warning: the runs differ in data fingerprint, definition of retrieval.recall; compared anyway (--allow-mismatch)"
      )
      expect(t.out.join("")).toBe(
        `compare: ${path.join(target, "compare.md")}\ncompare: ${path.join(target, "compare.html")}\n`
      )
      expect(fs.existsSync(path.join(target, "compare.html"))).toBe(true)
    })
  )

  it.effect("compare needs exactly two runs, and names a missing one", () =>
    Effect.gen(function* () {
      const t = io()
      expect(yield* Commands.main(["compare", "--runs", "only-one"], t.io)).toBe(2)
      expect(t.err.join("")).toContain("compare needs --runs <first run>,<second run>")
      const { a } = runs()
      const t2 = io()
      expect(
        yield* Commands.main(["compare", "--runs", `${a},/nonexistent/run`, "--out", tempDir("cmp-miss")], t2.io)
      ).toBe(1)
      expect(t2.err.join("")).toContain("/nonexistent/run: not a run directory")
    })
  )

  it.effect("report --run dir --baseline name rewrites the three files against that baseline", () =>
    Effect.gen(function* () {
      const { a } = runs()
      const t = io()
      const code = yield* Commands.main(["report", "--run", a, "--baseline", "bm25(k=2)"], t.io)
      expect(code).toBe(0)
      expect(t.out.join("")).toBe(
        `report: ${path.join(a, "report.md")}\nreport: ${path.join(a, "report.html")}\nresults: ${path.join(a, "results.csv")}\nresults: ${path.join(a, "results.parquet")}\n`
      )
      const md = fs.readFileSync(path.join(a, "report.md"), "utf8")
      expect(md).toContain("- Baseline: bm25(k=2) (chosen on the command line)")
      expect(fs.readFileSync(path.join(a, "results.csv"), "utf8").split("\r\n")).toHaveLength(3 * 4 + 2)
    })
  )
})

describe("compare any cell of one run with any cell of another", () => {
  it("pairs the two cells --cell-a and --cell-b name, by id, id prefix, name or position", async () => {
    const ra = await runPromise(RunDir.read(a)),
      rb = await runPromise(RunDir.read(b))
    const chosen = Compare.compare(ra, rb, { cells: { a: "@2", b: cellA.id.slice(0, 6) } })
    expect(chosen.matches.map((m) => [m.a.name, m.b.name, m.by])).toEqual([["bm25(k=2)", "all", "chosen"]])
    expect(chosen.onlyA.map((x) => x.name)).toEqual(["all", "recency"])
    expect(chosen.rows.every((r) => r.match.a.id === cellB.id && r.match.b.id === cellA.id)).toBe(true)
    // the same run twice: two of its own cells
    const self = Compare.compare(ra, ra, { cells: { a: "all", b: "bm25(k=2)" } })
    expect(self.matches.map((m) => [m.a.name, m.b.name])).toEqual([["all", "bm25(k=2)"]])
    const why = (selector: string) =>
      Either.getLeft(Analysis.findCell(ra.summary.cells, selector)).pipe(Option.getOrThrow)
    expect(why("@9")).toMatch(/^no cell @9: the run has 3 \(@1 all \(aaaa000000000001\); @2 bm25\(k=2\)/)
    expect(why("zzzz")).toMatch(/^no cell "zzzz" \(by id, id prefix of 4\+ characters, name, or @k\); cells: @1 all/)
    expect(() => Compare.compare(ra, rb, { cells: { a: "all", b: "nope" } })).toThrow(/--cell-b: no cell "nope"/)
  })
})
