/**
 * One call policy for every hosted model: a per-model concurrency limit, a requests-per-minute
 * limit, a timeout per attempt, and retries with exponential backoff and full jitter on failures
 * marked retryable (429, 5xx, timeouts, dropped connections). A server-advised wait
 * (`Retry-After`, `retry-after-ms`) replaces the computed backoff. Waiting goes through Effect's
 * `Clock` and `Random`, so tests can drive it with `TestClock`.
 *
 * Each attempt takes a concurrency permit and a rate-limit token afresh; backoff waits hold neither.
 * With a `limiter` (see {@link SharedLimit}), each attempt also waits for the limit it shares
 * through Redis with every other process naming the same key; that wait counts toward the
 * attempt's `timeoutMs` (the request gets what is left). Without one nothing changes.
 *
 * An attempt's deadline (`timeoutMs`) covers the whole exchange, headers and body: the call gets an
 * `AbortSignal` that fires at the deadline and hands it to its HTTP request, which then stops
 * however far it got. The signal does not depend on interrupting the call, which a sweep cannot do:
 * its pairs run uninterruptibly (so that a stop lets them finish), and an interruption there only
 * takes effect once the call is over, however long the server trickles its answer.
 *
 * @example
 * import { Resilience } from "@cupid-lab/providers"
 * const guard = yield* Resilience.make({ ...Resilience.defaults, rpm: 60 }, { provider: "openai", model: "gpt-4o" })
 * const answer = yield* guard((deadline) => callTheServer(deadline)) // Effect<A, ModelError>, aborting its request on `deadline`
 */
import { Errors } from "@cupid-lab/core"
import { Clock, Duration, Effect, Exit, Fiber, Random, RateLimiter, Schema, type Scope } from "effect"
import * as SharedLimit from "./SharedLimit.js"

export interface Policy {
  /** Requests in flight at once for this model. */
  readonly concurrency: number
  /** Requests started per minute; no limit when absent. */
  readonly rpm?: number | undefined
  /** Limit on one attempt, from sending the request to the parsed answer (headers and body). */
  readonly timeoutMs: number
  /** Attempts after the first one, for retryable failures only. */
  readonly maxRetries: number
  /** First backoff ceiling; the ceiling doubles with every retry. */
  readonly retryBaseMs: number
  /** Largest wait between attempts, also the cap on a server-advised wait. */
  readonly retryMaxMs: number
  /** A requests and tokens limit shared through Redis by every process naming its key. */
  readonly limiter?: SharedLimit.Options | undefined
}

export const defaults: Policy = {
  concurrency: 4,
  timeoutMs: 60_000,
  maxRetries: 5,
  retryBaseMs: 500,
  retryMaxMs: 30_000
}

const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

/** Option fields every hosted provider accepts; spread them into the provider's options struct. */
export const policyFields = {
  concurrency: Schema.optionalWith(PositiveInt, { default: () => defaults.concurrency }),
  rpm: Schema.optional(Schema.Number.pipe(Schema.positive())),
  timeoutMs: Schema.optionalWith(PositiveInt, { default: () => defaults.timeoutMs }),
  maxRetries: Schema.optionalWith(NonNegativeInt, { default: () => defaults.maxRetries }),
  retryBaseMs: Schema.optionalWith(NonNegativeInt, { default: () => defaults.retryBaseMs }),
  retryMaxMs: Schema.optionalWith(NonNegativeInt, { default: () => defaults.retryMaxMs }),
  limiter: Schema.optional(SharedLimit.Options)
}

export interface Target {
  readonly provider: string
  readonly model: string
}

/**
 * The wait before retry number `retry` (0 for the first retry), given a uniform draw in [0, 1):
 * the server-advised wait when there is one (capped at `retryMaxMs`), else a uniform wait up to
 * `min(retryMaxMs, retryBaseMs * 2^retry)` ("full jitter").
 */
export const retryDelayMs = (policy: Policy, error: Errors.ModelError, retry: number, draw: number): number =>
  error.retryAfterMs !== undefined
    ? Math.min(error.retryAfterMs, policy.retryMaxMs)
    : Math.floor(draw * Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** retry))

/**
 * One attempt of a model call: it must send a fresh request each run, and end when `deadline`
 * fires (pass it, or a signal combined with it, to the HTTP client, which then fails the request
 * however far it got). The guard has no other way to stop an attempt: a sweep runs its pairs
 * uninterruptibly.
 */
export type Call<A> = (deadline: AbortSignal) => Effect.Effect<A, Errors.ModelError>

/**
 * What one guarded call cost besides its answer: the HTTP requests sent, retries included, and the
 * time spent waiting for the model's rate limiters (its own `rpm` and the shared `limiter`), over
 * every attempt; `limiterMs` is absent when the model has neither.
 */
export interface Sent {
  readonly requests: number
  readonly limiterMs?: number
}

/** The {@link Sent} of calls made for one answer (an embedding's batches). */
export const sumSent = (parts: ReadonlyArray<Sent>): Sent => {
  const waits = parts.flatMap((p) => (p.limiterMs === undefined ? [] : [p.limiterMs]))
  return {
    requests: parts.reduce((n, p) => n + p.requests, 0),
    ...(waits.length > 0 ? { limiterMs: waits.reduce((n, w) => n + w, 0) } : {})
  }
}

/**
 * Wraps one model call, retried as the policy says. A failure carries what was sent
 * (`ModelError.requests`, `ModelError.limiterMs`); `counted` also gives it with a success, so usage
 * can count what the server received, retries included, and how long the limiters held the call.
 */
