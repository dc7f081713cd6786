/**
 * One configured service of an `http` stage: its headers (values from the environment, never in a
 * message, a cache key or a transcript), its call policy (Resilience: concurrency, rpm, the shared
 * limiter, timeouts, retries on 429 and 5xx honouring Retry-After), the model cache (answers keyed
 * by url, stage, revision and body) and the usage ledger (every call, with its body and answer).
 * With `ingest`, a history is posted to `url/ingest` once per sweep before its first uncached query,
 * however many pairs ask for it at once.
 */
import { Errors, Hash, HttpGet, Memo, ModelCache, Models, Usage } from "@cupid-lab/core"
import { Clock, Config, Deferred, Effect, Either, Exit, FiberId, Option, Redacted, Schema, type Scope } from "effect"
import * as Resilience from "../../Resilience.js"
import * as Failure from "../Failure.js"
import type * as Protocol from "./Protocol.js"

export type Step = "retrieve" | "infer" | "generate"

export interface Header {
  readonly env: string
  readonly prefix?: string | undefined
}

export interface Settings extends Resilience.Policy {
  readonly url: string
  readonly headers: Readonly<Record<string, Header>>
  readonly ingest: boolean
  readonly revision?: string | undefined
}

export interface Endpoint {
  readonly step: Step
  readonly url: string
  /** The url as messages and transcripts show it (credentials masked). */
  readonly shown: string
  readonly ingestUrl: string
  readonly settings: Settings
  readonly headers: Readonly<Record<string, string>>
  readonly secrets: Failure.Secrets
  readonly guard: Resilience.Guard
  readonly cache: ModelCache.ModelCache["Type"]
  readonly dryRun: boolean
  /** Histories ingested (or being ingested) at this url in this sweep. */
  readonly ingested: Map<string, Deferred.Deferred<void, Errors.StageError>>
}

const ingestions = Memo.namespace<Map<string, Deferred.Deferred<void, Errors.StageError>>>("providers/http-ingest", 256)

const ingestUrlOf = (url: string): string => {
  const u = new URL(url)
  u.pathname = `${u.pathname.replace(/\/+$/, "")}/ingest`
  return u.toString()
}

/** Each header's value from its variable; a variable that is not set fails the build (not in a dry run). */
const headerValues = (
  headers: Readonly<Record<string, Header>>,
  dryRun: boolean
): Effect.Effect<Record<string, string>, Errors.PluginError> =>
  Effect.reduce(Object.entries(headers), {} as Record<string, string>, (out, [name, h]) =>
    Config.option(Config.redacted(h.env)).pipe(
      Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>()),
      Effect.flatMap((found) => {
        const value = Option.getOrUndefined(Option.map(found, Redacted.value))
        if (value !== undefined && value.trim() !== "")
          return Effect.succeed({ ...out, [name]: `${h.prefix ?? ""}${value}` })
        if (dryRun) return Effect.succeed(out)
        return Effect.fail(
          new Errors.PluginError({
            plugin: "http",
            reason: `headers.${name}: environment variable ${h.env} is not set; export the value there (a header's value is read from the environment, never from the config)`
          })
        )
      })
    )
  )

export const make = (
  settings: Settings,
  step: Step
): Effect.Effect<Endpoint, Errors.PluginError, Models.Models | ModelCache.ModelCache | Scope.Scope> =>
  Effect.gen(function* () {
    const dryRun = (yield* Models.Models).dryRun === true
    const headers = yield* headerValues(settings.headers, dryRun)
    const shown = HttpGet.redact(settings.url)
    const memo = yield* Memo.current
    return {
      step,
      url: settings.url,
      shown,
      ingestUrl: ingestUrlOf(settings.url),
      settings,
      headers,
      secrets: Failure.secrets(Object.values(headers)),
      guard: yield* Resilience.make(settings, { provider: "http", model: shown }),
      cache: yield* ModelCache.ModelCache,
      dryRun,
      ingested: memo.store(ingestions).getOrSet(settings.url, () => new Map())
    }
  })

const describeError = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause = (e as { cause?: unknown }).cause
  return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message
}

