// One grid over several data sources: `sweep: { data.source: [...] }` runs the grid once per source,
// each in its own run directory exactly as a run on that source alone, and benchmarks.md puts them
// side by side with N, never averaged. Through the compiled CLI.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Either } from "effect"
import { beforeAll, describe, expect, it } from "vitest"
import { Subprocess } from "@cupid-lab/core/testing"
import { Config } from "@cupid-lab/runner"
import { Benchmarks } from "@cupid-lab/report"

import { cellA, cellB, writeRun } from "./report-fixtures.js"
import { buildCli } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-benchmarks-"))
const synthetic = "synthetic:personas=2,seed=4"
// A LongMemEval file in its published format (written for the tests): four questions of four types.
const longmemeval = `longmemeval:${path.join(repo, "packages", "data", "test", "fixtures", "longmemeval", "longmemeval_s_tiny.json")}`

const grid = `name: multi
data: { source: sample, limit: 6 }
seed: 1
pipeline: { retriever: all, inferrer: extractive }
scorers: [{ use: retrieval, ks: [2] }]
concurrency: 2
`
const write = (name: string, text: string) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}
const cupid = (...args: Array<string>) =>
  Subprocess.run(process.execPath, [cli, ...args], {
    cwd: dir,
    env: { ...process.env, FORCE_COLOR: "0", CUPID_CACHE_DIR: path.join(dir, "cache") }
  })

beforeAll(buildCli)

