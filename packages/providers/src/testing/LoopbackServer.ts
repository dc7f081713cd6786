/**
 * A JSON HTTP server on 127.0.0.1 (a free port) for tests: routes answer through functions the
 * test supplies, scripted faults replace the answers of chosen requests, and every request is
 * recorded. A route key may hold `:name` segments (`"GET /v1/files/:id/content"`), passed to the
 * route as `params`; a route returns a JSON value (a 200) or a `Response` sent as it is (any
 * status, headers and bytes). Bodies are kept as bytes too, for multipart or binary uploads. The server lives in an Effect scope and is closed with it. `OpenAiServer` and
 * `CohereServer` build on it with the providers' REST shapes.
 *
 * Faults are taken in order from a queue, one per request, before `faultFor` is asked:
 * `rateLimit` (429 with `retry-after` / `retry-after-ms`), `serverError` (5xx), `status` (any
 * status and body), `slow` (answers normally after a delay, or never if the client gave up: no
 * headers until then), `trickle` (the headers at once, then the normal answer one byte at a time),
 * `reset` (the connection is destroyed), `malformed` (200 with a truncated JSON body).
 *
 * @example
 * import { LoopbackServer } from "@cupid-lab/providers/testing"
 * const server = yield* LoopbackServer.make({ routes: { "POST /echo": (body) => body } })
 * server.scriptFaults(LoopbackServer.Faults.serverError(), LoopbackServer.Faults.reset())
 * // ... call server.url ...; then inspect server.requests
 */
import { Effect, type Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export type Fault =
  | { readonly kind: "rate-limit"; readonly retryAfterSeconds?: number; readonly retryAfterMs?: number }
  | { readonly kind: "server-error"; readonly status: number; readonly message: string }
  | {
      readonly kind: "status"
      readonly status: number
      readonly body: unknown
      readonly headers?: Readonly<Record<string, string>>
    }
  | { readonly kind: "slow"; readonly delayMs: number }
  | { readonly kind: "trickle"; readonly byteEveryMs: number }
  | { readonly kind: "reset" }
  | { readonly kind: "malformed" }

/** Fault constructors. */
export const Faults = {
  rateLimit: (wait: { readonly retryAfterSeconds?: number; readonly retryAfterMs?: number } = {}): Fault => ({
    kind: "rate-limit",
    ...wait
  }),
  serverError: (status = 500, message = "internal error"): Fault => ({ kind: "server-error", status, message }),
  status: (status: number, body: unknown, headers?: Readonly<Record<string, string>>): Fault => ({
    kind: "status",
    status,
    body,
    ...(headers !== undefined ? { headers } : {})
  }),
  slow: (delayMs: number): Fault => ({ kind: "slow", delayMs }),
  trickle: (byteEveryMs: number): Fault => ({ kind: "trickle", byteEveryMs }),
  reset: (): Fault => ({ kind: "reset" }),
  malformed: (): Fault => ({ kind: "malformed" })
} as const

export interface RecordedRequest {
  /** 0-based arrival order. */
  readonly index: number
  readonly method: string
  /** Path without the query string. */
  readonly path: string
  /** Query-string parameters (the last value of a repeated name). */
  readonly query: Readonly<Record<string, string>>
  /** Lower-cased header names, as received. */
  readonly headers: Readonly<Record<string, string>>
  readonly rawBody: string
  /** The body's bytes as received (`rawBody` is their UTF-8 reading). */
  readonly rawBytes: Uint8Array
  /** The parsed JSON body, or undefined when it is not JSON. */
  readonly body: unknown
  /** The fault served instead of (or before) the answer, if any. */
  readonly fault: Fault["kind"] | undefined
}

/**
 * Answers one route: a `Response` is sent as it is; any other value is the JSON body of a 200 reply.
 * Throwing yields a 500 naming the error. `params` holds the values of the key's `:name` segments.
 */
export type Route = (body: unknown, request: RecordedRequest, params: Readonly<Record<string, string>>) => unknown

export interface Options {
  /**
   * Keys are `"METHOD /path"`, e.g. `"POST /v1/chat/completions"`; a `:name` segment matches any one
   * segment (`"GET /v1/batches/:id"`). An exact key wins over a pattern; patterns are tried in order.
   */
  readonly routes: Readonly<Record<string, Route>>
  readonly faults?: ReadonlyArray<Fault>
  /** Asked for requests the queue does not cover. */
  readonly faultFor?: (request: RecordedRequest) => Fault | undefined
  /** The JSON body of an error reply in the API's shape. */
  readonly errorBody?: (status: number, message: string) => unknown
}

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string
  /** Every request so far, in arrival order. */
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Largest number of requests being answered at the same time. */
  readonly peakInFlight: number
  /** Queue faults for the next requests, in order. */
  readonly scriptFaults: (...faults: ReadonlyArray<Fault>) => void
  /** Resolves once at least `n` requests have arrived. */
  readonly waitForRequests: (n: number) => Promise<void>
}

