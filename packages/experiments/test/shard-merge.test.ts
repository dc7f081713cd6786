/**
 * Sharded sweeps through the compiled CLI a user runs: three `sweep --shard i/3` processes and a
 * `merge` give the same summary.json, report.md, report.tex, results.jsonl, results.csv and
 * results.parquet, byte for byte, as one unsharded sweep; a shard killed (SIGKILL) mid-run and
 * rerun merges the same; merge refuses a missing shard, a duplicated pair, another config's or
 * another data's shard, naming the directory and what is wrong.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildCli, cleanEnv } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const compiled = path.join(repoRoot, "packages", "experiments", "dist", "cli.mjs")
const contextual = path.join(repoRoot, "configs", "contextual.yaml")
const smoke = path.join(repoRoot, "configs", "smoke.yaml")
const identical = ["summary.json", "report.md", "report.tex", "results.jsonl", "results.csv", "results.parquet"]

let dir = ""
const at = (name: string) => path.join(dir, name)

interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** Run the compiled CLI in the test's directory; `started` gets the child (to kill it). */
const cli = (args: ReadonlyArray<string>, started?: (child: ReturnType<typeof spawn>) => void): Promise<Exit> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [compiled, ...args], {
      cwd: dir,
      env: { ...cleanEnv(), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = "",
      stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
    started?.(child)
  })

const ok = async (args: ReadonlyArray<string>): Promise<Exit> => {
  const r = await cli(args)
  expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(0)
  return r
}

