/**
 * Reports shaped by the benchmark: a sweep on the LoCoMo fixture and one on the LongMemEval fixture
 * (packages/data/test/fixtures), through the compiled CLI as a user runs them. Their verdict and
 * leaderboard have one sentence and one column per slice of the benchmark that has a value (LoCoMo's
 * categories, LongMemEval's question types), never CUPID's types and never an empty column; n is
 * the same in the verdict, the leaderboard and the console, and the questions without evidence it
 * leaves out are counted and named once, above the sentences. Every value is checked by hand.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Subprocess } from "@cupid-lab/core/testing"
import { Dataset } from "@cupid-lab/data"
import { Leaderboard, Report, Slices, Table, VerdictText } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { beforeAll, describe, expect, it } from "vitest"

import { tempDir } from "./report-fixtures.js"
import { buildCli } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
const fixtures = path.join(repo, "packages", "data", "test", "fixtures")
const dir = tempDir("benchmark-reports")

const sweep = async (name: string, config: string): Promise<{ readonly out: string; readonly stdout: string }> => {
  const file = path.join(dir, `${name}.yaml`)
  fs.writeFileSync(file, config)
  const out = path.join(dir, name)
  const r = await Subprocess.run(process.execPath, [cli, "sweep", "--config", file, "--out", out], {
    cwd: dir,
    env: { ...process.env, FORCE_COLOR: "0", CUPID_CACHE_DIR: path.join(dir, "cache") }
  })
  expect(r.code, r.stderr).toBe(0)
  return { out, stdout: r.stdout }
}

const rendered = (out: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      return yield* Report.render(yield* RunDir.read(out))
    }).pipe(Effect.provide(NodeContext.layer))
  )

/** report.md's tables: the heading above each, its header and its rows, split into cells. */
const tables = (md: string) => {
  const out: Array<{ heading: string; header: Array<string>; rows: Array<Array<string>> }> = []
  const lines = md.split("\n")
  const cells = (l: string) =>
    l
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim())
  let heading = ""
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith("#")) heading = lines[i]!
    if (!lines[i]!.startsWith("| ") || !lines[i + 1]?.startsWith("|---")) continue
    const rows: Array<Array<string>> = []
    let j = i + 2
    for (; lines[j]?.startsWith("|") === true; j++) rows.push(cells(lines[j]!))
    out.push({ heading, header: cells(lines[i]!), rows })
    i = j
  }
  return out
}

/** Columns headed by a slice or a metric whose every entry is "–": none may be left. */
const emptyColumns = (md: string, headers: ReadonlyArray<string>) =>
  tables(md).flatMap((t) =>
    t.header.flatMap((h, k) =>
      k > 0 && headers.some((x) => h.startsWith(x)) && t.rows.every((r) => /^–( n=0)?$/.test(r[k] ?? ""))
        ? [`${t.heading}: ${h}`]
        : []
    )
  )

/** The console's leaderboard: the n of each cell, by name. */
const consoleN = (stdout: string): Map<string, string> => {
  const lines = stdout.split("\n")
  const header = lines.findIndex((l) => l.trimStart().startsWith("rank"))
  const columns = lines[header]!.trim().split(/ {2,}/)
  const rows = lines.slice(header + 2).filter((l) => /^\s*(\d+|ceiling) {2}/.test(l))
  return new Map(
    rows.map((l) => {
      const cells = l.trim().split(/ {2,}/)
      return [cells[1]!.replace(" (gold)", ""), cells[columns.indexOf("n")]!]
    })
  )
}

beforeAll(buildCli)

describe("slices follow the benchmark", () => {
  it("each benchmark's report order lists exactly the types its reader gives instances", () => {
    for (const [benchmark, types] of Object.entries(Dataset.benchmarkTypes))
      expect([...Slices.order[benchmark as keyof typeof Slices.order]].sort(), benchmark).toEqual([...types].sort())
    // types of no benchmark come last, alphabetically
    expect(Slices.sorted(["zeta", "adversarial", "alpha", "single-hop", "changing"])).toEqual([
      "changing",
      "single-hop",
      "adversarial",
      "alpha",
      "zeta"
    ])
  })
})

