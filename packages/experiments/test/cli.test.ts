import { describe, expect, it } from "@effect/vitest"
import { beforeAll } from "vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Commands from "../src/internal/Commands.js"
import { lines, tempDir, testPlugins, writeConfig } from "./support.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, "..", "..", "..")
const cli = path.join(repo, "packages", "experiments", "src", "bin", "cli.ts")
// The CLI runs in ONE process (node with tsx's loader), not under the `tsx` command: that command
// runs the script in a child process, so a SIGKILL sent to it would leave the sweep running.
const tsxLoader = pathToFileURL(path.join(repo, "node_modules", "tsx", "dist", "loader.mjs")).href

interface Run {
  readonly child: ChildProcess
  readonly done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>
}

const start = (args: ReadonlyArray<string>, cwd: string): Run => {
  const child = spawn(process.execPath, ["--import", tsxLoader, cli, ...args], { cwd, env: { ...process.env, FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = "", stderr = ""
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr }))
  )
  return { child, done }
}

/** Wait (polling, bounded) until the results file holds at least `n` whole lines. */
const waitForLines = async (file: string, n: number, run: Run): Promise<void> => {
  let exited = false
  void run.done.then(() => (exited = true))
  for (let i = 0; i < 2400; i++) {
    if (fs.existsSync(file) && (fs.readFileSync(file, "utf8").match(/\n/g)?.length ?? 0) >= n) return
    if (exited) throw new Error("the sweep ended before it could be interrupted")
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error("no results appeared in 60 s")
}

const total = 180 * 3
const config = (dir: string) =>
  writeConfig(
    dir,
    [
      "name: slow",
      "data: { source: \"synthetic:personas=60,seed=3\" }",
      `plugins: [${JSON.stringify(path.join(here, "fixtures", "slow-plugins.ts"))}]`,
      "pipeline: { retriever: { use: slow, waitMs: 10 } }",
      "scorers: [found]",
      "sweep:",
      "  retriever.k: [1, 2, 3]",
      "concurrency: 2",
      "bootstrap: { resamples: 100 }"
    ].join("\n"),
    "slow.yaml"
  )

describe("the CLI, as a child process", () => {
  const dir = tempDir("cupid-cli-")
  const file = config(dir)
  const outputs = (out: string) => ["results.jsonl", "summary.json"].map((f) => fs.readFileSync(path.join(dir, out, f), "utf8"))
  let reference: Array<string> = []

  beforeAll(async () => {
    const r = await start(["sweep", "--config", file, "--out", "runs/reference"], dir).done
    if (r.code !== 0) throw new Error(`reference run failed (${r.code}): ${r.stderr}`)
    reference = outputs("runs/reference")
    expect(lines(path.join(dir, "runs/reference/results.jsonl"))).toHaveLength(total)
  }, 180_000)

  it("killed with SIGKILL mid-run, a rerun finishes with one line per pair and the bytes of an uninterrupted run", async () => {
    const results = path.join(dir, "runs/killed/results.jsonl")
    const first = start(["sweep", `--config=${file}`, "--out=runs/killed"], dir)
    await waitForLines(results, 1, first)
    first.child.kill("SIGKILL")
    const killed = await first.done
    expect(killed.signal).toBe("SIGKILL")
    const partial = fs.readFileSync(results, "utf8").split("\n").filter((l) => l !== "").length
    expect(partial).toBeLessThan(total)

    const second = await start(["sweep", "--config", file, "--out", "runs/killed"], dir).done
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toMatch(/resuming in runs\/killed: \d+ pairs done/)
    const all = lines(results)
    expect(all).toHaveLength(total)
    expect(new Set(all.map((l) => { const r = JSON.parse(l) as { cell: string; instance: string }; return `${r.cell} ${r.instance}` })).size).toBe(total)
    expect(outputs("runs/killed")).toEqual(reference)
  }, 180_000)

  it("SIGINT finishes the pairs in flight, writes the outputs and exits with 130; a rerun completes the run", async () => {
    const out = path.join(dir, "runs/interrupted")
    const first = start(["sweep", "--config", file, "--out", "runs/interrupted"], dir)
    await waitForLines(path.join(out, "results.jsonl"), 1, first)
    first.child.kill("SIGINT")
    const stopped = await first.done
    expect(stopped.code).toBe(130)
    expect(stopped.stderr).toContain("SIGINT: finishing the pairs in flight")
    expect(stopped.stderr).toMatch(/interrupted: \d+ of 540 pairs are done and written; rerun the same command to resume/)
    const partial = lines(path.join(out, "results.jsonl"))
    expect(partial.length).toBeLessThan(total)
    for (const l of partial) expect(() => JSON.parse(l)).not.toThrow()
    expect(fs.existsSync(path.join(out, "summary.json"))).toBe(true)
    expect((JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as { interrupted: boolean }).interrupted).toBe(true)

    const second = await start(["sweep", "--config", file, "--out", "runs/interrupted"], dir).done
    expect(second.code).toBe(0)
    expect(second.stdout).toContain("540/540 pairs done")
    expect(second.stdout).toContain(`report: runs/interrupted/report.md`)
    expect(outputs("runs/interrupted")).toEqual(reference)
  }, 180_000)
})

describe("command line parsing", () => {
  const io = () => {
    const out: Array<string> = [], err: Array<string> = []
    return {
      out,
      err,
      io: {
        stop: { stopped: false },
        configDirs: [] as Array<string>,
        stdout: (t: string) => void out.push(t),
        stderr: { write: (t: string) => err.push(t) },
        env: {},
        runner: { plugins: testPlugins }
      }
    }
  }

  it("accepts --flag value and --flag=value", () => {
    expect(Commands.parse(["sweep", "--config", "a.yaml", "--limit=3", "--dry-run", "--types", "changing"])).toEqual({
      command: "sweep",
      flags: { config: "a.yaml", limit: 3, "dry-run": true, types: "changing" }
    })
    expect(Commands.parse(["report", "--run=runs/x"])).toEqual({ command: "report", flags: { run: "runs/x" } })
  })

  it("rejects what it does not know, clearly", () => {
    const bad = (argv: Array<string>) => {
      try {
        Commands.parse(argv)
        return "parsed"
      } catch (e) {
        return (e as Error).message
      }
    }
    expect(bad(["swep"])).toMatch(/^unknown command "swep"; valid commands: sweep, report/)
    expect(bad(["sweep", "-c", "x"])).toBe(`unexpected argument "-c" (flags start with --)`)
    expect(bad(["sweep", "--confg", "x"])).toBe(
      "unknown flag --confg for sweep; valid flags: --config, --data, --out, --limit, --concurrency, --types, --dry-run"
    )
    expect(bad(["sweep", "--config"])).toBe("--config needs a value")
    expect(bad(["sweep", "--limit", "ten"])).toBe(`--limit expects a whole number >= 1, got "ten"`)
    expect(bad(["sweep", "--dry-run=yes"])).toBe("--dry-run takes no value (or true/false)")
  })

  it.effect("usage errors exit with 2, config errors with 1, each with a message", () =>
    Effect.gen(function*() {
      const a = io()
      expect(yield* Commands.main(["sweep"], a.io)).toBe(2)
      expect(a.err.join("")).toMatch(/^error: sweep needs --config <file or name>\n\nusage:/)
      const b = io()
      expect(yield* Commands.main(["sweep", "--config", "/nonexistent/x.yaml"], b.io)).toBe(1)
      expect(b.err.join("")).toMatch(/^error: \/nonexistent\/x\.yaml: cannot read the config: ENOENT/)
      const c = io()
      const dir = tempDir()
      const file = writeConfig(dir, "pipeline: { retriever: first }\n")
      expect(yield* Commands.main(["sweep", "--config", file, "--types", "changed"], c.io)).toBe(2)
      expect(c.err.join("")).toContain(`error: --types: unknown instance type "changed"; valid choices: consistent, contrastive, changing`)
      const d = io()
      expect(yield* Commands.main(["report", "--run", path.join(dir, "nothing")], d.io)).toBe(1)
      expect(d.err.join("")).toContain("not a run directory")
      const e = io()
      expect(yield* Commands.main(["--help"], e.io)).toBe(0)
      expect(e.err.join("")).toContain("usage:")
    }))
})
