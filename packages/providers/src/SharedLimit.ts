/**
 * A rate limit shared by every process that names the same Redis server and key: requests and
 * tokens per minute for one API key, however many machines run sweeps against it. The per-process
 * `rpm` of {@link Resilience} cannot do that; this one keeps its state in Redis.
 *
 * The algorithm is a sliding-window log, run atomically by Lua scripts on the Redis server's own
 * clock (so machines' clocks need not agree). The key holds every request in flight or ended in
 * the last `windowMs` (a sorted set by end time; a request in flight counts as ending at its
 * deadline) and the tokens charged to each (a hash). A request is admitted when fewer than
 * `rpm × windowMs / 60000` requests and at most `tpm × windowMs / 60000` tokens (its own estimate
 * included) are held; otherwise the caller sleeps until enough of the window expires (polling at
 * least every 250 ms, since a request in flight may end sooner) and asks again. When a request
 * ends, its entry takes its end time and the tokens its answer reported.
 *
 * Counting a request until a window after it *ended*, not after it was admitted, is what makes the
 * limit hold where the provider counts, at arrival: a request arrives between its admission and
 * its end, so two arrivals less than a window apart were both held when the later was admitted,
 * however long the earlier took to travel (a sliding log by admission time lets a slow first
 * request and a fast later one land in one window at the server). A request whose estimate alone
 * is over the token limit is admitted when no tokens are held, so it cannot wait forever.
 *
 * A shorter window enforces the same rate with smaller bursts: `rpm: 600, windowMs: 1000` admits
 * at most 10 requests in any second.
 *
 * Every Redis command is cut at `commandTimeoutMs` and the wait counts toward the attempt's deadline
 * (the model's `timeoutMs`). A Redis that cannot be reached fails the attempt with a retryable
 * error saying why (connection refused, connect or command timed out, authentication failed),
 * naming the server without its password; it never falls back to no limit.
 *
 * @example
 * # config: two machines, one key
 * models:
 *   gpt4o: { provider: openai, model: gpt-4o, limiter: { redis: "redis://10.0.0.5:6379", key: "openai-org", rpm: 500, tpm: 30000 } }
 */
import { Errors } from "@cupid-lab/core"
import { Duration, Effect, Random, Schema, type Scope } from "effect"
import { randomBytes } from "node:crypto"
import type { Redis as RedisClient } from "ioredis"

const Positive = Schema.Number.pipe(Schema.positive())
const PositiveInt = Schema.Int.pipe(Schema.positive())

