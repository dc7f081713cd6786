// Downloads never wait forever: loopback servers that never answer, trickle a byte every 500 ms,
// send headers and stall, or fail twice before answering. Limits are set small (hundreds of ms)
// and the messages are checked for the URL, what was awaited and the configured limit, never for
// a measured time; the tests' own ceiling is vitest's (vitest.config.ts).
import { describe, expect, it } from "@effect/vitest"
import { it as nodeIt } from "../src/testing/NodeTest.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as HttpGet from "../src/HttpGet.js"
import * as ReferencePrompts from "../src/ReferencePrompts.js"

interface Server {
  readonly url: string
  /** Requests received, in order. */
  readonly requests: Array<string>
  readonly close: () => Promise<void>
}

/** A loopback server answering every request with `answer`; closing it drops open connections. */
const serve = async (answer: (res: http.ServerResponse, n: number) => void): Promise<Server> => {
  const requests: Array<string> = []
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "")
    answer(res, requests.length)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close }
}

const silent = () => serve(() => {})

/** One byte every 500 ms, forever (until the client goes away). */
const trickle = () =>
  serve((res) => {
    res.writeHead(200, { "content-type": "application/octet-stream" })
    res.write("x")
    const timer = setInterval(() => res.write("x"), 500)
    res.on("close", () => clearInterval(timer))
  })

/** Headers promising 10 bytes, 3 of them, then nothing. */
const stalling = () =>
  serve((res) => {
    res.writeHead(200, { "content-length": "10" })
    res.write("abc")
  })

/** HTTP 503 to the first two requests, then `hello`. */
const flaky = () => serve((res, n) => (n <= 2 ? res.writeHead(503).end("busy") : res.writeHead(200).end("hello")))

const small = (overrides: Partial<HttpGet.Limits> = {}): HttpGet.Limits => ({
  firstByteMs: 300,
  stallMs: 300,
  deadlineMs: 20_000,
  retries: 0,
  backoffMs: 10,
  ...overrides
})

const failure = (promise: Promise<unknown>): Promise<string> =>
  promise.then(
    () => "no error",
    (e: unknown) => (e instanceof Error ? e.message : String(e))
  )

const using = async <A>(start: Promise<Server>, f: (s: Server) => Promise<A>): Promise<A> => {
  const server = await start
  return f(server).finally(server.close)
}

describe("HttpGet: deadlines", () => {
  it("a server that accepts and never answers: the first-byte limit, retried, then an error naming URL, wait and limit", () =>
    using(silent(), async (s) => {
      const message = await failure(HttpGet.bytes(`${s.url}/a.parquet`, { limits: small({ retries: 1 }) }))
      expect(message).toBe(
        `GET ${s.url}/a.parquet: timed out waiting for the first byte (the response headers): none within 0.3 s ` +
          "(the first-byte limit, CUPID_HTTP_FIRST_BYTE_TIMEOUT); gave up after 2 attempts"
      )
      expect(s.requests).toEqual(["/a.parquet", "/a.parquet"])
    }))

  it("a byte every 500 ms: the overall deadline ends it, and it is not retried", () =>
    using(trickle(), async (s) => {
      const message = await failure(
        HttpGet.bytes(`${s.url}/slow`, { limits: small({ stallMs: 5_000, deadlineMs: 1_500, retries: 2 }) })
      )
      expect(message).toMatch(
        new RegExp(
          `^GET ${s.url}/slow: timed out waiting for the whole body: not complete within 1\\.5 s, \\d+ bytes? received ` +
            "\\(the overall deadline, CUPID_HTTP_DEADLINE\\)$"
        )
      )
      expect(s.requests).toHaveLength(1)
    }))

  it("headers, 3 of 10 bytes, then nothing: the stall limit, with the bytes received", () =>
    using(stalling(), async (s) => {
      const message = await failure(HttpGet.bytes(`${s.url}/f`, { limits: small({ retries: 1 }) }))
      expect(message).toBe(
        `GET ${s.url}/f: timed out waiting for the next byte: none within 0.3 s after 3 bytes of 10 ` +
          "(the stall limit, CUPID_HTTP_STALL_TIMEOUT); gave up after 2 attempts"
      )
      expect(s.requests).toHaveLength(2)
    }))

  it("HTTP 503 twice, then an answer: retried with backoff; with too few retries the last 503 is handed over", () =>
    using(flaky(), async (s) => {
      const short = await HttpGet.bytes(`${s.url}/f`, { limits: small({ retries: 1 }) })
      expect(short.status).toBe(503)
      expect(s.requests).toHaveLength(2)
      await using(flaky(), async (f) => {
        const answer = await HttpGet.bytes(`${f.url}/f`, { limits: small({ retries: 2 }) })
        expect({ status: answer.status, text: answer.bytes.toString() }).toEqual({ status: 200, text: "hello" })
        expect(f.requests).toHaveLength(3)
      })
    }))

  it("progress: bytes so far, the total when known, and a final call when the body is complete", () =>
    using(
      serve((res) => {
        res.writeHead(200, { "content-length": "6" })
        res.write("abc", () => setTimeout(() => res.end("def"), 50))
      }),
      async (s) => {
        const seen: Array<HttpGet.Progress> = []
        await HttpGet.bytes(s.url, { limits: small(), onProgress: (p) => seen.push(p) })
        expect(seen.at(-1)).toMatchObject({ received: 6, total: 6, done: true })
        expect(seen.filter((p) => !p.done).map((p) => p.received)).toEqual([3, 6])
        expect(seen.every((p) => p.elapsedMs >= 0)).toBe(true)
      }
    ))

  it("credentials and token-like query values never appear in a message", () =>
    using(silent(), async (s) => {
      const withUser = s.url.replace("http://", "http://someone:hf_s3cretToken@")
      const bad = await failure(HttpGet.bytes(`${withUser}/f`, { limits: small() }))
      expect(bad).not.toContain("hf_s3cretToken")
      expect(bad).toContain(`GET http://***@127.0.0.1:${new URL(s.url).port}/f: `)
      const query = await failure(HttpGet.bytes(`${s.url}/f?token=hf_s3cretToken&x=1`, { limits: small() }))
      expect(query).not.toContain("hf_s3cretToken")
      expect(query).toContain(`GET ${s.url}/f?token=***&x=1: timed out waiting for the first byte`)
    }))
})