describe("a LoCoMo run's report", () => {
  // The fixture: conv-1 with seven sessions and eight questions, conv-2 with two sessions and one.
  // Categories: single-hop conv-1:q1, q6, q7, q8 and conv-2:q1; multi-hop q3; temporal q2;
  // open-domain q4; adversarial q5. q5 (adversarial) and q6 (its evidence id names no turn) have no
  // evidence: retrieval metrics are undefined there. recall_any@5 by hand (benchmark-retrieval.test.ts
  // works out bm25's): bm25 finds an evidence session among its first five for every scored question
  // but conv-1:q8, so 6 / 7 = 0.857 on all and 3 / 4 = 0.750 on single-hop. The all retriever ranks
  // the newest session first: conv-1's first five are s3..s7, which miss q1's and q8's evidence (s1)
  // and q7's (s2); conv-2 has two sessions. So 4 / 7 = 0.571 on all, single-hop 1 / 4 = 0.250, and
  // 1 on multi-hop (s3, s5), temporal (s4) and open-domain (s2, s6). The oracle ranks the evidence first.
  const config = `name: locomo-tiny
data: { source: "locomo:${path.join(fixtures, "locomo", "locomo_tiny.json")}" }
seed: 1
pipeline: { retriever: all }
scorers: [{ use: retrieval-at-k, ks: [5] }]
report: { main: retrieval.recall_any@5 }
sweep:
  retriever: [all, { use: bm25, k: 5 }, oracle]
`
  let run: { readonly out: string; readonly stdout: string }
  beforeAll(async () => {
    run = await sweep("locomo", config)
  })

  it("has LoCoMo's categories, none of CUPID's types, and no empty column; n agrees everywhere", async () => {
    const r = await rendered(run.out)
    const v = r.verdict
    const md = fs.readFileSync(path.join(run.out, "report.md"), "utf8")
    expect(md).toBe(r.markdown)
    expect(md).not.toMatch(/consistent|contrastive|changing/)
    expect(md).not.toContain("2^0")
    expect(Slices.of(r.analysis.summary)).toEqual([
      "all",
      "single-hop",
      "multi-hop",
      "temporal",
      "open-domain",
      "adversarial"
    ])

    // One sentence per category with a value: adversarial questions have none.
    expect(v.findings.map((f) => f.slice)).toEqual(["all", "single-hop", "multi-hop", "temporal", "open-domain"])
    const value = (slice: string, cell: string) =>
      v.boards.find((b) => b.slice === slice)!.contenders.find((s) => s.cell.name === cell)!.estimate
    expect([value("all", "bm25").mean, value("all", "bm25").n]).toEqual([6 / 7, 7])
    expect([value("all", "all").mean, value("all", "all").n]).toEqual([4 / 7, 7])
    expect([value("single-hop", "bm25").mean, value("single-hop", "bm25").n]).toEqual([3 / 4, 4])
    expect([value("single-hop", "all").mean, value("single-hop", "all").n]).toEqual([1 / 4, 4])
    const [all, single, multi] = v.findings
    expect(all!.leaders.map((s) => s.cell.name)).toEqual(["bm25"])
    expect(all!.vsBaseline!.by).toBeCloseTo(2 / 7, 12)
    expect(VerdictText.sentence(v, all!)).toMatch(
      /^All instances: bm25 leads on retrieval\.recall_any@5 with 0\.857 \[[^\]]+\] on n = 7 instances, ahead of the baseline and runner-up all \(0\.571\) by 0\.286 /
    )
    expect(VerdictText.sentence(v, single!)).toMatch(
      /^Single-hop instances: bm25 leads on retrieval\.recall_any@5 with 0\.750 \[[^\]]+\] on n = 4 instances, ahead of the baseline and runner-up all \(0\.250\) by 0\.500 /
    )
    expect(VerdictText.sentence(v, multi!)).toBe(
      "Multi-hop instances: all and bm25 tie for the lead on retrieval.recall_any@5 at 1.000."
    )

    // Said once, above the sentences. The caveat: bm25 is the only cell tested against the baseline
    // (the oracle is not), on five slices with a value: 5 primary Holm tests, and 5 x 2 / 2^n < 0.05
    // first at n = 8. All instances and single-hop resample the two conversations; the other
    // categories hold one question each.
    expect(VerdictText.notes(v)).toEqual([
      "n counts the instances with a value of retrieval.recall_any@5: 7 of the 9 scored; not counted: 2 questions without evidence (adversarial 1, unlabelled 1).",
      "The adversarial instances (1 question without evidence) have no value of retrieval.recall_any@5 in any cell: no sentence and no column for them.",
      "No difference against the baseline can be significant after correction on any slice: the cells share n = 2 personas on all and single-hop instances (a persona's instances move together) and n = 1 instances on multi-hop, temporal and open-domain instances, and that takes n = 8."
    ])
    for (const f of v.findings) expect(VerdictText.sentence(v, f)).not.toContain("can be significant")
    expect(md).toContain(`\n\n${Table.mdLine(VerdictText.notes(v).join(" "))}\n\n- All instances: bm25 leads`)

    // The leaderboard: a column per category with a value, by hand.
    const board = Leaderboard.table(r.analysis, v)
    expect(board.columns.map((c) => c.label)).toEqual([
      "rank",
      "cell",
      "retrieval.recall_any@5 [95% CI]",
      "N",
      "vs baseline",
      "single-hop",
      "multi-hop",
      "temporal",
      "open-domain"
    ])
    const rows = board.rows.map((row) => row.cells.map((c) => c.text))
    expect(rows.map((row) => [row[0], row[1], row[3], row[4], ...row.slice(5)])).toEqual([
      ["1", "bm25", "7", "+0.286", "0.750", "1.000", "1.000", "1.000"],
      ["2", "all (baseline)", "7", "baseline", "0.250", "1.000", "1.000", "1.000"],
      ["ceiling", "oracle ‡", "7", "+0.429", "1.000", "1.000", "1.000", "1.000"]
    ])
    expect(md).toContain(Table.markdown(Leaderboard.table(r.analysis, v, Leaderboard.openingLimit)))

    // n: the verdict's, the leaderboard's N and the console's n are the main metric's n (7 of 9).
    expect(consoleN(run.stdout)).toEqual(
      new Map([
        ["bm25", "7"],
        ["all", "7"],
        ["oracle", "7"]
      ])
    )
    for (const note of VerdictText.notes(v)) expect(run.stdout).toContain(`  ${note}\n`)
    for (const f of v.findings) expect(run.stdout).toContain(`  ${VerdictText.sentence(v, f)}\n`)

    // No column of a slice or a metric is empty: the adversarial instances' retrieval table keeps
    // only what is defined there (none of the recall metrics).
    expect(emptyColumns(md, ["all", ...Slices.order.locomo, "recall", "ndcg", "N"])).toEqual([])
    const adversarial = tables(md).find((t) => t.heading === "### adversarial instances")!
    expect(adversarial.header.filter((h) => h.startsWith("recall"))).toEqual([])
  })
})

