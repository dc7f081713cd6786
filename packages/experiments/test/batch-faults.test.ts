/**
 * Provider batch jobs in this process (`Commands.main`) against the loopback server's Batch API,
 * each test one way a batch goes or is kept from going: the dry run's forecast at batch prices
 * and a budget between the two forecasts; a wave the budget refuses before it is uploaded; a batch
 * that expires with lines unanswered (only those go into the next wave); a line the provider
 * fails (a failed pair, retried by a rerun); and a batch created on a file whose creation the
 * journal never recorded (found through the provider's list, not submitted again).
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import OpenAI, { toFile } from "openai"
import * as Commands from "../src/cli/Commands.js"
import { commandIo, lines, tempDir } from "./support.js"

const reply = "Here are the steps, numbered, as you like them."
// Every answer reports 1,000 prompt and 100 completion tokens: $1 and $4 per million make a call
// $0.0014 sent directly and $0.0007 in a batch.
const usage = { promptTokens: 1_000, completionTokens: 100 }

const config = (dir: string, baseURL: string, extra: ReadonlyArray<string> = []) =>
  [
    "name: batched",
    `data: { source: "synthetic:personas=1,seed=9" }`,
    `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
    "models:",
    `  subject: { provider: openai, model: test-subject, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, maxTokens: 1000, batch: { pollMs: 10, pollMaxMs: 40 } }`,
    "pipeline:",
    "  retriever: { use: recency, k: 2 }",
    "  generator: { use: llm, model: subject, preference: gold }",
    `scorers: [{ use: retrieval, ks: [2] }, { use: cost, prices: { "openai/test-subject": { prompt: 1, completion: 4 } } }]`,
    ...extra
  ].join("\n") + "\n"

const setup = (batch: OpenAiServer.BatchOptions = {}, extra: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const server = yield* OpenAiServer.make({ chat: () => ({ content: reply, usage }), batch })
    const dir = tempDir("cupid-batch-faults-")
    fs.writeFileSync(path.join(dir, "batched.yaml"), config(dir, server.baseURL, extra))
    const { out, err, io } = commandIo(dir)
    const runDir = path.join(dir, "run")
    const run = (...args: ReadonlyArray<string>) => {
      out.length = 0
      err.length = 0
      return Commands.main(["sweep", "--config", "batched", "--out", runDir, ...args], io)
    }
    return { server, dir, run, out, err, runDir }
  })

const results = (dir: string) =>
  lines(path.join(dir, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
const chat = (server: OpenAiServer.OpenAiServer) =>
  server.requests.filter((r) => r.path === "/v1/chat/completions").length
const uploads = (server: OpenAiServer.OpenAiServer) =>
  server.requests.filter((r) => r.method === "POST" && r.path === "/v1/files").length

describe("provider batch jobs, one fault at a time", () => {
  it.scopedLive(
    "the dry run forecasts batch prices; a budget below the batch forecast refuses before the first upload",
    () =>
      Effect.gen(function* () {
        const { server, run, out, err } = yield* setup()
        expect(yield* run("--dry-run"), err.join("")).toBe(0)
        const text = out.join("")
        const pairs = Number(/pairs: (\d+) /.exec(text)![1])
        expect(pairs).toBeGreaterThan(1)
        expect(text).toContain("as batch jobs at 50% of the list price")
        const forecast =
          /batch forecast: \$([\d.]+) with openai\/test-subject as batch jobs, against \$([\d.]+) sent one by one/.exec(
            text
          )
        expect(forecast, text).not.toBeNull()
        const [batchUsd, directUsd] = [Number(forecast![1]), Number(forecast![2])]
        expect(batchUsd).toBeCloseTo(directUsd / 2, 6)
        expect(server.requests).toHaveLength(0)

        // Between the two forecasts: within the budget at batch prices.
        expect(yield* run("--dry-run", "--budget-usd", ((batchUsd + directUsd) / 2).toFixed(6))).toBe(0)
        expect(out.join("")).toContain("the estimate is within it")
        // Below the batch forecast: refused before the first upload.
        expect(yield* run("--budget-usd", (batchUsd / 2).toFixed(6))).toBe(4)
        expect(err.join("")).toContain("more than the budget")
        expect(server.requests).toHaveLength(0)
      })
  )

  it.scopedLive("a wave that could pass the budget is refused before it is uploaded", () =>
    Effect.gen(function* () {
      // The dry run prices answers by their stand-ins (a few tokens), a wave by its token limits (1,000
      // each, $0.002 a call at the batch price): a budget half a token limit per pair above the forecast
      // passes the first and refuses the second.
      const { server, run, out, err, runDir } = yield* setup()
      expect(yield* run("--dry-run")).toBe(0)
      const pairs = Number(/pairs: (\d+) /.exec(out.join(""))![1])
      const forecast = Number(/batch forecast: \$([\d.]+)/.exec(out.join(""))![1])
      const code = yield* run("--budget-usd", (forecast + pairs * 0.001).toFixed(6))
      expect(uploads(server)).toBe(0)
      expect(chat(server)).toBe(0)
      const failed = results(runDir).filter((r) => r.status !== "ok")
      expect(failed.length).toBeGreaterThan(0)
      expect(JSON.stringify(failed[0]!.error)).toContain("the budget refused a wave of")
      // The budget stopped the run: exit code 4, the refused pairs failed with the reason (a rerun with a larger budget retries them).
      expect(code).toBe(4)
      expect(err.join("")).not.toContain("submitted batch")
    })
  )

  it.scopedLive("an expired batch's unanswered lines, and only those, go into the next wave", () =>
    Effect.gen(function* () {
      // One line per poll; the second in-progress poll expires the batch with the rest unanswered.
      const { server, run, err, runDir } = yield* setup({ linesPerPoll: 1, expireAfterPolls: 1 })
      expect(yield* run(), err.join("")).toBe(0)
      expect(chat(server)).toBe(0)
      const [first, ...rest] = server.batches.all()
      expect(first!.status).toBe("expired")
      const answered = new Set(
        lines(path.join(runDir, "calls.jsonl")).flatMap((l) =>
          (JSON.parse(l) as { calls: Array<{ batch?: string }> }).calls.flatMap((c) => c.batch ?? [])
        )
      )
      expect(answered.has(first!.id)).toBe(true)
      // Each batch after the first holds exactly the lines the one before it left unanswered.
      const answeredIn = (id: string) => {
        const b = server.batches.get(id)!
        const text = b.output_file_id === null ? "" : server.batches.file(b.output_file_id)!
        return new Set(
          text.split("\n").flatMap((l) => (l === "" ? [] : [(JSON.parse(l) as { custom_id: string }).custom_id]))
        )
      }
      const all = [first!, ...rest]
      for (let i = 1; i < all.length; i++) {
        const done = answeredIn(all[i - 1]!.id)
        const left = server.batches.customIds(all[i - 1]!.id).filter((k) => !done.has(k))
        expect([...server.batches.customIds(all[i]!.id)].sort()).toEqual(left.sort())
      }
      expect(rest.length).toBeGreaterThan(0)
      expect(all.at(-1)!.status).toBe("completed")
      expect(results(runDir).every((r) => r.status === "ok")).toBe(true)
      expect(err.join("")).toContain("without answering this line; it goes into the next wave")
    })
  )

  it.scopedLive("a line the provider fails is a failed pair with the provider's error; a rerun retries only it", () =>
    Effect.gen(function* () {
      let failOne: string | undefined
      const { server, run, runDir } = yield* setup({
        failLine: (customId) => {
          failOne ??= customId
          return customId === failOne ? { status: 400, message: "this request is malformed (scripted)" } : undefined
        }
      })
      yield* run("--allow-failures")
      const firstRun = results(runDir)
      const failed = firstRun.filter((r) => r.status !== "ok")
      expect(failed).toHaveLength(1)
      expect(JSON.stringify(failed[0]!.error)).toContain(
        "the provider failed this line: this request is malformed (scripted)"
      )
      // The rerun resubmits the failed call alone (the line succeeds once it is no longer the scripted one).
      failOne = "none"
      const before = server.batches.all().length
      yield* run()
      const after = server.batches.all().slice(before)
      expect(after.flatMap((b) => server.batches.customIds(b.id))).toHaveLength(1)
      expect(results(runDir).every((r) => r.status === "ok")).toBe(true)
      expect(chat(server)).toBe(0)
    })
  )

  it.scopedLive("a batch whose creation the journal never recorded is found by its file, not submitted again", () =>
    Effect.gen(function* () {
      const { server, run, err, runDir, dir } = yield* setup()
      // The dry run's requests are what the sweep would send: make one batch of them by hand, as a
      // sweep killed between creating the batch and recording it would have left it.
      expect(yield* run(), err.join("")).toBe(0)
      const journal = lines(path.join(runDir, "batches.jsonl")).map((l) => JSON.parse(l) as Record<string, unknown>)
      const uploaded = journal.find((e) => e.event === "uploaded")!
      const input = server.batches.file(uploaded.file as string)!
      // A fresh run directory and cache: the same calls, an upload recorded, its batch not.
      fs.rmSync(runDir, { recursive: true })
      fs.rmSync(path.join(dir, "cache"), { recursive: true })
      const client = new OpenAI({ apiKey: "sk-test", baseURL: server.baseURL })
      const file = yield* Effect.promise(() =>
        toFile(Buffer.from(input), "wave.jsonl").then((f) => client.files.create({ file: f, purpose: "batch" }))
      )
      const created = yield* Effect.promise(() =>
        client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" })
      )
      fs.mkdirSync(runDir, { recursive: true })
      fs.writeFileSync(
        path.join(runDir, "batches.jsonl"),
        `${JSON.stringify({ ...uploaded, file: file.id })}\n${JSON.stringify({ event: "submitted", file: "cut" }).slice(0, 20)}`
      )
      const batchesBefore = server.batches.all().length
      expect(yield* run(), err.join("")).toBe(0)
      const made = server.batches.all().slice(batchesBefore)
      // The first wave's calls were answered by the batch created by hand; later waves (none here) would be new.
      expect(
        made.filter((b) => server.batches.customIds(b.id).some((k) => server.batches.customIds(created.id).includes(k)))
      ).toEqual([])
      expect(results(runDir).every((r) => r.status === "ok")).toBe(true)
    })
  )
})
