/**
 * configs/paper-ablations.yaml end to end: the CLI runs in a child process (`tsx .../cli.ts sweep`),
 * its three models pointed through the config's environment variables at a loopback
 * OpenAI-compatible server that answers every prompt type deterministically
 * (fixtures/paperModel.ts), on the first three instances of the bundled sample (one persona, all
 * three instance types): 5 cells x 3 instances = 15 pairs.
 */
import { Dataset } from "@cupid-lab/data"
import type { Domain } from "@cupid-lab/core"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { NodeTest, ReferenceCheckout } from "@cupid-lab/core/testing"
import type { Calls, ResultLine } from "@cupid-lab/results"
import { Catalog } from "@cupid-lab/viewer"

import { describe, expect } from "@effect/vitest"
import { Chunk, ConfigProvider, Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Commands from "../src/cli/Commands.js"

import { answer, type ChatBody, judgeScores, type Kind, kindOf, referenceDir } from "./fixtures/paperModel.js"
import { cleanEnv, lines, runProcess, tempDir } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const tsx = path.join(repoRoot, "node_modules", ".bin", "tsx")
const cli = path.join(repoRoot, "packages", "experiments", "src", "bin", "cli.ts")
const shipped = path.join(repoRoot, "configs", "paper-ablations.yaml")
const key = "sk-test-SECRET-123"
const cellNames = ["full-history", "oracle-sessions", "summaries", "inferred-preference", "oracle-preference"]

/** The shipped config, with its model cache moved into `dir`; models and endpoints come from the environment. */
const configIn = (dir: string): string => {
  const file = path.join(dir, "paper-ablations.yaml")
  fs.writeFileSync(file, `${fs.readFileSync(shipped, "utf8")}\ncacheDir: ${JSON.stringify(path.join(dir, "cache"))}\n`)
  return file
}

/** The parent's environment without any model settings of its own, plus the test server's, under strict accounting. */
const childEnv = (baseURL: string): Record<string, string> => ({
  ...cleanEnv(),
  NO_COLOR: "1",
  OPENAI_API_KEY: key,
  CUPID_MODEL: "test-subject",
  CUPID_BASE_URL: baseURL,
  CUPID_EVAL_MODEL: "test-evaluator",
  CUPID_EVAL_BASE_URL: baseURL,
  CUPID_MATCHER_MODEL: "test-matcher",
  CUPID_MATCHER_BASE_URL: baseURL,
  CUPID_REFERENCE_DIR: referenceDir,
  // The strict variant: decimals kept, unreadable answers failed (the shipped default, reference,
  // is checked against the authors' code in reference-fidelity.test.ts).
  CUPID_ACCOUNTING: "strict"
})

/** Run the CLI to completion; the server in this process keeps answering meanwhile. */
const runCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  runProcess(tsx, [cli, ...args], { cwd: repoRoot, env })

const read = (file: string) => fs.readFileSync(file, "utf8")
const outputs = (out: string) => ["results.jsonl", "summary.json", "report.md"].map((f) => read(path.join(out, f)))

/** Every file below `dir`, recursively. */
const filesUnder = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name)
    return e.isDirectory() ? filesUnder(p) : [p]
  })

const requestsByKind = (requests: ReadonlyArray<OpenAiServer.RecordedRequest>): Record<string, number> => {
  const counts: Record<string, number> = {}
  for (const r of requests) {
    if (r.fault !== undefined) continue
    const kind = kindOf(r.body as ChatBody) ?? "unknown"
    counts[kind] = (counts[kind] ?? 0) + 1
  }
  return counts
}

const metricOf =
  (summary: ResultLine.Summary) =>
  (cell: string, metric: string, slice: "all" | Domain.CupidType = "all") => {
    const c = summary.cells.find((x) => x.name === cell)
    if (c === undefined) throw new Error(`no cell ${cell}`)
    return c.slices[slice].metrics[metric]?.mean
  }

