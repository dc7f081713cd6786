import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as Dataset from "../src/Dataset.js"
import * as Domain from "../src/Domain.js"
import * as Hf from "../src/internal/dataset/huggingFace.js"
import { writeParquet } from "../src/internal/dataset/parquetWriter.js"
import * as Synthetic from "../src/Synthetic.js"

const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 2, seed: 5 })]
let dir: string
let parquet: Buffer
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex")

/**
 * A loopback stand-in for the Hub: the resolve URL redirects to a "CDN" path, as the real one
 * does; `/truncated` promises more bytes than it sends. Every request path is recorded.
 */
const startHub = async () => {
  const requests: Array<string> = []
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? "")
    if (req.url === "/datasets/kixlab/CUPID/resolve/main/data/test.parquet") {
      res.writeHead(302, { location: "/cdn/abc/test.parquet" }).end()
    } else if (req.url === "/cdn/abc/test.parquet") {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": parquet.length }).end(parquet)
    } else if (req.url === "/datasets/kixlab/truncated/resolve/main/data/test.parquet") {
      res.writeHead(200, { "content-length": parquet.length })
      res.write(parquet.subarray(0, 100), () => res.destroy())
    } else {
      res.writeHead(404).end("not found")
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return { requests, endpoint, close }
}

/** An endpoint nothing listens on: a port that was just free. */
const closedEndpoint = async () => {
  const hub = await startHub()
  await hub.close()
  return hub.endpoint
}

