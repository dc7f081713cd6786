// Several processes (sweeps on several machines sharing one cache directory) write the same and
// different keys into one model cache at the same moment. Every entry must end whole (one writer's
// value, never a mix or a truncation), every answer must be stored, and no writer may see a write
// fail, also when the writers report the same process id, as containers that all run as PID 1 do.
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as ModelCache from "../src/ModelCache.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const writer = path.join(here, "fixtures", "cache-writer.ts")
const workers = 4
const rounds = 40

const valueOf = (label: string): string => `${label}:`.padEnd(64 * 1024, label)

interface Report {
  readonly stats: ModelCache.Stats
  readonly warnings: ReadonlyArray<string>
}

const run = (dir: string, pid: number): Promise<Array<Report>> => {
  const children = Array.from(
    { length: workers },
    (_, w) =>
      new Promise<Report>((resolve, reject) => {
        const child = spawn(
          process.execPath,
          ["--import", "tsx", writer, dir, String(w), String(rounds), String(pid)],
          {
            stdio: ["ignore", "pipe", "pipe"]
          }
        )
        let out = "",
          err = ""
        child.stdout.on("data", (d: Buffer) => (out += d.toString()))
        child.stderr.on("data", (d: Buffer) => (err += d.toString()))
        child.on("error", reject)
        child.on("close", (code) =>
          code === 0 ? resolve(JSON.parse(out) as Report) : reject(new Error(`writer ${w} exited with ${code}: ${err}`))
        )
      })
  )
  // Every writer waits for `go`, given once all of them have started.
  const go = setInterval(() => {
    if (Array.from({ length: workers }, (_, w) => fs.existsSync(path.join(dir, `ready-${w}`))).every(Boolean)) {
      fs.writeFileSync(path.join(dir, "go"), "")
      clearInterval(go)
    }
  }, 10)
  return Promise.all(children).finally(() => clearInterval(go))
}

const check = async (dir: string, reports: ReadonlyArray<Report>) => {
  for (const r of reports) {
    expect(r.warnings).toEqual([])
    expect(r.stats.writeErrors).toBe(0)
    expect(r.stats.writes).toBe(rounds * 3)
  }
  const cacheDir = path.join(dir, "cache")
  const files = fs
    .readdirSync(cacheDir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => d.name)
  // No temporary file is left, and every key has its entry: 8 shared, 8 racy, one per worker and round.
  expect(files.filter((f) => !f.endsWith(".json"))).toEqual([])
  expect(files.length).toBe(8 + 8 + workers * rounds)
  // A fresh reader (another process's view) finds every entry whole, with a value some writer wrote.
  const read = await Effect.runPromise(
    Effect.provide(
      Effect.gen(function* () {
        const cache = yield* ModelCache.ModelCache
        const get = (k: string) => Effect.map(cache.get<string>(k), (o) => (o._tag === "Some" ? o.value : undefined))
        const shared = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, k) => `shared-${k}`),
          get
        )
        const racy = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, k) => `racy-${k}`),
          get
        )
        const own = yield* Effect.forEach(
          Array.from({ length: workers * rounds }, (_, i) => `own-${Math.floor(i / rounds)}-${i % rounds}`),
          get
        )
        return { shared, racy, own, stats: yield* cache.stats }
      }),
      ModelCache.layerFile(cacheDir, { onWarning: (line) => expect.fail(line) })
    ).pipe(Effect.provide(NodeContext.layer))
  )
  expect(read.shared).toEqual(Array.from({ length: 8 }, (_, k) => valueOf(`shared-${k}`)))
  read.racy.forEach((v, k) =>
    expect(Array.from({ length: workers }, (_, w) => valueOf(`racy-${k}-by-${w}`))).toContain(v)
  )
  expect(read.own).toEqual(
    Array.from({ length: workers * rounds }, (_, i) => valueOf(`own-${Math.floor(i / rounds)}-${i % rounds}`))
  )
  expect(read.stats.invalid).toBe(0)
}

describe("a model cache directory shared by several processes", () => {
  it.live(
    "keeps every entry whole and every answer stored when processes write the same and different keys at once",
    () =>
      Effect.promise(async () => {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-processes-"))
        try {
          await check(dir, await run(dir, 0))
        } finally {
          fs.rmSync(dir, { recursive: true, force: true })
        }
      })
  )

  it.live("does the same when every writer has the same process id (containers on several machines, each PID 1)", () =>
    Effect.promise(async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-processes-"))
      try {
        await check(dir, await run(dir, 1))
      } finally {
        fs.rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
