import { Paired } from "@cupid-lab/scorers"
import { NodeTest } from "@cupid-lab/core/testing"
import { Errors, Exports, Columns, RunDir } from "@cupid-lab/results"
import { Analysis, Format, Report } from "@cupid-lab/report"

import { describe, expect } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

import { cellA, cellB, dataset, line, parseRows, tempDir, writeRun } from "./report-fixtures.js"
import { runPromise } from "./support.js"

const f1 = (p: number, r: number) => (p + r === 0 ? 0 : (2 * p * r) / (p + r))

/** Exact two-sided paired permutation p of a pooled F1 difference: every one of the 2^n swaps. */
const exactPooledP = (a: ReadonlyArray<ReadonlyArray<number>>, b: ReadonlyArray<ReadonlyArray<number>>): number => {
  const stat = (rows: ReadonlyArray<ReadonlyArray<number>>) => {
    const s = [0, 0, 0, 0]
    for (const r of rows) r.forEach((x, k) => (s[k]! += x))
    return f1(s[0]! / s[1]!, s[2]! / s[3]!)
  }
  const observed = Math.abs(stat(b) - stat(a))
  let extreme = 0
  const n = a.length
  for (let mask = 0; mask < 1 << n; mask++) {
    const x = a.map((r, i) => ((mask >> i) & 1 ? b[i]! : r))
    const y = b.map((r, i) => ((mask >> i) & 1 ? a[i]! : r))
    if (Math.abs(stat(y) - stat(x)) >= observed - 1e-12) extreme++
  }
  return extreme / (1 << n)
}

const tiny = () => {
  const dir = tempDir("report")
  writeRun(dir, { cells: [cellA, cellB] })
  return { dir, run: runPromise(RunDir.read(dir)) }
}
/** A tiny run read back, for synchronous tests. */
const tinyRun = await tiny().run

