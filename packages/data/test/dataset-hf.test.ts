import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import { Domain } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Dataset from "../src/Dataset.js"

import * as HubDownload from "../src/internal/hubDownload.js"
import * as Hf from "../src/internal/huggingFace.js"
import * as CupidParquet from "../src/CupidParquet.js"
import * as Synthetic from "../src/Synthetic.js"
import { cupidCard, type HubRepo, startHub as startHubServer } from "./hubServer.js"

const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 2, seed: 5 })]
let dir: string
let parquet: Buffer
/** The same rows in two parquet files: the first 4 and the last 2. */
let shards: Array<Buffer>
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex")

const cupid = (): HubRepo => ({
  card: cupidCard,
  // The file list would also pick data/test-00000-of-00001.parquet: only the card names test.parquet alone.
  files: { "test.parquet": parquet, "data/test-00000-of-00001.parquet": parquet, ".gitattributes": "*.parquet lfs\n" },
  redirect: true
})

/** CUPID-Unverified's shape as far as it matters here: one split, named train, in two shards a card pattern names. */
const unverified = (): HubRepo => ({
  card: [
    "---",
    "configs:",
    "- config_name: default",
    "  data_files:",
    "  - split: train",
    "    path: data/train-*",
    "---"
  ].join("\n"),
  files: { "data/train-00001-of-00002.parquet": shards[1]!, "data/train-00000-of-00002.parquet": shards[0]! }
})

/** A loopback hub; `kixlab/truncated` promises more bytes than it sends, `kixlab/gated` wants a token. */
const startHub = () =>
  startHubServer({ "kixlab/CUPID": cupid(), "kixlab/CUPID-Unverified": unverified() }, (url, res) => {
    if (url.startsWith("/datasets/kixlab/gated/")) {
      res.writeHead(401).end("Access to dataset kixlab/gated is restricted")
      return true
    }
    if (url !== "/datasets/kixlab/truncated/resolve/main/test.parquet") return false
    res.writeHead(200, { "content-length": parquet.length })
    res.write(parquet.subarray(0, 100), () => res.destroy())
    return true
  })

/** An endpoint nothing listens on: a port that was just free. */
const closedEndpoint = async () => {
  const hub = await startHub()
  await hub.close()
  return hub.endpoint
}

const message = <A, R>(effect: Effect.Effect<A, { readonly message: string }, R>) =>
  Effect.map(Effect.either(effect), (e) => (Either.isLeft(e) ? e.left.message : "no error"))

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-hf-"))
  await CupidParquet.write(path.join(dir, "fixture.parquet"), rows)
  parquet = fs.readFileSync(path.join(dir, "fixture.parquet"))
  await CupidParquet.write(path.join(dir, "shard-0.parquet"), rows.slice(0, 4))
  await CupidParquet.write(path.join(dir, "shard-1.parquet"), rows.slice(4))
  shards = [0, 1].map((i) => fs.readFileSync(path.join(dir, `shard-${i}.parquet`)))
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const hfFile = (source: string, file: string) => ({
  source,
  repo: (Hf.parseHfSource(source) as Hf.HfSource).repo,
  file
})

