/**
 * Sweeps against memory services over HTTP (docs/http-systems.md), end to end:
 *
 * - the example service (examples/memory-service/server.py, a real python3 process on a free port)
 *   ranking by recency, and a TypeScript service ranking by position, score exactly what the
 *   built-in `recency` retriever with k 2 scores on the same data; each history is ingested once;
 * - a canary: distinctive strings in every gold field of the test instances (and the persona id)
 *   are in no request body the service received;
 * - a canary secret in a header's variable reaches the service and nothing the run writes, nor the
 *   cache; a bad answer is a failed pair, never a score; a rerun is answered by the cache; the
 *   calls are in calls.jsonl as the viewer reads them.
 */
import { Domain } from "@cupid-lab/core"
import { HttpSystem } from "@cupid-lab/providers"
import { LoopbackServer } from "@cupid-lab/providers/testing"
import { Calls } from "@cupid-lab/results"
import { Config } from "@cupid-lab/runner"
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Schema } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Commands from "../src/cli/Commands.js"
import * as Sweeps from "../src/Sweeps.js"
import { commandIo, lines, opener, tempDir } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const decodeQuery = Schema.decodeUnknownSync(HttpSystem.Query)

interface Line {
  readonly cellName: string
  readonly instance: string
  readonly status: string
  readonly selected: ReadonlyArray<string> | null
  readonly scores: Readonly<Record<string, number>>
  readonly error: { readonly message: string } | null
  readonly inference: { readonly preference: string } | null
  readonly generation: { readonly text: string } | null
}

const results = (dir: string): ReadonlyArray<Line> => lines(path.join(dir, "results.jsonl")).map((l) => JSON.parse(l))

/** Per instance, a cell's status, selection and scores, to set against another cell's. */
const byInstance = (rows: ReadonlyArray<Line>, cell: string) =>
  Object.fromEntries(
    rows.filter((r) => r.cellName === cell).map((r) => [r.instance, [r.status, r.selected, r.scores]] as const)
  )

/** The example service as a child process on a free port, stopped (by its pid) with the scope. */
const exampleService = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.acquireRelease(
    Effect.promise(
      () =>
        new Promise<{ readonly url: string; readonly pid: number; readonly stop: () => void }>((resolve, reject) => {
          const child = spawn(
            "python3",
            [path.join(repo, "examples/memory-service/server.py"), "--port", "0", ...args],
            {
              env: { ...process.env, ...env },
              stdio: ["ignore", "pipe", "pipe"]
            }
          )
          let out = "",
            err = ""
          child.stderr.on("data", (d: Buffer) => (err += d.toString()))
          child.on("error", reject)
          child.on("exit", (code) => reject(new Error(`the example service exited (${code}): ${err}`)))
          child.stdout.on("data", (d: Buffer) => {
            out += d.toString()
            const m = /listening on (http:\/\/\S+)/.exec(out)
            if (m !== null) resolve({ url: m[1]!, pid: child.pid!, stop: () => child.kill("SIGTERM") })
          })
        })
    ),
    (service) => Effect.sync(service.stop)
  )