describe("report analysis on a hand-made run (2 cells x 4 instances)", () => {
  const run = tinyRun
  const a = Analysis.analyze(run)
  const delta = (metric: string, slice: string) =>
    a.deltas.find((d) => d.cell === cellB.id && d.metric === metric && d.slice === slice)!

  NodeTest.it("takes the baseline from the run and the headline metrics from the scorers", () => {
    expect(a.baseline.id).toBe(cellA.id)
    // every cell's inferrer is extractive (heuristic): the exact retrieval metric leads
    expect(a.main?.name).toBe("retrieval.recall")
    expect(a.mainReason).toBe(
      "inference.f1_micro is computed by a heuristic (no model produced any inference), so the first exact candidate leads; inference.f1_micro is shown as secondary, marked"
    )
    expect(a.inference.map((m) => m.name)).toEqual([
      "inference.precision_micro",
      "inference.recall_micro",
      "inference.f1_micro"
    ])
    // inference precision and recall are tabled with CIs, not tested: the Holm family stays small
    // the main metric first: the heuristic inference F1 was passed over for it
    expect(a.compared.map((m) => m.name)).toEqual(["retrieval.recall", "inference.f1_micro"])
  })

  NodeTest.it("tables show the pooled and mean values with their N", () => {
    const all = (id: string) => run.summary.cells.find((c) => c.id === id)!.slices.all.metrics
    // A: precision 4/6, recall 4/8, micro F1 = 2 (2/3)(1/2) / (7/6) = 4/7; macro F1 = (0.4 + 1 + 0 + 1) / 4
    expect(all(cellA.id)["inference.precision_micro"]!.mean).toBeCloseTo(4 / 6, 12)
    expect(all(cellA.id)["inference.recall_micro"]!.mean).toBeCloseTo(0.5, 12)
    expect(all(cellA.id)["inference.f1_micro"]!.mean).toBeCloseTo(4 / 7, 12)
    expect(all(cellA.id)["inference.f1"]!.mean).toBeCloseTo(0.6, 12)
    // B: 2/6, 2/8, F1 2/7; macro (0 + 0.5 + 2/3 + 0) / 4
    expect(all(cellB.id)["inference.f1_micro"]!.mean).toBeCloseTo(2 / 7, 12)
    expect(all(cellB.id)["inference.f1"]!.mean).toBeCloseTo((0.5 + 2 / 3) / 4, 12)
    expect(all(cellB.id)["retrieval.recall"]).toMatchObject({ n: 4, mean: 0.5 })
  })

  NodeTest.it(
    "differences are paired over the instances both cells scored, with the CI inside the range of the data",
    () => {
      const recall = delta("retrieval.recall", "all")
      // per-instance differences -0.5, 0, -1, -0.5
      expect(recall.comparison.n).toBe(4)
      expect(recall.comparison.delta).toBeCloseTo(-0.5, 12)
      expect(recall.comparison.ci95[0]).toBeGreaterThanOrEqual(-1)
      expect(recall.comparison.ci95[1]).toBeLessThanOrEqual(0)
      expect(recall.comparison.ci95[0]).toBeLessThanOrEqual(-0.5)
      // persona p1 has three instances on this slice: its instances move together. Persona sums
      // -1.5 (p1) and -0.5 (p2); |sum| >= 2 only when both keep one sign: 2 of 4 patterns
      expect(recall.comparison).toMatchObject({ clusters: 2, test: "exact", permutations: 4, p: 0.5 })
      // both personas' mean difference is -0.5: every persona resample gives -0.5
      expect(recall.comparison.ci95).toEqual([-0.5, -0.5])

      const consistent = delta("retrieval.recall", "consistent")
      expect(consistent.comparison).toMatchObject({ n: 2, delta: -0.5, ci95: [-0.5, -0.5] })
      // two equal differences: same sign in 2 of 4 patterns
      expect(consistent.comparison.p).toBe(0.5)

      // one instance: nothing to permute
      expect(delta("retrieval.recall", "changing").comparison).toMatchObject({ n: 1, delta: -1, p: 1 })
      expect(delta("retrieval.recall", "contrastive").comparison).toMatchObject({ n: 1, delta: 0, p: 1 })
    }
  )

  NodeTest.it("micro F1 differences recompute the pooled statistic, and the permutation test swaps counts", () => {
    const ids = ["p1:consistent", "p1:contrastive", "p1:changing", "p2:consistent"]
    const d = delta("inference.f1_micro", "all")
    expect(d.comparison.n).toBe(4)
    expect(d.comparison.delta).toBeCloseTo(2 / 7 - 4 / 7, 12)
    // the swap test moves persona p1's three instances together: its counts summed, then swapped
    const byPersona = (rows: ReadonlyArray<ReadonlyArray<number>>) => [
      rows.slice(0, 3).reduce((s, r) => s.map((x, k) => x + r[k]!)),
      rows[3]!
    ]
    const rowsA = byPersona(cellA.results.map((r) => ("counts" in r ? [...r.counts] : [])))
    const rowsB = byPersona(cellB.results.map((r) => ("counts" in r ? [...r.counts] : [])))
    expect(rowsA).toEqual([
      [3, 5, 3, 7],
      [1, 1, 1, 1]
    ])
    const exact = exactPooledP(rowsA, rowsB)
    expect(d.comparison).toMatchObject({ test: "exact", clusters: 2, permutations: 4 })
    expect(d.comparison.p).toBeCloseTo(exact, 12)
    // consistent: A pools (2/3, 2/4) -> 4/7, B pools (0/3, 0/4) -> 0
    expect(delta("inference.f1_micro", "consistent").comparison.delta).toBeCloseTo(-4 / 7, 12)
    // precision is pooled too: 2/6 - 4/6
    const precisionMetric = run.summary.metrics.find((m) => m.name === "inference.precision_micro")!
    const idx = run.index
    const precision = Paired.compare(
      Columns.columnsOf(idx, cellA.id, Columns.numbers(idx, ids))(precisionMetric),
      Columns.columnsOf(idx, cellB.id, Columns.numbers(idx, ids))(precisionMetric),
      { seed: 7, resamples: 100, permutations: 100 }
    )
    expect(precision.delta).toBeCloseTo(-1 / 3, 12)
  })

  NodeTest.it("adjusts the primary family (main metric, every slice) with Holm and the exploratory one with BH", () => {
    expect(a.deltas).toHaveLength(8)
    expect(a.families.primary.tests + a.families.exploratory.tests).toBe(8)
    // n <= 4 everywhere: every test is exact
    expect(a.permutations).toEqual({ screening: 2000, refined: 2000, refinedTests: 0, exactTests: 8, normalTests: 0 })
    const primary = a.deltas.filter((d) => d.family === "primary")
    expect(primary.map((d) => [d.metric, d.slice])).toEqual([
      ["retrieval.recall", "all"],
      ["retrieval.recall", "consistent"],
      ["retrieval.recall", "contrastive"],
      ["retrieval.recall", "changing"]
    ])
    expect(a.families.primary).toMatchObject({ correction: "holm", tests: 4, level: 0.0125 })
    expect(a.families.exploratory).toMatchObject({ correction: "bh", tests: 4 })
    // primary p: 0.5 (all: 2 personas), 0.5 (consistent: two equal differences), 1, 1. Holm: 4 x 0.5 -> 1, then 1s
    expect(primary.map((d) => d.comparison.p)).toEqual([0.5, 0.5, 1, 1])
    expect(primary.map((d) => d.pAdjusted)).toEqual([1, 1, 1, 1])
    // exploratory: BH over the four F1 p-values, by hand: m p_(k) / k, running minimum from the top
    const explore = a.deltas.filter((d) => d.family === "exploratory")
    const ps = explore.map((d) => d.comparison.p)
    const order = ps.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0])
    const expected = new Array<number>(ps.length)
    let running = 1
    for (let k = order.length - 1; k >= 0; k--) {
      running = Math.min(running, (ps.length * order[k]![0]) / (k + 1))
      expected[order[k]![1]] = running
    }
    explore.forEach((d, i) => expect(d.pAdjusted).toBeCloseTo(expected[i]!, 12))
    expect(explore.every((d) => d.correction === "bh")).toBe(true)
    for (const d of a.deltas) {
      expect(d.pAdjusted).toBeGreaterThanOrEqual(d.comparison.p)
      expect(d.pAdjusted).toBeLessThanOrEqual(1)
    }
  })

  NodeTest.it(
    "takes the main metric named on the command line or in the run, and names the valid ones otherwise",
    () => {
      const f1 = Analysis.analyze(run, { main: "inference.f1_micro" })
      expect([f1.main?.name, f1.mainReason]).toEqual(["inference.f1_micro", "chosen on the command line"])
      const configured = Analysis.analyze({ ...run, summary: { ...run.summary, main: "inference.f1" } })
      expect([configured.main?.name, configured.mainReason]).toEqual([
        "inference.f1",
        "set by the config (report.main)"
      ])
      expect(() => Analysis.analyze(run, { main: "f1" })).toThrow(
        /main metric "f1" is not a metric of this run; valid names: retrieval\.recall, inference\.f1, /
      )
      // a model-made inference keeps the scorers' first-ranked candidate
      const modelMade = {
        ...run.summary,
        cells: run.summary.cells.map((c) => ({ ...c, heuristicStages: [] })),
        metrics: run.summary.metrics.map((m) => ({ ...m, heuristic: false }))
      }
      expect(Analysis.analyze({ ...run, summary: modelMade }).main?.name).toBe("inference.f1_micro")
    }
  )

  NodeTest.it("bins instances by relevant-session position and by history length", () => {
    const a = Analysis.analyze(run, { main: "inference.f1_micro" })
    const recency = a.recency!
    expect(recency.bins.map((b) => [b.label, b.instances])).toEqual([
      ["1–<3", 1],
      ["3–<5", 1],
      ["5–<7", 1],
      ["7–8", 1]
    ])
    // p1:consistent (position 1.5): A pools (1/2, 1/3) -> F1 0.4; B (0/1, 0/3) -> 0
    expect(recency.bins[0]!.values.get(cellA.id)!.value).toBeCloseTo(0.4, 12)
    expect(recency.bins[0]!.values.get(cellB.id)).toEqual({ n: 1, value: 0 })
    // p1:changing (position 7.5): B (1/1, 1/2) -> 2/3
    expect(recency.bins[3]!.values.get(cellB.id)!.value).toBeCloseTo(2 / 3, 12)
    const history = a.history!
    expect(history.bins.map((b) => b.label)).toEqual(["100–100", "200–200", "300–300", "400–400"])
    expect(history.bins[1]!.values.get(cellB.id)!.value).toBeCloseTo(2 / 3, 12)
  })

  NodeTest.it("counts the pipeline's calls and tokens per cell and per model", () => {
    expect(a.cost.map((c) => [c.pairs, c.calls, c.promptTokens, c.completionTokens])).toEqual([
      [4, 8, 400, 40],
      [4, 4, 160, 20]
    ])
    expect(a.models).toEqual([{ id: "openai/gpt-4o-mini", calls: 12, promptTokens: 560, completionTokens: 60 }])
  })

  NodeTest.it("chooses the baseline on request, by name or id, and names the cells when the choice is unknown", () => {
    expect(Analysis.analyze(run, { baseline: "bm25(k=2)" }).baseline.id).toBe(cellB.id)
    expect(Analysis.analyze(run, { baseline: cellB.id }).deltas.every((d) => d.cell === cellA.id)).toBe(true)
    expect(() => Analysis.analyze(run, { baseline: "nope" })).toThrow(
      /baseline "nope" is not a cell of this run: no cell "nope" \(by id, id prefix of 4\+ characters, name, or @k\); cells: @1 all \(aaaa000000000001\); @2 bm25\(k=2\) \(bbbb000000000002\)/
    )
    // names with shell-hostile characters can be avoided: a position or an id prefix
    expect(Analysis.analyze(run, { baseline: "@2" }).baseline.id).toBe(cellB.id)
    expect(Analysis.analyze(run, { baseline: "bbbb00" }).baseline.id).toBe(cellB.id)
    const reordered = { ...run.summary, baseline: "not a cell", cells: [...run.summary.cells].reverse() }
    expect(Analysis.chooseBaseline(reordered)).toEqual({
      cell: reordered.cells[0],
      reason: "the first cell (the run's baseline is not one of its cells)"
    })
  })
})