/** The first three sample instances: one persona, consistent, contrastive and changing. */
const sliceOfSample = Effect.flatMap(Dataset.open("sample", { limit: 3 }), (opened) =>
  Stream.runCollect(opened.instances)
).pipe(Effect.map(Chunk.toReadonlyArray), Effect.orDie)

// Distinct prompts for one persona's 3 instances x 5 cells (the cache sends each once):
// summaries: one log per instance (each instance's 8 sessions in one call); inferences: 3 full
// histories, 2 oracle selections (consistent and contrastive select the same two sessions), 3 sets
// of summaries; replies: those 8 evidence sets without a preference, plus 3 with the inferred and
// 3 with the gold preference; one decomposition and two matchings per distinct inference; one
// judgement per distinct reply.
const expectedRequests: Record<Kind, number> = {
  summarize: 3,
  infer: 8,
  generate: 14,
  decompose: 8,
  match: 16,
  judge: 14
}
const sent = Object.values(expectedRequests).reduce((a, b) => a + b, 0) // 72
const totalCalls = 5 * 3 * 6 + 3 // per pair: infer, generate, decompose, 2 x match, judge; plus one summary call in one cell

describe("paper ablations against a loopback OpenAI-compatible server", () => {
  NodeTest.it.scopedLive(
    "runs the sweep through the CLI; a rerun sends nothing and rewrites the same bytes; the key is never written",
    () =>
      Effect.gen(function* () {
        ReferenceCheckout.need()
        const server = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
        const dir = tempDir("cupid-e2e-")
        const config = configIn(dir)
        const out = path.join(dir, "run")
        const env = childEnv(server.baseURL)
        const args = ["sweep", "--config", config, "--limit", "3", "--out", out]

        const dry = yield* runCli([...args, "--dry-run"], env)
        expect(dry.code, dry.stderr).toBe(0)
        expect(server.requests).toHaveLength(0)
        expect(dry.stdout).toContain(
          `model calls: ${totalCalls} (${sent} would be sent, ${totalCalls - sent} answered by the cache)`
        )
        expect(dry.stdout).toContain("summarize: 3 calls (3 would be sent, 0 answered by the cache)")
        expect(dry.stdout).toContain("infer: 15 calls (8 would be sent, 7 answered by the cache)")
        expect(dry.stdout).toContain("generate: 15 calls (14 would be sent, 1 answered by the cache)")
        expect(dry.stdout).toContain("score: 60 calls (38 would be sent, 22 answered by the cache)")
        const tokens = (label: string) => {
          const m = new RegExp(`${label}: (\\d+) prompt, (\\d+) completion`).exec(dry.stdout)
          if (m === null) throw new Error(`no "${label}" line in:\n${dry.stdout}`)
          return [Number(m[1]), Number(m[2])] as const
        }
        const [toSendPrompt, toSendCompletion] = tokens("estimated tokens to send")
        const [allPrompt, allCompletion] = tokens("estimated tokens of all calls \\(if the cache shared nothing\\)")
        expect(allPrompt).toBeGreaterThan(toSendPrompt)
        expect(allCompletion).toBeGreaterThan(toSendCompletion)
        expect(fs.existsSync(out)).toBe(false)
        expect(fs.existsSync(path.join(dir, "cache"))).toBe(false)

        const first = yield* runCli(args, env)
        expect(first.code, first.stderr).toBe(0)
        expect(first.stdout).toContain("15/15 pairs done (15 this run), 0 failed this run")
        expect(server.requests).toHaveLength(sent)
        expect(requestsByKind(server.requests)).toEqual(expectedRequests)
        expect(new Set(server.requests.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${key}`]))
        expect(new Set(server.requests.map((r) => (r.body as { model: string }).model))).toEqual(
          new Set(["test-subject", "test-evaluator", "test-matcher"])
        )

        const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(results).toHaveLength(15)
        expect(results.filter((r) => r.status !== "ok")).toEqual([])
        expect([...new Set(results.map((r) => r.cellName))]).toEqual(cellNames)
        const summariesLine = results.find((r) => r.cellName === "summaries")!
        expect(summariesLine.summaries).toHaveLength(8)
        expect(summariesLine.summaries![0]!.context).toEqual([expect.stringMatching(/^Session 1 [0-9a-f]{8}\.$/)])
        expect(summariesLine.usage.byStage.summarize?.calls).toBe(1)
        const oracleLine = results.find((r) => r.cellName === "oracle-sessions")!
        expect(oracleLine.selected).toHaveLength(2)
        expect(oracleLine.inference!.preference).toMatch(/^Replies should cite 2 earlier sessions \([0-9a-f]{8}\)\.$/)

        const summary = JSON.parse(read(path.join(out, "summary.json"))) as ResultLine.Summary
        const metric = metricOf(summary)
        expect(summary.cells.map((c) => [c.name, c.usesGold, c.slices.all.n, c.slices.all.failed])).toEqual([
          ["full-history", false, 3, 0],
          ["oracle-sessions", true, 3, 0],
          ["summaries", false, 3, 0],
          ["inferred-preference", false, 3, 0],
          ["oracle-preference", true, 3, 0]
        ])
        expect(summary.cells.map((c) => c.slices.changing.n)).toEqual([1, 1, 1, 1, 1])
        // The judge's decimals are kept: 7.5 stays 7.5.
        expect(cellNames.map((c) => metric(c, "generation.score"))).toEqual([
          judgeScores.none,
          judgeScores.none,
          judgeScores.none,
          judgeScores.inferred,
          judgeScores.gold
        ])
        // Precision side: every inferred item "Partially Covered" = 0.5. Recall side: every gold item
        // "Fully Covered" (1) for the oracle sessions' inference, which cites 2 sessions; else 0.5.
        for (const cell of cellNames) {
          const recall = cell === "oracle-sessions" ? 1 : 0.5
          const f1 = (2 * 0.5 * recall) / (0.5 + recall)
          expect(metric(cell, "inference.precision"), cell).toBe(0.5)
          expect(metric(cell, "inference.recall"), cell).toBe(recall)
          expect(metric(cell, "inference.f1"), cell).toBeCloseTo(f1, 12)
          expect(metric(cell, "inference.precision_micro"), cell).toBe(0.5)
          expect(metric(cell, "inference.recall_micro"), cell).toBe(recall)
          expect(metric(cell, "inference.f1_micro"), cell).toBeCloseTo(f1, 12)
          expect(metric(cell, "inference.f1", "changing"), cell).toBeCloseTo(f1, 12)
        }
        // Two relevant sessions of eight in the full history; the oracle selects exactly them.
        expect(metric("full-history", "retrieval.precision")).toBe(0.25)
        expect(metric("oracle-sessions", "retrieval.precision")).toBe(1)
        expect(metric("full-history", "retrieval.recall")).toBe(1)
        // The stages' calls per instance (the scorers' own calls are not counted): infer + generate,
        // plus one summary call over the whole log.
        expect(cellNames.map((c) => metric(c, "cost.model_calls"))).toEqual([2, 2, 3, 2, 2])

        const before = outputs(out)
        const again = yield* runCli(args, env)
        expect(again.code, again.stderr).toBe(0)
        expect(again.stdout).toContain("15/15 pairs done (0 this run)")
        expect(server.requests).toHaveLength(sent)
        expect(outputs(out)).toEqual(before)

        const files = filesUnder(dir)
        expect(files.length).toBeGreaterThan(sent)
        for (const file of files) expect(fs.readFileSync(file).includes(key), file).toBe(false)
        for (const run of [dry, first, again]) {
          expect(run.stdout.includes(key)).toBe(false)
          expect(run.stderr.includes(key)).toBe(false)
        }
      })
  )

  NodeTest.it.scopedLive(
    "retries a 429 and a 500; records an unreadable judge answer as a failed pair, which alone a rerun retries",
    () =>
      Effect.gen(function* () {
        ReferenceCheckout.need()
        const changing = (yield* sliceOfSample).find((i) => i.type === "changing")!
        // The judge gives one unreadable answer, then answers properly when asked again.
        let unreadableServed = false
        const server = yield* OpenAiServer.make({
          faults: [
            OpenAiServer.Faults.rateLimit({ retryAfterSeconds: 1 }),
            OpenAiServer.Faults.serverError(500, "upstream crashed")
          ],
          chat: (raw) => {
            const body = raw as ChatBody
            const given = answer(body)
            const judgesGoldReplyForChanging =
              given.kind === "judge" &&
              given.mode === "gold" &&
              body.messages[0]!.content.includes(`"${changing.gold.preference}"`)
            if (judgesGoldReplyForChanging && !unreadableServed) {
              unreadableServed = true
              return "The reply is fine overall; I would not put a number on it."
            }
            return given.text
          }
        })
        const dir = tempDir("cupid-e2e-faults-")
        const out = path.join(dir, "run")
        const env = childEnv(server.baseURL)
        const args = ["sweep", "--config", configIn(dir), "--limit", "3", "--out", out]

        const first = yield* runCli(args, env)
        expect(first.code, first.stderr).toBe(0)
        expect(first.stdout).toContain("15/15 pairs done (15 this run), 1 failed this run")
        const runInfo = () => (JSON.parse(read(path.join(out, "run.json"))) as { pairs: unknown }).pairs
        expect(runInfo()).toEqual({ total: 15, resumed: 0, ran: 15, failed: 1, lines: 15 })
        // The two faulted requests were sent again, unchanged, and answered.
        const faulted = server.requests.filter((r) => r.fault !== undefined)
        expect(faulted.map((r) => r.fault)).toEqual(["rate-limit", "server-error"])
        for (const f of faulted) {
          expect(
            server.requests.some((r) => r.index > f.index && r.fault === undefined && r.rawBody === f.rawBody)
          ).toBe(true)
        }
        expect(server.requests).toHaveLength(sent + 2)
        // run.json counts what the server received: every request, the two retries among them.
        const calls = () =>
          (JSON.parse(read(path.join(out, "run.json"))) as { modelCalls: Record<string, number> }).modelCalls
        expect(calls()).toMatchObject({ requestsSent: server.requests.length, retries: 2 })
        expect(requestsByKind(server.requests)).toEqual(expectedRequests)

        const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        const failed = results.filter((r) => r.status === "failed")
        expect(failed.map((r) => [r.cellName, r.instance])).toEqual([["oracle-preference", changing.id]])
        expect(failed[0]!.error).toMatchObject({ stage: "score", plugin: "judge", tag: "StageError" })
        expect(failed[0]!.error!.message).toMatch(
          /^score \(judge\): judge model "evaluator" \(openai\/test-evaluator\): expected a score from 1 to 10/
        )
        // The pipeline's own outputs are kept for the failed pair.
        expect(failed[0]!.generation!.text).toMatch(/^Reply \(gold\) [0-9a-f]{8}\.$/)

        const summary = JSON.parse(read(path.join(out, "summary.json"))) as ResultLine.Summary
        const cell = summary.cells.find((c) => c.name === "oracle-preference")!
        expect([
          cell.slices.all.n,
          cell.slices.all.failed,
          cell.slices.changing.n,
          cell.slices.changing.failed
        ]).toEqual([2, 1, 0, 1])
        expect(cell.slices.all.metrics["generation.score"]!.mean).toBe(judgeScores.gold)
        expect(summary.cells.filter((c) => c.name !== "oracle-preference").map((c) => c.slices.all.failed)).toEqual([
          0, 0, 0, 0
        ])

        const okBefore = results.filter((r) => r.status === "ok").map((r) => JSON.stringify(r))
        const again = yield* runCli(args, env)
        expect(again.code, again.stderr).toBe(0)
        expect(again.stdout).toContain("15/15 pairs done (1 this run), 0 failed this run")
        expect(runInfo()).toEqual({ total: 15, resumed: 14, ran: 1, failed: 0, lines: 15 })
        // The unreadable answer was not cached (the judge rejected it), so the retried pair sent
        // exactly one new request, the judge's, and everything else came from the cache.
        expect(server.requests).toHaveLength(sent + 3)
        const rerun = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(rerun.filter((r) => r.status === "failed")).toEqual([])
        const retried = rerun.find((r) => r.cellName === "oracle-preference" && r.instance === changing.id)!
        expect(retried.scores["generation.score"]).toBe(judgeScores.gold)
        expect(rerun.filter((r) => r !== retried).map((r) => JSON.stringify(r))).toEqual(okBefore)
      })
  )

  NodeTest.it.scopedLive(
    "every call is in calls.jsonl as the server saw it; with HTTP 500 on every fourth request, the counts of requests and retries equal the server's log",
    () =>
      Effect.gen(function* () {
        ReferenceCheckout.need()
        const server = yield* OpenAiServer.make({
          chat: (body) => answer(body as ChatBody).text,
          faultFor: (r) => (r.index % 4 === 3 ? OpenAiServer.Faults.serverError(500, "flaky upstream") : undefined)
        })
        const dir = tempDir("cupid-e2e-calls-")
        const out = path.join(dir, "run")
        const run = yield* runCli(
          ["sweep", "--config", configIn(dir), "--limit", "3", "--out", out],
          childEnv(server.baseURL)
        )
        expect(run.code, run.stderr).toBe(0)
        const faulted = server.requests.filter((r) => r.fault !== undefined).length
        expect(faulted).toBeGreaterThan(10)

        const transcripts = lines(path.join(out, "calls.jsonl")).map((l) => JSON.parse(l) as Calls.Line)
        expect(transcripts).toHaveLength(15)
        const calls = transcripts.flatMap((t) => t.calls)
        expect(calls).toHaveLength(totalCalls)
        const failedCalls = calls.filter((c) => c.failed).length
        // Each call that reached the server sent one first request; the rest are its retries.
        const requests = calls.reduce((n, c) => n + c.requests, 0)
        const retries = calls.reduce((n, c) => n + Math.max(0, c.requests - 1), 0)
        expect(requests).toBe(server.requests.length)
        expect(requests - retries).toBe(calls.filter((c) => !c.cached).length)
        expect(failedCalls === 0 ? retries : retries + failedCalls).toBe(faulted)

        // run.json, summary.json and report.md count the same: every request the server received.
        const info = JSON.parse(read(path.join(out, "run.json"))) as { modelCalls: Record<string, number> }
        expect(info.modelCalls).toMatchObject({
          made: totalCalls - calls.filter((c) => c.cached).length,
          cached: calls.filter((c) => c.cached).length,
          requestsSent: server.requests.length,
          retries
        })
        const summary = JSON.parse(read(path.join(out, "summary.json"))) as ResultLine.Summary
        expect(summary.modelCalls).toEqual({
          attempts: 15,
          calls: totalCalls,
          cached: totalCalls - sent,
          requests: server.requests.length,
          retries,
          failed: failedCalls
        })
        expect(read(path.join(out, "report.md"))).toContain(
          `${server.requests.length} HTTP requests sent (${retries} of them retries)`
        )

        // Each call sent is one the server answered, recorded as the server received it: the same
        // body (the `developer` role and max_completion_tokens where the config's models rename
        // them, as the authors' code sends them), the same raw answer.
        const answered = server.requests.filter((r) => r.fault === undefined).map((r) => r.body as ChatBody)
        for (const c of calls.filter((x) => !x.cached && x.sameAs === undefined)) {
          expect(c.request?.messages?.length, c.stage).toBeGreaterThan(0)
          const match = answered.find((b) => JSON.stringify(b.messages) === JSON.stringify(c.request!.messages))
          expect(match, c.stage).toBeDefined()
          expect(c.request).toEqual(match)
          expect(c.answer).toBe(answer(match!).text)
          expect(c.finishReason).toBe("stop")
        }
        expect(calls.some((c) => c.request?.messages?.[0]?.role === "developer")).toBe(true)
        // What each stage read from its answer is recorded beside it.
        const infer = calls.find((c) => c.stage === "infer")!
        expect(infer.read).toMatchObject({ ok: true, value: { preference: expect.stringMatching(/^Replies should/) } })
        expect(
          calls.find((c) => c.stage === "score" && c.read?.ok === true && typeof c.read.value === "number")
        ).toBeDefined()

        // A call whose request and answer an earlier line holds (the cache answered it, or it was
        // sent again after a 500) refers to it (its pair) instead of storing them again; the first
        // record of each call keeps its text.
        const references = calls.filter((c) => c.sameAs !== undefined)
        expect(references.length).toBeGreaterThan(0)
        transcripts.forEach((t, n) => {
          for (const c of t.calls.filter((x) => x.sameAs !== undefined)) {
            expect([c.request, c.answer]).toEqual([undefined, undefined])
            const first = transcripts
              .slice(0, n + 1)
              .filter((e) => e.cell === c.sameAs!.cell && e.instance === c.sameAs!.instance)
              .flatMap((e) => e.calls)
              .find((x) => x.key === c.key && x.answerSha256 === c.answerSha256 && x.request !== undefined)
            expect(first, c.stage).toBeDefined()
          }
        })

        // The viewer serves each cell's calls for an instance, every request and answer filled in.
        const catalog = yield* Catalog.make(dir).pipe(Effect.provide(NodeFileSystem.layer))
        for (const instance of new Set(transcripts.map((t) => t.instance))) {
          const shown = yield* catalog.calls("run", instance)
          expect(shown.unresolved).toBe(0)
          for (const c of shown.cells.flatMap((x) => x.calls)) {
            expect(c.request?.messages?.length, c.stage).toBeGreaterThan(0)
            expect(c.answer).toBe(answer(c.request as unknown as ChatBody).text)
            if (!c.cached) expect(answered).toContainEqual(c.request)
          }
        }
        const view = yield* catalog.calls("run", transcripts[0]!.instance)
        expect(view.cells.map((c) => c.cell).sort()).toEqual(
          transcripts
            .filter((t) => t.instance === transcripts[0]!.instance)
            .map((t) => t.cell)
            .sort()
        )
        expect(view.cells.every((c) => c.attempts === 1 && c.calls.length >= 6)).toBe(true)
      })
  )

  NodeTest.it.live(
    "the shipped config dry-runs offline with no key, no endpoint and no copy of the authors' prompts, and says what it priced",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("cupid-e2e-dry-")
        let stdout = "",
          stderr = ""
        const code = yield* Commands.main(
          ["sweep", "--config", configIn(dir), "--limit", "3", "--out", path.join(dir, "run"), "--dry-run"],
          {
            configDirs: [],
            env: {},
            stdout: (t) => void (stdout += t),
            stderr: { write: (t: string) => void (stderr += t) }
          }
        ).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
        // Without the authors' files (no checkout, no network) each is priced by a stand-in of its size.
        const warnings = stderr.split("\n").filter((l) => l !== "")
        expect(warnings.length).toBeGreaterThan(0)
        for (const w of warnings)
          expect(w).toMatch(/^warning: the authors' \S+ is not available \(set CUPID_REFERENCE_DIR or referenceDir/)
        expect(code).toBe(0)
        expect(stdout).toContain(
          `model calls: ${totalCalls} (${sent} would be sent, ${totalCalls - sent} answered by the cache)`
        )
        expect(stdout).toContain("openai/gpt-4o-2024-11-20")
        expect(fs.existsSync(path.join(dir, "run"))).toBe(false)
      })
  )
})