const sampleConfig = (dir: string, url: string) =>
  [
    "name: http-example",
    "data: { source: sample }",
    "seed: 1",
    `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
    "pipeline:",
    "  retriever: all",
    "scorers: [{ use: retrieval, ks: [2, 4] }]",
    "sweep:",
    "  retriever:",
    "    - { use: recency, k: 2 }",
    `    - { use: http, url: ${JSON.stringify(`${url}/rank`)}, k: 2, ingest: true }`,
    "concurrency: 4"
  ].join("\n") + "\n"

describe("the example memory service (python3, standard library)", () => {
  it.scopedLive("ranking by recency, scores exactly what recency with k 2 scores; each history is ingested once", () =>
    Effect.gen(function* () {
      const service = yield* exampleService(["--ranking", "recency"])
      const dir = tempDir("cupid-http-example-")
      fs.writeFileSync(path.join(dir, "example.yaml"), sampleConfig(dir, service.url))
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      expect(yield* Commands.main(["sweep", "--config", "example", "--out", out], io), err.join("")).toBe(0)
      const rows = results(out)
      const cells = [...new Set(rows.map((r) => r.cellName))]
      expect(cells).toHaveLength(2)
      const [recency, http] = [cells.find((c) => c.startsWith("recency"))!, cells.find((c) => c.startsWith("http"))!]
      expect(Object.keys(byInstance(rows, http))).toHaveLength(24)
      expect(byInstance(rows, http)).toEqual(byInstance(rows, recency))
      expect(rows.every((r) => r.status === "ok")).toBe(true)
      const stats = (yield* Effect.promise(() => fetch(`${service.url}/stats`).then((r) => r.json()))) as {
        ingested: Record<string, number>
        queries: number
      }
      expect(stats.queries).toBe(24)
      expect(Object.values(stats.ingested).every((n) => n === 1)).toBe(true)
      const calls = lines(path.join(out, "calls.jsonl")).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
      expect(calls.filter((c) => c.model.endsWith("/rank/ingest"))).toHaveLength(Object.keys(stats.ingested).length)
    })
  )

  it.scopedLive("infers and generates through the service, scored by the offline preference match", () =>
    Effect.gen(function* () {
      const service = yield* exampleService([])
      const dir = tempDir("cupid-http-example-")
      const text = [
        "name: http-stages",
        "data: { source: sample, limit: 3 }",
        `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
        "pipeline:",
        `  retriever: { use: http, url: ${JSON.stringify(`${service.url}/rank`)}, k: 2 }`,
        `  inferrer: { use: http, url: ${JSON.stringify(`${service.url}/infer`)} }`,
        `  generator: { use: http, url: ${JSON.stringify(`${service.url}/generate`)}, preference: inferred }`,
        "scorers: [{ use: retrieval, ks: [2] }, { use: preference-match }]"
      ].join("\n")
      fs.writeFileSync(path.join(dir, "stages.yaml"), text)
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      expect(yield* Commands.main(["sweep", "--config", "stages", "--out", out], io), err.join("")).toBe(0)
      const rows = results(out)
      expect(rows).toHaveLength(3)
      for (const r of rows) {
        expect(r.status).toBe("ok")
        expect(r.inference?.preference.length).toBeGreaterThan(0)
        expect(r.generation?.text).toContain(r.inference!.preference)
        expect(typeof r.scores["inference.f1"]).toBe("number")
      }
    })
  )
})

// Gold fields full of canaries: none may cross the wire.
const canaries = ["CANARY-FACTOR", "CANARY-PREFERENCE", "CANARY-CHECK", "CANARY-SESSION-F", "CANARY-SESSION-P"]
const canaryInstance = (persona: string, type: Domain.CupidType, request: string): Domain.Instance =>
  Domain.fromRow({
    persona_id: persona,
    instance_type: type,
    current_request: request,
    current_context_factor: "CANARY-FACTOR",
    current_contextual_preference: "CANARY-PREFERENCE",
    current_checklist: ["CANARY-CHECK one", "CANARY-CHECK two"],
    prior_interactions: [0, 1, 2, 3, 4].map((i) => ({
      context_factor: i % 2 === 0 ? "CANARY-FACTOR" : `CANARY-SESSION-F${i}`,
      contextual_preference: i === 4 ? "CANARY-PREFERENCE" : `CANARY-SESSION-P${i}`,
      dialogue: [
        { role: "user" as const, content: `Session ${i}: help me plan the week.` },
        { role: "assistant" as const, content: `A plan for week ${i}.` },
        { role: "user" as const, content: `Next time keep it under ${i + 3} lines.` }
      ]
    }))
  })
const instances = [
  canaryInstance("CANARY-PERSONA-A", "consistent", "Plan my week."),
  canaryInstance("CANARY-PERSONA-A", "contrastive", "Plan my month."),
  canaryInstance("CANARY-PERSONA-A", "changing", "Plan my day."),
  canaryInstance("CANARY-PERSONA-B", "changing", "Plan a trip.")
]

const secret = "canary-token-Zq8Lm3Xv7Pw2"