const defaultErrorBody = (_status: number, message: string) => ({ error: { message } })

interface Reply {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly bytes: Buffer
}

const jsonReply = (status: number, body: unknown, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  bytes: Buffer.from(JSON.stringify(body))
})

const toReply = async (answer: unknown): Promise<Reply> => {
  if (!(answer instanceof Response)) return jsonReply(200, answer)
  const headers: Record<string, string> = {}
  answer.headers.forEach((value, name) => (headers[name] = value))
  return { status: answer.status, headers, bytes: Buffer.from(await answer.arrayBuffer()) }
}

const send = (res: http.ServerResponse, reply: Reply) => {
  res.writeHead(reply.status, { ...reply.headers, "content-length": reply.bytes.length })
  res.end(reply.bytes)
}

const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  send(res, jsonReply(status, body, headers))

interface Matcher {
  readonly method: string
  readonly segments: ReadonlyArray<string>
  readonly route: Route
}

const matchers = (routes: Readonly<Record<string, Route>>): ReadonlyArray<Matcher> =>
  Object.entries(routes).flatMap(([key, route]) => {
    const [method = "", path = ""] = key.split(" ")
    return path.includes("/:") ? [{ method, segments: path.split("/"), route }] : []
  })

const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The route for a request and its path parameters: an exact key first, then the `:name` patterns in order. */
const findRoute = (
  routes: Readonly<Record<string, Route>>,
  patterns: ReadonlyArray<Matcher>,
  method: string,
  path: string
): { readonly route: Route; readonly params: Readonly<Record<string, string>> } | undefined => {
  const exact = routes[`${method} ${path}`]
  if (exact !== undefined) return { route: exact, params: {} }
  const segments = path.split("/")
  for (const m of patterns) {
    if (m.method !== method || m.segments.length !== segments.length) continue
    const params: Record<string, string> = {}
    const fits = m.segments.every((s, i) => {
      const actual = segments[i]!
      if (!s.startsWith(":")) return s === actual
      params[s.slice(1)] = decoded(actual)
      return actual !== ""
    })
    if (fits) return { route: m.route, params }
  }
  return undefined
}

