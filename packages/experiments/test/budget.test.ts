/**
 * A sweep's budget (`budget.usd`, `--budget-usd`): refused before any work when the dry run's
 * estimate is over it, stopped at the pair that could pass it (exit code 4, outputs written,
 * run.json saying so), resumed by a rerun with a larger budget. The model is a loopback
 * OpenAI-compatible server whose every answer reports the same token counts, so each pair's cost is
 * known exactly.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Config, Budget, PairLoop } from "@cupid-lab/runner"
import type { RunInfo } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { lines, tempDir } from "./support.js"

// Every answer: 100,000 prompt and 50,000 completion tokens; at $1 and $2 per million that is
// 0.1 + 0.1 = $0.20 per call, and a pair makes one call (the generator; the scorers call no model).
const usage = { promptTokens: 100_000, completionTokens: 50_000 }
const perPairUsd = 0.2

const config = (dir: string, baseURL: string) =>
  [
    "name: budget",
    `data: { source: "synthetic:personas=2,seed=3" }`,
    "seed: 1",
    `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
    "models:",
    `  subject: { provider: openai, model: test-subject, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY }`,
    "pipeline:",
    "  retriever: { use: recency, k: 2 }",
    "  generator: { use: llm, model: subject, preference: gold }",
    `scorers: [{ use: retrieval, ks: [2] }, { use: cost, prices: { "openai/test-subject": { prompt: 1, completion: 2 } } }]`,
    "concurrency: 1"
  ].join("\n") + "\n"

const setup = Effect.gen(function* () {
  const server = yield* OpenAiServer.make({ chat: () => ({ content: "Here is the answer, step by step.", usage }) })
  const dir = tempDir("cupid-budget-")
  fs.writeFileSync(path.join(dir, "budget.yaml"), config(dir, server.baseURL))
  const out: Array<string> = [],
    err: Array<string> = []
  const io = {
    configDirs: [dir],
    stdout: (t: string) => void out.push(t),
    stderr: { write: (t: string) => void err.push(t) },
    env: { CUPID_TEST_KEY: "sk-test" }
  }
  const run = (...args: ReadonlyArray<string>) => {
    out.length = 0
    err.length = 0
    return Commands.main(["sweep", "--config", "budget", "--out", path.join(dir, "run"), ...args], io)
  }
  return { server, dir, run, out, err, runDir: path.join(dir, "run") }
})

const runInfo = (dir: string): RunInfo.RunInfo =>
  JSON.parse(fs.readFileSync(path.join(dir, "run.json"), "utf8")) as RunInfo.RunInfo

describe("a sweep's budget against a priced loopback model", () => {
  it.scopedLive(
    "refuses to start over the estimate; stops at the pair that could pass it; a larger budget resumes",
    () =>
      Effect.gen(function* () {
        const { server, run, out, err, runDir } = yield* setup

        // The dry run's estimate: its tokens at the configured prices.
        expect(yield* run("--dry-run"), err.join("")).toBe(0)
        const m = /openai\/test-subject: 6 to send \((\d+) prompt \+ (\d+) completion tokens\)/.exec(out.join(""))
        expect(m, out.join("")).not.toBeNull()
        const estimateMicro = Number(m![1]) * 1 + Number(m![2]) * 2
        expect(estimateMicro).toBeGreaterThan(100)

        expect(yield* run("--dry-run", "--budget-usd", "0.0001"), err.join("")).toBe(0)
        expect(out.join("")).toContain(
          "budget: $0.0001 (the sweep would be refused: the estimate is over it or a model has no price)"
        )

        // (a) Under the estimate: refused before any request, naming the estimate, the budget and the way out.
        expect(yield* run("--budget-usd", "0.0001"), err.join("")).toBe(4)
        const refusal = err.join("")
        expect(refusal).toContain(`the 6 pairs to run would cost about ${Budget.dollars(estimateMicro)}`)
        expect(refusal).toContain("more than the budget of $0.0001")
        expect(refusal).toContain("--budget-usd")
        expect(server.requests).toHaveLength(0)
        expect(fs.existsSync(path.join(runDir, "results.jsonl"))).toBe(false)

        // (b) $0.50: the estimate (well under a cent) passes. Pair 1 is admitted on the estimate
        // (0 + 1 x estimate/6 <= 0.50) and costs $0.20; pair 2: 0.20 + 0.20 = 0.40 <= 0.50, admitted;
        // pair 3: 0.40 + 0.20 = 0.60 > 0.50, refused. So 2 pairs run and $0.40 is spent.
        expect(yield* run("--budget-usd", "0.5"), err.join("")).toBe(4)
        expect(server.requests).toHaveLength(2)
        expect(err.join("")).toContain("the budget stopped the run: $0.40 spent of $0.50")
        expect(err.join("")).toContain("2 of ")
        expect(lines(path.join(runDir, "results.jsonl"))).toHaveLength(2)
        for (const f of ["summary.json", "report.md", "run.json"])
          expect(fs.existsSync(path.join(runDir, f)), f).toBe(true)
        const stopped = runInfo(runDir)
        expect(stopped.stopped).toBe("budget")
        expect(stopped.interrupted).toBe(false)
        expect(stopped.budget).toEqual({ usd: 0.5, estimatedUsd: estimateMicro / 1e6, spentUsd: 2 * perPairUsd })
        expect(stopped.pairs.ran).toBe(2)

        // A larger budget resumes: the 4 remaining pairs run ($0.80 of $1.00: the fourth is admitted
        // at 0.60 + 0.20 = 0.80, the last at 0.80 + 0.20 = 1.00 <= 1.00).
        expect(yield* run("--budget-usd", "1"), err.join("")).toBe(0)
        expect(server.requests).toHaveLength(6)
        expect(err.join("")).toContain("resuming")
        expect(out.join("")).toContain("6/6 pairs done (4 this run), 0 failed this run")
        const done = runInfo(runDir)
        expect(done.stopped).toBeUndefined()
        expect(done.budget?.spentUsd).toBeCloseTo(4 * perPairUsd, 9)
        expect(done.pairs).toMatchObject({ total: 6, resumed: 2, ran: 4 })
      })
  )

  it.scopedLive("a model without a price is refused when a budget is set", () =>
    Effect.gen(function* () {
      const { dir, run, err, server } = yield* setup
      const file = path.join(dir, "budget.yaml")
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(`"openai/test-subject"`, `"openai/other-model"`))
      expect(yield* run("--budget-usd", "5"), err.join("")).toBe(4)
      expect(err.join("")).toContain("budget: no price for openai/test-subject")
      expect(server.requests).toHaveLength(0)
    })
  )
})

describe("the budget's admission rule", () => {
  it.live("a refused pair stops the pair loop after the pairs in flight, and the loop ends normally", () =>
    Effect.gen(function* () {
      const finished: Array<number> = []
      const loop = yield* PairLoop.run({
        items: Stream.range(1, 10),
        expand: (i) => [i],
        admit: (i) => i < 4,
        work: (i) => Effect.sleep("20 millis").pipe(Effect.zipRight(Effect.sync(() => finished.push(i)))),
        concurrency: 2,
        tick: { every: "1 second", run: Effect.void }
      }).pipe(Effect.exit)
      expect(Exit.isSuccess(loop)).toBe(true)
      // Pairs 1 to 3 were admitted and all finished; nothing from 4 on ran.
      expect([...finished].sort()).toEqual([1, 2, 3])
    })
  )

  it.effect("budget.usd must be a positive number; --budget-usd overrides it", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.flip(Config.parse("budget: { usd: -1 }\npipeline: { retriever: all }\n", "b.yaml"))
      expect(bad.message).toMatch(/^b\.yaml: budget\.usd: /)
      const ok = yield* Config.parse("budget: { usd: 2 }\npipeline: { retriever: all }\n", "b.yaml")
      expect(ok.budget).toEqual({ usd: 2 })
      expect(Config.withOverrides(ok, { budgetUsd: 5 }).budget).toEqual({ usd: 5 })
      // Not part of the run's identity.
      expect(Config.hash(Config.withOverrides(ok, { budgetUsd: 5 }))).toBe(Config.hash(ok))
    })
  )

  const prices = { "openai/m": { prompt: 1, completion: 0 } }
  const call = (promptTokens: number, cached = false) => ({
    stage: "infer",
    provider: "openai",
    model: "m",
    kind: "complete" as const,
    promptTokens,
    completionTokens: 0,
    cached
  })

  it("admits while spent + (in flight + 1) x margin fits, the margin being the larger of the estimate per pair and the dearest pair", () => {
    // Budget 100 micro-dollars, estimate 40 for 4 pairs: 10 per pair.
    const t = Budget.tracker({ budgetMicro: 100, estimateMicro: 40, pairsToRun: 4, prices })
    expect(t.admit()).toBe(true) // 0 + 1 x 10
    expect(t.admit()).toBe(true) // 0 + 2 x 10
    t.record([call(30)]) // spent 30, dearest 30, 1 in flight
    // 30 + 2 x 30 = 90 <= 100
    expect(t.admit()).toBe(true)
    t.record([call(5)])
    t.record([call(50, true)]) // cached: costs nothing; spent 35, none in flight
    // 35 + 1 x 30 = 65 <= 100; then 35 + 2 x 30 = 95 <= 100; then 35 + 3 x 30 = 125 > 100
    expect(t.admit()).toBe(true)
    expect(t.admit()).toBe(true)
    expect(t.admit()).toBe(false)
    expect(t.stopped()).toBe(true)
    // Once stopped, stays stopped even when room frees up.
    t.record([])
    t.record([])
    expect(t.admit()).toBe(false)
    expect(t.spend().spentUsd).toBe(35 / 1e6)
  })

  it("formats dollars with cents at least and the digits a small sum needs", () => {
    expect(Budget.dollars(400_000)).toBe("$0.40")
    expect(Budget.dollars(6_100)).toBe("$0.0061")
    expect(Budget.dollars(12_345_678)).toBe("$12.35")
    expect(Budget.dollars(0)).toBe("$0.00")
  })
})