describe("a LongMemEval run's report", () => {
  // The fixture (longmemeval_s_tiny.json): q-user-1 (single-session-user; 4 sessions, the third
  // holds the answer), q-multi-1 (multi-session; 3 sessions, the first and third), q-assistant-1
  // (single-session-assistant; 2 sessions, the first) and q-temporal-1_abs (temporal-reasoning, an
  // abstention question: no evidence). retrieval.f1 by hand: the all retriever selects every
  // session, precision = relevant / sessions and recall 1, so F1 = 2P / (P + 1): 0.4 (P = 1/4),
  // 0.8 (P = 2/3), 2/3 (P = 1/2), mean (0.4 + 0.8 + 2/3) / 3 = 0.622. recency with k = 1 selects the
  // newest session, an evidence session only for q-multi-1 (P = 1, R = 1/2, F1 = 2/3): mean 0.222.
  const config = `name: longmemeval-tiny
data: { source: "longmemeval:${path.join(fixtures, "longmemeval", "longmemeval_s_tiny.json")}" }
seed: 1
pipeline: { retriever: all }
scorers: [{ use: retrieval, ks: [1] }]
sweep:
  retriever: [all, { use: recency, k: 1 }, oracle]
`
  let run: { readonly out: string; readonly stdout: string }
  beforeAll(async () => {
    run = await sweep("longmemeval", config)
  })

  it("has LongMemEval's question types in its order, the abstention question counted apart", async () => {
    const r = await rendered(run.out)
    const v = r.verdict
    expect(r.markdown).not.toMatch(/consistent|contrastive|changing/)
    expect(v.metric?.name).toBe("retrieval.f1")
    expect(v.findings.map((f) => f.slice)).toEqual([
      "all",
      "single-session-user",
      "single-session-assistant",
      "multi-session"
    ])
    expect(VerdictText.notes(v).slice(0, 2)).toEqual([
      "n counts the instances with a value of retrieval.f1: 3 of the 4 scored; not counted: 1 question without evidence (abstention 1).",
      "The temporal-reasoning instances (1 question without evidence) have no value of retrieval.f1 in any cell: no sentence and no column for them."
    ])
    const board = Leaderboard.table(r.analysis, v)
    expect(board.columns.slice(5).map((c) => c.label)).toEqual([
      "single-session-user",
      "single-session-assistant",
      "multi-session"
    ])
    const rows = board.rows.map((row) => row.cells.map((c) => c.text))
    expect(rows.map((row) => [row[0], row[1], row[3], row[4], ...row.slice(5)])).toEqual([
      ["1", "all (baseline)", "3", "baseline", "0.400", "0.667", "0.800"],
      ["2", "recency", "3", "-0.400", "0.000", "0.000", "0.667"],
      ["ceiling", "oracle ‡", "3", "+0.378", "1.000", "1.000", "1.000"]
    ])
    expect(VerdictText.sentence(v, v.findings[0]!)).toMatch(
      /^All instances: all \(the baseline\) leads on retrieval\.f1 with 0\.622 \[[^\]]+\] on n = 3 instances, ahead of the runner-up recency \(0\.222\) by 0\.400 /
    )
    expect(consoleN(run.stdout)).toEqual(
      new Map([
        ["all", "3"],
        ["recency", "3"],
        ["oracle", "3"]
      ])
    )
    expect(emptyColumns(r.markdown, ["all", ...Slices.order.longmemeval, "N"])).toEqual([])
  })
})
