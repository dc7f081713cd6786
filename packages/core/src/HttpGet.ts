/**
 * One GET with deadlines, for every download from outside (the dataset hub, the authors' prompt
 * files): a limit on the wait for the first byte (the response headers), on each wait for the next
 * byte of the body, and on the whole request; failures that are safe to repeat are retried with
 * backoff. Undici's own body timeout restarts with every chunk, so without these a server sending a
 * byte now and then would hold a download forever. Errors name the URL (credentials and token-like
 * query values masked), what was awaited and the limit that ran out.
 *
 * Limits come from the caller, else from the environment (seconds; `variables`), else `defaults`.
 *
 * @example
 * import { HttpGet } from "@cupid-lab/core"
 * const limits = HttpGet.limits({ firstByteMs: 10_000 })
 * const { status, bytes } = await HttpGet.bytes("https://example.org/a.txt", { limits })
 */
import { setTimeout as sleep } from "node:timers/promises"

export interface Limits {
  /** From sending the request to the response headers. */
  readonly firstByteMs: number
  /** Each wait for the next byte of the body. */
  readonly stallMs: number
  /** The whole request, headers and body, per attempt. */
  readonly deadlineMs: number
  /** Further attempts after a failure that is safe to repeat. */
  readonly retries: number
  /** The wait before the first retry; doubled for each further one. */
  readonly backoffMs: number
}

/** 30 s to the first byte, 60 s without a byte, 30 min in all (1.8 GB at 1 MB/s), 2 retries after 1 s and 2 s. */
export const defaults: Limits = {
  firstByteMs: 30_000,
  stallMs: 60_000,
  deadlineMs: 1_800_000,
  retries: 2,
  backoffMs: 1_000
}

/** The environment variable of each limit: seconds (fractions allowed), a count for the retries. */
export const variables: { readonly [K in keyof Limits]: string } = {
  firstByteMs: "CUPID_HTTP_FIRST_BYTE_TIMEOUT",
  stallMs: "CUPID_HTTP_STALL_TIMEOUT",
  deadlineMs: "CUPID_HTTP_DEADLINE",
  retries: "CUPID_HTTP_RETRIES",
  backoffMs: "CUPID_HTTP_RETRY_DELAY"
}

/**
 * The limits to use: `overrides` (milliseconds), else the environment's, else `base`. A variable that
 * is set but not a number (a non-negative whole one for the retries, a positive one otherwise) is an error.
 */
export const limits = (
  overrides: Partial<Limits> = {},
  base: Limits = defaults,
  env: Readonly<Record<string, string | undefined>> = process.env
): Limits => {
  const pick = (key: keyof Limits): number => {
    const given = overrides[key]
    if (given !== undefined) return given
    const raw = env[variables[key]]
    if (raw === undefined || raw.trim() === "") return base[key]
    const n = Number(raw)
    const count = key === "retries"
    if (!Number.isFinite(n) || n < 0 || (!count && n === 0) || (count && !Number.isInteger(n)))
      throw new Error(
        `${variables[key]}: expected ${count ? "a whole number of retries" : "a number of seconds above 0"}, found "${raw}"`
      )
    return count ? n : n * 1000
  }
  return {
    firstByteMs: pick("firstByteMs"),
    stallMs: pick("stallMs"),
    deadlineMs: pick("deadlineMs"),
    retries: pick("retries"),
    backoffMs: pick("backoffMs")
  }
}

export interface Progress {
  /** Body bytes received so far by this attempt (a retry starts again from 0). */
  readonly received: number
  /** From the response's `content-length`, when it has one. */
  readonly total?: number
  /** Since the response headers arrived. */
  readonly elapsedMs: number
  /** The body is complete. */
  readonly done: boolean
}

/** What a caller may set: limits (unset ones from the environment, else the defaults) and a progress callback. */
export interface Settings {
  readonly limits?: Partial<Limits>
  readonly onProgress?: (p: Progress) => void
}

export interface Request {
  readonly limits: Limits
  /** The caller's interruption: aborts the request and any retry. */
  readonly signal?: AbortSignal
  readonly onProgress?: (p: Progress) => void
}

/** A GET that failed; `reason` says why without the URL, `message` with it. */
export class HttpGetError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
    /** A response had arrived (the body failed), or not (the request did). */
    readonly answered: boolean,
    /** Safe to try again: a timeout before the deadline, a dropped connection, HTTP 5xx or 429. */
    readonly retryable: boolean
  ) {
    super(`GET ${url}: ${reason}`)
  }
}

const secretKey = /token|key|secret|sig|auth|pass|cred/i

/** The URL as messages show it: user and password, and values of token-like query parameters, as `***`. */
export const redact = (url: string): string => {
  const u = URL.canParse(url) ? new URL(url) : undefined
  if (u === undefined) return url.replace(/\/\/[^/@]*@/, "//***@")
  const keys = [...u.searchParams.keys()].filter((k) => secretKey.test(k))
  if (u.username === "" && u.password === "" && keys.length === 0) return url
  if (u.username !== "" || u.password !== "") {
    u.username = "***"
    u.password = ""
  }
  for (const k of keys) u.searchParams.set(k, "***")
  return u.toString()
}

/** `text` with every secret of `url` masked, for error messages that quote the URL. */
const scrub = (text: string, url: string): string => {
  const u = URL.canParse(url) ? new URL(url) : undefined
  const secrets = [
    url,
    ...(u === undefined
      ? []
      : [u.href, decodeURIComponent(u.password), decodeURIComponent(u.username), u.password, u.username]),
    ...(u === undefined ? [] : [...u.searchParams].filter(([k]) => secretKey.test(k)).map(([, v]) => v))
  ].filter((s) => s.length > 2)
  return secrets.reduce((t, s) => t.split(s).join(s === url || s === u?.href ? redact(url) : "***"), text)
}

