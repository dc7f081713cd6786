import { ModelError } from "@cupid-lab/core/Errors"
import { Effect, Either, Schema } from "effect"
import { describeParseError } from "./Text.js"
import type { Target } from "../Resilience.js"

/** What a provider knows about a failed call before it becomes a `ModelError`. */
export interface CallContext extends Target {
  /** The variable the key came from, named in authentication failures. */
  readonly keyEnv: string
  /** Text that must never reach a message (the key). */
  readonly secret: string | undefined
}

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

/** Remove the secret from text that may echo it, and keep the text short. */
export const scrub = (text: string, secret: string | undefined, max = 300): string => {
  const clean = secret !== undefined && secret.length > 0 ? text.split(secret).join("[redacted]") : text
  const flat = clean.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

const model = (ctx: CallContext, fields: { reason: string; retryable: boolean; status?: number; retryAfterMs?: number }) =>
  new ModelError({ provider: ctx.provider, model: ctx.model, ...fields })

/** An HTTP error status. Authentication failures never quote the server, whose text may echo the key. */
export const fromStatus = (
  ctx: CallContext,
  status: number,
  detail: string | undefined,
  retryAfter: number | undefined
): ModelError => {
  const said = detail === undefined || detail === "" ? "" : `: ${scrub(detail, ctx.secret)}`
  const reason = status === 401 || status === 403
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

export const fromConnection = (ctx: CallContext, description: string): ModelError =>
  model(ctx, { reason: description, retryable: true })

/** A 2xx answer whose body is not the JSON the API promises (truncated or garbled: worth retrying). */
export const malformed = (ctx: CallContext, what: string): ModelError =>
  model(ctx, { reason: `malformed response: ${scrub(what, ctx.secret)}`, retryable: true })

/** Anything else: a bug or an unexpected library error; not retried. */
export const unexpected = (ctx: CallContext, error: unknown): ModelError =>
  model(ctx, {
    reason: `unexpected failure: ${scrub(error instanceof Error ? error.message : String(error), ctx.secret)}`,
    retryable: false
  })

/** Check a 2xx body against the shape the code relies on; a mismatch is a malformed response. */
export const decode = <A, I>(ctx: CallContext, schema: Schema.Schema<A, I>, what: string) => (body: unknown) =>
  Either.match(Schema.decodeUnknownEither(schema)(body), {
    onLeft: (e) => Effect.fail(malformed(ctx, `${what}: ${describeParseError(e)}`)),
    onRight: Effect.succeed
  })