describe("a TypeScript service ranking by position, on the wire", () => {
  it.scopedLive(
    "scores what recency scores; sends no gold, no dataset id and no secret; ingests once; a rerun is free",
    () =>
      Effect.gen(function* () {
        process.env["CUPID_HTTP_TEST_TOKEN"] = secret
        yield* Effect.addFinalizer(() => Effect.sync(() => delete process.env["CUPID_HTTP_TEST_TOKEN"]))
        const authorized = (r: LoopbackServer.RecordedRequest) => r.headers["authorization"] === `Bearer ${secret}`
        const server = yield* LoopbackServer.make({
          routes: {
            "POST /rank": (body, r) => {
              if (!authorized(r)) return new Response("no", { status: 401 })
              const query = decodeQuery(body)
              // A bad answer for one request, echoing the token: a failed pair, never a score.
              if (query.request === "Plan a trip.") return { ranking: [{ id: "s1", score: `high ${secret}` }] }
              return { ranking: query.sessions.map((s) => ({ id: s.id, score: s.position })) }
            },
            "POST /rank/ingest": () => ({})
          },
          // An error echoing the token: retried, then answered; the echo is in no file.
          faults: [LoopbackServer.Faults.status(500, { error: `token Bearer ${secret} overloaded` })]
        })
        const dir = tempDir("cupid-http-wire-")
        const configText = [
          "name: http-wire",
          "data: { source: canaries }",
          `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
          "pipeline:",
          "  retriever: all",
          "scorers: [{ use: retrieval, ks: [2] }]",
          "sweep:",
          "  retriever:",
          "    - { use: recency, k: 2 }",
          `    - { use: http, url: "${server.url}/rank", k: 2, ingest: true, retryBaseMs: 1, retryMaxMs: 5,`,
          '        headers: { Authorization: { env: CUPID_HTTP_TEST_TOKEN, prefix: "Bearer " } } }',
          "concurrency: 4"
        ].join("\n")
        const run = (out: string) =>
          Effect.gen(function* () {
            const config = {
              ...(yield* Config.parse(configText, path.join(dir, "wire.yaml"), {})),
              out,
              outGiven: true
            }
            return yield* Sweeps.sweep(config, { openDataset: opener(instances) })
          })
        const out = path.join(dir, "run")
        const outcome = yield* run(out)
        expect(outcome.pairs.failed).toBe(1)
        const rows = results(out)
        const http = rows.find((r) => r.cellName.startsWith("http"))!.cellName
        const recency = rows.find((r) => r.cellName.startsWith("recency"))!.cellName
        const failed = rows.filter((r) => r.status === "failed")
        expect(failed.map((r) => [r.cellName, r.instance, r.scores])).toEqual([[http, "CANARY-PERSONA-B:changing", {}]])
        expect(failed[0]!.error!.message).toContain(`${server.url}/rank answered with a body that does not follow`)
        expect(failed[0]!.error!.message).toContain("field ranking[0].score: Expected number")
        const ok = (cell: string) =>
          Object.fromEntries(
            Object.entries(byInstance(rows, cell)).filter(([id]) => id !== "CANARY-PERSONA-B:changing")
          )
        expect(Object.keys(ok(http))).toHaveLength(3)
        expect(ok(http)).toEqual(ok(recency))

        // On the wire: every request carried the token, and no body a gold string or the dataset's ids.
        const received = server.requests
        expect(received.every(authorized)).toBe(true)
        for (const r of received) {
          for (const c of [...canaries, "CANARY-PERSONA", "consistent", "contrastive", "changing"])
            expect(r.rawBody, `${r.path}: ${c}`).not.toContain(c)
        }
        // Ingested once per history: persona A's three instances share one, B has its own.
        const ingests = received.filter((r) => r.path === "/rank/ingest")
        expect(ingests).toHaveLength(2)
        for (const r of received.filter((r) => r.path === "/rank")) {
          const first = ingests.findIndex(
            (i) => (i.body as { history: string }).history === decodeQuery(r.body).history
          )
          expect(ingests[first]!.index).toBeLessThan(r.index)
        }

        // The secret is in nothing the run wrote, nor in the cache.
        const files = (root: string): Array<string> =>
          fs
            .readdirSync(root, { recursive: true, encoding: "utf8" })
            .map((f) => path.join(root, f))
            .filter((f) => fs.statSync(f).isFile())
        for (const f of files(dir)) expect(fs.readFileSync(f, "utf8"), f).not.toContain(secret)

        // The calls as calls.jsonl keeps them and the viewer reads them.
        const transcript = yield* Calls.ofInstance(path.join(out, "calls.jsonl"), "CANARY-PERSONA-A:changing")
        expect(transcript.unreadable).toBe(0)
        const calls = [...transcript.byCell.values()].flatMap((c) => c.line.calls)
        const query = calls.find((c) => c.model === `${server.url}/rank`)!
        expect(query.kind).toBe("service")
        expect(query.request).toMatchObject({ url: `${server.url}/rank` })
        expect((query.request as { body: { request: string } }).body.request).toBe("Plan my day.")
        expect(query.read).toMatchObject({ ok: true })

        // A rerun (another directory, the same cache) sends nothing: only the bad answer is asked for again.
        const before = server.requests.length
        yield* run(path.join(dir, "again"))
        const asked = server.requests.slice(before).filter((r) => r.path === "/rank")
        expect(asked.map((r) => decodeQuery(r.body).request)).toEqual(["Plan a trip."])
        const again = results(path.join(dir, "again"))
        for (const cell of [http, recency]) expect(byInstance(again, cell)).toEqual(byInstance(rows, cell))
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
