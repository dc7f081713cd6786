/**
 * What a model call with a `limiter` does when its Redis misbehaves, against real sockets on
 * loopback: nothing listening (refused), a server that accepts and never answers (hung), a RESP
 * server that refuses authentication, and a real `redis-server` whose window is full or that is
 * killed between calls. Every call is made uninterruptible, as a sweep's pairs are, so a deadline
 * that relied on interruption would hang here. Messages are asserted, never durations.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as OpenAi from "../src/OpenAi.js"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import { freePort, hungServer, redis, redisServer, respServer } from "./fixtures/redis.js"
import { build, user } from "./support.js"

const ceiling = 60_000

/** One chat call through the openai provider with this limiter; its failure, and the requests the model server saw. */
const failedCall = (limiter: Record<string, unknown>, options: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const server = yield* OpenAiServer.make({})
    const bundle = yield* build(OpenAi.plugin, {
      baseURL: server.baseURL,
      maxRetries: 0,
      retryBaseMs: 1,
      retryMaxMs: 5,
      limiter: { key: "k", rpm: 60, ...limiter },
      ...options
    })
    const error = yield* Effect.flip(Effect.uninterruptible(bundle.languageModel!.complete(user("hi"))))
    return { error, requests: server.requests.length }
  })

describe("a limiter whose Redis misbehaves", () => {
  it.scopedLive(
    "nothing listening: the call fails with connection refused, naming the server without its password",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const { error, requests } = yield* failedCall({ redis: `redis://:secret-pw@127.0.0.1:${port}` })
        expect(error.reason).toBe(
          `shared rate limiter (redis://127.0.0.1:${port}, key k): connection refused (connect ECONNREFUSED 127.0.0.1:${port})`
        )
        expect(error.retryable).toBe(true)
        expect(requests).toBe(0)
      }),
    ceiling
  )

  it.scopedLive(
    "a server that never answers: each command times out at commandTimeoutMs, and retries end",
    () =>
      Effect.gen(function* () {
        const { port } = yield* hungServer
        const { error, requests } = yield* failedCall(
          { redis: `redis://127.0.0.1:${port}`, commandTimeoutMs: 200 },
          { maxRetries: 1, timeoutMs: 10_000 }
        )
        expect(error.reason).toBe(
          `shared rate limiter (redis://127.0.0.1:${port}, key k): command timed out: no answer within 200 ms (commandTimeoutMs)`
        )
        expect(error.retryable).toBe(true)
        expect(requests).toBe(0)
      }),
    ceiling
  )

  it.scopedLive(
    "a server that never answers, and timeoutMs shorter than commandTimeoutMs: the model's deadline ends the wait and says so",
    () =>
      Effect.gen(function* () {
        const { port } = yield* hungServer
        const { error, requests } = yield* failedCall(
          { redis: `redis://127.0.0.1:${port}`, commandTimeoutMs: 30_000 },
          { maxRetries: 1, timeoutMs: 200 }
        )
        expect(error.reason).toBe(
          `no answer within 200 ms (timeoutMs); the deadline passed while the shared rate limiter (redis://127.0.0.1:${port}, key k) was waiting for Redis to answer`
        )
        expect(requests).toBe(0)
      }),
    ceiling
  )

  it.scopedLive(
    "NOAUTH (a password is required, none given): authentication failed",
    () =>
      Effect.gen(function* () {
        const { port } = yield* respServer(() => "-NOAUTH Authentication required.\r\n")
        const { error } = yield* failedCall({ redis: `redis://127.0.0.1:${port}` })
        expect(error.reason).toBe(
          `shared rate limiter (redis://127.0.0.1:${port}, key k): authentication failed (NOAUTH Authentication required.); check the password in the redis URL`
        )
      }),
    ceiling
  )

  it.scopedLive(
    "WRONGPASS: authentication failed, and the password appears nowhere",
    () =>
      Effect.gen(function* () {
        const seen: Array<string> = []
        const { port } = yield* respServer(([name]) => {
          seen.push(name!)
          return name === "AUTH"
            ? "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
            : "-NOAUTH Authentication required.\r\n"
        })
        const { error } = yield* failedCall({ redis: `redis://:hunter2-secret@127.0.0.1:${port}/2` })
        expect(seen).toContain("AUTH")
        expect(error.reason).toBe(
          `shared rate limiter (redis://127.0.0.1:${port}/2, key k): authentication failed (WRONGPASS invalid username-password pair or user is disabled.); check the password in the redis URL`
        )
        expect(JSON.stringify(error)).not.toContain("hunter2")
      }),
    ceiling
  )
})

describe.skipIf(redisServer === undefined)("a limiter with a real redis-server", () => {
  it.scopedLive(
    "a full window: the deadline ends the wait and says the window was full",
    () =>
      Effect.gen(function* () {
        const { url } = yield* redis
        const server = yield* OpenAiServer.make({})
        // One request a minute: the second waits for the window, longer than its timeoutMs.
        const bundle = yield* build(OpenAi.plugin, {
          baseURL: server.baseURL,
          maxRetries: 0,
          // Far longer than Redis takes to answer on a busy machine, far shorter than the minute's window.
          timeoutMs: 5_000,
          limiter: { redis: url, key: "full", rpm: 1 }
        })
        const lm = bundle.languageModel!
        yield* Effect.uninterruptible(lm.complete(user("first")))
        const error = yield* Effect.flip(Effect.uninterruptible(lm.complete(user("second"))))
        expect(error.reason).toBe(
          `no answer within 5000 ms (timeoutMs); the deadline passed while the shared rate limiter (${url}, key full) was waiting for room in the window`
        )
        expect(error.retryable).toBe(true)
        expect(server.requests).toHaveLength(1)
      }),
    ceiling
  )

  it.scopedLive(
    "Redis killed between calls: the next call fails with connection refused, not ioredis' retry count",
    () =>
      Effect.gen(function* () {
        const { url, port, kill } = yield* redis
        const server = yield* OpenAiServer.make({})
        const bundle = yield* build(OpenAi.plugin, {
          baseURL: server.baseURL,
          maxRetries: 0,
          limiter: { redis: url, key: "killed", rpm: 600 }
        })
        const lm = bundle.languageModel!
        yield* lm.complete(user("before"))
        yield* kill()
        const error = yield* Effect.flip(Effect.uninterruptible(lm.complete(user("after"))))
        expect(error.reason).toBe(
          `shared rate limiter (${url}, key killed): connection refused (connect ECONNREFUSED 127.0.0.1:${port})`
        )
        expect(server.requests).toHaveLength(1)
      }),
    ceiling
  )
})