const statusReason = (endpoint: Endpoint, status: number, body: string): string => {
  const said = body.trim() === "" ? "" : `: ${Failure.scrub(body, endpoint.secrets)}`
  const variables = Object.values(endpoint.settings.headers).map((h) => h.env)
  return status === 401 || status === 403
    ? `authentication failed${variables.length > 0 ? `; check the values of ${variables.join(", ")}` : "; the service wants headers (the headers option)"}`
    : status === 404
      ? `not found (is the url right?)${said}`
      : status === 429
        ? `rate limited${said}`
        : status >= 500
          ? `server error${said}`
          : `request rejected${said}`
}

/** One POST of `text` as JSON, as an attempt for the guard: a 2xx body, or a `ModelError` saying why not. */
const post =
  (endpoint: Endpoint, url: string, text: string): Resilience.Call<string> =>
  (deadline) =>
    Effect.tryPromise({
      try: async () => {
        const r = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json", ...endpoint.headers },
          body: text,
          signal: deadline
        })
        return { status: r.status, headers: r.headers, body: await r.text() }
      },
      catch: (e) =>
        new Errors.ModelError({
          provider: "http",
          model: endpoint.shown,
          reason:
            Failure.connectionFailure(e) ?? `request failed: ${Failure.scrub(describeError(e), endpoint.secrets)}`,
          retryable: true
        })
    }).pipe(
      Effect.flatMap((r) =>
        r.status >= 200 && r.status < 300
          ? Effect.succeed(r.body)
          : Effect.flatMap(Clock.currentTimeMillis, (now) => {
              const wait = Failure.retryAfterMs(r.headers, now)
              return Effect.fail(
                new Errors.ModelError({
                  provider: "http",
                  model: endpoint.shown,
                  reason: statusReason(endpoint, r.status, r.body),
                  status: r.status,
                  retryable: Failure.retryableStatus(r.status),
                  ...(wait !== undefined ? { retryAfterMs: wait } : {})
                })
              )
            })
      )
    )

/** An answer with a secret of the headers in it, for a transcript: the secret hidden. */
const hidden = (endpoint: Endpoint, text: string): string => {
  if (endpoint.secrets.parts.size === 0 && endpoint.secrets.short.length === 0) return text
  const scrubbed = Failure.scrub(text, endpoint.secrets, text.length + 1)
  return scrubbed.includes("[redacted]") ? scrubbed : text
}

const sentUrl = (url: string, shown: string, e: Errors.ModelError) =>
  `POST ${HttpGet.redact(url) === shown ? shown : HttpGet.redact(url)}: ${e.reason}${e.status !== undefined ? ` (HTTP ${e.status})` : ""}`

interface CallRecord {
  readonly url: string
  readonly body: unknown
  readonly inputs: number
  readonly started: number
  readonly cached: boolean
  readonly sent?: Usage.Sent | undefined
  readonly answer?: string | undefined
  readonly reading?: Usage.CallDetail["reading"]
  readonly error?: string | undefined
  readonly failed?: boolean
}

const record = (endpoint: Endpoint, r: CallRecord) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Usage.record({
      provider: "http",
      model: HttpGet.redact(r.url),
      kind: "service",
      promptTokens: 0,
      completionTokens: 0,
      cached: r.cached,
      ...(r.cached ? { requests: 0 } : r.sent?.requests !== undefined ? { requests: r.sent.requests } : {}),
      ...(r.failed === true ? { failed: true } : {}),
      detail: {
        latencyMs: now - r.started,
        wire: { url: HttpGet.redact(r.url), body: r.body },
        inputs: r.inputs,
        ...(r.sent?.limiterMs !== undefined ? { limiterMs: r.sent.limiterMs } : {}),
        ...(r.answer !== undefined ? { answer: Usage.excerptOf(hidden(endpoint, r.answer)) } : {}),
        ...(r.reading !== undefined ? { reading: r.reading } : {}),
        ...(r.error !== undefined ? { error: r.error } : {})
      }
    })
  )

const stageError = (endpoint: Endpoint, reason: string) =>
  new Errors.StageError({
    stage: endpoint.step,
    plugin: "http",
    reason: Failure.scrub(reason, endpoint.secrets, 2_000)
  })

