/**
 * The compiled CLI (packages/experiments/dist/cli.mjs, built by tools/build-cli.mjs when a source is
 * newer) as a real child process: help for every command, exit codes 2 (usage) and 1 (config), a
 * real offline sweep, and stopping a sweep whose pairs wait on a slow loopback OpenAI-compatible
 * server (SIGINT; and, started with an IPC channel as the Nx executor starts it, the channel's
 * closing and a repeated SIGTERM). A resolve hook records every model SDK or NLP package the process
 * imports, so the tests see what `--help`, a config error and an offline sweep load.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { buildCli, loopbackSweep } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-cli-"))
const loadedLog = path.join(dir, "loaded.txt")
const hooks = path.join(dir, "hooks.mjs")
const sdk = /^(openai|cohere-ai|@qdrant\/js-client-rest|@huggingface\/transformers|onnxruntime-node)$/

interface Done {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  /** Packages of interest the process imported (model SDKs, wink). */
  readonly loaded: ReadonlyArray<string>
}

interface Run {
  readonly child: ChildProcess
  readonly done: Promise<Done>
}

let runs = 0
/** `ipc`: with an IPC channel to this process, as the Nx executor starts the CLI. */
const start = (args: ReadonlyArray<string>, env: Record<string, string> = {}, { ipc = false } = {}): Run => {
  const log = `${loadedLog}.${++runs}`
  const child = spawn(process.execPath, ["--import", pathToFileURL(hooks).href, cli, ...args], {
    cwd: dir,
    env: { ...process.env, FORCE_COLOR: "0", LOADED_LOG: log, ...env },
    stdio: ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"]
  })
  let stdout = "",
    stderr = ""
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  const done = new Promise<Done>((resolve) =>
    child.on("exit", (code, signal) =>
      resolve({
        code,
        signal,
        stdout,
        stderr,
        loaded: fs.existsSync(log)
          ? fs
              .readFileSync(log, "utf8")
              .split("\n")
              .filter((l) => l !== "")
          : []
      })
    )
  )
  return { child, done }
}
const cupid = (...args: Array<string>) => start(args).done

/** Wait (polling, bounded) until `file` holds at least `n` whole lines. */
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

const lines = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")