const seconds = (ms: number) => `${ms / 1000} s`
const retriedStatus = new Set([408, 429, 500, 502, 503, 504])
const retriedCode = new Set(["ECONNRESET", "ETIMEDOUT", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET"])

const codeOf = (e: unknown): string | undefined => {
  for (let x = e, depth = 0; x instanceof Error && depth < 4; x = (x as { cause?: unknown }).cause, depth++) {
    const code = (x as { code?: unknown }).code
    if (typeof code === "string") return code
  }
  return undefined
}

/** `fetch failed: ECONNREFUSED`, `terminated: other side closed`. */
export const describe = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause = (e as { cause?: unknown }).cause
  const code = (cause as { code?: unknown } | undefined)?.code
  if (typeof code === "string") return `${e.message}: ${code}`
  return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message
}

type Wait = "first" | "stall" | "deadline"

const timedOut = (wait: Wait, limits: Limits, received: number, total: number | undefined): string => {
  const got = `${received} byte${received === 1 ? "" : "s"}${total === undefined ? "" : ` of ${total}`}`
  return wait === "first"
    ? `timed out waiting for the first byte (the response headers): none within ${seconds(limits.firstByteMs)} ` +
        `(the first-byte limit, ${variables.firstByteMs})`
    : wait === "stall"
      ? `timed out waiting for the next byte: none within ${seconds(limits.stallMs)} after ${got} ` +
        `(the stall limit, ${variables.stallMs})`
      : `timed out waiting for the whole body: not complete within ${seconds(limits.deadlineMs)}, ${got} received ` +
        `(the overall deadline, ${variables.deadlineMs})`
}

const attempt = async <A>(
  url: string,
  request: Request,
  last: boolean,
  consume: (response: Response, body: AsyncIterable<Uint8Array>) => Promise<A>
): Promise<A> => {
  const { limits, signal } = request
  signal?.throwIfAborted()
  const controller = new AbortController()
  let expired: Wait | undefined
  const expire = (wait: Wait) => () => {
    expired = wait
    controller.abort()
  }
  const onAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener("abort", onAbort)
  const deadline = setTimeout(expire("deadline"), limits.deadlineMs)
  let waiting = setTimeout(expire("first"), limits.firstByteMs)
  let answered = false
  let received = 0
  let total: number | undefined
  try {
    const response = await fetch(url, { redirect: "follow", signal: controller.signal })
    clearTimeout(waiting)
    answered = true
    if (!last && retriedStatus.has(response.status))
      throw new HttpGetError(redact(url), `answered HTTP ${response.status}`, true, true)
    const length = Number(response.headers.get("content-length") ?? "")
    total = response.headers.has("content-length") && Number.isFinite(length) ? length : undefined
    const started = performance.now()
    const progress = (done: boolean) =>
      request.onProgress?.({
        received,
        ...(total === undefined ? {} : { total }),
        elapsedMs: performance.now() - started,
        done
      })
    async function* body(): AsyncGenerator<Uint8Array> {
      if (response.body === null) return progress(true)
      const reader = response.body.getReader()
      try {
        for (;;) {
          waiting = setTimeout(expire("stall"), limits.stallMs)
          const chunk = await reader.read()
          clearTimeout(waiting)
          if (chunk.done) return progress(true)
          received += chunk.value.byteLength
          progress(false)
          yield chunk.value
        }
      } finally {
        reader.releaseLock()
      }
    }
    return await consume(response, body())
  } catch (e) {
    if (e instanceof HttpGetError) throw e
    if (expired !== undefined)
      throw new HttpGetError(redact(url), timedOut(expired, limits, received, total), answered, expired !== "deadline")
    if (signal?.aborted === true) throw e
    const code = codeOf(e)
    throw new HttpGetError(redact(url), scrub(describe(e), url), answered, code !== undefined && retriedCode.has(code))
  } finally {
    clearTimeout(deadline)
    clearTimeout(waiting)
    signal?.removeEventListener("abort", onAbort)
    controller.abort()
  }
}

/**
 * GET `url`, following redirects, and hand the response and its body to `consume`. A failure that
 * is safe to repeat (a timeout before the deadline, a dropped connection, HTTP 408, 429 or 5xx) is
 * retried: `consume` must then leave nothing behind (e.g. delete its partial file) before throwing.
 * Statuses that are not retried, and a retried one on the last attempt, reach `consume` as they are.
 * Fails with an {@link HttpGetError}, or with the caller's abort reason.
 */
export const get = async <A>(
  url: string,
  request: Request,
  consume: (response: Response, body: AsyncIterable<Uint8Array>) => Promise<A>
): Promise<A> => {
  for (let n = 1; ; n++) {
    const last = n > request.limits.retries
    try {
      return await attempt(url, request, last, consume)
    } catch (e) {
      if (!(e instanceof HttpGetError)) throw e
      if (last || !e.retryable) {
        if (n === 1) throw e
        throw new HttpGetError(e.url, `${e.reason}; gave up after ${n} attempts`, e.answered, false)
      }
      await sleep(request.limits.backoffMs * 2 ** (n - 1), undefined, request.signal ? { signal: request.signal } : {})
    }
  }
}

/** The status and the whole body, for small files (whatever the status; see {@link get}). */
export const bytes = (url: string, request: Request): Promise<{ readonly status: number; readonly bytes: Buffer }> =>
  get(url, request, async (response, body) => {
    const chunks: Array<Uint8Array> = []
    for await (const chunk of body) chunks.push(chunk)
    return { status: response.status, bytes: Buffer.concat(chunks) }
  })
