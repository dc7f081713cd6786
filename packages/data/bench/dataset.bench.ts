/**
 * Dataset throughput and memory: writes 10,000 CUPID-shaped instances (8 sessions) as JSONL and as
 * parquet, streams each back through Dataset.open in a fresh process (so the peak RSS belongs to
 * the streaming alone), and times the generation of 10,000-session histories.
 *
 * Run: npm run bench -- dataset
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { NodeContext } from "@effect/platform-node"
import { Effect, Stream } from "effect"
import * as Dataset from "../src/Dataset.js"
import * as CupidParquet from "../src/CupidParquet.js"
import * as Synthetic from "../src/Synthetic.js"

const instances = 10_000
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`

function* first<A>(items: Iterable<A>, n: number): Generator<A> {
  if (n <= 0) return
  let i = 0
  for (const item of items) {
    yield item
    if (++i >= n) return
  }
}

/** Child mode: stream one file, report rows/s and memory as one JSON line on stdout. */
const stream = async (file: string) => {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
  gc()
  const baseline = process.memoryUsage()
  let heapPeak = baseline.heapUsed
  // Live heap: sampled right after a forced collection, so garbage not yet collected is not counted.
  let liveAt: Array<number> = []
  let rows = 0
  const start = performance.now()
  const opened = await Effect.runPromise(Dataset.open(file).pipe(Effect.provide(NodeContext.layer)))
  await Effect.runPromise(
    Stream.runForEach(opened.instances, () =>
      Effect.sync(() => {
        if (++rows % 100 === 0) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
        if (rows % 2500 === 0) {
          gc()
          liveAt = [...liveAt, process.memoryUsage().heapUsed]
        }
      })
    )
  )
  const ms = performance.now() - start
  process.stdout.write(
    JSON.stringify({
      rows,
      ms,
      baselineRss: baseline.rss,
      baselineHeap: baseline.heapUsed,
      heapPeak,
      liveAt,
      maxRss: process.resourceUsage().maxRSS * 1024
    }) + "\n"
  )
}

const main = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-bench-"))
  try {
    const options = { ...Synthetic.defaults, personas: Math.ceil(instances / 3), seed: 1 }
    const jsonl = path.join(dir, "data.jsonl")
    const parquet = path.join(dir, "data.parquet")

    let t = performance.now()
    await Effect.runPromise(Synthetic.writeJsonl(jsonl, first(Synthetic.generate(options), instances)))
    const jsonlMs = performance.now() - t
    t = performance.now()
    await CupidParquet.write(parquet, first(Synthetic.generate(options), instances), { rowGroupSize: 500 })
    const parquetMs = performance.now() - t
    console.log(`generate ${instances} instances x 8 sessions:`)
    console.log(
      `  jsonl   ${mb(fs.statSync(jsonl).size)} in ${seconds(jsonlMs)} (${Math.round(instances / (jsonlMs / 1000))} rows/s)`
    )
    console.log(
      `  parquet ${mb(fs.statSync(parquet).size)} in ${seconds(parquetMs)} (${Math.round(instances / (parquetMs / 1000))} rows/s, row groups of 500)`
    )

    console.log("stream through Dataset.open (decode, validate, fromRow), each in a fresh process:")
    const self = fileURLToPath(import.meta.url)
    for (const file of [jsonl, parquet]) {
      const child = spawnSync(process.execPath, [...process.execArgv, self, "--stream", file], { encoding: "utf8" })
      if (child.status !== 0) throw new Error(`streaming ${file} failed: ${child.stderr}`)
      const r = JSON.parse(child.stdout.trim().split("\n").at(-1)!)
      console.log(
        `  ${path.extname(file).slice(1).padEnd(7)} ${r.rows} rows in ${seconds(r.ms)} (${Math.round(r.rows / (r.ms / 1000))} rows/s); ` +
          `heap ${mb(r.baselineHeap)} -> peak ${mb(r.heapPeak)}; RSS ${mb(r.baselineRss)} -> peak ${mb(r.maxRss)}`
      )
      console.log(`          live heap after GC at rows 2500/5000/7500/10000: ${r.liveAt.map(mb).join(" / ")}`)
    }

    t = performance.now()
    let sessions = 0
    for (const row of Synthetic.generate({ ...Synthetic.defaults, personas: 1, sessionsPerHistory: 10_000, seed: 2 })) {
      sessions += row.prior_interactions.length
    }
    const longMs = performance.now() - t
    console.log(
      `generate 1 persona with 10,000-session histories (3 instances, ${sessions} history slots, 10,004 distinct sessions): ` +
        `${seconds(longMs)} (${Math.round(10_004 / (longMs / 1000))} sessions/s)`
    )
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

const streamAt = process.argv.indexOf("--stream")
await (streamAt >= 0 ? stream(process.argv[streamAt + 1]!) : main())
