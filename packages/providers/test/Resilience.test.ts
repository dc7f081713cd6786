import { Errors } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, TestClock } from "effect"
import * as Resilience from "../src/Resilience.js"

const target = { provider: "p", model: "m" }
const failure = (fields: { retryable?: boolean; retryAfterMs?: number; status?: number } = {}) =>
  new Errors.ModelError({ ...target, reason: "boom", retryable: fields.retryable ?? true, ...fields })

/** A call that fails with `error` the first `failures` times, then answers "ok". */
const flaky = (failures: number, error: Errors.ModelError) => {
  const state = { attempts: 0 }
  const call = Effect.suspend(() => {
    state.attempts++
    return state.attempts <= failures ? Effect.fail(error) : Effect.succeed("ok")
  })
  return { state, call }
}

const settle = Effect.forEach(Array.from({ length: 20 }), () => Effect.yieldNow(), { discard: true })

describe("retryDelayMs", () => {
  const policy = { ...Resilience.defaults, retryBaseMs: 100, retryMaxMs: 1000 }
  it("draws up to base * 2^retry, capped at retryMaxMs", () => {
    expect(Resilience.retryDelayMs(policy, failure(), 0, 0.5)).toBe(50) // 0.5 * 100
    expect(Resilience.retryDelayMs(policy, failure(), 3, 0.5)).toBe(400) // 0.5 * 800
    expect(Resilience.retryDelayMs(policy, failure(), 5, 0.9995)).toBe(999) // 0.9995 * min(1000, 3200)
    expect(Resilience.retryDelayMs(policy, failure(), 2, 0)).toBe(0)
  })
  it("uses the server-advised wait instead, capped at retryMaxMs", () => {
    expect(Resilience.retryDelayMs(policy, failure({ retryAfterMs: 250 }), 4, 0.1)).toBe(250)
    expect(Resilience.retryDelayMs(policy, failure({ retryAfterMs: 5000 }), 0, 0.1)).toBe(1000)
  })
})

describe("Resilience.make", () => {
  it.scoped("waits exactly the server-advised time before retrying", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make({ ...Resilience.defaults, retryMaxMs: 60_000 }, target)
      const { state, call } = flaky(1, failure({ retryAfterMs: 5000, status: 429 }))
      const fiber = yield* Effect.fork(guard(() => call))
      yield* settle
      expect(state.attempts).toBe(1)
      yield* TestClock.adjust("4999 millis")
      expect(state.attempts).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(fiber)).toBe("ok")
      expect(state.attempts).toBe(2)
    })
  )

  it.live("gives up after maxRetries and says how many attempts were made", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make({ ...Resilience.defaults, maxRetries: 2, retryBaseMs: 0 }, target)
      const { state, call } = flaky(10, failure({ status: 503 }))
      const exit = yield* Effect.exit(guard(() => call))
      expect(state.attempts).toBe(3)
      expect(exit).toStrictEqual(
        Exit.fail(
          new Errors.ModelError({
            ...target,
            reason: "boom; gave up after 3 attempts",
            status: 503,
            retryable: true,
            requests: 3
          })
        )
      )
    }).pipe(Effect.scoped)
  )

  it.live("retries until success within the budget", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make(
        { ...Resilience.defaults, maxRetries: 3, retryBaseMs: 1, retryMaxMs: 2 },
        target
      )
      const { state, call } = flaky(3, failure())
      expect(yield* guard(() => call)).toBe("ok")
      expect(state.attempts).toBe(4)
    }).pipe(Effect.scoped)
  )

  it.live("does not retry a failure that is not retryable", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make({ ...Resilience.defaults, retryBaseMs: 0 }, target)
      const error = failure({ retryable: false, status: 400 })
      const { state, call } = flaky(5, error)
      expect(yield* Effect.exit(guard(() => call))).toStrictEqual(
        Exit.fail(new Errors.ModelError({ ...error, requests: 1 }))
      )
      expect(state.attempts).toBe(1)
    }).pipe(Effect.scoped)
  )

  it.scoped("turns a slow attempt into a retryable timeout failure", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make({ ...Resilience.defaults, timeoutMs: 1000, maxRetries: 0 }, target)
      // A call that ends only when its deadline fires, as an HTTP request given the signal does.
      const aborted = (deadline: AbortSignal) =>
        Effect.async<never, Errors.ModelError>((resume) => {
          deadline.addEventListener("abort", () => resume(Effect.fail(failure({ retryable: false }))))
        })
      const fiber = yield* Effect.fork(guard(aborted))
      yield* TestClock.adjust("999 millis")
      expect(fiber.unsafePoll()).toBeNull()
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.await(fiber)).toStrictEqual(
        Exit.fail(
          new Errors.ModelError({
            ...target,
            reason: "no answer within 1000 ms (timeoutMs)",
            retryable: true,
            requests: 1
          })
        )
      )
    })
  )

  it.scoped("keeps at most `concurrency` attempts in flight", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make({ ...Resilience.defaults, concurrency: 2, timeoutMs: 3_600_000 }, target)
      const gate = yield* Deferred.make<void>()
      const counts = { started: 0, inFlight: 0, peak: 0 }
      const call = Effect.gen(function* () {
        counts.started++
        counts.inFlight++
        counts.peak = Math.max(counts.peak, counts.inFlight)
        yield* Deferred.await(gate)
        counts.inFlight--
        return "ok"
      })
      const fiber = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 5 }, () => guard(() => call)),
          { concurrency: "unbounded" }
        )
      )
      yield* settle
      expect(counts.started).toBe(2)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(fiber)).toHaveLength(5)
      expect(counts).toStrictEqual({ started: 5, inFlight: 0, peak: 2 })
    })
  )

  it.scoped("starts at most `rpm` requests per minute (token bucket: a burst, then one per 60/rpm s)", () =>
    Effect.gen(function* () {
      const guard = yield* Resilience.make({ ...Resilience.defaults, rpm: 2, timeoutMs: 3_600_000 }, target)
      const started = { n: 0 }
      const call = Effect.sync(() => ++started.n)
      const fiber = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 4 }, () => guard(() => call)),
          { concurrency: "unbounded" }
        )
      )
      yield* settle
      expect(started.n).toBe(2)
      yield* TestClock.adjust("29 seconds")
      expect(started.n).toBe(2)
      yield* TestClock.adjust("1 second")
      expect(started.n).toBe(3)
      yield* TestClock.adjust("30 seconds")
      expect((yield* Fiber.join(fiber)).sort()).toStrictEqual([1, 2, 3, 4])
    })
  )
})