beforeAll(async () => {
  await buildCli()
  fs.writeFileSync(
    hooks,
    [
      'import { register } from "node:module"',
      'register("data:text/javascript," + encodeURIComponent(`',
      'import { appendFileSync } from "node:fs"',
      "export async function resolve(specifier, context, next) {",
      '  if (/^(openai|cohere-ai|@qdrant|@huggingface|onnxruntime|wink-)/.test(specifier)) appendFileSync(process.env.LOADED_LOG, specifier + "\\\\n")',
      "  return next(specifier, context)",
      "}`))"
    ].join("\n")
  )
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("help", () => {
  const documented: Record<string, ReadonlyArray<string>> = {
    sweep: [
      "--config",
      "--data",
      "--out",
      "--limit",
      "--concurrency",
      "--types",
      "--max-cells",
      "--dry-run",
      "--batch",
      "--repair"
    ],
    report: ["--run", "--baseline", "--main"],
    batches: ["--run", "--cancel", "--config"],
    compare: ["--runs", "--cell-a", "--cell-b", "--out", "--allow-mismatch"],
    export: ["--run", "--format"],
    "errors sample": [
      "--run",
      "--model",
      "-n",
      "--below",
      "--seed",
      "--out",
      "--data",
      "--viewer-url",
      "--viewer-root"
    ],
    "errors tabulate": ["--sheet", "--out"],
    "data inspect": ["--data", "--types", "--on-invalid", "--limit", "--cache-dir", "--hf-endpoint"],
    "data download": ["--data", "--cache-dir", "--hf-endpoint"],
    "data generate": [
      "--out",
      "--personas",
      "--sessions",
      "--seed",
      "--position",
      "--contrastive-share",
      "--stale-share",
      "--types",
      "--difficulty",
      "--spec"
    ]
  }

  it("the root help lists every command, in plain text when not on a terminal, without loading a model SDK or NLP package", async () => {
    const r = await cupid("--help")
    expect(r.code, r.stderr).toBe(0)
    for (const c of [
      "sweep --config",
      "report --run",
      "compare --runs",
      "data inspect",
      "data download",
      "data generate"
    ])
      expect(r.stdout).toContain(`- ${c}`)
    expect(r.stdout).not.toContain("\u001b[")
    expect(r.loaded).toEqual([])
  })

  it("every command's help names and describes each of its options", async () => {
    for (const [command, options] of Object.entries(documented)) {
      const r = await cupid(...command.split(" "), "--help")
      expect(r.code, command).toBe(0)
      const text = r.stdout.split("OPTIONS")[1] ?? ""
      for (const option of options) {
        // Each option is a heading followed by its description (an indented, non-empty line).
        // (an option with a short alias is shown as "(-a, --cell-a cell)")
        expect(text, `${command} ${option}`).toMatch(
          new RegExp(`\\n(\\(-[a-z], )?${option}[^\\n]*\\n\\n  [A-Z][^\\n]+\\n\\n  [a-z][^\\n]+`)
        )
      }
      expect(r.loaded, command).toEqual([])
    }
    const data = await cupid("data", "--help")
    expect(data.stdout).toContain("- inspect [--data source]")
  })
})

describe("usage errors exit with 2 and say what is wrong", () => {
  it.each([
    [["sweep"], "Expected to find option: '--config'"],
    [["sweep", "--confg", "x.yaml"], "The flag '--confg' is not recognized. Did you mean '--config'?"],
    [
      ["sweep", "--config", "x.yaml", "--limt", "3"],
      "the flag '--limt' is not one of sweep's: did you mean '--limit'?"
    ],
    [["data", "inspect", "--dat", "sample"], "the flag '--dat' is not one of data inspect's: did you mean '--data'?"],
    [["swep", "--config", "x.yaml"], "Invalid subcommand"],
    [["sweep", "--config", "x.yaml", "--limit", "0"], `--limit expects a whole number >= 1, got "0"`],
    [["sweep", "--config", "x.yaml", "--limit", "ten"], "'ten' is not a integer"],
    [
      ["sweep", "--config", "x.yaml", "--types", "changed"],
      `--types: unknown instance type "changed"; valid choices: consistent, contrastive, changing`
    ],
    [["compare", "--runs", "only-one"], "compare needs --runs <first run>,<second run> (two run directories)"],
    [["report"], "Expected to find option: '--run'"],
    [
      ["sweep", "--config", "x.yaml", "--shard", "3"],
      `--shard expects i/N (shard i of N, numbered from 1), e.g. 1/3, got "3"`
    ],
    [["merge", "--out", "merged"], "Missing argument <shard dir>"],
    [[], "name a command: sweep, merge, score, batches, report, compare, export, errors, view, synthesize, data"]
  ])("%j", async (args, message) => {
    const r = await cupid(...args)
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain(message)
    expect(r.stderr).toMatch(/\(cupid-lab [a-z ]*--help lists the options\)\n$/)
    expect(r.stdout).toBe("")
  })
})

describe("config errors exit with 1 and name the file", () => {
  it("a missing config: one line, no stack, no model SDK loaded", async () => {
    const r = await cupid("sweep", "--config", "does-not-exist.yaml")
    expect(r.code).toBe(1)
    expect(r.stderr).toBe(
      "error: does-not-exist.yaml: cannot read the config: ENOENT: no such file or directory, open 'does-not-exist.yaml'\n"
    )
    expect(r.loaded).toEqual([])
  })

  it("a typo in a config key: the file, the key and what is valid; no stack", async () => {
    fs.writeFileSync(
      path.join(dir, "typo.yaml"),
      "name: typo\ndata: { source: sample, limit: 1 }\npipeline: { retriever: all }\nscorrers: [cost]\n"
    )
    const r = await cupid("sweep", "--config", "typo.yaml")
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^error: typo\.yaml: /)
    expect(r.stderr).toContain("scorrers")
    expect(r.stderr.trim().split("\n")).toHaveLength(1)
    expect(r.stderr).not.toMatch(/\n\s+at /)
    expect(r.loaded.filter((p) => sdk.test(p))).toEqual([])
  })
})

describe("a real sweep", () => {
  it("configs/smoke.yaml by name: 4 cells x 3 instances offline, outputs written, no model SDK loaded", async () => {
    const r = await start(["sweep", "--config", "smoke", "--out", "runs/smoke"], {
      CUPID_CACHE_DIR: path.join(dir, "cache")
    }).done
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("12/12 pairs done (12 this run), 0 failed this run")
    expect(r.stdout).toContain("models: none; every stage ran offline")
    expect(r.stderr).toContain(`sweep smoke: ${path.join(repo, "configs", "smoke.yaml")} -> runs/smoke`)
    expect(lines(path.join(dir, "runs/smoke/results.jsonl"))).toHaveLength(12)
    for (const f of ["summary.json", "report.md", "report.html", "results.csv", "run.json"])
      expect(fs.existsSync(path.join(dir, "runs/smoke", f)), f).toBe(true)
    expect(r.loaded.filter((p) => sdk.test(p))).toEqual([])

    const dry = await cupid("sweep", "--config", "smoke", "--out", "runs/smoke-dry", "--dry-run", "--limit", "1")
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain("grid: 4 cells")
    expect(dry.stdout).toContain("pairs: 4 (0 already done in runs/smoke-dry, 4 to run)")
    expect(fs.existsSync(path.join(dir, "runs/smoke-dry"))).toBe(false)
    // an offline config: no model, so no price and no key to warn about
    expect(dry.stdout).not.toMatch(/estimated cost|warning: .*_API_KEY/)

    // a config with OpenAI models: dollars at list prices, and the unset key variable named once
    const paid = await start(
      ["sweep", "--config", "paper-ablations", "--out", "runs/pa-dry", "--dry-run", "--limit", "1"],
      {
        OPENAI_API_KEY: ""
      }
    ).done
    expect(paid.code, paid.stderr).toBe(0)
    const tokens = /estimated tokens to send: (\d+) prompt, (\d+) completion/.exec(paid.stdout)!
    const usd = (Number(tokens[1]) * 2.5 + Number(tokens[2]) * 10) / 1e6
    expect(paid.stdout).toContain(
      `estimated cost of the calls to send: $${usd.toFixed(2)} (list prices per million tokens; check them before quoting)`
    )
    expect(
      paid.stdout.match(
        /warning: OPENAI_API_KEY is not set: a real run would fail to authenticate for models subject \(openai\/gpt-4o-2024-08-06\), /g
      )
    ).toHaveLength(1)
    const keyed = await start(
      ["sweep", "--config", "paper-ablations", "--out", "runs/pa-dry", "--dry-run", "--limit", "1"],
      {
        OPENAI_API_KEY: "sk-test-not-a-secret"
      }
    ).done
    expect(keyed.stdout).not.toContain("OPENAI_API_KEY")
    expect(keyed.stdout + keyed.stderr).not.toContain("sk-test-not-a-secret")

    const report = await cupid("report", "--run", "runs/smoke")
    expect(report.code, report.stderr).toBe(0)
    expect(report.stdout).toBe(
      "report: runs/smoke/report.md\nreport: runs/smoke/report.html\nresults: runs/smoke/results.csv\nresults: runs/smoke/results.parquet\n"
    )
    const main = await cupid("report", "--run", "runs/smoke", "--main", "retrieval.precision")
    expect(main.code, main.stderr).toBe(0)
    expect(fs.readFileSync(path.join(dir, "runs/smoke/report.md"), "utf8")).toContain(
      "- Main metric: retrieval.precision (mean over instances (macro)); chosen on the command line"
    )
    const wrong = await cupid("report", "--run", "runs/smoke", "--main", "precision")
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toContain('main metric "precision" is not a metric of this run; valid names: ')
  })
})

describe("--repair", () => {
  it("a corrupt line in the middle of results.jsonl stops the sweep (1) until --repair moves it aside and its pair runs again", async () => {
    const out = "runs/repair"
    const first = await cupid("sweep", "--config", "smoke", "--out", out)
    expect(first.code, first.stderr).toBe(0)
    const file = path.join(dir, out, "results.jsonl")
    const before = lines(file)
    fs.writeFileSync(file, [...before.slice(0, 4), "{ not json", ...before.slice(5)].join("\n") + "\n")

    const stopped = await cupid("sweep", "--config", "smoke", "--out", out)
    expect(stopped.code).toBe(1)
    expect(stopped.stderr).toMatch(/^error: .*results\.jsonl: .*line 5.*--repair/m)

    const repaired = await cupid("sweep", "--config", "smoke", "--out", out, "--repair")
    expect(repaired.code, repaired.stderr).toBe(0)
    expect(repaired.stdout).toContain("12/12 pairs done (1 this run)")
    expect(lines(file)).toEqual(before)
    expect(lines(path.join(dir, out, "results.corrupt.jsonl"))).toEqual(["{ not json"])
  })
})

describe("stopping a sweep", () => {
  const scope = Effect.runSync(Scope.make())
  let baseURL = ""
  /** Answers the server has sent, per model. */
  const answered = new Map<string, number>()
  const instances = 18
  /** A config whose model cache is its own, so no answer is cached from another test. */
  const config = (name: string) => path.join(dir, `${name}.yaml`)
  const env = { CUPID_TEST_KEY: "sk-test-not-a-secret" }

  beforeAll(async () => {
    // Each answer takes 250 ms (with two pairs in flight, 18 pairs take about 2.3 s); 2 s for the
    // model "very-slow", so pairs are surely in flight when a second signal comes 100 ms after the first.
    const server = await Effect.runPromise(
      Scope.extend(
        OpenAiServer.make({
          chat: (body) =>
            new Promise((resolve) =>
              setTimeout(
                () => {
                  answered.set(body.model, (answered.get(body.model) ?? 0) + 1)
                  resolve("A reply that keeps to the request.")
                },
                body.model === "very-slow" ? 2000 : 250
              )
            )
        }),
        scope
      )
    )
    baseURL = server.baseURL
    for (const name of ["interrupted", "quit", "parent-gone", "repeated"]) {
      fs.writeFileSync(
        config(name),
        loopbackSweep({
          name: "slow",
          personas: 6,
          cacheDir: path.join(dir, `${name}-cache`),
          model: name === "quit" || name === "repeated" ? "very-slow" : "test-subject",
          baseURL
        })
      )
    }
  })

  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it("finishes the pairs in flight, writes results, summary and report, exits with 130; a rerun completes the run", async () => {
    const out = path.join(dir, "runs/interrupted")
    const first = start(["sweep", "--config", config("interrupted"), "--out", out], env)
    await waitForLines(path.join(out, "results.jsonl"), 1, first)
    first.child.kill("SIGINT")
    const stopped = await first.done
    expect(stopped.code, stopped.stderr).toBe(130)
    expect(stopped.stderr).toContain(
      "SIGINT: finishing the pairs in flight, then writing results, summary and report (SIGINT again quits at once)"
    )
    const said = stopped.stderr.match(
      /interrupted: (\d+) of (\d+) pairs are done and written; rerun the same command to resume/
    )
    expect(said, stopped.stderr).not.toBeNull()
    const partial = lines(path.join(out, "results.jsonl"))
    expect(partial.length).toBeGreaterThan(0)
    expect(partial.length).toBeLessThan(instances)
    expect(said![1]).toBe(String(partial.length))
    // Every pair in flight finished and was recorded: one answered call per pair (no cache hits yet).
    expect(partial.length).toBe(answered.get("test-subject"))
    expect(said![2]).toBe(String(instances))
    for (const l of partial) expect((JSON.parse(l) as { status: string }).status).toBe("ok")
    for (const f of ["summary.json", "report.md"]) expect(fs.existsSync(path.join(out, f)), f).toBe(true)
    expect(
      (JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as { interrupted: boolean }).interrupted
    ).toBe(true)
    expect(stopped.stdout + stopped.stderr).not.toContain(env.CUPID_TEST_KEY)

    const second = await start(["sweep", "--config", config("interrupted"), "--out", out], env).done
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toContain(`resuming in ${out}: ${partial.length} pairs done`)
    expect(second.stdout).toContain(`${instances}/${instances} pairs done (${instances - partial.length} this run)`)
    expect(lines(path.join(out, "results.jsonl"))).toHaveLength(instances)
  })

  it("a second SIGINT quits at once with 130", async () => {
    const out = path.join(dir, "runs/quit")
    const run = start(["sweep", "--config", config("quit"), "--out", out], env)
    await waitForLines(path.join(out, "results.jsonl"), 1, run)
    run.child.kill("SIGINT")
    await new Promise((r) => setTimeout(r, 100))
    run.child.kill("SIGINT")
    const quit = await run.done
    expect(quit.code, quit.stderr).toBe(130)
    expect(quit.stderr).toContain(
      "SIGINT again: quitting without waiting for the pairs in flight; rerun the same command to resume"
    )
    expect(quit.stderr, quit.stderr).not.toContain("pairs are done and written")
  })

  // Started with an IPC channel, as the Nx executor starts it: the channel closes when the executor
  // ends, however it ends; and Nx signals a task's processes more than once when it stops it.
  it("started with an IPC channel: its closing stops the sweep as SIGTERM does (pairs in flight finish, outputs written, lock released, 130)", async () => {
    const out = path.join(dir, "runs/parent-gone")
    const run = start(["sweep", "--config", config("parent-gone"), "--out", out], env, { ipc: true })
    await waitForLines(path.join(out, "results.jsonl"), 1, run)
    run.child.disconnect()
    const stopped = await run.done
    expect(stopped.code, stopped.stderr).toBe(130)
    expect(stopped.stderr).toContain(
      "the process that started cupid-lab has ended: finishing the pairs in flight, then writing results, summary and report\n"
    )
    expect(stopped.stderr).toMatch(/interrupted: \d+ of 18 pairs are done and written/)
    expect(fs.existsSync(path.join(out, ".lock"))).toBe(false)
    expect(
      (JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as { interrupted: boolean }).interrupted
    ).toBe(true)
  })

  it("started with an IPC channel: a repeated SIGTERM is the same stop, not a quit", async () => {
    const out = path.join(dir, "runs/repeated")
    const run = start(["sweep", "--config", config("repeated"), "--out", out], env, { ipc: true })
    await waitForLines(path.join(out, "results.jsonl"), 1, run)
    run.child.kill("SIGTERM")
    await new Promise((r) => setTimeout(r, 100))
    run.child.kill("SIGTERM")
    const stopped = await run.done
    expect(stopped.code, stopped.stderr).toBe(130)
    expect(stopped.stderr).toContain(
      "SIGTERM: finishing the pairs in flight, then writing results, summary and report\n"
    )
    expect(stopped.stderr).not.toContain("quitting without waiting")
    expect(stopped.stderr).toMatch(/interrupted: \d+ of 18 pairs are done and written/)
    expect(fs.existsSync(path.join(out, ".lock"))).toBe(false)
  })
})

describe("the line an interrupted sweep prints", () => {
  it("leaves the total out while it is not known", async () => {
    const { interruptedLine } = await import("../src/cli/commands/Sweep.js")
    expect(interruptedLine({ done: 106, total: undefined })).toBe(
      "interrupted: 106 pairs are done and written; rerun the same command to resume"
    )
    expect(interruptedLine({ done: 3, total: 18 })).toBe(
      "interrupted: 3 of 18 pairs are done and written; rerun the same command to resume"
    )
  })
})
