import { describe, expect, it } from "@effect/vitest"
import * as Failure from "../src/internal/Failure.js"

const headers = (entries: Record<string, string>) => new Headers(entries)
const ctx: Failure.CallContext = {
  provider: "openai",
  model: "gpt",
  keyEnv: "OPENAI_API_KEY",
  secrets: Failure.secrets(["sk-live-abc123"])
}

describe("retryAfterMs", () => {
  it("reads retry-after-ms, then Retry-After in seconds or as a date", () => {
    expect(Failure.retryAfterMs(headers({ "retry-after-ms": "250" }), 0)).toBe(250)
    expect(Failure.retryAfterMs(headers({ "retry-after-ms": "12.6", "retry-after": "9" }), 0)).toBe(13)
    expect(Failure.retryAfterMs(headers({ "retry-after": "2" }), 0)).toBe(2000)
    expect(Failure.retryAfterMs(headers({ "retry-after": "1.5" }), 0)).toBe(1500)
    const now = Date.parse("Wed, 21 Oct 2015 07:28:00 GMT")
    expect(Failure.retryAfterMs(headers({ "retry-after": "Wed, 21 Oct 2015 07:28:10 GMT" }), now)).toBe(10_000)
    expect(Failure.retryAfterMs(headers({ "retry-after": "Wed, 21 Oct 2015 07:27:00 GMT" }), now)).toBe(0)
  })
  it("is undefined when absent or unreadable", () => {
    expect(Failure.retryAfterMs(headers({}), 0)).toBeUndefined()
    expect(Failure.retryAfterMs(headers({ "retry-after": "soon" }), 0)).toBeUndefined()
    expect(Failure.retryAfterMs(undefined, 0)).toBeUndefined()
  })
})

describe("connectionFailure", () => {
  it("finds transport errors anywhere in the cause chain", () => {
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })
    expect(Failure.connectionFailure(new TypeError("fetch failed", { cause: reset }))).toBe(
      "connection reset by the server (ECONNRESET)"
    )
    expect(Failure.connectionFailure(new Error("socket hang up"))).toBe(
      "connection closed by the server (socket hang up)"
    )
    const undici = Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" })
    expect(Failure.connectionFailure(new TypeError("fetch failed", { cause: undici }))).toBe(
      "connection closed by the server (UND_ERR_SOCKET)"
    )
  })
  it("is undefined for other errors", () => {
    expect(Failure.connectionFailure(new Error("something else"))).toBeUndefined()
    expect(Failure.connectionFailure("text")).toBeUndefined()
  })
})

describe("scrub", () => {
  const key = "sk-proj-7Hq2mZx9LpW4vN8rT1cY"
  const other = "co-9f8e7d6c5b4a3210"
  const both = Failure.secrets([key, other, undefined])

  it("replaces every occurrence of the secret, flattens whitespace and shortens", () => {
    expect(Failure.scrub("bad key sk-live-abc123\n\nreally sk-live-abc123", Failure.secrets(["sk-live-abc123"]))).toBe(
      "bad key [redacted] really [redacted]"
    )
    expect(Failure.scrub("abcdef", Failure.noSecrets, 3)).toBe("abc…")
  })

  it("hides every part of a secret of 8 characters or more: a key echoed cut short, or its middle", () => {
    expect(Failure.scrub(`Incorrect API key provided: ${key.slice(0, -4)}****`, both)).toBe(
      "Incorrect API key provided: [redacted]****"
    )
    expect(Failure.scrub(`key ...${key.slice(5, 13)}... and ${key.slice(-8)}`, both)).toBe(
      "key ...[redacted]... and [redacted]"
    )
    // Parts shorter than 8 characters are not hidden (nor could they be told from ordinary text).
    expect(Failure.scrub(`prefix ${key.slice(0, 7)} only`, both)).toBe(`prefix ${key.slice(0, 7)} only`)
    // The config's other secrets too, and a secret shorter than 8 characters whole.
    expect(Failure.scrub(`proxy says ${other} and ${other.slice(2, 12)}`, both)).toBe(
      "proxy says [redacted] and [redacted]"
    )
    expect(Failure.scrub("token abc123 here", Failure.secrets(["abc123"]))).toBe("token [redacted] here")
  })

  it("a key cut by the length limit is still hidden, and one at the end of a long text too", () => {
    const text = `${"x".repeat(295)}${key}${"y".repeat(1_000_000)}`
    expect(Failure.scrub(text, both)).toBe(`${"x".repeat(295)}[reda…`)
    const long = Failure.scrub(`${"word ".repeat(2000)}${key}`, both, 20_000)
    expect(long).not.toContain(key)
    expect(long.endsWith("[redacted]")).toBe(true)
  })
})

describe("fromStatus", () => {
  it("never quotes the server on authentication failures, and names the key variable", () => {
    const e = Failure.fromStatus(ctx, 401, "Incorrect API key provided: sk-live-abc123", undefined)
    expect(e.reason).toBe("authentication failed; check the key in OPENAI_API_KEY")
    expect(e.retryable).toBe(false)
    expect(e.message).toBe("openai/gpt: authentication failed; check the key in OPENAI_API_KEY (HTTP 401)")
  })
  it("marks 429, 408 and 5xx retryable and keeps the advised wait", () => {
    const limited = Failure.fromStatus(ctx, 429, "slow down", 1200)
    expect([limited.reason, limited.retryable, limited.retryAfterMs]).toStrictEqual([
      "rate limited: slow down",
      true,
      1200
    ])
    expect(Failure.fromStatus(ctx, 503, "busy", undefined).retryable).toBe(true)
    expect(Failure.fromStatus(ctx, 408, undefined, undefined).retryable).toBe(true)
    const rejected = Failure.fromStatus(ctx, 400, "echo sk-live-abc123", undefined)
    expect([rejected.reason, rejected.retryable]).toStrictEqual(["request rejected: echo [redacted]", false])
    expect(Failure.fromStatus(ctx, 404, "model gpt does not exist", undefined).reason).toBe(
      "not found (wrong model name or base URL?): model gpt does not exist"
    )
  })
})