export const Options = Schema.Struct({
  /** The Redis server, `redis://[:password@]host:port[/db]` (put a password in `${ENV}`, never in the file). */
  redis: Schema.String.pipe(Schema.pattern(/^rediss?:\/\//, { message: () => `expected a redis:// or rediss:// URL` })),
  /** The limit's name: every process and model that names it shares one limit. */
  key: Schema.String.pipe(Schema.minLength(1)),
  /** Requests per minute. */
  rpm: Schema.optional(Positive),
  /** Tokens per minute (prompt plus completion). */
  tpm: Schema.optional(Positive),
  /** The sliding window; the limits inside it are rpm and tpm scaled to its length. */
  windowMs: Schema.optionalWith(PositiveInt, { default: () => 60_000 }),
  /** The longest one Redis command may go unanswered (a hung server or a firewall that drops). */
  commandTimeoutMs: Schema.optionalWith(PositiveInt, { default: () => 2_000 }),
  /** The longest connecting to Redis may take. */
  connectTimeoutMs: Schema.optionalWith(PositiveInt, { default: () => 5_000 })
}).pipe(
  Schema.filter((o) => (o.rpm === undefined && o.tpm === undefined ? "a limiter needs rpm, tpm or both" : undefined)),
  Schema.filter((o) =>
    o.rpm !== undefined && Math.floor((o.rpm * o.windowMs) / 60_000) < 1
      ? `rpm ${o.rpm} allows less than one request in a window of ${o.windowMs} ms; raise rpm or windowMs`
      : undefined
  )
)
export type Options = typeof Options.Type

/** The limits inside one window: requests and tokens (0: no limit). */
export const perWindow = (
  o: Pick<Options, "rpm" | "tpm" | "windowMs">
): { readonly requests: number; readonly tokens: number } => ({
  requests: o.rpm === undefined ? 0 : Math.floor((o.rpm * o.windowMs) / 60_000),
  tokens: o.tpm === undefined ? 0 : Math.floor((o.tpm * o.windowMs) / 60_000)
})

// KEYS: the requests held (sorted set: id -> end ms, or deadline ms while in flight), their tokens (hash: id -> tokens).
// ARGV: window ms, request limit (0: none), token limit (0: none), id, estimated tokens, longest flight ms.
// Returns 0 when admitted, else the milliseconds until enough of the window expires.
const acquireScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local maxRequests = tonumber(ARGV[2])
local maxTokens = tonumber(ARGV[3])
local estimate = tonumber(ARGV[5])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - window)
for _, id in ipairs(expired) do redis.call('HDEL', KEYS[2], id) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local live = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local count = #live / 2
local wait = 0
if maxRequests > 0 and count >= maxRequests then
  wait = tonumber(live[2 * (count - maxRequests) + 2]) + window - now
end
if maxTokens > 0 and count > 0 then
  local tokens = {}
  local sum = 0
  for i = 1, count do
    tokens[i] = tonumber(redis.call('HGET', KEYS[2], live[2 * i - 1])) or 0
    sum = sum + tokens[i]
  end
  if sum > 0 and sum + estimate > maxTokens then
    local freed = 0
    for i = 1, count do
      freed = freed + tokens[i]
      if sum - freed + estimate <= maxTokens or sum - freed == 0 then
        wait = math.max(wait, tonumber(live[2 * i]) + window - now)
        break
      end
    end
  end
end
if wait > 0 then return wait end
local deadline = now + tonumber(ARGV[6])
redis.call('ZADD', KEYS[1], deadline, ARGV[4])
redis.call('HSET', KEYS[2], ARGV[4], estimate)
redis.call('PEXPIREAT', KEYS[1], deadline + window)
redis.call('PEXPIREAT', KEYS[2], deadline + window)
return 0
`

// A request ended: it is held from now for a window, charged the tokens its answer reported.
// KEYS as above; ARGV: id, tokens.
const settleScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 0
`

/** The longest a waiting request sleeps before asking again (a request in flight may end before its deadline). */
const pollMs = 250

type Scripted = RedisClient & {
  cupidAcquire(
    requests: string,
    tokens: string,
    window: number,
    maxRequests: number,
    maxTokens: number,
    id: string,
    estimate: number,
    flightMs: number
  ): Promise<number>
  cupidSettle(requests: string, tokens: string, id: string, actual: number): Promise<number>
}

/** One admission: settle it with the tokens the answer reported (sent to Redis without waiting for it). */
export interface Ticket {
  readonly settle: (tokens: number) => Effect.Effect<void>
}

export interface Limiter {
  /**
   * Wait until the shared window admits one request estimated at `tokens`, or until `deadline`
   * fires: then it fails saying what it was waiting for. The deadline works without interrupting
   * the caller (a sweep's pairs cannot be interrupted).
   */
  readonly acquire: (tokens: number, deadline: AbortSignal) => Effect.Effect<Ticket, Errors.ModelError>
}

/** The server named without its password, for messages. */
export const describe = (url: string): string => {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname}`
  } catch {
    return "an unreadable redis URL"
  }
}

const passwordOf = (url: string): string => {
  try {
    return decodeURIComponent(new URL(url).password)
  } catch {
    return ""
  }
}

/**
 * What went wrong with Redis, in words. ioredis fails a command whose connection is lost with
 * "Reached the max retries per request limit"; the cause is the connection's last error, so that
 * one is explained instead.
 */
export const explain = (
  error: unknown,
  lastConnectionError: Error | undefined,
  limits: Pick<Options, "commandTimeoutMs" | "connectTimeoutMs">
): string => {
  const lost =
    error instanceof Error && (error.name === "MaxRetriesPerRequestError" || error.message === "Connection is closed.")
  const e = lost && lastConnectionError !== undefined ? lastConnectionError : error
  const message = e instanceof Error ? e.message : String(e)
  const code = e instanceof Error && "code" in e ? e.code : undefined
  if (code === "ECONNREFUSED") return `connection refused (${message})`
  if (code === "ETIMEDOUT")
    return message === "connect ETIMEDOUT"
      ? `connect timed out: no connection within ${limits.connectTimeoutMs} ms (connectTimeoutMs)`
      : `timed out (${message})`
  if (message.endsWith("Command timed out"))
    return `command timed out: no answer within ${limits.commandTimeoutMs} ms (commandTimeoutMs)`
  // A Redis error reply starts with its code; ioredis may put "Ready check failed: " before it.
  const auth = /\b(?:NOAUTH|WRONGPASS)\b.*/.exec(message)
  if (auth !== null) return `authentication failed (${auth[0]}); check the password in the redis URL`
  return lost ? `the connection was lost (${message})` : message
}

/**
 * The limiter of one model; it connects on its first request (a dry run never connects) and
 * disconnects when the scope closes. `flightMs`: the longest a request can be in flight (its
 * deadline); a request whose process died is held that long, then a window.
 */
export const make = (
  options: Options,
  target: { readonly provider: string; readonly model: string },
  flightMs: number
): Effect.Effect<Limiter, never, Scope.Scope> =>
  Effect.gen(function* () {
    const limits = perWindow(options)
    const where = `shared rate limiter (${describe(options.redis)}, key ${options.key})`
    const password = passwordOf(options.redis)
    const scrub = (text: string) => {
      const named = text.replaceAll(options.redis, describe(options.redis))
      return password === "" ? named : named.replaceAll(password, "[redacted]")
    }
    // The client's last connection error, the cause of a command failed for a lost connection.
    let lastConnectionError: Error | undefined
    const failure = (e: unknown) =>
      new Errors.ModelError({
        ...target,
        reason: scrub(`${where}: ${explain(e, lastConnectionError, options)}`),
        retryable: true
      })
    // One client however many calls start at once: the first one's promise is shared.
    let pending: Promise<Scripted> | undefined
    yield* Effect.addFinalizer(() =>
      Effect.promise(
        () =>
          pending?.then(
            (c) => c.disconnect(),
            () => {}
          ) ?? Promise.resolve()
      )
    )
    const create = async () => {
      const { Redis } = await import("ioredis")
      const c = new Redis(options.redis, {
        lazyConnect: true,
        maxRetriesPerRequest: 2,
        connectTimeout: options.connectTimeoutMs,
        commandTimeout: options.commandTimeoutMs
      }) as Scripted
      // Reported through the failing command instead.
      c.on("error", (e: Error) => void (lastConnectionError = e))
      c.on("ready", () => void (lastConnectionError = undefined))
      c.defineCommand("cupidAcquire", { numberOfKeys: 2, lua: acquireScript })
      c.defineCommand("cupidSettle", { numberOfKeys: 2, lua: settleScript })
      return c
    }
    const connect = Effect.tryPromise({
      try: () =>
        (pending ??= create().catch((e) => {
          pending = undefined
          throw e
        })),
      catch: failure
    })
    // A hash tag keeps both keys on one Redis Cluster node.
    const keys = {
      requests: `cupid-lab:limit:{${options.key}}:requests`,
      tokens: `cupid-lab:limit:{${options.key}}:tokens`
    }
    const settle = (c: Scripted, id: string, tokens: number) =>
      c.cupidSettle(keys.requests, keys.tokens, id, Math.max(0, Math.round(tokens)))
    const prefix = randomBytes(6).toString("hex")
    let serial = 0
    const acquire = (estimate: number, deadline: AbortSignal) => {
      let waitingFor: "Redis to answer" | "room in the window" = "Redis to answer"
      const admitted = Effect.gen(function* () {
        const c = yield* connect
        const id = `${prefix}:${serial++}`
        const tokens = Math.max(0, Math.round(estimate))
        while (true) {
          waitingFor = "Redis to answer"
          const wait = yield* Effect.tryPromise({
            try: (abandoned) => {
              const asked = c.cupidAcquire(
                keys.requests,
                keys.tokens,
                options.windowMs,
                limits.requests,
                limits.tokens,
                id,
                tokens,
                flightMs
              )
              // Given up on at the deadline: an admission that still arrives ends at once, unused.
              abandoned.addEventListener("abort", () =>
                asked.then((w) => (w <= 0 ? settle(c, id, 0) : 0)).catch(() => {})
              )
              return asked
            },
            catch: failure
          })
          if (wait <= 0) break
          waitingFor = "room in the window"
          // A little jitter, so processes woken by the same expiry do not all ask at once.
          yield* Effect.sleep(Duration.millis(Math.min(wait, pollMs) + (yield* Random.nextIntBetween(0, 20))))
        }
        return {
          // Not awaited, so a hung Redis cannot hold the answer; one connection keeps it before the next acquire.
          settle: (actual: number) => Effect.sync(() => void settle(c, id, actual).catch(() => {}))
        } satisfies Ticket
      })
      const expired = Effect.async<never, Errors.ModelError>((resume) => {
        const fire = () =>
          resume(
            Effect.fail(
              new Errors.ModelError({
                ...target,
                reason: `the deadline passed while the ${where} was waiting for ${waitingFor}`,
                retryable: true
              })
            )
          )
        if (deadline.aborted) return fire()
        deadline.addEventListener("abort", fire, { once: true })
        return Effect.sync(() => deadline.removeEventListener("abort", fire))
      })
      // Both sides interruptible, so the loser stops even where the caller cannot be interrupted.
      return Effect.raceFirst(Effect.interruptible(admitted), Effect.interruptible(expired))
    }
    return { acquire }
  })
