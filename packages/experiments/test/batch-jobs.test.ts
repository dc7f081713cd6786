/**
 * Provider batch jobs through the CLI in a child process, against a loopback server that speaks
 * the OpenAI Batch API (files, batches, output files) and answers every prompt kind of the paper
 * (fixtures/paperModel.ts). The baseline cell of configs/paper-ablations.yaml on three sample
 * instances, with `--batch`:
 * - killed (SIGKILL) while its first batch is pending, then run again: the rerun polls the
 *   recorded batch instead of submitting its calls again, and finishes;
 * - no direct chat request is ever sent, and no call's key is in two batches;
 * - the scores equal a synchronous run's on the same answers, and the cost is half of its cost;
 * - `cupid-lab batches` lists the recorded batches, all completed.
 */
import { NodeTest, ReferenceCheckout } from "@cupid-lab/core/testing"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"
import { beforeAll, describe, expect } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parse as parseYaml, stringify as stringifyYaml } from "yaml"
import { answer, type ChatBody } from "./fixtures/paperModel.js"
import { buildCli, cleanEnv, lines, runProcess, tempDir } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
// The compiled CLI, so that the process killed is the sweep itself (not a wrapper around it).
const cli = path.join(repoRoot, "packages", "experiments", "dist", "cli.mjs")
const node = process.execPath

beforeAll(buildCli)

/** The shipped paper-ablations.yaml with its baseline cell only and its cache in `cache`. */
const configIn = (dir: string, name: string, cache: string): string => {
  const shipped = parseYaml(fs.readFileSync(path.join(repoRoot, "configs", "paper-ablations.yaml"), "utf8")) as {
    cells: ReadonlyArray<{ readonly name: string }>
  }
  const file = path.join(dir, `${name}.yaml`)
  fs.writeFileSync(
    file,
    stringifyYaml({ ...shipped, name, cacheDir: cache, cells: shipped.cells.filter((c) => c.name === "full-history") })
  )
  return file
}

const env = (baseURL: string): Record<string, string> => ({
  ...cleanEnv(),
  NO_COLOR: "1",
  OPENAI_API_KEY: "sk-test-batch",
  // A model the cost scorer has a list price for (the server answers whatever the name).
  CUPID_MODEL: "gpt-4o-2024-08-06",
  CUPID_BASE_URL: baseURL,
  CUPID_EVAL_MODEL: "test-evaluator",
  CUPID_EVAL_BASE_URL: baseURL,
  CUPID_MATCHER_MODEL: "test-matcher",
  CUPID_MATCHER_BASE_URL: baseURL,
  CUPID_REFERENCE_DIR: ReferenceCheckout.dir
})

type Line = ResultLine.ResultLine
const results = (out: string): ReadonlyArray<Line> =>
  lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as Line)

const chatRequests = (server: OpenAiServer.OpenAiServer) =>
  server.requests.filter((r) => r.path === "/v1/chat/completions").length

/** Poll (bounded) until `ready` holds; fails if the process ended first. */
const waitUntil = (ready: () => boolean, exited: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 4800; i++) {
      if (ready()) return true
      if (exited()) return false
      await new Promise((r) => setTimeout(r, 25))
    }
    return false
  })