describe("sweep: { data.source: [...] }", () => {
  it("is read as the list of sources, refused when it is not one, and --data runs one source", () => {
    const parse = (sweep: string) =>
      Effect.runSync(
        Effect.either(Config.parse(`${grid}sweep:\n  retriever: [all, oracle]\n  ${sweep}\n`, "multi.yaml", {}))
      )
    const ok = parse(`data.source: [sample, "${synthetic}"]`)
    const c = Either.getOrThrow(ok)
    expect(c.sources).toEqual(["sample", synthetic])
    expect(c.sweep.map((a) => a.key)).toEqual(["retriever"])
    expect(Config.withOverrides(c, { data: "sample" }).sources).toEqual([])
    const problem = (sweep: string) => Either.match(parse(sweep), { onLeft: (e) => e.message, onRight: () => "" })
    expect(problem("data.source: [sample]")).toContain(
      `sweep.data.source: expected a list of two or more data sources (sample, a file, longmemeval:<file>, locomo:<file>, ...), got ["sample"]`
    )
    expect(problem("data.source: [sample, sample]")).toContain(`sweep.data.source: the source "sample" is listed twice`)
  })

  it("runs the grid once per source, each run the same as on that source alone, and writes benchmarks.md side by side", async () => {
    const out = path.join(dir, "runs")
    const config = write(
      "multi.yaml",
      `${grid}out: ${JSON.stringify(out)}\nsweep:\n  data.source: [sample, ${JSON.stringify(longmemeval)}]\n  retriever: [all, { use: bm25, k: 2 }, oracle]\n`
    )
    const r = await cupid("sweep", "--config", config)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toContain(`data source 1 of 2: sample`)
    expect(r.stderr).toContain(`data source 2 of 2: ${longmemeval}`)
    const second = `2-${longmemeval
      .replace(/[^A-Za-z0-9._=-]+/g, "_")
      .replace(/^[_.]+|_+$/g, "")
      .slice(0, 80)}`
    const dirs = fs.readdirSync(out).sort()
    expect(dirs).toEqual(["1-sample", second, "benchmarks.md"])

    // The same as a run on one source alone.
    for (const [sub, source] of [
      ["1-sample", "sample"],
      [second, longmemeval]
    ] as const) {
      const alone = path.join(dir, `alone-${sub}`)
      const single = await cupid(
        "sweep",
        "--config",
        write("single.yaml", `${grid}sweep:\n  retriever: [all, { use: bm25, k: 2 }, oracle]\n`),
        "--data",
        source,
        "--out",
        alone
      )
      expect(single.code, single.stderr).toBe(0)
      for (const f of ["summary.json", "results.jsonl", "report.md"]) {
        expect(fs.readFileSync(path.join(out, sub, f), "utf8"), `${sub}/${f}`).toBe(
          fs.readFileSync(path.join(alone, f), "utf8")
        )
      }
    }

    const md = fs.readFileSync(path.join(out, "benchmarks.md"), "utf8")
    type Slice = { n: number; metrics: Record<string, { mean: number | null; n: number }> }
    const summaries = ["1-sample", second].map(
      (s) =>
        JSON.parse(fs.readFileSync(path.join(out, s, "summary.json"), "utf8")) as {
          cells: Array<{ name: string; slices: { all: Slice }; types?: Record<string, Slice> }>
        }
    )
    expect(md).toContain("values of different sources are never averaged")
    expect(md).toContain("1. `sample`: 6 instances, main metric retrieval.f1 (higher is better)")
    expect(md).toContain(`2. \`${longmemeval}\`: 4 instances, main metric retrieval.f1 (higher is better)`)
    const header = md.split("\n").find((l) => l.startsWith("| cell |"))!
    // CUPID's types for the sample; LongMemEval's question types for its file, in LongMemEval's order (Slices.order).
    expect(header).toBe(
      "| cell | 1: retrieval.f1 [95% CI] | 1: N | 1: consistent (n) | 1: contrastive (n) | 1: changing (n) " +
        "| 2: retrieval.f1 [95% CI] | 2: N | 2: single-session-user (n) | 2: single-session-assistant (n) | 2: temporal-reasoning (n) | 2: multi-session (n) |"
    )
    expect(Object.keys(summaries[1]!.cells[0]!.types ?? {}).sort()).toEqual([
      "multi-session",
      "single-session-assistant",
      "single-session-user",
      "temporal-reasoning"
    ])
    expect(summaries[0]!.cells[0]!.types).toBeUndefined()
    expect(header).not.toMatch(/mean|average/i)
    const row = md.split("\n").find((l) => l.startsWith("| bm25"))!
    const bm25 = summaries.map((s) => s.cells.find((c) => c.name === "bm25")!.slices.all)
    expect(row.startsWith(`| bm25 | ${bm25[0]!.metrics["retrieval.f1"]!.mean!.toFixed(3)} [`)).toBe(true)
    // N and n: the instances the main metric has a value for (a question without evidence has no retrieval.f1).
    expect(row.split(" | ")[2]).toBe(String(bm25[0]!.metrics["retrieval.f1"]!.n))
    expect(row.split(" | ")[7]).toBe(String(bm25[1]!.metrics["retrieval.f1"]!.n))
    expect(bm25[1]!.metrics["retrieval.f1"]!.n).toBeLessThan(bm25[1]!.n)
    const multi = summaries[1]!.cells.find((c) => c.name === "bm25")!.types!["multi-session"]!
    // multi-session comes last of LongMemEval's types: the row's 12th field (after the cell and 1's five, 2's N)
    expect(row.split(" | ")[11]).toBe(
      `${multi.metrics["retrieval.f1"]!.mean!.toFixed(3)} (${multi.metrics["retrieval.f1"]!.n}) |`
    )
    expect(md).toContain("| oracle ‡ |")
    expect(r.stdout).toContain("# Benchmarks side by side")
  })
})

describe("benchmarks.md's table", () => {
  it("keeps a cell name with a pipe in one cell: as many unescaped pipes in its row as in the header", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-benchmarks-pipe-"))
    const summary = writeRun(dir, { cells: [cellA, { ...cellB, name: "bm25 | k=2" }] })
    const md = Benchmarks.render([
      { source: "sample", dir, summary },
      { source: "a|b", dir, summary }
    ])
    const pipes = (line: string) => line.replace(/\\\|/g, "").split("|").length
    const table = md.split("\n").filter((l) => l.startsWith("| "))
    expect(table.length).toBeGreaterThanOrEqual(3)
    const row = table.find((l) => l.includes("bm25 \\| k=2"))
    expect(row, md).toBeDefined()
    for (const l of table) expect(pipes(l), l).toBe(pipes(table[0]!))
  })
})