describe("hf: sources", () => {
  NodeTest.it("URL pattern and cache layout", () => {
    const cupid = Hf.parseHfSource("hf:kixlab/CUPID") as Hf.HfSource
    expect(cupid).toEqual({ source: "hf:kixlab/CUPID", repo: "kixlab/CUPID" })
    expect(Hf.downloadUrl(Hf.defaultEndpoint, hfFile("hf:kixlab/CUPID", "test.parquet"))).toBe(
      "https://huggingface.co/datasets/kixlab/CUPID/resolve/main/test.parquet"
    )
    expect(Hf.cardUrl("https://mirror.example/", "kixlab/CUPID-Unverified")).toBe(
      "https://mirror.example/datasets/kixlab/CUPID-Unverified/resolve/main/README.md"
    )
    expect(Hf.listingUrl("https://mirror.example", "kixlab/CUPID-Unverified")).toBe(
      "https://mirror.example/api/datasets/kixlab/CUPID-Unverified"
    )
    expect(Hf.downloadUrl("https://m.example", hfFile("hf:a/b", "data/test #1.parquet"))).toBe(
      "https://m.example/datasets/a/b/resolve/main/data/test%20%231.parquet"
    )
    const custom = Hf.parseHfSource("hf:kixlab/CUPID-Unverified/data/train.parquet") as Hf.HfSource
    expect(custom.file).toBe("data/train.parquet")
    expect(Hf.cachedPath("/c", hfFile("hf:kixlab/CUPID", "test.parquet"))).toBe("/c/hf/kixlab/CUPID/test.parquet")
    expect(HubDownload.resolutionPath("/c", "kixlab/CUPID")).toBe("/c/hf/.resolved/kixlab/CUPID.json")
    expect((Hf.parseHfSource("hf:kixlab") as Error).message).toBe(
      "hf:kixlab: expected hf:<owner>/<name> or hf:<owner>/<name>/<path in repo>, e.g. hf:kixlab/CUPID"
    )
    expect(Hf.parseHfSource("hf:kixlab/CUPID/../../etc/passwd")).toBeInstanceOf(Error)
  })

  NodeTest.it("the default cache directory honours CUPID_CACHE_DIR", () => {
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

  NodeTest.it.effect(
    "kixlab/CUPID: the card's test split, test.parquet, downloaded once through a redirect, then read offline",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-download")
        const hub = yield* Effect.promise(startHub)
        const files = yield* Dataset.download("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint }).pipe(
          Effect.ensuring(Effect.promise(hub.close))
        )
        const file = path.join(cacheDir, "hf", "kixlab", "CUPID", "test.parquet")
        expect(files).toEqual([file])
        // The card decides: the file list is never asked for.
        expect(hub.requests).toEqual([
          "/datasets/kixlab/CUPID/resolve/main/README.md",
          "/datasets/kixlab/CUPID/resolve/main/test.parquet",
          "/cdn/kixlab/CUPID/test.parquet"
        ])
        expect(fs.readFileSync(file).equals(parquet)).toBe(true)
        expect(fs.readFileSync(`${file}.sha256`, "utf8")).toBe(`${sha256(parquet)}  test.parquet\n`)
        expect(fs.readdirSync(path.dirname(file)).sort()).toEqual(["test.parquet", "test.parquet.sha256"])
        expect(JSON.parse(fs.readFileSync(HubDownload.resolutionPath(cacheDir, "kixlab/CUPID"), "utf8"))).toEqual({
          files: ["test.parquet"],
          rule: "dataset card, config default, split test"
        })

        // The server is gone: a cache hit must not need it.
        const loaded = yield* Dataset.loadAll("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint })
        expect(loaded.instances).toEqual(rows.map(Domain.fromRow))
        expect(loaded.fingerprint).toBe(sha256(parquet))
        const opened = yield* Dataset.open("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint })
        expect(opened.resolved).toBe(file)
        expect(hub.requests.length).toBe(3)
      })
  )

  NodeTest.it.effect(
    "CUPID-Unverified's shape: the only split's shards, matched by the card's pattern, read one after the other",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-unverified")
        const hub = yield* Effect.promise(startHub)
        const files = yield* Dataset.download("hf:kixlab/CUPID-Unverified", {
          cacheDir,
          hfEndpoint: hub.endpoint
        }).pipe(Effect.ensuring(Effect.promise(hub.close)))
        const repoDir = path.join(cacheDir, "hf", "kixlab", "CUPID-Unverified")
        expect(files).toEqual([
          path.join(repoDir, "data", "train-00000-of-00002.parquet"),
          path.join(repoDir, "data", "train-00001-of-00002.parquet")
        ])
        expect(hub.requests).toEqual([
          "/datasets/kixlab/CUPID-Unverified/resolve/main/README.md",
          "/api/datasets/kixlab/CUPID-Unverified",
          "/datasets/kixlab/CUPID-Unverified/resolve/main/data/train-00000-of-00002.parquet",
          "/datasets/kixlab/CUPID-Unverified/resolve/main/data/train-00001-of-00002.parquet"
        ])

        // Offline, from the recorded resolution.
        const opened = yield* Dataset.open("hf:kixlab/CUPID-Unverified", { cacheDir, hfEndpoint: hub.endpoint })
        expect(opened.resolved).toBe(files.join(", "))
        expect(opened.fingerprint).toBe(
          createHash("sha256")
            .update(
              `data/train-00000-of-00002.parquet\n${sha256(shards[0]!)}\ndata/train-00001-of-00002.parquet\n${sha256(shards[1]!)}\n`
            )
            .digest("hex")
        )
        expect(yield* opened.size!).toBe(6)
        const all = yield* Dataset.loadAll("hf:kixlab/CUPID-Unverified", { cacheDir, hfEndpoint: hub.endpoint })
        expect(all.instances).toEqual(rows.map(Domain.fromRow))
        expect(hub.requests.length).toBe(4)
      })
  )

  NodeTest.it.effect("a bad row in the second shard is named by its path in the repository and its row there", () =>
    Effect.gen(function* () {
      const cacheDir = path.join(dir, "cache-shard-row")
      const hub = yield* Effect.promise(startHub)
      yield* Dataset.download("hf:kixlab/CUPID-Unverified", { cacheDir, hfEndpoint: hub.endpoint }).pipe(
        Effect.ensuring(Effect.promise(hub.close))
      )
      // Replace the second shard by rows whose first repeats an instance of the first shard.
      const second = path.join(cacheDir, "hf", "kixlab", "CUPID-Unverified", "data", "train-00001-of-00002.parquet")
      yield* Effect.promise(() => CupidParquet.write(second, [rows[0]!, rows[5]!]))
      fs.rmSync(`${second}.sha256`)
      expect(
        yield* message(Dataset.loadAll("hf:kixlab/CUPID-Unverified", { cacheDir, hfEndpoint: hub.endpoint }))
      ).toMatch(
        new RegExp(
          `, row data/train-00001-of-00002\\.parquet:1: duplicate instance id "${rows[0]!.persona_id}:consistent" \\(first at row data/train-00000-of-00002\\.parquet:1\\)$`
        )
      )
    })
  )

  NodeTest.it.effect("a cached file that no longer matches its checksum is an error that says to delete it", () =>
    Effect.gen(function* () {
      const cacheDir = path.join(dir, "cache-corrupt")
      const file = Hf.cachedPath(cacheDir, hfFile("hf:kixlab/CUPID", "test.parquet"))
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const corrupted = Buffer.concat([parquet, Buffer.from("x")])
      fs.writeFileSync(file, corrupted)
      fs.writeFileSync(`${file}.sha256`, `${sha256(parquet)}  test.parquet\n`)
      expect(
        yield* message(
          Dataset.open("hf:kixlab/CUPID/test.parquet", { cacheDir, hfEndpoint: yield* Effect.promise(closedEndpoint) })
        )
      ).toBe(
        `hf:kixlab/CUPID/test.parquet: cached file ${file} does not match its recorded SHA-256 (recorded ${sha256(parquet)}, ` +
          `found ${sha256(corrupted)}); delete ${file} to download it again`
      )
    })
  )

  NodeTest.it.effect("a file saved by hand under a named path is read offline and its checksum recorded", () =>
    Effect.gen(function* () {
      const cacheDir = path.join(dir, "cache-manual")
      const file = Hf.cachedPath(cacheDir, hfFile("hf:kixlab/CUPID", "test.parquet"))
      fs.mkdirSync(path.dirname(file), { recursive: true })
      fs.writeFileSync(file, parquet)
      const loaded = yield* Dataset.loadAll("hf:kixlab/CUPID/test.parquet", {
        cacheDir,
        hfEndpoint: yield* Effect.promise(closedEndpoint)
      })
      expect(loaded.instances.length).toBe(6)
      expect(fs.readFileSync(`${file}.sha256`, "utf8")).toBe(`${sha256(parquet)}  test.parquet\n`)
    })
  )

  NodeTest.it.effect("a recorded file deleted from the cache is downloaded again without resolving again", () =>
    Effect.gen(function* () {
      const cacheDir = path.join(dir, "cache-redownload")
      const hub = yield* Effect.promise(startHub)
      const requests = yield* Effect.gen(function* () {
        const [file] = yield* Dataset.download("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint })
        fs.rmSync(file!)
        const before = hub.requests.length
        yield* Dataset.download("hf:kixlab/CUPID", { cacheDir, hfEndpoint: hub.endpoint })
        return hub.requests.slice(before)
      }).pipe(Effect.ensuring(Effect.promise(hub.close)))
      expect(requests).toEqual(["/datasets/kixlab/CUPID/resolve/main/test.parquet", "/cdn/kixlab/CUPID/test.parquet"])
    })
  )

  NodeTest.it.effect(
    "a damaged record of the resolution is an error naming the record, its field, and what to do",
    () =>
      Effect.gen(function* () {
        const cacheDir = path.join(dir, "cache-record")
        const record = HubDownload.resolutionPath(cacheDir, "kixlab/CUPID")
        fs.mkdirSync(path.dirname(record), { recursive: true })
        fs.writeFileSync(record, JSON.stringify({ files: ["../../escape.parquet"], rule: "x" }))
        expect(
          yield* message(
            Dataset.open("hf:kixlab/CUPID", { cacheDir, hfEndpoint: yield* Effect.promise(closedEndpoint) })
          )
        ).toBe(
          `${record}, files[0]: expected a path inside the repository, found "../../escape.parquet"; delete it to resolve hf:kixlab/CUPID again`
        )
      })
  )

  NodeTest.it.effect("no network and nothing cached: the error says how to name the file or pass --data", () =>
    Effect.gen(function* () {
      const cacheDir = path.join(dir, "cache-offline")
      const endpoint = yield* Effect.promise(closedEndpoint)
      expect(yield* message(Dataset.loadAll("hf:kixlab/CUPID", { cacheDir, hfEndpoint: endpoint }))).toBe(
        `hf:kixlab/CUPID: could not reach ${endpoint}/datasets/kixlab/CUPID/resolve/main/README.md (fetch failed: ECONNREFUSED) ` +
          "to find which file holds the test split, and nothing is cached for it. Name the file instead " +
          `(hf:kixlab/CUPID/<path in repo>; a copy saved by hand as ${path.join(cacheDir, "hf", "kixlab", "CUPID")}/<path in repo> ` +
          "is then read without the network), or pass --data <file> pointing at a downloaded copy."
      )
      const url = `${endpoint}/datasets/kixlab/CUPID/resolve/main/test.parquet`
      const target = path.join(cacheDir, "hf", "kixlab", "CUPID", "test.parquet")
      expect(yield* message(Dataset.loadAll("hf:kixlab/CUPID/test.parquet", { cacheDir, hfEndpoint: endpoint }))).toBe(
        `hf:kixlab/CUPID/test.parquet: could not download ${url} (fetch failed: ECONNREFUSED) and there is no cached copy. ` +
          `Download ${url} by hand and save it as ${target}, or pass --data <file> pointing at a downloaded copy.`
      )
      expect(fs.existsSync(path.join(cacheDir, "hf"))).toBe(false)
    })
  )

  NodeTest.it.effect("HTTP errors and interrupted downloads leave nothing in the cache, and no record", () =>
    Effect.gen(function* () {
      const cacheDir = path.join(dir, "cache-http")
      const hub = yield* Effect.promise(startHub)
      const result = yield* Effect.all([
        message(Dataset.download("hf:kixlab/CUPID/data/missing.parquet", { cacheDir, hfEndpoint: hub.endpoint })),
        message(Dataset.download("hf:kixlab/truncated/test.parquet", { cacheDir, hfEndpoint: hub.endpoint })),
        message(Dataset.download("hf:kixlab/nothing", { cacheDir, hfEndpoint: hub.endpoint })),
        message(Dataset.download("hf:kixlab/gated", { cacheDir, hfEndpoint: hub.endpoint }))
      ]).pipe(Effect.ensuring(Effect.promise(hub.close)))
      const url = `${hub.endpoint}/datasets/kixlab/CUPID/resolve/main/data/missing.parquet`
      expect(result[0]).toBe(
        `hf:kixlab/CUPID/data/missing.parquet: download of ${url} failed with HTTP 404 and there is no cached copy. ` +
          `Download ${url} by hand and save it as ${path.join(cacheDir, "hf/kixlab/CUPID/data/missing.parquet")}, ` +
          "or pass --data <file> pointing at a downloaded copy."
      )
      expect(result[1]).toMatch(
        /^hf:kixlab\/truncated\/test.parquet: download of .* was interrupted \(.+\)\. Download /
      )
      expect(result[2]).toBe(
        `hf:kixlab/nothing: ${hub.endpoint}/api/datasets/kixlab/nothing answered HTTP 404: the hub has no dataset kixlab/nothing, or it is private`
      )
      expect(result[3]).toBe(
        `hf:kixlab/gated: ${hub.endpoint}/datasets/kixlab/gated/resolve/main/README.md answered HTTP 401: the dataset may be gated, ` +
          "and requests are sent without a token; download its file by hand and pass --data <file>"
      )
      expect(fs.readdirSync(path.join(cacheDir, "hf", "kixlab", "truncated"))).toEqual([])
      expect(fs.existsSync(path.join(cacheDir, "hf", ".resolved"))).toBe(false)
    })
  )

  NodeTest.it.effect("download rejects sources that are not hf:", () =>
    Effect.gen(function* () {
      expect(yield* message(Dataset.download("sample"))).toBe(
        "sample: expected hf:<owner>/<name> or hf:<owner>/<name>/<path in repo>, e.g. hf:kixlab/CUPID"
      )
    })
  )
})