const lines = (run: string) =>
  fs
    .readFileSync(path.join(run, "results.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")

const expectSameRun = (merged: string, single: string) => {
  for (const f of identical)
    expect(fs.readFileSync(path.join(merged, f)).equals(fs.readFileSync(path.join(single, f))), `${f} differs`).toBe(
      true
    )
}

beforeAll(async () => {
  await buildCli()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-shards-"))
  // The whole run and its three shards, at once (four processes, as on four machines).
  await Promise.all([
    ok(["sweep", "--config", contextual, "--out", at("single")]),
    ...[1, 2, 3].map((i) => ok(["sweep", "--config", contextual, "--out", at(`s${i}`), "--shard", `${i}/3`]))
  ])
})

afterAll(() => {
  if (dir !== "") fs.rmSync(dir, { recursive: true, force: true })
})

describe("sweep --shard and merge", () => {
  it("three shards merged are byte-identical to one unsharded run", async () => {
    const shares = [1, 2, 3].map((i) => lines(at(`s${i}`)).length)
    // Every shard ran a share, and the shares add up to the whole run.
    expect(shares.every((n) => n > 0)).toBe(true)
    expect(shares.reduce((a, b) => a + b, 0)).toBe(lines(at("single")).length)
    const id = JSON.parse(fs.readFileSync(at("s2/run-id.json"), "utf8")) as { id: string; shard: unknown }
    expect(id.shard).toEqual({ index: 2, count: 3 })
    expect(id.id).toBe((JSON.parse(fs.readFileSync(at("single/run-id.json"), "utf8")) as { id: string }).id)
    // A shard leaves the reports to merge (--shard-reports keeps them).
    for (const f of ["report.md", "report.html", "results.parquet"]) expect(fs.existsSync(at(`s2/${f}`)), f).toBe(false)
    expect(fs.existsSync(at("s2/summary.json"))).toBe(true)
    const r = await ok(["merge", "--out", at("merged"), at("s3"), at("s1"), at("s2")])
    expect(r.stdout).toMatch(/merged 3 shards of run [0-9a-f]{12}: \d+ pairs, 24 instances/)
    expectSameRun(at("merged"), at("single"))
    expect(JSON.parse(fs.readFileSync(at("merged/run-id.json"), "utf8"))).toEqual(
      JSON.parse(fs.readFileSync(at("single/run-id.json"), "utf8"))
    )
  })

  it("merges shards of another benchmark, whose per-cell types each shard computes from its own lines", async () => {
    const tiny = path.join(repoRoot, "packages", "data", "test", "fixtures", "longmemeval", "longmemeval_s_tiny.json")
    const config = at("lme.yaml")
    fs.writeFileSync(
      config,
      `name: lme\ndata: { source: "longmemeval:${tiny}" }\nseed: 1\npipeline: { inferrer: extractive }\nsweep:\n  retriever: [all, { use: bm25, k: 2 }, oracle]\nscorers: [{ use: retrieval, ks: [2] }]\n`
    )
    await Promise.all([
      ok(["sweep", "--config", config, "--out", at("lme-single")]),
      ...[1, 2].map((i) => ok(["sweep", "--config", config, "--out", at(`lme${i}`), "--shard", `${i}/2`]))
    ])
    await ok(["merge", "--out", at("lme-merged"), at("lme1"), at("lme2")])
    expectSameRun(at("lme-merged"), at("lme-single"))
  })

  it("a shard killed mid-run (SIGKILL) and rerun merges byte-identically", async () => {
    const share = lines(at("s2")).length
    const killed = await cli(
      ["sweep", "--config", contextual, "--out", at("k2"), "--shard", "2/3", "--concurrency", "1"],
      (child) => {
        const poll = setInterval(() => {
          const file = at("k2/results.jsonl")
          if (fs.existsSync(file) && fs.statSync(file).size > 0) {
            clearInterval(poll)
            child.kill("SIGKILL")
          }
        }, 10)
        child.on("close", () => clearInterval(poll))
      }
    )
    expect(killed.signal).toBe("SIGKILL")
    expect(fs.existsSync(at("k2/summary.json"))).toBe(false)
    expect(
      fs
        .readFileSync(at("k2/results.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l !== "").length
    ).toBeLessThan(share)
    // Killed before its end, the shard is refused by name.
    const early = await cli(["merge", "--out", at("merged-early"), at("s1"), at("k2"), at("s3")])
    expect(early.code).toBe(1)
    expect(early.stderr).toContain(at("k2"))
    expect(early.stderr).toMatch(/has not finished: rerun its sweep command/)
    const rerun = await ok(["sweep", "--config", contextual, "--out", at("k2"), "--shard", "2/3"])
    expect(rerun.stderr).toMatch(/resuming in/)
    await ok(["merge", "--out", at("merged-k"), at("s1"), at("k2"), at("s3")])
    expectSameRun(at("merged-k"), at("single"))
  })

  it("refuses a missing shard, naming the ones given", async () => {
    const r = await cli(["merge", "--out", at("m-missing"), at("s1"), at("s3")])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("split in 3 shards and shard 2 is missing (given: 1, 3)")
    expect(fs.existsSync(at("m-missing/results.jsonl"))).toBe(false)
  })

  it("refuses a shard given twice and a pair held by two shards", async () => {
    const twice = await cli(["merge", "--out", at("m-twice"), at("s1"), at("s2"), at("s2"), at("s3")])
    expect(twice.code).toBe(1)
    expect(twice.stderr).toMatch(/is shard 2 of 3, and so is .*s2: each shard is given once/)
    fs.cpSync(at("s2"), at("dup2"), { recursive: true })
    const stolen = lines(at("s1"))[0]!
    fs.appendFileSync(at("dup2/results.jsonl"), `${stolen}\n`)
    const dup = await cli(["merge", "--out", at("m-dup"), at("s1"), at("dup2"), at("s3")])
    expect(dup.code).toBe(1)
    const row = JSON.parse(stolen) as { cell: string; instance: string }
    expect(dup.stderr).toContain(`${at("dup2/results.jsonl")} line ${lines(at("s2")).length + 1}: the pair (cell `)
    expect(dup.stderr).toContain(
      `(${row.cell}), instance ${row.instance}) is also in ${at("s1/results.jsonl")} line 1; a pair belongs to one shard only`
    )
  })

  it("refuses shards of another config or of other data", async () => {
    // Generated data in one file: shards 1-3 on it, then shard 3 on changed data at the same path,
    // and shard 3 of another config (data.limit differs).
    const data = at("data.jsonl")
    await ok(["data", "generate", "--out", data, "--personas", "2", "--seed", "1"])
    await Promise.all(
      [1, 2, 3].map((i) => ok(["sweep", "--config", smoke, "--data", data, "--out", at(`g${i}`), "--shard", `${i}/3`]))
    )
    await ok(["sweep", "--config", smoke, "--data", data, "--limit", "2", "--out", at("g3-config"), "--shard", "3/3"])
    await ok(["merge", "--out", at("g-merged"), at("g1"), at("g2"), at("g3")])
    // A shard's directory is refused to another shard.
    const taken = await cli(["sweep", "--config", smoke, "--data", data, "--out", at("g1"), "--shard", "2/3"])
    expect(taken.code).toBe(1)
    expect(taken.stderr).toMatch(
      /g1: holds another run: run [0-9a-f]{12} shard 1 of 3 .* the share \(shard 2 of 3 against shard 1 of 3\) differs/
    )
    fs.renameSync(data, at("data-1.jsonl"))
    await ok(["data", "generate", "--out", data, "--personas", "2", "--seed", "2"])
    await ok(["sweep", "--config", smoke, "--data", data, "--out", at("g3-data"), "--shard", "3/3"])

    const config = await cli(["merge", "--out", at("m-config"), at("g1"), at("g2"), at("g3-config")])
    expect(config.code).toBe(1)
    expect(config.stderr).toContain(at("g3-config"))
    expect(config.stderr).toMatch(/: the config differs; the shards of one run share the config and the data/)
    const other = await cli(["merge", "--out", at("m-data"), at("g1"), at("g2"), at("g3-data")])
    expect(other.code).toBe(1)
    expect(other.stderr).toContain(at("g3-data"))
    expect(other.stderr).toMatch(/: the data differs; the shards of one run share the config and the data/)
    // The data the shards ran on is gone from its path: merge says so and takes --data.
    const moved = await cli(["merge", "--out", at("m-moved"), at("g1"), at("g2"), at("g3")])
    expect(moved.code).toBe(1)
    expect(moved.stderr).toMatch(/is not the data the shards ran on .* pass --data <source> with the run's data/)
    await ok(["merge", "--out", at("m-moved"), "--data", at("data-1.jsonl"), at("g1"), at("g2"), at("g3")])
    expect(fs.readFileSync(at("m-moved/results.jsonl")).equals(fs.readFileSync(at("g-merged/results.jsonl")))).toBe(
      true
    )
  })

  it("refuses --shard 0/3 with the 1-based form to use", async () => {
    const r = await cli(["sweep", "--config", smoke, "--shard", "0/3"])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(
      "--shard 0/3: shards are numbered from 1 to 3; for a 0-based index such as Kubernetes' JOB_COMPLETION_INDEX pass $((JOB_COMPLETION_INDEX + 1))/3"
    )
  })
})