describe("report.md", () => {
  NodeTest.it.effect("puts the paper's layout, the differences and their families into the Markdown", () =>
    Effect.gen(function* () {
      const run = yield* Effect.promise(() => tiny().run)
      const r = yield* Report.render(run, { openDataset: dataset() })
      const md = r.markdown
      // all leads every column on all instances (bold), bm25 on changing
      expect(md).toMatch(
        /\| all \(baseline\) \| 4 \| \*\*0\.667\*\* \| \*\*0\.500\*\* \| \*\*0\.571 \[\d\.\d{3}, \d\.\d{3}\]\*\* \| \*\*0\.600\*\* \|/
      )
      expect(md).toContain("| bm25(k=2) | 4 | 0.333 | 0.250 | 0.286 [0.000, 0.364] | 0.292 |") // 2 personas resampled: pooled F1 of (A, A), (A, B) and (B, B)
      expect(md).toContain("| bm25(k=2) | 1 | **1.000** | **0.500** | **0.667 [n/a]** | **0.667** |")
      expect(md).toMatch(/\| bm25\(k=2\) \| 4 \| 0\.333 \| 0\.250 \| 0\.286 \[/)
      expect(md).toContain(
        "Families: primary = retrieval.recall on all instances, consistent instances, contrastive instances, changing instances, each cell against the baseline, 4 tests, Holm; exploratory = every other difference, 4 tests, Benjamini-Hochberg; not tested (interval only): cells that read gold labels."
      )
      // 2 personas: 2 / 2^2 times 4 primary tests cannot pass 0.05; 2^(n-1) > 80 needs n = 8
      expect(md).toContain(
        "> all instances: no difference can reach significance here. The pairs share at most n = 2 instances (or personas, where clustered), whose smallest exact two-sided p is 2/2^2 = 0.500; Holm over 4 tests multiplies it by 4, past 0.05. That takes at least 8 per slice (or fewer tests)."
      )
      expect(md).toContain("## Every cell against every other")
      expect(md).toMatch(/\| 1 \| all \(baseline\) \| 1\.000 \| 0\.571 \|/)
      expect(md).toContain(
        "1 cells x 2 metrics (retrieval.recall, inference.f1_micro) x 4 slices, in declared families"
      )
      expect(md).toContain(
        "| bm25(k=2) | -0.500 [-0.500, -0.500] p=0.500 Holm=1.000 n=4 (primary, MDE 0.000) | -0.500 [-0.500, -0.500] p=0.500 Holm=1.000 n=2 (primary, MDE 0.000) | 0.000 [n/a] p=1.000 Holm=1.000 n=1 (primary) | -1.000 [n/a] p=1.000 Holm=1.000 n=1 (primary) |"
      )
      expect(md).toMatch(
        /\| bm25\(k=2\) \| -0\.286 \[-\d\.\d{3}, -\d\.\d{3}\] p=0\.500 BH=1\.000 n=4 \(exploratory\) \|/
      )
      expect(md).toContain("| cell | 1–&lt;3 (1 inst.) | 3–&lt;5 (1 inst.) | 5–&lt;7 (1 inst.) | 7–8 (1 inst.) |")
      expect(md).toContain(
        "- Models called: `openai/gpt-4o-mini` (12 calls answered by the model or the cache, 620 tokens)"
      )
      expect(md).toContain("### p1:consistent (consistent)")
      expect(md).toContain("  - s1 (relevant): Session 1 opening")
    })
  )

  NodeTest.it.effect("leaves examples out, and says why, when the dataset changed since the run", () =>
    Effect.gen(function* () {
      const run = yield* Effect.promise(() => tiny().run)
      const r = yield* Report.render(run, { openDataset: dataset({ hash: "other" }) })
      expect(r.markdown).toContain("No examples: the dataset at tiny changed since the run")
      expect(r.analysis.deltas).toHaveLength(8)
    })
  )

  NodeTest.it.effect("is byte-identical across renders and ignores run.json, which only report.html shows", () =>
    Effect.gen(function* () {
      const dir = tempDir("report-det")
      writeRun(dir, {
        cells: [cellA, cellB],
        runInfo: { startedAt: "2026-01-01T00:00:00.000Z", durationMs: 1200, cache: { hits: 3, misses: 1, writes: 1 } }
      })
      const read = () =>
        ["report.md", "report.html", "results.csv"].map((f) => fs.readFileSync(path.join(dir, f), "utf8"))
      yield* Report.write(dir, { openDataset: dataset() })
      const first = read()
      yield* Report.write(dir, { openDataset: dataset() })
      expect(read()).toEqual(first)
      fs.writeFileSync(
        path.join(dir, "run.json"),
        JSON.stringify({
          startedAt: "2026-02-02T00:00:00.000Z",
          durationMs: 999,
          cache: { hits: 9, misses: 0, writes: 0 }
        })
      )
      yield* Report.write(dir, { openDataset: dataset() })
      const third = read()
      expect(third[0]).toBe(first[0])
      expect(third[2]).toBe(first[2])
      expect(third[1]).not.toBe(first[1])
      expect(third[1]).toContain("9 hits, 0 misses, 0 writes")
      expect(first[1]).toContain("3 hits, 1 misses, 1 writes")
    }).pipe(Effect.provide(NodeContext.layer))
  )

  NodeTest.it(
    "reads an older run.json, which repeated the run's identity and counts, ignoring what it repeated",
    () => {
      const older = {
        startedAt: "2026-01-01T00:00:00.000Z",
        config: { file: "configs/contextual.yaml", name: "contextual", hash: "abc" },
        dataset: { source: "sample", resolved: "/data/sample.jsonl", fingerprint: "f00", instances: 3, skipped: 0 },
        cells: 2
      }
      expect(Either.getOrThrow(RunDir.parseInfo(older, "run.json"))).toEqual({
        startedAt: "2026-01-01T00:00:00.000Z",
        config: { file: "configs/contextual.yaml" },
        dataset: { resolved: "/data/sample.jsonl" }
      })
    }
  )
})

describe("results.csv", () => {
  NodeTest.it("writes one RFC 4180 row per (cell, instance), metrics as sorted columns, counts as two columns", () => {
    const ok = { ...cellA, results: [{ recall: 1, counts: [1, 2, 1, 2] as const }] }
    const bad = {
      ...cellB,
      id: "cccc000000000003",
      name: 'bm25, "tuned"',
      results: [{ recall: 1, counts: [1, 1, 1, 1] as const }, { error: 'timeout, after "3" tries\nretry later' }]
    }
    const text = [line(ok, 0), line(bad, 1)].map((l) => JSON.stringify(l)).join("\n")
    const csv = Exports.csv(Either.getOrThrow(parseRows(text, "results.jsonl")))
    expect(csv).toBe(
      "cell,cell_name,instance,persona_id,type,status,selected,inference.f1,inference.precision_micro.num,inference.precision_micro.den,inference.recall_micro.num,inference.recall_micro.den,retrieval.recall,calls,prompt_tokens,completion_tokens,error_stage,error_plugin,error_message\r\n" +
        "aaaa000000000001,all,p1:consistent,p1,consistent,ok,s1 s2,0.5,1,2,1,2,1,2,100,10,,,\r\n" +
        'cccc000000000003,"bm25, ""tuned""",p1:contrastive,p1,contrastive,failed,,,,,,,,1,40,5,infer,llm,"timeout, after ""3"" tries\nretry later"\r\n'
    )
  })

  NodeTest.it("guards text a spreadsheet would run as a formula, and leaves numbers alone", () => {
    expect(Exports.field('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`)
    expect(Exports.field("+1+1")).toBe("'+1+1")
    expect(Exports.field("-2")).toBe("'-2")
    expect(Exports.field("@SUM(A1)")).toBe("'@SUM(A1)")
    expect(Exports.field("\tcmd")).toBe("'\tcmd")
    expect(Exports.field("a=b")).toBe("a=b")
    const hostileName = {
      ...cellA,
      name: "=cmd|' /C calc'!A0",
      results: [{ recall: -0.5, counts: [1, 2, 1, 2] as const }]
    }
    const row = Exports.csv(Either.getOrThrow(parseRows(JSON.stringify(line(hostileName, 0)), "results.jsonl"))).split(
      "\r\n"
    )[1]
    expect(row).toBe(
      "aaaa000000000001,'=cmd|' /C calc'!A0,p1:consistent,p1,consistent,ok,s1 s2,0.5,1,2,1,2,-0.5,2,100,10,,,"
    )
  })

  NodeTest.it("quotes only the fields that need it", () => {
    expect(Exports.field("plain")).toBe("plain")
    expect(Exports.field("a,b")).toBe('"a,b"')
    expect(Exports.field('say "hi"')).toBe('"say ""hi"""')
    expect(Exports.field("two\r\nlines")).toBe('"two\r\nlines"')
  })
})

describe("reading a run directory", () => {
  NodeTest.it("names the file, the line and the field of a malformed result line", () => {
    const good = JSON.stringify(line(cellA, 0))
    const bad = JSON.stringify({ ...line(cellA, 1), scores: { "retrieval.recall": "high" } })
    const problem = (text: string, file: string) => {
      const parsed = parseRows(text, file)
      if (Either.isRight(parsed)) throw new Error("expected a problem")
      expect(parsed.left).toBeInstanceOf(Errors.RunError)
      return parsed.left.message
    }
    expect(problem(`${good}\n${bad}\n`, "runs/x/results.jsonl")).toMatch(
      /runs\/x\/results\.jsonl: line 2: field scores\.retrieval\.recall: Expected number/
    )
    expect(problem(`${good}\n{not json\n`, "r.jsonl")).toMatch(/r\.jsonl: line 2: not valid JSON/)
    // Any benchmark's instance type is a string (CUPID's three, LongMemEval's question types, ...).
    expect(problem(JSON.stringify({ ...line(cellA, 0), type: 5 }), "r.jsonl")).toMatch(
      /line 1: field type: Expected string/
    )
  })

  NodeTest.it.effect(
    "says what is missing from a directory that is not a finished run, and names a line cut short",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("not-a-run")
        const failure = (d: string) => Effect.map(Effect.flip(RunDir.read(d)), (e) => e.message)
        expect(yield* failure(dir)).toMatch(/summary\.json: missing; a sweep writes it when it finishes/)
        expect(yield* failure(path.join(dir, "nope"))).toMatch(/not a run directory/)
        fs.writeFileSync(path.join(dir, "summary.json"), "{}")
        fs.writeFileSync(path.join(dir, "results.jsonl"), "")
        expect(yield* failure(dir)).toMatch(/summary\.json: field config: is missing/)
        const full = tempDir("cut-short")
        writeRun(full, { cells: [cellA, cellB] })
        const results = path.join(full, "results.jsonl")
        fs.writeFileSync(results, fs.readFileSync(results, "utf8").replace(/\n$/, ""))
        expect(yield* failure(full)).toMatch(/results\.jsonl: line 8: cut short \(no newline at the end of the file\)/)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  NodeTest.it.effect("fails the report with a RunError naming the directory", () =>
    Effect.gen(function* () {
      const dir = tempDir("empty-run")
      const error = yield* Effect.flip(Report.write(dir))
      expect(error).toBeInstanceOf(Errors.RunError)
      expect(error.message).toContain(path.join(dir, "summary.json"))
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("paired statistics and formatting", () => {
  NodeTest.it("columns of a metric are typed by its aggregate: values, counts, or the two ratios of an F1", () => {
    const run = tinyRun
    const idx = run.index
    const ids = ["p1:consistent", "p1:changing", "missing"]
    const cols = Columns.columnsOf(idx, cellB.id, Columns.numbers(idx, ids))
    const byName = (name: string) => run.summary.metrics.find((m) => m.name === name)!
    const recall = cols(byName("retrieval.recall"))
    expect(recall._tag).toBe("Mean")
    if (recall._tag === "Mean") expect(Array.from(recall.values)).toEqual([0.5, 0, NaN])
    const f1 = cols(byName("inference.f1_micro"))
    expect(f1._tag).toBe("F1")
    if (f1._tag === "F1") {
      // cell B: p1:consistent counts [0, 1, 0, 3], p1:changing [1, 1, 1, 2]
      expect([...Array.from(f1.precision.num), ...Array.from(f1.precision.den)]).toEqual([0, 1, NaN, 1, 1, NaN])
      expect([...Array.from(f1.recall.num), ...Array.from(f1.recall.den)]).toEqual([0, 1, NaN, 3, 2, NaN])
    }
    // F1 of pooled (1/2, 1/5) over the two instances scored: 2 * 0.5 * 0.2 / 0.7
    expect(Paired.value(f1)).toEqual({ n: 2, value: expect.closeTo(0.2 / 0.7, 12) })
  })

  NodeTest.it("formats numbers without locale, negative zero or missing values", () => {
    expect([
      Format.number(0.12345),
      Format.number(12.34),
      Format.number(12345.6),
      Format.number(-0.0001),
      Format.number(null)
    ]).toEqual(["0.123", "12.3", "12346", "0.000", "–"])
    expect([Format.signed(0.5), Format.signed(-0.5), Format.signed(0)]).toEqual(["+0.500", "-0.500", "0.000"])
    expect([Format.p(0.04321), Format.p(0.00018), Format.p(NaN)]).toEqual(["0.043", "1.8e-4", "–"])
    expect(Format.integer(1234567)).toBe("1,234,567")
    expect(Format.html(`<a href="x" onclick='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;"
    )
  })
})