const message = <A>(effect: Effect.Effect<A, { readonly message: string }>) =>
  Effect.map(Effect.either(effect), (e) => (Either.isLeft(e) ? e.left.message : "no error"))

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-hf-"))
  await writeParquet(path.join(dir, "fixture.parquet"), rows)
  parquet = fs.readFileSync(path.join(dir, "fixture.parquet"))
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("hf: sources", () => {
  it("URL pattern and cache layout", () => {
    const cupid = Hf.parseHfSource("hf:kixlab/CUPID") as Hf.HfSource
    expect(Hf.downloadUrl(Hf.defaultEndpoint, cupid)).toBe("https://huggingface.co/datasets/kixlab/CUPID/resolve/main/data/test.parquet")
    const unverified = Hf.parseHfSource("hf:kixlab/CUPID-Unverified") as Hf.HfSource
    expect(Hf.downloadUrl("https://mirror.example/", unverified)).toBe(
      "https://mirror.example/datasets/kixlab/CUPID-Unverified/resolve/main/data/test.parquet"
    )
    const custom = Hf.parseHfSource("hf:kixlab/CUPID-Unverified/data/train.parquet") as Hf.HfSource
    expect(custom.file).toBe("data/train.parquet")
    expect(Hf.cachedPath("/c", cupid)).toBe("/c/hf/kixlab/CUPID/data/test.parquet")
    expect((Hf.parseHfSource("hf:kixlab") as Error).message).toBe(
      "hf:kixlab: expected hf:<owner>/<name> or hf:<owner>/<name>/<path in repo>, e.g. hf:kixlab/CUPID"
    )
    expect(Hf.parseHfSource("hf:kixlab/CUPID/../../etc/passwd")).toBeInstanceOf(Error)
  })

  it("the default cache directory honours CUPID_CACHE_DIR", () => {
    const saved = process.env["CUPID_CACHE_DIR"]
    try {
      process.env["CUPID_CACHE_DIR"] = "/somewhere/cache"
      expect(Dataset.defaultCacheDir()).toBe("/somewhere/cache")
      delete process.env["CUPID_CACHE_DIR"]
      expect(Dataset.defaultCacheDir()).toBe(path.resolve(".cache/cupid"))
    } finally {
      if (saved === undefined) delete process.env["CUPID_CACHE_DIR"]
      else process.env["CUPID_CACHE_DIR"] = saved
    }
  })

  it.effect("downloads once through a redirect, records the SHA-256, then works offline from the cache", () =>
    Effect.gen(function*() {
      const cacheDir = path.join(dir, "cache-download")
      const hub = yield* Effect.promise(startHub)
      const file = yield* Dataset.download("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint }).pipe(
        Effect.ensuring(Effect.promise(hub.close))
      )
      expect(file).toBe(path.join(cacheDir, "hf", "kixlab", "CUPID", "data", "test.parquet"))
      expect(hub.requests).toEqual(["/datasets/kixlab/CUPID/resolve/main/data/test.parquet", "/cdn/abc/test.parquet"])
      expect(fs.readFileSync(file).equals(parquet)).toBe(true)
      expect(fs.readFileSync(`${file}.sha256`, "utf8")).toBe(`${sha256(parquet)}  test.parquet\n`)
      expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(["test.parquet", "test.parquet.sha256"])

      // The server is gone: a cache hit must not need it.
      const loaded = yield* Dataset.loadAll("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint })
      expect(loaded.instances).toEqual(rows.map(Domain.fromRow))
      expect(loaded.fingerprint).toBe(sha256(parquet))
      const opened = yield* Dataset.open("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint })
      expect(opened.resolved).toBe(file)
      expect(hub.requests.length).toBe(2)
    }))

  it.effect("a cached file that no longer matches its checksum is an error that says to delete it", () =>
    Effect.gen(function*() {
      const cacheDir = path.join(dir, "cache-corrupt")
      const file = Hf.cachedPath(cacheDir, Hf.parseHfSource("hf:kixlab/CUPID") as Hf.HfSource)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const corrupted = Buffer.concat([parquet, Buffer.from("x")])
      fs.writeFileSync(file, corrupted)
      fs.writeFileSync(`${file}.sha256`, `${sha256(parquet)}  test.parquet\n`)
      expect(yield* message(Dataset.open("hf:kixlab/CUPID", { cacheDir, hfEndpoint: yield* Effect.promise(closedEndpoint) }))).toBe(
        `hf:kixlab/CUPID: cached file ${file} does not match its recorded SHA-256 (recorded ${sha256(parquet)}, ` +
          `found ${sha256(corrupted)}); delete ${file} to download it again`
      )
    }))

  it.effect("a file saved there by hand is accepted and its checksum recorded", () =>
    Effect.gen(function*() {
      const cacheDir = path.join(dir, "cache-manual")
      const file = Hf.cachedPath(cacheDir, Hf.parseHfSource("hf:kixlab/CUPID") as Hf.HfSource)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, parquet)
      const loaded = yield* Dataset.loadAll("hf:kixlab/CUPID", { cacheDir, hfEndpoint: yield* Effect.promise(closedEndpoint) })
      expect(loaded.instances.length).toBe(6)
      expect(fs.readFileSync(`${file}.sha256`, "utf8")).toBe(`${sha256(parquet)}  test.parquet\n`)
    }))

  it.effect("no network and no cache: the error names the URL, the exact path to save it to, and --data", () =>
    Effect.gen(function*() {
      const cacheDir = path.join(dir, "cache-offline")
      const endpoint = yield* Effect.promise(closedEndpoint)
      const url = `${endpoint}/datasets/kixlab/CUPID/resolve/main/data/test.parquet`
      const target = path.join(cacheDir, "hf", "kixlab", "CUPID", "data", "test.parquet")
      expect(yield* message(Dataset.loadAll("hf:kixlab/CUPID", { cacheDir, hfEndpoint: endpoint }))).toBe(
        `hf:kixlab/CUPID: could not download ${url} (fetch failed: ECONNREFUSED) and there is no cached copy. ` +
          `Download ${url} by hand and save it as ${target}, or pass --data <file> pointing at a downloaded copy.`
      )
      expect(fs.existsSync(target)).toBe(false)
    }))

  it.effect("HTTP errors and interrupted downloads leave nothing in the cache", () =>
    Effect.gen(function*() {
      const cacheDir = path.join(dir, "cache-http")
      const hub = yield* Effect.promise(startHub)
      const result = yield* Effect.all([
        message(Dataset.download("hf:kixlab/CUPID-Unverified", { cacheDir, hfEndpoint: hub.endpoint })),
        message(Dataset.download("hf:kixlab/truncated", { cacheDir, hfEndpoint: hub.endpoint }))
      ]).pipe(Effect.ensuring(Effect.promise(hub.close)))
      const url = `${hub.endpoint}/datasets/kixlab/CUPID-Unverified/resolve/main/data/test.parquet`
      expect(result[0]).toBe(
        `hf:kixlab/CUPID-Unverified: download of ${url} failed with HTTP 404 and there is no cached copy. ` +
          `Download ${url} by hand and save it as ${path.join(cacheDir, "hf/kixlab/CUPID-Unverified/data/test.parquet")}, ` +
          "or pass --data <file> pointing at a downloaded copy."
      )
      expect(result[1]).toMatch(/^hf:kixlab\/truncated: download of .* was interrupted \(.+\)\. Download /)
      expect(fs.existsSync(path.join(cacheDir, "hf", "kixlab", "truncated", "data"))
        ? fs.readdirSync(path.join(cacheDir, "hf", "kixlab", "truncated", "data"))
        : []).toEqual([])
    }))

  it.effect("download rejects sources that are not hf:", () =>
    Effect.gen(function*() {
      expect(yield* message(Dataset.download("sample"))).toBe(
        "sample: expected hf:<owner>/<name> or hf:<owner>/<name>/<path in repo>, e.g. hf:kixlab/CUPID"
      )
    }))
})
