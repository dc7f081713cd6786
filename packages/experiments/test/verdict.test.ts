/**
 * The verdict from hand-built analyses: who leads, the runner-up, gold cells apart, ties and
 * wording when nothing is significant; the opening of report.md; and, on the bundled dev data with
 * configs/contextual.yaml, that the first screen names the leader (a regression check).
 */
import { Scorer } from "@cupid-lab/core"
import { type Analysis, type Pairwise, Verdict, VerdictText, Leaderboard, Report, Table } from "@cupid-lab/report"
import { RunDir, ResultLine } from "@cupid-lab/results"
import { Subprocess } from "@cupid-lab/core/testing"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

import { cellA, cellB, dataset, tempDir, writeRun } from "./report-fixtures.js"
import { buildCli } from "./support.js"

const f1 = Scorer.metric({
  name: "retrieval.f1",
  description: "F1 of the selection.",
  family: "retrieval",
  headline: true,
  mainRank: 2
})

const sliceOf = (value: number, own: number | undefined, n: number): ResultLine.CellSummary["slices"]["all"] => {
  const v = own ?? value
  return { n, failed: 0, metrics: { [f1.name]: { n, mean: v, ci95: [v - 0.1, v + 0.1] } } }
}

/** A cell with the same value and CI on every slice unless `by` gives one; n = 30 (10 per type). */
const cell = (
  id: string,
  value: number,
  options: { usesGold?: boolean; by?: Partial<Record<ResultLine.Slice, number>> } = {}
): ResultLine.CellSummary => ({
  id,
  name: id,
  params: {},
  usesGold: options.usesGold ?? false,
  oracleRetrieval: options.usesGold ?? false,
  heuristicStages: [],
  plugins: [],
  slices: {
    all: sliceOf(value, options.by?.all, 30),
    consistent: sliceOf(value, options.by?.consistent, 10),
    contrastive: sliceOf(value, options.by?.contrastive, 10),
    changing: sliceOf(value, options.by?.changing, 10)
  }
})

const summaryOf = (cells: ReadonlyArray<ResultLine.CellSummary>): ResultLine.Summary => ({
  config: { name: "hand", hash: "h" },
  dataset: { source: "hand", hash: "d", instances: 30, skipped: [] },
  seed: 1,
  resamples: 1000,
  baseline: cells[0]!.id,
  metrics: [f1],
  cells
})

/** cell - baseline on f1, with a CI of +-0.05 and the given adjusted p. */
const delta = (
  c: ResultLine.CellSummary,
  base: ResultLine.CellSummary,
  slice: ResultLine.Slice,
  pAdjusted: number,
  mde = Number.NaN
): Analysis.Delta => {
  const d = c.slices[slice].metrics[f1.name]!.mean! - base.slices[slice].metrics[f1.name]!.mean!
  return {
    cell: c.id,
    against: base.id,
    metric: f1.name,
    slice,
    pAdjusted,
    family: "primary",
    correction: "holm",
    mde,
    comparison: {
      n: c.slices[slice].n,
      delta: d,
      ci95: [d - 0.05, d + 0.05],
      p: pAdjusted / 4,
      test: "exact",
      permutations: 1024
    }
  }
}

/** Every pair test says: `beats[winner]` lists the 1-based numbers of the cells it beats, on every slice. */
const pairwise = (
  cells: ReadonlyArray<ResultLine.CellSummary>,
  beats: Record<string, ReadonlyArray<number>>
): Pairwise.Pairwise => ({
  cells,
  metrics: [f1],
  slices: ResultLine.slices.map((slice) => ({
    slice,
    beats: new Map([[f1.name, new Map(cells.map((c) => [c.id, beats[c.id] ?? []]))]]),
    tooSmall: undefined
  })),
  tests: 60,
  forms: { exact: 60, normal: 0, monteCarlo: 0 }
})

const input = (
  cells: ReadonlyArray<ResultLine.CellSummary>,
  p: (c: ResultLine.CellSummary, s: ResultLine.Slice) => number,
  beats: Record<string, ReadonlyArray<number>> = {}
): Verdict.Input => ({
  summary: summaryOf(cells),
  baseline: cells[0]!,
  main: f1,
  deltas: cells.slice(1).flatMap((c) => ResultLine.slices.map((s) => delta(c, cells[0]!, s, p(c, s)))),
  pairwise: pairwise(cells, beats),
  baselineTooSmall: new Map()
})

