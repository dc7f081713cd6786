/**
 * The sweep an Nx target started ends with the command that started it, however that command ends.
 * `npx nx run experiments:sweep` runs in a session of its own, its pairs waiting on a slow loopback
 * OpenAI-compatible server; after the first result line, either every process of that session is
 * SIGKILLed (a CI runner ending a step) or Nx alone gets SIGHUP (a closed terminal). Within a few
 * seconds no process of the sweep is left, the sweep has stopped as an interruption (the pairs in
 * flight finished, the outputs written, the lock released), and a rerun completes the run to the
 * bytes of an uninterrupted one; through Nx the stop exits with 130. Linux only (/proc). One Nx run
 * per test, about 5 s.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { RunId } from "@cupid-lab/results"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { Effect, Exit, Scope } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { buildCli, lines, loopbackSweep, tempDir, writeConfig } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
const dir = tempDir("cupid-nx-stop-")
const instances = 60
const scope = Effect.runSync(Scope.make())
/** How long the server takes per answer: long while a sweep is to be stopped (60 pairs, 9 s), else none. */
let answerMs = 0
let config = ""
/** An uninterrupted run of the config. */
const reference = path.join(dir, "reference")
/** What a rerun must reproduce byte for byte (run.json and report.html, which shows it, hold times). */
const outputs = [
  "results.jsonl",
  "results.csv",
  "results.parquet",
  "summary.json",
  "report.md",
  "report.tex",
  "run-id.json"
]

/** Each run names its model cache, so a run to be stopped finds no answer cached by another. */
const envFor = (cache: string) => ({
  ...process.env,
  FORCE_COLOR: "0",
  NX_TUI: "false",
  CUPID_TEST_KEY: "sk-test-not-a-secret",
  CUPID_TEST_CACHE: cache
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Poll `ok` every 25 ms; fail naming `what` after `ms`. */
const until = async (what: string, ms: number, ok: () => boolean): Promise<void> => {
  const started = performance.now()
  while (!ok()) {
    if (performance.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(25)
  }
}

interface Proc {
  readonly pid: number
  readonly session: number
  readonly argv: ReadonlyArray<string>
}

/** The processes of this machine (a process that ends while being read is left out). */
const processes = (): Array<Proc> =>
  fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8")
        // After the command name (in parentheses, which it may contain): state, ppid, pgrp, session.
        const session = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3])
        const argv = fs
          .readFileSync(`/proc/${d}/cmdline`, "utf8")
          .split("\0")
          .filter((a) => a !== "")
        return [{ pid: Number(d), session, argv }]
      } catch {
        return []
      }
    })

/** The live processes whose command line names `out`: npm, Nx, the executor and the CLI of a sweep. */
const sweepProcesses = (out: string) => processes().filter((p) => p.argv.includes(out))

const kill = (pids: ReadonlyArray<number>, signal: NodeJS.Signals) => {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch {
      // gone already
    }
  }
}

/** Run the compiled CLI to its end (asynchronously: the loopback server answers from this process). */
const cupid = (args: ReadonlyArray<string>, cache: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      cwd: dir,
      env: envFor(cache),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = "",
      stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("exit", (code) => resolve({ code, stdout, stderr }))
  })

const outs: Array<string> = []
afterEach(() => {
  // Whatever a failed test left running (an orphaned CLI among them).
  for (const out of outs.splice(0))
    kill(
      sweepProcesses(out).map((p) => p.pid),
      "SIGKILL"
    )
})

beforeAll(async () => {
  await buildCli()
  const server = await Effect.runPromise(
    Scope.extend(
      OpenAiServer.make({ chat: () => sleep(answerMs).then(() => "A reply that keeps to the request.") }),
      scope
    )
  )
  config = writeConfig(
    dir,
    loopbackSweep({
      name: "nx-stop",
      personas: instances / 3,
      cacheDir: "${CUPID_TEST_CACHE}",
      model: "test-subject",
      baseURL: server.baseURL
    })
  )
  const whole = await cupid(["sweep", "--config", config, "--out", reference], path.join(dir, "reference-cache"))
  if (whole.code !== 0) throw new Error(`the uninterrupted run failed: ${whole.stderr}`)
})

afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * Start the Nx target in a session of its own, `stop` it once the first result line is written
 * (given the session's id), check that the sweep stopped as an interruption within a few seconds,
 * and rerun it to the end. Returns what Nx printed and how the command ended.
 */
const stopAndResume = async (name: string, stop: (session: number) => void) => {
  const out = path.join(dir, name)
  const cache = path.join(dir, `${name}-cache`)
  outs.push(out)
  answerMs = 300
  // detached: the child calls setsid(), so its PID is the new session's id.
  const nx: ChildProcess = spawn(
    "npx",
    ["nx", "run", "experiments:sweep", "--config", config, "--out", out, "--output-style=static"],
    {
      cwd: repo,
      env: envFor(cache),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    }
  )
  let printed = ""
  nx.stdout!.on("data", (d: Buffer) => (printed += d.toString()))
  nx.stderr!.on("data", (d: Buffer) => (printed += d.toString()))
  let ended = false
  const exited = new Promise<number | null>((resolve) => nx.on("exit", (code) => resolve(code)))
  void exited.then(() => (ended = true))

  const results = path.join(out, "results.jsonl")
  await until("a first result line", 90_000, () => {
    if (ended) throw new Error(`Nx ended before a result was written:\n${printed}`)
    return fs.existsSync(results) && fs.readFileSync(results, "utf8").includes("\n")
  })
  stop(nx.pid!)
  await until("no process of the sweep left", 5_000, () => sweepProcesses(out).length === 0)

  expect(fs.existsSync(path.join(out, RunId.lockFileName)), "the lock is released").toBe(false)
  const info = JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as { interrupted: boolean }
  expect(info.interrupted).toBe(true)
  const done = lines(results).length
  expect(done).toBeGreaterThan(0)
  expect(done).toBeLessThan(instances)

  answerMs = 0
  const rerun = await cupid(["sweep", "--config", config, "--out", out], cache)
  expect(rerun.code, rerun.stderr).toBe(0)
  expect(rerun.stderr).toContain(`resuming in ${out}: ${done} pairs done`)
  expect(rerun.stdout).toContain(`${instances}/${instances} pairs done (${instances - done} this run)`)
  for (const file of outputs) {
    expect(fs.readFileSync(path.join(out, file)).equals(fs.readFileSync(path.join(reference, file))), file).toBe(true)
  }
  return { printed, code: await exited }
}

describe.skipIf(process.platform !== "linux")("stopping the Nx target stops its sweep", () => {
  it("SIGKILL to every process of the caller's session", async () => {
    await stopAndResume("killed", (session) =>
      kill(
        processes()
          .filter((p) => p.session === session)
          .map((p) => p.pid),
        "SIGKILL"
      )
    )
  })

  it("SIGHUP to Nx alone (a closed terminal)", async () => {
    const { code, printed } = await stopAndResume("hung-up", (session) => {
      const nx = processes().filter(
        (p) => p.session === session && /[/\\]nx(\.js)?$/.test(p.argv[1] ?? "") && p.argv[2] === "run"
      )
      expect(nx.map((p) => p.argv.slice(0, 3))).toHaveLength(1)
      kill(
        nx.map((p) => p.pid),
        "SIGHUP"
      )
    })
    expect(printed).toMatch(/interrupted: \d+ of 60 pairs are done and written; rerun the same command to resume/)
    expect(printed).not.toContain("quitting without waiting")
    expect(code).toBe(130)
  })
})