describe("provider batch jobs", () => {
  NodeTest.it.scopedLive(
    "a sweep killed while its batch is pending resumes it, sends no chat request, pays nothing twice, scores as a synchronous run at half its cost",
    () =>
      Effect.gen(function* () {
        ReferenceCheckout.need()
        // Batches stay in progress until released, so the first process dies with one pending.
        const server = yield* OpenAiServer.make({
          chat: (body) => answer(body as ChatBody).text,
          batch: { hold: true }
        })
        const dir = tempDir("cupid-batch-")
        const childEnv = env(server.baseURL)

        // The synchronous run on the same answers, with a cache of its own.
        const sync = path.join(dir, "sync")
        const direct = configIn(dir, "direct", path.join(dir, "cache-sync"))
        const first = yield* runProcess(node, [cli, "sweep", "--config", direct, "--limit", "3", "--out", sync], {
          cwd: repoRoot,
          env: childEnv
        })
        expect(first.code, first.stderr).toBe(0)
        const sentDirectly = chatRequests(server)
        expect(sentDirectly).toBeGreaterThan(0)

        // The batched run: killed once its first batch is recorded and pending.
        const out = path.join(dir, "batched")
        const batched = configIn(dir, "batched", path.join(dir, "cache-batch"))
        const args = [cli, "sweep", "--config", batched, "--limit", "3", "--out", out, "--batch"]
        const child = spawn(node, args, { cwd: repoRoot, env: childEnv, stdio: ["ignore", "pipe", "pipe"] })
        let exited = false
        const gone = new Promise<void>((resolve) =>
          child.on("exit", () => {
            exited = true
            resolve()
          })
        )
        const journal = path.join(out, "batches.jsonl")
        const recorded = () => fs.existsSync(journal) && fs.readFileSync(journal, "utf8").includes('"submitted"')
        // Killed while it polls the batch.
        const polled = () => server.requests.some((r) => r.method === "GET" && /^\/v1\/batches\/[^/]+$/.test(r.path))
        expect(
          yield* waitUntil(
            () => recorded() && polled(),
            () => exited
          )
        ).toBe(true)
        child.kill("SIGKILL")
        yield* Effect.promise(() => gone)
        expect(server.batches.all().map((b) => b.status)).toEqual(["in_progress"])
        expect(server.batches.get(server.batches.all()[0]!.id)!.request_counts.completed).toBe(0)
        expect(fs.existsSync(path.join(out, "results.jsonl")) ? results(out) : []).toEqual([])

        // Run again: the pending batch is polled, not submitted again; later waves follow (each
        // new batch is held too, and released here as soon as it exists).
        const releasing = setInterval(() => server.batches.release(), 10)
        const again = yield* runProcess(node, args, { cwd: repoRoot, env: childEnv }).pipe(
          Effect.ensuring(Effect.sync(() => clearInterval(releasing)))
        )
        expect(again.code, again.stderr).toBe(0)
        expect(again.stdout).toContain("3/3 pairs done (3 this run), 0 failed this run")

        expect(chatRequests(server)).toBe(sentDirectly)
        const all = server.batches.all()
        expect(all.length).toBeGreaterThan(1)
        expect(all.every((b) => b.status === "completed")).toBe(true)
        const keys = all.flatMap((b) => server.batches.customIds(b.id))
        expect(new Set(keys).size).toBe(keys.length)
        // Every call the synchronous run sent went into exactly one batch.
        expect(keys.length).toBe(sentDirectly)

        const a = results(sync),
          b = results(out)
        expect(b.map((l) => l.instance)).toEqual(a.map((l) => l.instance))
        const { "cost.usd": syncUsd, ...syncScores } = a[0]!.scores
        expect(syncUsd).toBeGreaterThan(0)
        for (let i = 0; i < a.length; i++) {
          const { "cost.usd": usdA, ...scoresA } = a[i]!.scores
          const { "cost.usd": usdB, ...scoresB } = b[i]!.scores
          expect(scoresB).toEqual(scoresA)
          // Rounded per call in micro-dollars: within a micro-dollar per call of half.
          expect(Math.abs(Number(usdB) - Number(usdA) / 2)).toBeLessThanOrEqual(2e-6)
        }
        expect(Object.keys(syncScores).length).toBeGreaterThan(5)

        const listed = yield* runProcess(node, [cli, "batches", "--run", out], { cwd: repoRoot, env: childEnv })
        expect(listed.code, listed.stderr).toBe(0)
        const rows = listed.stdout.trim().split("\n")
        expect(rows).toHaveLength(all.length)
        for (const row of rows) expect(row).toMatch(/^batch_\S+ {2}completed {2}\d+\/\d+ done/)
        const cancel = yield* runProcess(node, [cli, "batches", "--run", out, "--cancel"], {
          cwd: repoRoot,
          env: childEnv
        })
        expect(cancel.stdout).toContain("no batch to cancel")
      })
  )

  NodeTest.it.scopedLive(
    "Ctrl-C while a batch is pending leaves it running and says how to resume or cancel; --cancel cancels it; a rerun submits its calls again",
    () =>
      Effect.gen(function* () {
        ReferenceCheckout.need()
        const server = yield* OpenAiServer.make({
          chat: (body) => answer(body as ChatBody).text,
          batch: { hold: true }
        })
        const dir = tempDir("cupid-batch-int-")
        const childEnv = env(server.baseURL)
        const out = path.join(dir, "batched")
        const batched = configIn(dir, "batched", path.join(dir, "cache"))
        const args = [cli, "sweep", "--config", batched, "--limit", "3", "--out", out, "--batch"]
        const child = spawn(node, args, { cwd: repoRoot, env: childEnv, stdio: ["ignore", "pipe", "pipe"] })
        let stderr = "",
          exited = false
        child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
        const gone = new Promise<number | null>((resolve) =>
          child.on("exit", (code) => {
            exited = true
            resolve(code)
          })
        )
        const journal = path.join(out, "batches.jsonl")
        const recorded = () => fs.existsSync(journal) && fs.readFileSync(journal, "utf8").includes('"submitted"')
        expect(yield* waitUntil(recorded, () => exited)).toBe(true)
        child.kill("SIGINT")
        const code = yield* Effect.promise(() => gone)
        expect(code, stderr).toBe(130)
        const [pending] = server.batches.all()
        expect(pending!.status).toBe("in_progress")
        expect(stderr).toContain(`1 provider batch job is still running (${pending!.id}), recorded in batches.jsonl`)
        expect(stderr).toContain(`npx cupid-lab batches --run ${out} --cancel`)
        // The pairs waiting on it are not done: nothing is written for them.
        expect(fs.existsSync(path.join(out, "results.jsonl")) ? results(out) : []).toEqual([])

        const listed = yield* runProcess(node, [cli, "batches", "--run", out], { cwd: repoRoot, env: childEnv })
        expect(listed.stdout).toMatch(new RegExp(`^${pending!.id} {2}in_progress {2}0/\\d+ done`))
        const cancelled = yield* runProcess(node, [cli, "batches", "--run", out, "--cancel"], {
          cwd: repoRoot,
          env: childEnv
        })
        expect(cancelled.stdout).toContain(`cancelled 1 batch: ${pending!.id}`)
        expect(server.batches.get(pending!.id)!.status).toMatch(/^cancel/)

        // A rerun does not wait on the cancelled batch: its calls go into a new one.
        const releasing = setInterval(() => server.batches.release(), 10)
        const again = yield* runProcess(node, args, { cwd: repoRoot, env: childEnv }).pipe(
          Effect.ensuring(Effect.sync(() => clearInterval(releasing)))
        )
        expect(again.code, again.stderr).toBe(0)
        expect(results(out).every((l) => l.status === "ok")).toBe(true)
        expect(chatRequests(server)).toBe(0)
      })
  )

  /** A one-wave sweep (a generator per instance) whose batches poll quickly. */
  const small = (dir: string, baseURL: string) => {
    const file = path.join(dir, "small.yaml")
    fs.writeFileSync(
      file,
      [
        "name: small",
        `data: { source: "synthetic:personas=1,seed=9" }`,
        `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
        "models:",
        `  subject: { provider: openai, model: test-subject, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, batch: { pollMs: 10, pollMaxMs: 40 } }`,
        "pipeline:",
        "  retriever: { use: recency, k: 2 }",
        "  generator: { use: llm, model: subject, preference: gold }",
        "scorers: [{ use: retrieval, ks: [2] }]"
      ].join("\n") + "\n"
    )
    return file
  }

  const steps = [
    {
      step: "uploading its file",
      route: (r: OpenAiServer.RecordedRequest) => r.method === "POST" && r.path === "/v1/files"
    },
    {
      step: "creating its batch",
      route: (r: OpenAiServer.RecordedRequest) => r.method === "POST" && r.path === "/v1/batches"
    },
    {
      step: "downloading the answers",
      route: (r: OpenAiServer.RecordedRequest) => r.method === "GET" && /^\/v1\/files\/[^/]+\/content$/.test(r.path)
    }
  ]
  for (const { step, route } of steps) {
    NodeTest.it.scopedLive(`a sweep killed while ${step} resumes without a second batch of the same calls`, () =>
      Effect.gen(function* () {
        // The first such request hangs until the process is killed; the rerun's goes through.
        let held = false
        const server = yield* OpenAiServer.make({
          chat: () => "Numbered steps, as you like them.",
          batch: {},
          faultFor: (r) => {
            if (held || !route(r)) return undefined
            held = true
            return OpenAiServer.Faults.slow(600_000)
          }
        })
        const dir = tempDir("cupid-batch-kill-")
        const childEnv = { ...cleanEnv(), NO_COLOR: "1", CUPID_TEST_KEY: "sk-test" }
        const out = path.join(dir, "run")
        const args = [cli, "sweep", "--config", small(dir, server.baseURL), "--out", out]
        const child = spawn(node, args, { cwd: repoRoot, env: childEnv, stdio: ["ignore", "pipe", "pipe"] })
        let exited = false
        const gone = new Promise<void>((resolve) =>
          child.on("exit", () => {
            exited = true
            resolve()
          })
        )
        expect(
          yield* waitUntil(
            () => server.requests.some(route),
            () => exited
          )
        ).toBe(true)
        child.kill("SIGKILL")
        yield* Effect.promise(() => gone)

        const again = yield* runProcess(node, args, { cwd: repoRoot, env: childEnv })
        expect(again.code, again.stderr).toBe(0)
        expect(results(out).every((l) => l.status === "ok")).toBe(true)
        expect(chatRequests(server)).toBe(0)
        const keys = server.batches.all().flatMap((b) => server.batches.customIds(b.id))
        expect(keys.length).toBeGreaterThan(0)
        expect(new Set(keys).size).toBe(keys.length)
        expect(server.batches.all()).toHaveLength(1)
      })
    )
  }
})