describe("HttpGet.limits", () => {
  it("the caller's values, else the environment's (seconds), else the base", () => {
    const env = { CUPID_HTTP_FIRST_BYTE_TIMEOUT: "0.3", CUPID_HTTP_RETRIES: "0", CUPID_HTTP_DEADLINE: "" }
    expect(HttpGet.limits({ stallMs: 5 }, HttpGet.defaults, env)).toEqual({
      ...HttpGet.defaults,
      firstByteMs: 300,
      stallMs: 5,
      retries: 0
    })
    expect(() => HttpGet.limits({}, HttpGet.defaults, { CUPID_HTTP_STALL_TIMEOUT: "soon" })).toThrow(
      'CUPID_HTTP_STALL_TIMEOUT: expected a number of seconds above 0, found "soon"'
    )
    expect(() => HttpGet.limits({}, HttpGet.defaults, { CUPID_HTTP_RETRIES: "1.5" })).toThrow(
      'CUPID_HTTP_RETRIES: expected a whole number of retries, found "1.5"'
    )
  })
})

describe("ReferencePrompts: the download has the same deadlines", () => {
  const cacheDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "reference-deadline-"))
  const file = (url: string) => `${url}/${ReferencePrompts.commit}/${ReferencePrompts.files.infer.path}`

  nodeIt.live("no answer: the error names the file's URL, the first byte and the limit", () =>
    Effect.gen(function* () {
      const s = yield* Effect.acquireRelease(Effect.promise(silent), (s) => Effect.promise(s.close))
      const e = yield* Effect.flip(
        ReferencePrompts.make({ cacheDir: cacheDir(), url: s.url, limits: small() }).read("infer")
      )
      expect(e.message).toContain(
        `the download from ${file(s.url)} failed (timed out waiting for the first byte (the response headers): ` +
          "none within 0.3 s (the first-byte limit, CUPID_HTTP_FIRST_BYTE_TIMEOUT))"
      )
    }).pipe(Effect.scoped)
  )

  nodeIt.live("a trickle: the overall deadline, set through the environment", () =>
    Effect.gen(function* () {
      const s = yield* Effect.acquireRelease(Effect.promise(trickle), (s) => Effect.promise(s.close))
      const saved = process.env["CUPID_HTTP_DEADLINE"]
      const e = yield* Effect.acquireUseRelease(
        Effect.sync(() => (process.env["CUPID_HTTP_DEADLINE"] = "1")),
        () => Effect.flip(ReferencePrompts.make({ cacheDir: cacheDir(), url: s.url }).read("infer")),
        () =>
          Effect.sync(() =>
            saved === undefined
              ? delete process.env["CUPID_HTTP_DEADLINE"]
              : (process.env["CUPID_HTTP_DEADLINE"] = saved)
          )
      )
      expect(e.message).toContain(`the download from ${file(s.url)} failed (timed out waiting for the whole body: `)
      expect(e.message).toContain("not complete within 1 s")
      expect(e.message).toContain("(the overall deadline, CUPID_HTTP_DEADLINE)")
    }).pipe(Effect.scoped)
  )
})