describe("Verdict", () => {
  // full (baseline) 0.40; bm25 0.62 leads; dense 0.58 runner-up; oracle 1.00 reads gold; recency leads on changing
  const full = cell("full", 0.4)
  const bm25 = cell("bm25", 0.62, { by: { changing: 0.3 } })
  const dense = cell("dense", 0.58, { by: { changing: 0.35 } })
  const recency = cell("recency", 0.2, { by: { changing: 0.6 } })
  const oracle = cell("oracle", 1, { usesGold: true })
  const cells = [full, bm25, dense, recency, oracle]

  it("ranks the cells that read no gold labels, sets gold cells apart, and names leader and runner-up", () => {
    const v = Verdict.verdict(input(cells, (c) => (c.id === "bm25" ? 0.01 : 0.5), { bm25: [1, 4] }))
    const all = v.boards[0]!
    expect(all.contenders.map((s) => [s.cell.id, s.rank])).toEqual([
      ["bm25", 1],
      ["dense", 2],
      ["full", 3],
      ["recency", 4]
    ])
    expect(all.ceilings.map((s) => [s.cell.id, s.rank])).toEqual([["oracle", undefined]])
    const f = v.findings[0]!
    expect(f.leaders.map((s) => s.cell.id)).toEqual(["bm25"])
    expect(f.runnerUp?.cell.id).toBe("dense")
    // 0.62 - 0.40 = 0.22 against the baseline; 0.62 - 0.58 = 0.04 against the runner-up
    expect(f.vsBaseline?.by).toBeCloseTo(0.22, 12)
    expect(f.vsBaseline?.significant).toBe(true)
    expect(f.vsRunnerUp?.by).toBeCloseTo(0.04, 12)
    expect(f.vsRunnerUp?.significant).toBe(false)
    // the every-pair tests decide the lead over the runner-up (dense is cell 3)
    expect(Verdict.verdict(input(cells, () => 0.5, { bm25: [3] })).findings[0]!.vsRunnerUp?.significant).toBe(true)
    expect(VerdictText.sentence(v, f)).toBe(
      "All instances: bm25 leads on retrieval.f1 with 0.620 [0.520, 0.720] on n = 30 instances, ahead of the baseline full (0.400) by 0.220 (paired 95% CI [0.170, 0.270], adjusted p = 0.010) and ahead of the runner-up dense (0.580) by 0.040. The lead over the baseline is significant after correction; the lead over the runner-up is not."
    )
    // changing: recency 0.60 leads, dense 0.35 runner-up, the oracle never leads
    const changing = v.findings[3]!
    expect(changing.leaders.map((s) => s.cell.id)).toEqual(["recency"])
    expect(changing.runnerUp?.cell.id).toBe("full")
    expect(changing.vsRunnerUp).toBeUndefined()
    expect(VerdictText.sentence(v, changing)).toContain("ahead of the baseline and runner-up full (0.400) by 0.200")
  })

  it("says plainly when no lead is significant, and when the slice is too small for any to be", () => {
    const v = Verdict.verdict(input(cells, () => 0.3))
    expect(VerdictText.sentence(v, v.findings[0]!)).toMatch(
      /adjusted p = 0\.300\) and ahead of the runner-up dense \(0\.580\) by 0\.040\. Neither lead is significant after correction\.$/
    )
    // With the minimum detectable effect of the primary test, "not significant" says how large a difference is unlikely.
    const powered = Verdict.verdict({
      ...input(cells, () => 0.3),
      deltas: cells.slice(1).flatMap((c) => ResultLine.slices.map((sl) => delta(c, cells[0]!, sl, 0.3, 0.25)))
    })
    const unpowered = Verdict.verdict({
      ...input(cells, () => 0.3),
      deltas: cells.slice(1).flatMap((c) => ResultLine.slices.map((sl) => delta(c, cells[0]!, sl, 0.3, 0.1)))
    })
    expect(VerdictText.sentence(unpowered, unpowered.findings[0]!)).toMatch(
      /Neither lead is significant after correction\.$/
    )
    expect(VerdictText.sentence(powered, powered.findings[0]!)).toMatch(
      /Neither lead is significant after correction; at this n the test detects a difference against the baseline of 0\.250 or more with 80% power, so none larger is likely\.$/
    )
    const small = Verdict.verdict({
      ...input(cells, () => 1),
      baselineTooSmall: new Map([
        ["consistent", { n: 8, needed: 13, tests: 4, correction: "holm" as const, clustered: true }]
      ])
    })
    expect(VerdictText.sentence(small, small.findings[1]!)).toMatch(
      /No difference against the baseline can be significant here after correction: the cells share n = 8 personas \(a persona.s instances move together\), and that takes n = 13\.$/
    )
    const unclustered = Verdict.verdict({
      ...input(cells, () => 1),
      baselineTooSmall: new Map([["consistent", { n: 8, needed: 13, tests: 4, correction: "holm" as const }]])
    })
    expect(VerdictText.sentence(unclustered, unclustered.findings[1]!)).toMatch(
      /the cells share n = 8 instances, and that takes n = 13\.$/
    )
  })

  it("says a caveat every slice shares once, above the sentences, and one that some share in each", () => {
    const small = (n: number, clustered?: boolean) => ({
      n,
      needed: 11,
      tests: 28,
      correction: "holm" as const,
      ...(clustered === undefined ? {} : { clustered })
    })
    // As on the sample: 8 personas on all instances, 8 instances on each type, 11 needed everywhere.
    const fourSmall = {
      ...input(cells, () => 1),
      baselineTooSmall: new Map([
        ["all", small(8, true)],
        ["consistent", small(8)],
        ["contrastive", small(8)],
        ["changing", small(8)]
      ])
    }
    const every = Verdict.verdict(fourSmall)
    expect(VerdictText.notes(every)).toEqual([
      "No difference against the baseline can be significant after correction on any slice: the cells share n = 8 personas on all instances (a persona's instances move together) and n = 8 instances on each instance type, and that takes n = 11."
    ])
    for (const f of every.findings) expect(VerdictText.sentence(every, f)).not.toContain("significant")
    expect(VerdictText.sentence(every, every.findings[0]!)).toBe(
      "All instances: bm25 leads on retrieval.f1 with 0.620 [0.520, 0.720] on n = 30 instances, ahead of the baseline full (0.400) by 0.220 (paired 95% CI [0.170, 0.270], adjusted p = 1.000) and ahead of the runner-up dense (0.580) by 0.040."
    )
    // the console says it once too, above the sentences
    const printed = Leaderboard.console({ ...fourSmall, compared: [f1] }, every)
    expect(printed.split(VerdictText.notes(every)[0]!).length - 1).toBe(1)
    expect(printed.indexOf(VerdictText.notes(every)[0]!)).toBeLessThan(printed.indexOf("All instances:"))
    // One n on every slice: said as one.
    const same = Verdict.verdict({
      ...input(cells, () => 1),
      baselineTooSmall: new Map(ResultLine.slices.map((s) => [s, small(8)] as const))
    })
    expect(VerdictText.notes(same)).toEqual([
      "No difference against the baseline can be significant after correction on any slice: the cells share n = 8 instances on every slice, and that takes n = 11."
    ])
    // Not every slice: each sentence says it for itself, and nothing is said above.
    const some = Verdict.verdict({
      ...input(cells, () => 1),
      baselineTooSmall: new Map([
        ["all", small(8, true)],
        ["consistent", small(8)]
      ])
    })
    expect(VerdictText.notes(some)).toEqual([])
    expect(VerdictText.sentence(some, some.findings[1]!)).toMatch(
      /the cells share n = 8 instances, and that takes n = 11\.$/
    )
    expect(VerdictText.sentence(some, some.findings[2]!)).not.toContain("can be significant")
  })

  it("words a tie for the lead", () => {
    const twin = cell("twin", 0.62)
    const v = Verdict.verdict(input([full, bm25, twin, oracle], () => 0.2))
    const f = v.findings[0]!
    expect(f.leaders.map((s) => s.cell.id)).toEqual(["bm25", "twin"])
    expect(f.runnerUp?.cell.id).toBe("full")
    expect(VerdictText.sentence(v, f)).toMatch(
      /^All instances: bm25 and twin tie for the lead on retrieval\.f1 at 0\.620; bm25 is ahead of the baseline and runner-up full/
    )
    expect(VerdictText.sentence(v, f)).toMatch(/The lead over the baseline is not significant after correction\.$/)
  })

  it("when the baseline leads, measures the lead by the runner-up's own test; lower-is-better metrics rank upwards", () => {
    const v = Verdict.verdict(input([cell("full", 0.7), bm25, oracle], () => 0.001))
    const f = v.findings[0]!
    expect(f.leaders[0]!.cell.id).toBe("full")
    expect(f.vsBaseline).toBeUndefined()
    expect(f.vsRunnerUp?.by).toBeCloseTo(0.08, 12)
    expect(f.vsRunnerUp?.ci?.[0]).toBeCloseTo(0.03, 12)
    expect(VerdictText.sentence(v, f)).toMatch(
      /^All instances: full \(the baseline\) leads .* ahead of the runner-up bm25 \(0\.620\) by 0\.080 \(paired 95% CI \[0\.030, 0\.130\], adjusted p = 0\.001\)\. The lead over the runner-up is significant after correction\.$/
    )
    const lower = { ...f1, direction: "lower" as const }
    const w = Verdict.verdict({ ...input(cells, () => 0.5), main: lower })
    expect(w.boards[0]!.contenders.map((s) => s.cell.id)).toEqual(["recency", "full", "dense", "bm25"])
  })

  it("the leaderboard table keeps the baseline when it cuts, lists ceilings apart and marks significant differences", () => {
    const many = [full, ...Array.from({ length: 12 }, (_, i) => cell(`c${i + 1}`, 0.9 - i * 0.01)), oracle]
    const a = input(many, (c) => (c.id === "c1" ? 0.01 : 0.5))
    const t = Leaderboard.table(a, Verdict.verdict(a), 10)
    const rows = t.rows.map((r) =>
      r.cells
        .slice(0, 2)
        .map((c) => c.text)
        .join(" ")
    )
    expect(rows).toEqual([
      "1 c1",
      "2 c2",
      "3 c3",
      "4 c4",
      "5 c5",
      "6 c6",
      "7 c7",
      "8 c8",
      "9 c9",
      "10 c10",
      "13 full (baseline)",
      "ceiling oracle ‡"
    ])
    expect(t.rows[0]!.cells[4]).toMatchObject({ text: "+0.500", significant: true })
    expect(t.notes[0]).toContain("2 lower-ranked cells are left out here")
  })
})

