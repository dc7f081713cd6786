import { Errors } from "@cupid-lab/core"
import { Effect, Either, Schema } from "effect"
import { describeParseError } from "./Text.js"
import type { Target } from "../Resilience.js"

/** What a provider knows about a failed call before it becomes a `ModelError`. */
export interface CallContext extends Target {
  /** The variable the key came from, named in authentication failures. */
  readonly keyEnv: string
  /** Text that must never reach a message: the model's key and the config's other secrets. */
  readonly secrets: Secrets
}

/** Parts of a secret this long or longer are hidden wherever they appear (a key echoed cut short). */
export const minPart = 8

/**
 * The secrets a message must not show, ready to be found in text: every run of {@link minPart}
 * characters of each secret (so any longer part of it is found too), and whole secrets shorter
 * than that.
 */
export interface Secrets {
  readonly parts: ReadonlySet<string>
  readonly short: ReadonlyArray<string>
  readonly longest: number
}

export const secrets = (values: ReadonlyArray<string | undefined>): Secrets => {
  const parts = new Set<string>(),
    short: Array<string> = []
  let longest = 0
  for (const v of values) {
    if (v === undefined || v === "") continue
    longest = Math.max(longest, v.length)
    if (v.length < minPart) short.push(v)
    for (let i = 0; i + minPart <= v.length; i++) parts.add(v.slice(i, i + minPart))
  }
  return { parts, short, longest }
}

export const noSecrets: Secrets = secrets([])

export const retryableStatus = (status: number): boolean =>
  status === 408 || status === 409 || status === 425 || status === 429 || status >= 500

interface HeaderReader {
  get(name: string): string | null | undefined
}

/** `retry-after-ms` (OpenAI), else `Retry-After` in seconds or as an HTTP date. */
export const retryAfterMs = (headers: HeaderReader | undefined, nowMs: number): number | undefined => {
  if (headers === undefined) return undefined
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "")
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms)
  const raw = headers.get("retry-after")?.trim()
  if (raw === undefined || raw === "") return undefined
  if (/^\d+(\.\d+)?$/.test(raw)) return Math.round(Number.parseFloat(raw) * 1000)
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs)
}

const resetCodes: Record<string, string> = {
  ECONNRESET: "connection reset by the server",
  EPIPE: "connection closed while sending",
  ECONNREFUSED: "connection refused (is the server running?)",
  ETIMEDOUT: "connection timed out",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host lookup failed",
  UND_ERR_SOCKET: "connection closed by the server",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  UND_ERR_HEADERS_TIMEOUT: "no response headers in time",
  UND_ERR_BODY_TIMEOUT: "response body stalled"
}

/** A description of a transport-level failure (anywhere in the cause chain), or undefined. */
export const connectionFailure = (error: unknown): string | undefined => {
  let current: unknown = error
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (typeof current === "object") {
      const code = (current as { code?: unknown }).code
      if (typeof code === "string" && code in resetCodes) return `${resetCodes[code]} (${code})`
      const message = (current as { message?: unknown }).message
      if (typeof message === "string") {
        if (/socket hang up/i.test(message)) return "connection closed by the server (socket hang up)"
        if (/other side closed/i.test(message)) return "connection closed by the server"
      }
      current = (current as { cause?: unknown }).cause
    } else break
  }
  return undefined
}

/**
 * Text that may echo a secret, short and without it: whitespace flattened, cut to `max` characters,
 * and every part of a secret of {@link minPart} characters or more (or a shorter secret whole)
 * replaced by `[redacted]`. Only the first `max` characters (and a secret's length beyond, for one
 * cut in two) are searched, one lookup per character.
 */
export const scrub = (text: string, secrets: Secrets, max = 300): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  const head = flat.slice(0, max + secrets.longest)
  const hidden = new Uint8Array(head.length)
  if (secrets.parts.size > 0) {
    for (let i = 0; i + minPart <= head.length; i++)
      if (secrets.parts.has(head.slice(i, i + minPart))) hidden.fill(1, i, i + minPart)
  }
  for (const s of secrets.short) {
    for (let at = head.indexOf(s); at !== -1; at = head.indexOf(s, at + 1)) hidden.fill(1, at, at + s.length)
  }
  let out = ""
  for (let i = 0; i < head.length;) {
    let j = i
    while (j < head.length && hidden[j] === hidden[i]) j++
    out += hidden[i] === 1 ? "[redacted]" : head.slice(i, j)
    i = j
  }
  return out.length > max || flat.length > head.length ? `${out.slice(0, max)}…` : out
}

const model = (
  ctx: CallContext,
  fields: { reason: string; retryable: boolean; status?: number; retryAfterMs?: number }
) => new Errors.ModelError({ provider: ctx.provider, model: ctx.model, ...fields })

/** An HTTP error status. Authentication failures never quote the server, whose text may echo the key. */
export const fromStatus = (
  ctx: CallContext,
  status: number,
  detail: string | undefined,
  retryAfter: number | undefined
): Errors.ModelError => {
  const said = detail === undefined || detail === "" ? "" : `: ${scrub(detail, ctx.secrets)}`
  const reason =
    status === 401 || status === 403
      ? `authentication failed; check the key in ${ctx.keyEnv}`
      : status === 404
        ? `not found (wrong model name or base URL?)${said}`
        : status === 429
          ? `rate limited${said}`
          : status >= 500
            ? `server error${said}`
            : `request rejected${said}`
  return model(ctx, {
    reason,
    status,
    retryable: retryableStatus(status),
    ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {})
  })
}

export const fromConnection = (ctx: CallContext, description: string): Errors.ModelError =>
  model(ctx, { reason: description, retryable: true })

/** A 2xx answer whose body is not the JSON the API promises (truncated or garbled: worth retrying). */
export const malformed = (ctx: CallContext, what: string): Errors.ModelError =>
  model(ctx, { reason: `malformed response: ${scrub(what, ctx.secrets)}`, retryable: true })

/** Anything else: a bug or an unexpected library error; not retried. */
export const unexpected = (ctx: CallContext, error: unknown): Errors.ModelError =>
  model(ctx, {
    reason: `unexpected failure: ${scrub(error instanceof Error ? error.message : String(error), ctx.secrets)}`,
    retryable: false
  })

/** Check a 2xx body against the shape the code relies on; a mismatch is a malformed response. */
export const decode =
  <A, I>(ctx: CallContext, schema: Schema.Schema<A, I>, what: string) =>
  (body: unknown) =>
    Either.match(Schema.decodeUnknownEither(schema)(body), {
      onLeft: (e) => Effect.fail(malformed(ctx, `${what}: ${describeParseError(e)}`)),
      onRight: Effect.succeed
    })
