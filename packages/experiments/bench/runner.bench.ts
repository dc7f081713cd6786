/**
 * The runner's own overhead: 20 cells x 10,000 synthetic instances (8 sessions each, 200,000
 * result lines) through a trivial retriever and scorer, writing real results, the summary and
 * every report. Prints pairs per second for the whole sweep and for its pair loop, the share of the
 * wall time spent after the pairs (sorting, summary, reports: target under 10%), the time to
 * regenerate the reports from the directory, peak RSS and heap per phase, the heap the reports'
 * index (decoded lines and their columns) keeps against the decoded lines alone, what the sweep
 * still holds at its end, and the time, size and heap of results.parquet written alone from the
 * index.
 *
 *   npm run bench -- runner
 *
 * With BENCH_SCALE=2500,5000,10000 it runs once per number of instances, each in a fresh process,
 * and prints how what the sweep holds at its end grows per result line. With
 * BENCH_SCALE_CELLS=10,20,40 it does the same with the number of cells (BENCH_INSTANCES each):
 * more lines, each cell's as many, so that what grows is what the sweep holds per line beyond one
 * cell's. BENCH_CELLS sets the cells of a single run (default 20).
 */
import { Plugin, Retriever, Scorer } from "@cupid-lab/core"
import { Config, Runner } from "@cupid-lab/runner"
import { Report } from "@cupid-lab/report"
import { Columns, Exports } from "@cupid-lab/results"
import { NodeContext, NodeFileSystem } from "@effect/platform-node"
import { Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { parseRows } from "../test/report-fixtures.js"

const cells = Number(process.env["BENCH_CELLS"] ?? 20)
const instances = Number(process.env["BENCH_INSTANCES"] ?? 10_000)

const scaleInstances = process.env["BENCH_SCALE"] ?? ""
const scaleCells = process.env["BENCH_SCALE_CELLS"] ?? ""
if (scaleInstances !== "" || scaleCells !== "") {
  const { spawnSync } = await import("node:child_process")
  const runs =
    scaleCells !== ""
      ? scaleCells.split(",").map((c) => ({ instances, cells: Number(c) }))
      : scaleInstances.split(",").map((n) => ({ instances: Number(n), cells }))
  const points = runs.map((r) => {
    const child = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!], {
      encoding: "utf8",
      env: {
        ...process.env,
        BENCH_SCALE: "",
        BENCH_SCALE_CELLS: "",
        BENCH_INSTANCES: String(r.instances),
        BENCH_CELLS: String(r.cells)
      }
    })
    const bytes = /retained at the sweep's end .*\[(\d+)\]/.exec(child.stdout)?.[1]
    if (child.status !== 0 || bytes === undefined)
      throw new Error(`the run at ${r.instances} instances x ${r.cells} cells failed: ${child.stderr}`)
    const wall = /write":(\d+)/.exec(child.stdout)?.[1]
    const share = /= ([\d.]+)% of the sweep/.exec(child.stdout)?.[1]
    console.log(
      `${r.instances * r.cells} lines (${r.instances} instances x ${r.cells} cells): retained at the sweep's end ${(Number(bytes) / 2 ** 20).toFixed(1)} MB; write phase ${wall} ms (${share}%)`
    )
    return { lines: r.instances * r.cells, instances: r.instances, bytes: Number(bytes) }
  })
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1]!,
      b = points[i]!
    const perInstance =
      b.instances === a.instances
        ? ""
        : `, per instance: ${((b.bytes - a.bytes) / (b.instances - a.instances)).toFixed(0)} B`
    console.log(
      `from ${a.lines} to ${b.lines} lines: ${((b.bytes - a.bytes) / (b.lines - a.lines)).toFixed(1)} B more per line (a decoded line is about 1,035 B${perInstance})`
    )
  }
  process.exit(0)
}

const top = Plugin.retriever({
  name: "top",
  description: "The k most recent sessions.",
  options: Schema.Struct({ k: Schema.Int }),
  make: ({ k }) =>
    Effect.succeed({
      needsSummaries: false,
      retrieve: ({ query }) =>
        Effect.succeed(
          Retriever.fromScores(
            query.sessions.map((s) => [s.id, s.index]),
            k
          )
        )
    })
})