describe("report.md opens with the verdict", () => {
  it.effect("the first 40 lines hold the sentences and the leaderboard", () =>
    Effect.gen(function* () {
      const dir = tempDir("verdict")
      writeRun(dir, { cells: [cellA, cellB] })
      const run = yield* RunDir.read(dir)
      const r = yield* Report.render(run, { openDataset: dataset() })
      const first = r.markdown.split("\n").slice(0, 40).join("\n")
      expect(first).toContain("## Verdict")
      for (const f of r.verdict.findings)
        expect(first).toContain(`- ${Table.mdLine(VerdictText.sentence(r.verdict, f))}`)
      expect(first).toContain(Table.markdown(Leaderboard.table(r.analysis, r.verdict, Leaderboard.openingLimit)))
      expect(r.html.indexOf(`id="verdict"`)).toBeLessThan(r.html.indexOf(`id="charts"`))
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("the sweep on the bundled dev data (configs/contextual.yaml, sample)", () => {
  const repo = path.resolve(__dirname, "../../..")
  // The compiled CLI, rebuilt when a source is newer (as the Nx targets do).
  beforeAll(buildCli)
  it("names bm25 as the leader on the first screen of report.md and of the console summary", async () => {
    const out = tempDir("verdict-e2e")
    const swept = await Subprocess.run(
      process.execPath,
      [
        path.join(repo, "packages/experiments/dist/cli.mjs"),
        "sweep",
        "--config",
        "configs/contextual.yaml",
        "--out",
        path.join(out, "run")
      ],
      { cwd: repo, env: { ...process.env, CUPID_CACHE_DIR: path.join(out, "cache") } }
    )
    expect(swept.code, swept.stderr).toBe(0)
    const stdout = swept.stdout
    const first = fs
      .readFileSync(path.join(out, "run", "report.md"), "utf8")
      .split("\n")
      .slice(0, 40)
    expect(first.find((l) => l.startsWith("- All instances:"))).toMatch(
      /^- All instances: bm25 leads on retrieval\.f1 with 0\.624 \[0\.539, 0\.696\]/
    )
    expect(first.find((l) => l.startsWith("- Changing instances:"))).toMatch(/^- Changing instances: recency leads/)
    expect(first).toContain("| 1 | bm25 | 0.624 [0.539, 0.696] | 24 | +0.244 | 0.804 | 0.692 | 0.375 |")
    expect(first.find((l) => l.startsWith("| ceiling | oracle ‡ |"))).toBeDefined()
    // The caveat every slice shares, said once above the sentences (it was repeated in all four). By
    // hand: 7 cells are tested against the baseline (the oracle is not) on 4 slices, 28 primary Holm
    // tests; the smallest exact p over n pairs is 2 / 2^n, and 28 x 2 / 2^n < 0.05 first at n = 11.
    // The 8 personas (each with one instance of each type) are what all instances resample.
    const caveat =
      "No difference against the baseline can be significant after correction on any slice: the cells share n = 8 personas on all instances (a persona's instances move together) and n = 8 instances on each instance type, and that takes n = 11."
    expect(stdout).toContain(
      `verdict (retrieval.f1, higher is better; baseline all):\n  ${caveat}\n  All instances: bm25 leads on retrieval.f1 with 0.624 [0.539, 0.696] on n = 24 instances, ahead of the baseline all (0.380) by 0.244 (paired 95% CI [0.140, 0.347], adjusted p = 0.359) and ahead of the runner-up factor-classifier (0.580) by 0.043.\n  Consistent instances:`
    )
    expect(stdout.split(caveat).length - 1).toBe(1)
    expect(stdout).not.toContain("can be significant here after correction")
    expect(first).toContain(caveat)
    expect(first.filter((l) => l.includes("can be significant")).length).toBe(1)
    expect(stdout).toMatch(/\n {6}1 {2}bm25 +0\.624 \[0\.539, 0\.696\] +24 /)
  })

  it("does not rank a cell on a metric it shares by construction: one that changes only later stages", () => {
    const inference = { ...f1, name: "inference.f1_micro", family: "inference" }
    const withParams = (id: string, value: number, generator: string, model: string): ResultLine.CellSummary => {
      const c = cell(id, value)
      const slices = Object.fromEntries(
        Object.entries(c.slices).map(([k, s]) => [k, { ...s, metrics: { [inference.name]: s.metrics[f1.name]! } }])
      ) as unknown as ResultLine.CellSummary["slices"]
      return {
        ...c,
        slices,
        params: {
          retriever: { use: "all" },
          inferrer: { use: "llm" },
          generator: { use: generator },
          models: { subject: model }
        }
      }
    }
    const cells = [
      withParams("full [a]", 0.4, "none", "a"),
      withParams("gen-only [a]", 0.4, "gold", "a"),
      withParams("full [b]", 0.5, "none", "b"),
      withParams("gen-only [b]", 0.5, "gold", "b")
    ]
    const summary = { ...summaryOf(cells), metrics: [inference] }
    const a = {
      summary,
      baseline: cells[0]!,
      main: inference,
      deltas: [],
      pairwise: undefined,
      baselineTooSmall: new Map()
    } as unknown as Verdict.Input
    const board = Verdict.leaderboard(a, inference, "all")
    // Each model's generation-only cell shares that model's inference; the other model's own cell is ranked.
    expect(board.contenders.map((s) => s.cell.id)).toEqual(["full [b]", "full [a]"])
    expect(board.shared.map((c) => c.id)).toEqual(["gen-only [a]", "gen-only [b]"])
    expect(Leaderboard.sharedNote(board)).toContain("Not ranked: gen-only [a], gen-only [b]")
    // On a generation metric nothing is shared.
    expect(Verdict.sharedCells({ ...inference, family: "generation" }, cells, cells[0]!)).toEqual([])
  })
})
