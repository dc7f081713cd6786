// hf: downloads never wait forever: a loopback hub whose card never comes, whose file trickles a
// byte every 500 ms or stalls after its headers, or that answers HTTP 503 twice first. Limits are
// set small through `download.limits`; messages are checked for the URL, what was awaited and the
// configured limit (never a measured time), and no partial file is left where a later run would
// take it for a complete one.
import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import type { HttpGet } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Dataset from "../src/Dataset.js"
import * as CupidParquet from "../src/CupidParquet.js"
import * as Synthetic from "../src/Synthetic.js"
import { cupidCard, type Hub, startHub } from "./hubServer.js"

let dir: string
let parquet: Buffer

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-hub-deadlines-"))
  await CupidParquet.write(path.join(dir, "fixture.parquet"), [
    ...Synthetic.generate({ ...Synthetic.defaults, personas: 1 })
  ])
  parquet = fs.readFileSync(path.join(dir, "fixture.parquet"))
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const small = (overrides: Partial<HttpGet.Limits> = {}): Partial<HttpGet.Limits> => ({
  firstByteMs: 300,
  stallMs: 300,
  retries: 0,
  backoffMs: 10,
  ...overrides
})

/**
 * kixlab/CUPID as published, answering HTTP 503 to its first two requests for test.parquet;
 * kixlab/silent never answers; kixlab/stall/test.parquet stops after its headers and 100 bytes;
 * kixlab/trickle/test.parquet sends a byte every 500 ms.
 */
const hub = (): Promise<Hub> => {
  let refused = 0
  return startHub({ "kixlab/CUPID": { card: cupidCard, files: { "test.parquet": parquet } } }, (url, res) => {
    if (url === "/datasets/kixlab/CUPID/resolve/main/test.parquet" && refused < 2) {
      refused++
      res.writeHead(503).end("Service Unavailable")
      return true
    }
    if (url.startsWith("/datasets/kixlab/silent/")) return true
    if (url === "/datasets/kixlab/stall/resolve/main/test.parquet") {
      res.writeHead(200, { "content-length": parquet.length }).write(parquet.subarray(0, 100))
      return true
    }
    if (url === "/datasets/kixlab/trickle/resolve/main/test.parquet") {
      res.writeHead(200, { "content-length": parquet.length }).write(parquet.subarray(0, 1))
      let sent = 1
      const timer = setInterval(() => res.write(parquet.subarray(sent, ++sent)), 500)
      res.on("close", () => clearInterval(timer))
      return true
    }
    return false
  })
}

const withHub = <A, E, R>(use: (hub: Hub) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(Effect.promise(hub), use, (h) => Effect.promise(h.close))

const message = <A, R>(effect: Effect.Effect<A, { readonly message: string }, R>) =>
  Effect.map(Effect.either(effect), (e) => (Either.isLeft(e) ? e.left.message : "no error"))

const urlOf = (endpoint: string, repo: string) => `${endpoint}/datasets/${repo}/resolve/main/test.parquet`
const hint = (url: string, file: string) =>
  `Download ${url} by hand and save it as ${file}, or pass --data <file> pointing at a downloaded copy.`

describe("hf: downloads have deadlines", () => {
  NodeTest.it.live("HTTP 503 twice, then the file: retried with backoff, progress reported to the callback", () =>
    withHub((h) =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-retry")
        const seen: Array<HttpGet.Progress> = []
        const files = yield* Dataset.download("hf:kixlab/CUPID", {
          cacheDir,
          hfEndpoint: h.endpoint,
          download: { limits: small({ retries: 2 }), onProgress: (p) => seen.push(p) }
        })
        expect(fs.readFileSync(files[0]!).equals(parquet)).toBe(true)
        expect(h.requests.filter((r) => r.endsWith("/test.parquet"))).toHaveLength(3)
        expect(seen.at(-1)).toMatchObject({ received: parquet.length, total: parquet.length, done: true })
        const received = seen.map((p) => p.received)
        expect(received).toEqual([...received].sort((a, b) => a - b))
      })
    )
  )

  NodeTest.it.live("a card that never comes: the first-byte limit, named with the URL", () =>
    withHub((h) =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-silent")
        const got = yield* message(
          Dataset.download("hf:kixlab/silent", { cacheDir, hfEndpoint: h.endpoint, download: { limits: small() } })
        )
        expect(got).toContain(
          `hf:kixlab/silent: could not reach ${h.endpoint}/datasets/kixlab/silent/resolve/main/README.md ` +
            "(timed out waiting for the first byte (the response headers): none within 0.3 s " +
            "(the first-byte limit, CUPID_HTTP_FIRST_BYTE_TIMEOUT)) to find which file holds the test split"
        )
        expect(fs.existsSync(path.join(cacheDir, "hf"))).toBe(false)
      })
    )
  )

  NodeTest.it.live("headers, then a stall: the stall limit, retried, and no partial file left in the cache", () =>
    withHub((h) =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-stall")
        const url = urlOf(h.endpoint, "kixlab/stall")
        const target = path.join(cacheDir, "hf", "kixlab", "stall", "test.parquet")
        const got = yield* message(
          Dataset.download("hf:kixlab/stall/test.parquet", {
            cacheDir,
            hfEndpoint: h.endpoint,
            download: { limits: small({ retries: 1 }) }
          })
        )
        expect(got).toBe(
          `hf:kixlab/stall/test.parquet: download of ${url} was interrupted (timed out waiting for the next byte: ` +
            `none within 0.3 s after 100 bytes of ${parquet.length} (the stall limit, CUPID_HTTP_STALL_TIMEOUT); ` +
            `gave up after 2 attempts). ${hint(url, target)}`
        )
        expect(h.requests.filter((r) => r.endsWith("/test.parquet"))).toHaveLength(2)
        expect(fs.readdirSync(path.dirname(target))).toEqual([])
      })
    )
  )

  NodeTest.it.live("a byte every 500 ms: the overall deadline, not retried, and nothing left behind", () =>
    withHub((h) =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-trickle")
        const url = urlOf(h.endpoint, "kixlab/trickle")
        const got = yield* message(
          Dataset.download("hf:kixlab/trickle/test.parquet", {
            cacheDir,
            hfEndpoint: h.endpoint,
            download: { limits: small({ stallMs: 5_000, deadlineMs: 1_000, retries: 2 }) }
          })
        )
        expect(got).toContain(
          `hf:kixlab/trickle/test.parquet: download of ${url} was interrupted (timed out waiting for the whole body: ` +
            "not complete within 1 s, "
        )
        expect(got).toContain(`of ${parquet.length} received (the overall deadline, CUPID_HTTP_DEADLINE)). Download `)
        expect(h.requests).toHaveLength(1)
        expect(fs.readdirSync(path.join(cacheDir, "hf", "kixlab", "trickle"))).toEqual([])
      })
    )
  )

  NodeTest.it.live("a token in the endpoint never appears in a message", () =>
    withHub((h) =>
      Effect.gen(function* () {
        const endpoint = h.endpoint.replace("http://", "http://user:hf_s3cretToken@")
        const got = yield* message(
          Dataset.download("hf:kixlab/CUPID/test.parquet", {
            cacheDir: path.join(dir, "cache-token"),
            hfEndpoint: endpoint,
            download: { limits: small() }
          })
        )
        expect(got).not.toContain("hf_s3cretToken")
        expect(got).toContain(
          `could not download ${urlOf(h.endpoint.replace("http://", "http://***@"), "kixlab/CUPID")} (`
        )
      })
    )
  )
})