export interface Guard {
  <A>(call: Call<A>, tokens?: () => number): Effect.Effect<A, Errors.ModelError>
  /**
   * `tokens`: the request's estimated tokens, for a shared tokens-per-minute limit (the answer's own
   * count replaces it); asked only when the model has such a limit.
   */
  readonly counted: <A>(call: Call<A>, tokens?: () => number) => Effect.Effect<readonly [A, Sent], Errors.ModelError>
}

/** The tokens an answer reports (`promptTokens` plus `completionTokens`, where it has them). */
const reportedTokens = (a: unknown): number | undefined => {
  if (typeof a !== "object" || a === null || !("promptTokens" in a) || typeof a.promptTokens !== "number")
    return undefined
  return a.promptTokens + ("completionTokens" in a && typeof a.completionTokens === "number" ? a.completionTokens : 0)
}

/** Build the guard of one configured model; its rate limiter lives as long as the scope. */
export const make = (policy: Policy, target: Target): Effect.Effect<Guard, never, Scope.Scope> =>
  Effect.gen(function* () {
    const permits = yield* Effect.makeSemaphore(policy.concurrency)
    const local =
      policy.rpm === undefined
        ? undefined
        : yield* RateLimiter.make({ limit: Math.max(1, Math.floor(policy.rpm)), interval: "1 minute" })
    const shared =
      policy.limiter === undefined
        ? undefined
        : yield* SharedLimit.make(policy.limiter, target, policy.timeoutMs + 1_000)
    const hasLimiter = local !== undefined || shared !== undefined
    const timedOut = (detail?: string) =>
      new Errors.ModelError({
        ...target,
        reason: `no answer within ${policy.timeoutMs} ms (timeoutMs)${detail === undefined ? "" : `; ${detail}`}`,
        retryable: true
      })
    const sinceThen = (started: number, waited: (ms: number) => void) =>
      Effect.map(Clock.currentTimeMillis, (now) => waited(Math.max(0, now - started)))
    // The process's own rpm limit, whose wait is reported with the shared limiter's.
    const limit = <A, E>(effect: Effect.Effect<A, E>, waited: (ms: number) => void) =>
      local === undefined
        ? effect
        : Effect.flatMap(Clock.currentTimeMillis, (started) =>
            local(Effect.zipRight(sinceThen(started, waited), effect))
          )
    // One attempt: the shared limit's wait (after the process's own limits) and the request share
    // one deadline, whose timer runs on a fiber of its own, interruptible wherever the call runs.
    const within = <A>(call: Call<A>, tokens: () => number, sent: () => void, waited: (ms: number) => void) =>
      Effect.suspend(() => {
        const deadline = new AbortController()
        const expire = Effect.sleep(Duration.millis(policy.timeoutMs)).pipe(
          Effect.andThen(Effect.sync(() => deadline.abort(timedOut()))),
          Effect.interruptible
        )
        // Whatever the aborted request failed with (the client's abort error), it ran out of time.
        const request = Effect.suspend(() => {
          sent()
          return call(deadline.signal)
        }).pipe(Effect.catchAll((e) => Effect.fail(deadline.signal.aborted ? timedOut() : e)))
        const limited = (limiter: SharedLimit.Limiter) =>
          Effect.gen(function* () {
            const started = yield* Clock.currentTimeMillis
            const estimate = tokens()
            // A wait that ends in a failure (the deadline, Redis gone) is still reported.
            const ticket = yield* limiter.acquire(estimate, deadline.signal).pipe(
              Effect.mapError((e) => (deadline.signal.aborted ? timedOut(e.reason) : e)),
              Effect.ensuring(sinceThen(started, waited))
            )
            // The answer settles its tokens; a failed request is charged none.
            return yield* Effect.onExit(request, (exit) =>
              ticket.settle(Exit.isSuccess(exit) ? (reportedTokens(exit.value) ?? estimate) : 0)
            )
          })
        return Effect.acquireUseRelease(
          Effect.forkDaemon(expire),
          () => (shared === undefined ? request : limited(shared)),
          (timer) => Fiber.interrupt(timer)
        )
      })
    const counted = <A>(call: Call<A>, tokens: () => number = () => 0) =>
      Effect.suspend(() => {
        let attempts = 0
        let limiterMs = 0
        const waited = (ms: number) => {
          limiterMs += ms
        }
        const sent = (): Sent => ({ requests: attempts, ...(hasLimiter ? { limiterMs } : {}) })
        const attempt = permits.withPermits(1)(
          limit(
            within(call, tokens, () => attempts++, waited),
            waited
          )
        )
        // Retry number `retry` (0 for the first) after a retryable failure, waiting {@link retryDelayMs}.
        const from = (retry: number): Effect.Effect<A, Errors.ModelError> =>
          Effect.catchAll(attempt, (e) =>
            e.retryable && retry < policy.maxRetries
              ? Random.next.pipe(
                  Effect.flatMap((draw) => Effect.sleep(Duration.millis(retryDelayMs(policy, e, retry, draw)))),
                  Effect.zipRight(from(retry + 1))
                )
              : Effect.fail(e)
          )
        return from(0).pipe(
          Effect.map((a) => [a, sent()] as const),
          Effect.mapError((e) =>
            withReason(e, attempts > 1 ? `${e.reason}; gave up after ${attempts} attempts` : e.reason, sent())
          )
        )
      })
    const guard = <A>(call: Call<A>, tokens?: () => number) => Effect.map(counted(call, tokens), ([a]) => a)
    return Object.assign(guard, { counted })
  })

const withReason = (e: Errors.ModelError, reason: string, sent: Sent): Errors.ModelError =>
  new Errors.ModelError({
    provider: e.provider,
    model: e.model,
    reason,
    retryable: e.retryable,
    ...sent,
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...(e.retryAfterMs !== undefined ? { retryAfterMs: e.retryAfterMs } : {})
  })