/** POST the history to `url/ingest`, once per sweep; a failure lets the next pair try again. */
const ingestOnce = (endpoint: Endpoint, body: Protocol.Query): Effect.Effect<void, Errors.StageError> =>
  Effect.suspend(() => {
    if (!endpoint.settings.ingest) return Effect.void
    const known = endpoint.ingested.get(body.history)
    if (known !== undefined) return Deferred.await(known)
    const done = Deferred.unsafeMake<void, Errors.StageError>(FiberId.none)
    endpoint.ingested.set(body.history, done)
    const payload: Protocol.Ingest = { history: body.history, sessions: body.sessions }
    const url = endpoint.ingestUrl
    const ingest = Effect.gen(function* () {
      const started = yield* Clock.currentTimeMillis
      const base = { url, body: payload, inputs: payload.sessions.length, started, cached: false }
      const got = yield* Effect.either(endpoint.guard.counted(post(endpoint, url, JSON.stringify(payload))))
      if (Either.isLeft(got)) {
        const reason = `ingest: ${sentUrl(url, endpoint.shown, got.left)}`
        yield* record(endpoint, { ...base, sent: got.left, error: reason, failed: true })
        return yield* stageError(endpoint, reason)
      }
      const [answer, sent] = got.right
      yield* record(endpoint, { ...base, sent, answer })
    })
    return ingest.pipe(
      Effect.onExit((exit) =>
        Effect.zipRight(
          Exit.isFailure(exit) ? Effect.sync(() => endpoint.ingested.delete(body.history)) : Effect.void,
          Deferred.done(done, exit)
        )
      )
    )
  })

/** What a stage read from an answer, and what its transcript shows of it. */
export interface Read<A> {
  readonly value: A
  readonly shown: unknown
}

const Stored = Schema.Struct({ text: Schema.String })

class Invalid {
  readonly _tag = "Invalid"
  constructor(
    readonly text: string,
    readonly reason: string
  ) {}
}

/**
 * Send one query (ingesting its history first when configured) and read the answer. A dry run sends
 * nothing: a cached answer is used, else `dry`. An answer `read` rejects is never cached.
 */
export const ask = <A>(
  endpoint: Endpoint,
  body: Protocol.Query,
  read: (text: string) => Either.Either<Read<A>, string>,
  dry: A
): Effect.Effect<A, Errors.StageError> =>
  Effect.gen(function* () {
    const text = JSON.stringify(body)
    const key = ModelCache.key({
      kind: "service",
      stage: endpoint.step,
      url: endpoint.url,
      revision: endpoint.settings.revision ?? null,
      body: Hash.sha256Hex(text)
    })
    const started = yield* Clock.currentTimeMillis
    const base = { url: endpoint.url, body, inputs: body.sessions.length, started }
    const check = { schema: Stored, accept: (s: typeof Stored.Type) => Either.isRight(read(s.text)) }
    if (endpoint.dryRun) {
      const hit = yield* endpoint.cache.get(key, check)
      if (Option.isNone(hit)) {
        yield* record(endpoint, { ...base, cached: false })
        return dry
      }
    }
    let sent: Usage.Sent | undefined
    const compute = Effect.zipRight(
      ingestOnce(endpoint, body),
      Effect.flatMap(endpoint.guard.counted(post(endpoint, endpoint.url, text)), ([answer, s]) => {
        sent = s
        const reading = read(answer)
        return Either.isRight(reading)
          ? Effect.succeed({ text: answer })
          : Effect.fail(new Invalid(answer, reading.left))
      })
    )
    const got = yield* Effect.either(endpoint.cache.getOrCompute(key, compute, check))
    if (Either.isLeft(got)) {
      const e = got.left
      if (e instanceof Errors.StageError) return yield* e
      if (e instanceof Invalid) {
        const reason = e.reason
        const message = `${endpoint.shown} answered with a body that does not follow the protocol: ${reason} (docs/http-systems.md)`
        yield* record(endpoint, {
          ...base,
          cached: false,
          sent,
          answer: e.text,
          reading: { ok: false, reason: Failure.scrub(reason, endpoint.secrets, 2_000) },
          error: Failure.scrub(message, endpoint.secrets, 2_000)
        })
        return yield* stageError(endpoint, message)
      }
      const reason = sentUrl(endpoint.url, endpoint.shown, e)
      yield* record(endpoint, { ...base, cached: false, sent: e, error: reason, failed: true })
      return yield* stageError(endpoint, reason)
    }
    const { value, cached } = got.right
    const answer = read(value.text)
    if (Either.isLeft(answer)) return yield* stageError(endpoint, answer.left)
    yield* record(endpoint, {
      ...base,
      cached,
      sent,
      answer: value.text,
      reading: { ok: true, value: answer.right.shown }
    })
    return answer.right.value
  })