const count = Plugin.scorer({
  name: "count",
  description: "Relevant sessions selected.",
  options: Schema.Struct({}),
  make: () =>
    Effect.succeed({
      metrics: [
        Scorer.metric({
          name: "retrieval.found",
          description: "relevant sessions selected",
          family: "retrieval",
          headline: true,
          mainRank: 1
        }),
        Scorer.metric({
          name: "retrieval.share",
          description: "relevant share of the selection",
          family: "retrieval",
          aggregate: Scorer.ratio,
          headline: true
        })
      ],
      score: ({ instance, trace }) => {
        const relevant = new Set(instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id))
        const selected = trace.retrieval?.selected ?? []
        const found = selected.filter((id) => relevant.has(id)).length
        return Effect.succeed({ "retrieval.found": found, "retrieval.share": { num: found, den: selected.length } })
      }
    })
})

let peakRss = 0,
  peakHeap = 0
const sample = () => {
  const m = process.memoryUsage()
  peakRss = Math.max(peakRss, m.rss)
  peakHeap = Math.max(peakHeap, m.heapUsed)
}
const resetPeak = () => {
  peakRss = 0
  peakHeap = 0
  sample()
}
const timer = setInterval(sample, 50)

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-bench-"))
const text = [
  "name: bench",
  `data: { source: "synthetic:personas=${Math.ceil(instances / 3)},sessions=8,seed=1", limit: ${instances} }`,
  "scorers: [count]",
  "sweep:",
  `  retriever.k: [${Array.from({ length: cells }, (_, i) => i + 1).join(", ")}]`,
  "pipeline: { retriever: { use: top, k: 1 } }",
  "bootstrap: { resamples: 200 }"
].join("\n")

const program = Effect.gen(function* () {
  const config = {
    ...(yield* Config.parse(text, "bench.yaml", {})),
    out: path.join(dir, "out"),
    outGiven: true,
    cacheDir: path.join(dir, "cache")
  }
  const started = performance.now()
  const cpu = process.cpuUsage()
  // The sweep as a user runs it: pairs, sorted results, summary and every report in one pass.
  // At the sweep's end (reports written, run.json next), what it still holds is everything it kept
  // of the lines: the store's order, the reports' columns, the summary, the examples.
  let retainedAtEnd = 0
  const progress = {
    update: () => {},
    done: () => {
      // Twice: buffers whose owners the first collection freed are released by the second.
      globalThis.gc?.()
      globalThis.gc?.()
      const m = process.memoryUsage()
      retainedAtEnd = m.heapUsed + m.arrayBuffers
    }
  }
  const outcome = yield* Runner.sweep(config, { plugins: [top, count], progress })
  const used = process.cpuUsage(cpu)
  const seconds = (performance.now() - started) / 1000
  sample()
  const sweepPeak = { rss: peakRss, heap: peakHeap }
  globalThis.gc?.()
  resetPeak()
  // `report --run`: the same reports, read back from the run directory.
  const reportStarted = performance.now()
  yield* Report.write(config.out)
  const reportSeconds = (performance.now() - reportStarted) / 1000
  sample()
  const reportPeak = { rss: peakRss, heap: peakHeap }
  // What reports hold of the lines: the index (Columns.Index: the decoded lines and their
  // per-cell columns) against the decoded lines alone, each measured as the memory it keeps after a
  // full collection: the heap, plus the typed arrays' buffers, which live outside it.
  const held = () => {
    const m = process.memoryUsage()
    return m.heapUsed + m.arrayBuffers
  }
  // Twice: buffers whose owners the first collection freed are released by the second.
  const collect = () => {
    globalThis.gc?.()
    globalThis.gc?.()
  }
  const retained = <A>(build: Effect.Effect<A, unknown, never>) =>
    Effect.gen(function* () {
      collect()
      const before = held()
      const value = yield* build
      collect()
      return { value, bytes: held() - before }
    })
  const rows = () => Either.getOrThrow(parseRows(fs.readFileSync(outcome.files.results, "utf8"), outcome.files.results))
  const index = yield* retained(Effect.sync(() => Columns.index(rows())))
  const whole = yield* retained(Effect.sync(rows))
  const kept = { lines: index.value.table.length, index: index.bytes, rows: whole.bytes + 0 * whole.value.length }
  // results.parquet alone, from the index: time, size and the heap it adds over it.
  resetPeak()
  const heapBefore = process.memoryUsage().heapUsed
  const parquetStarted = performance.now()
  yield* Exports.writeParquet(path.join(dir, "again.parquet"), index.value.table).pipe(
    Effect.provide(NodeFileSystem.layer)
  )
  const parquet = {
    rows: index.value.table.length,
    seconds: (performance.now() - parquetStarted) / 1000,
    heapRise: peakHeap - heapBefore
  }
  return {
    outcome,
    seconds,
    cpuSeconds: (used.user + used.system) / 1e6,
    reportSeconds,
    sweepPeak,
    reportPeak,
    parquet,
    held: kept,
    retainedAtEnd
  }
})