/** Start a server; it is closed (connections and pending slow answers included) when the scope closes. */
export const make = (options: Options): Effect.Effect<LoopbackServer, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{
      readonly server: http.Server
      readonly state: LoopbackServer
      readonly timers: Set<NodeJS.Timeout>
    }>((resume) => {
      const requests: Array<RecordedRequest> = []
      const queue: Array<Fault> = [...(options.faults ?? [])]
      const timers = new Set<NodeJS.Timeout>()
      const waiters: Array<{ n: number; resolve: () => void }> = []
      const errorBody = options.errorBody ?? defaultErrorBody
      const patterns = matchers(options.routes)
      let inFlight = 0
      let peak = 0

      /** Headers now, then the body one byte every `ms` (until the client goes). */
      const trickle = (res: http.ServerResponse, { bytes, headers, status }: Reply, ms: number) => {
        res.writeHead(status, { ...headers, "content-length": bytes.length })
        res.flushHeaders()
        let sent = 0
        const timer = setInterval(() => {
          if (res.destroyed || sent >= bytes.length) {
            clearInterval(timer)
            timers.delete(timer)
            if (!res.destroyed) res.end()
            return
          }
          res.write(bytes.subarray(sent, ++sent))
        }, ms)
        timers.add(timer)
        res.on("close", () => {
          clearInterval(timer)
          timers.delete(timer)
        })
      }

      const answer = (req: RecordedRequest, res: http.ServerResponse, trickleMs?: number) => {
        const found = findRoute(options.routes, patterns, req.method, req.path)
        if (found === undefined) return sendJson(res, 404, errorBody(404, `no route ${req.method} ${req.path}`))
        Promise.resolve()
          .then(() => found.route(req.body, req, found.params))
          .then(toReply)
          .then(
            (reply) => (trickleMs === undefined ? send(res, reply) : trickle(res, reply, trickleMs)),
            (e: unknown) =>
              sendJson(res, 500, errorBody(500, `handler failed: ${e instanceof Error ? e.message : String(e)}`))
          )
      }

      const serve = (req: RecordedRequest, fault: Fault | undefined, res: http.ServerResponse) => {
        switch (fault?.kind) {
          case undefined:
            return answer(req, res)
          case "rate-limit": {
            const headers: Record<string, string> = {}
            if (fault.retryAfterSeconds !== undefined) headers["retry-after"] = String(fault.retryAfterSeconds)
            if (fault.retryAfterMs !== undefined) headers["retry-after-ms"] = String(fault.retryAfterMs)
            return sendJson(res, 429, errorBody(429, "rate limit reached, slow down"), headers)
          }
          case "server-error":
            return sendJson(res, fault.status, errorBody(fault.status, fault.message))
          case "status":
            return sendJson(res, fault.status, fault.body, { ...fault.headers })
          case "slow": {
            const timer = setTimeout(() => {
              timers.delete(timer)
              if (!res.destroyed) answer(req, res)
            }, fault.delayMs)
            timers.add(timer)
            res.on("close", () => {
              clearTimeout(timer)
              timers.delete(timer)
            })
            return
          }
          case "trickle":
            return answer(req, res, fault.byteEveryMs)
          case "reset":
            return res.socket?.destroy()
          case "malformed":
            res.writeHead(200, { "content-type": "application/json" })
            return res.end('{"id":"truncated","choices":[{"message":')
        }
      }

      const server = http.createServer((incoming, res) => {
        inFlight++
        peak = Math.max(peak, inFlight)
        res.on("close", () => inFlight--)
        const chunks: Array<Buffer> = []
        incoming.on("data", (c: Buffer) => chunks.push(c))
        incoming.on("end", () => {
          const rawBytes = Buffer.concat(chunks)
          const rawBody = rawBytes.toString("utf8")
          let body: unknown
          try {
            body = rawBody === "" ? undefined : JSON.parse(rawBody)
          } catch {
            body = undefined
          }
          const headers: Record<string, string> = {}
          for (const [k, v] of Object.entries(incoming.headers)) {
            if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v
          }
          const url = new URL(incoming.url ?? "/", "http://127.0.0.1")
          const base = {
            index: requests.length,
            method: incoming.method ?? "GET",
            path: (incoming.url ?? "/").split("?")[0]!,
            query: Object.fromEntries(url.searchParams),
            headers,
            rawBody,
            rawBytes,
            body
          }
          const fault = queue.shift() ?? options.faultFor?.({ ...base, fault: undefined })
          const recorded: RecordedRequest = { ...base, fault: fault?.kind }
          requests.push(recorded)
          for (const w of waiters.filter((w) => requests.length >= w.n)) {
            waiters.splice(waiters.indexOf(w), 1)
            w.resolve()
          }
          serve(recorded, fault, res)
        })
      })

      const state = (url: string): LoopbackServer => ({
        url,
        get requests() {
          return requests
        },
        get peakInFlight() {
          return peak
        },
        scriptFaults: (...faults) => {
          queue.push(...faults)
        },
        waitForRequests: (n) =>
          requests.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))
      })
      // The client closes an idle connection first (the server's idle limit, said in its Keep-Alive
      // header, is its cue): a server that closes one as the client sends a request on it can leave
      // that request unanswered on a busy machine. Closing the scope closes every connection.
      server.keepAliveTimeout = 600_000
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ server, state: state(`http://127.0.0.1:${port}`), timers }))
      })
    }),
    ({ server, timers }) =>
      Effect.async<void>((resume) => {
        for (const t of timers) clearTimeout(t)
        timers.clear()
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))

/** The server with extra read-only fields; its live fields (`requests`, `peakInFlight`) stay live. */
export const extend = <X extends object>(server: LoopbackServer, extra: X): LoopbackServer & X =>
  Object.assign(Object.create(server) as LoopbackServer, extra)
