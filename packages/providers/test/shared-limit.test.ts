/**
 * The rate limit shared through Redis: a real `redis-server` on a loopback port (started here, no
 * persistence), a loopback OpenAI-compatible server that notes when each request arrives, and the
 * `openai` provider with a `limiter` — in three processes at once for the requests limit, in this
 * one for the tokens limit. Skipped, saying so, when redis-server is not installed.
 */
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as OpenAi from "../src/OpenAi.js"
import * as SharedLimit from "../src/SharedLimit.js"
import { freePort, redis, redisServer } from "./fixtures/redis.js"
import { build } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const tsx = path.join(repoRoot, "node_modules", ".bin", "tsx")
const client = fileURLToPath(new URL("./fixtures/limited-client.ts", import.meta.url))

const run = (env: Record<string, string>) =>
  new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child: ChildProcess = spawn(tsx, [client], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout!.on("data", (d: Buffer) => (out += d.toString("utf8")))
    child.stderr!.on("data", (d: Buffer) => (out += d.toString("utf8")))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, out }))
  })

/** The most requests that arrived within any span of `windowMs` (a span opening at each arrival). */
const busiestWindow = (times: ReadonlyArray<number>, windowMs: number): number => {
  const t = [...times].sort((a, b) => a - b)
  let best = 0
  for (let i = 0, j = 0; i < t.length; i++) {
    while (j < t.length && t[j]! < t[i]! + windowMs) j++
    best = Math.max(best, j - i)
  }
  return best
}

describe("options", () => {
  const decode = Schema.decodeUnknownEither(SharedLimit.Options)
  it("need a limit, a redis URL and at least one request per window", () => {
    expect(decode({ redis: "redis://h:1", key: "k" })._tag).toBe("Left")
    expect(decode({ redis: "http://h:1", key: "k", rpm: 5 })._tag).toBe("Left")
    expect(decode({ redis: "redis://h:1", key: "k", rpm: 5, windowMs: 1000 })._tag).toBe("Left") // 5/min in 1 s: < 1
    expect(SharedLimit.perWindow({ rpm: 150, tpm: 9000, windowMs: 2000 })).toEqual({
      requests: 5,
      tokens: 300
    })
    expect(SharedLimit.describe("redis://:hunter2@10.0.0.5:6379/2")).toBe("redis://10.0.0.5:6379/2")
  })
})

describe("a limiter whose Redis cannot be reached", () => {
  it.scopedLive(
    "fails the call, sending no request, with a retryable error naming the server without its password",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const server = yield* OpenAiServer.make({})
        const bundle = yield* build(OpenAi.plugin, {
          baseURL: server.baseURL,
          maxRetries: 0,
          limiter: { redis: `redis://:secret-pw@127.0.0.1:${port}`, key: "down", rpm: 60 }
        })
        const error = yield* Effect.flip(
          bundle.languageModel!.complete({ messages: [{ role: "user", content: "hi" }] })
        )
        expect(error.reason).toContain(
          `shared rate limiter (redis://127.0.0.1:${port}, key down): connection refused (connect ECONNREFUSED 127.0.0.1:${port})`
        )
        expect(error.reason).not.toContain("secret-pw")
        expect(error.retryable).toBe(true)
        // The wait that ended in the failure is still reported (its length is not checked).
        expect(error.limiterMs).toBeGreaterThanOrEqual(0)
        expect(server.requests).toHaveLength(0)
      })
  )
})

if (redisServer === undefined)
  console.warn(
    "shared rate limit tests skipped: redis-server is not installed (apt-get install -y redis-server; .ci/run installs it)"
  )

describe.skipIf(redisServer === undefined)("a rate limit shared through Redis", () => {
  // rpm 150 over a 2 s window: 5 requests in any 2 s, whichever process sends them.
  const windowMs = 2000
  const perWindow = 5

  it.scopedLive("three processes together stay under the shared requests limit", () =>
    Effect.gen(function* () {
      const { url } = yield* redis
      const times: Array<number> = []
      const server = yield* OpenAiServer.make({ chat: () => (times.push(Date.now()), "ok") })
      const limiter = JSON.stringify({ redis: url, key: "three-processes", rpm: 150, windowMs })
      const each = 6
      const exits = yield* Effect.promise(() =>
        Promise.all(
          ["a", "b", "c"].map((name) =>
            run({ BASE_URL: server.baseURL, LIMITER: limiter, COUNT: String(each), NAME: name })
          )
        )
      )
      for (const e of exits) expect(e.code, e.out).toBe(0)
      expect(times).toHaveLength(3 * each)
      // At most the limit in any window (one more allowed for the requests' travel time to the server).
      expect(busiestWindow(times, windowMs)).toBeLessThanOrEqual(perWindow + 1)
      // 18 requests at 5 per window need 3 more windows after the first: three separate limits would take one.
      const sorted = [...times].sort((a, b) => a - b)
      expect(sorted.at(-1)! - sorted[0]!).toBeGreaterThanOrEqual(3 * windowMs - 100)
    })
  )

  it.scopedLive("the tokens limit counts what each answer reports", () =>
    Effect.gen(function* () {
      const { url } = yield* redis
      const times: Array<number> = []
      // Every answer reports 100 tokens; tpm 9000 over 2 s is 300 tokens a window: 3 answers.
      const server = yield* OpenAiServer.make({
        chat: () => (times.push(Date.now()), { content: "ok", usage: { promptTokens: 60, completionTokens: 40 } })
      })
      const bundle = yield* build(OpenAi.plugin, {
        baseURL: server.baseURL,
        concurrency: 1,
        limiter: { redis: url, key: "tokens", tpm: 9000, windowMs }
      })
      for (let i = 0; i < 6; i++) {
        const answer = yield* bundle.languageModel!.complete({ messages: [{ role: "user", content: `hello ${i}` }] })
        // Each answer says how long it waited for the limiter (only that it does, never how long).
        expect(typeof answer.limiterMs).toBe("number")
        expect(answer.limiterMs).toBeGreaterThanOrEqual(0)
      }
      expect(times).toHaveLength(6)
      expect(busiestWindow(times, windowMs)).toBeLessThanOrEqual(3 + 1)
      const sorted = [...times].sort((a, b) => a - b)
      expect(sorted[3]! - sorted[0]!).toBeGreaterThanOrEqual(windowMs - 100)
    })
  )
})