globalThis.gc?.()
const { outcome, seconds, cpuSeconds, reportSeconds, sweepPeak, reportPeak, parquet, held, retainedAtEnd } =
  await Effect.runPromise(program.pipe(Effect.provide(NodeContext.layer)))
clearInterval(timer)
sample()
const run = JSON.parse(fs.readFileSync(outcome.files.run, "utf8")) as {
  stageTimeMs: Record<string, number>
  phasesMs: { prepare: number; pairs: number; write: number }
}
const bytes = fs.statSync(outcome.files.results).size
console.log(
  `cells ${cells}, instances ${outcome.instances}, pairs ${outcome.pairs.ran}, results ${(bytes / 1e6).toFixed(1)} MB`
)
console.log(
  `whole sweep (validate, run, sort, summary, reports): ${seconds.toFixed(1)} s wall, ${cpuSeconds.toFixed(1)} s CPU -> ${(outcome.pairs.ran / seconds).toFixed(0)} pairs/s (${(outcome.pairs.ran / cpuSeconds).toFixed(0)} per CPU second)`
)
console.log(
  `pair loop alone: ${(run.phasesMs.pairs / 1000).toFixed(1)} s wall -> ${((outcome.pairs.ran * 1000) / run.phasesMs.pairs).toFixed(0)} pairs/s`
)
console.log(`phases (ms): ${JSON.stringify(run.phasesMs)}`)
const after = run.phasesMs.write / (run.phasesMs.prepare + run.phasesMs.pairs + run.phasesMs.write)
console.log(
  `sorting, summary and every report: ${(run.phasesMs.write / 1000).toFixed(1)} s = ${(100 * after).toFixed(1)}% of the sweep's wall time (target < 10%)`
)
console.log(`report --run (read the directory back, render every report): ${reportSeconds.toFixed(1)} s`)
console.log(
  `load average during the run: ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(" ")} (2 cores; other processes slow every figure)`
)
console.log(`stage time summed over pairs (ms): ${JSON.stringify(run.stageTimeMs)}`)
const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MB`
console.log(
  `peak during the sweep: RSS ${mb(sweepPeak.rss)}, heap ${mb(sweepPeak.heap)}; during report --run: RSS ${mb(reportPeak.rss)}, heap ${mb(reportPeak.heap)}`
)
const size = (file: string) => `${(fs.statSync(file).size / 1e6).toFixed(1)} MB`
console.log(
  `retained at the sweep's end (heap and typed-array buffers after a full collection, with the code and the dataset's instances): ${mb(retainedAtEnd)} [${retainedAtEnd}]`
)
console.log(
  `what reports keep of ${held.lines} lines (heap and typed-array buffers after a full collection): the index (decoded lines and columns) ${mb(held.index)} (${(held.index / held.lines).toFixed(0)} B a line); the decoded lines alone ${mb(held.rows)} (${(held.rows / held.lines).toFixed(0)} B a line)`
)
console.log(
  `results.parquet: ${parquet.rows} rows in ${parquet.seconds.toFixed(2)} s, ${size(path.join(outcome.out, "results.parquet"))} (results.csv ${size(path.join(outcome.out, "results.csv"))}); heap above the index while writing: ${mb(Math.max(0, parquet.heapRise))} (sampled every 50 ms)`
)
fs.rmSync(dir, { recursive: true, force: true })
