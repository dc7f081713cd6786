/**
 * The result log alone: open an empty run directory, append 200,000 valid result lines of about
 * 1.5 KB (20 cells x 10,000 instances, arriving instance by instance as pairs complete, cells in
 * reverse so that finalize must sort) with a flush every 2,000 lines, finalize (sort by instance,
 * then cell), then open the ~300 MB file again as a resumed run would (every line decoded and
 * kept). Prints each phase's time and the peak RSS and heap. Generated lines, not a real run.
 *
 *   npm run bench -- result-log
 *   BENCH_LINES=20000 npx tsx --expose-gc packages/experiments/bench/result-log.bench.ts
 */
import { NodeFileSystem } from "@effect/platform-node"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ResultLog } from "@cupid-lab/runner"
import { Results, type ResultLine } from "@cupid-lab/results"

const cells = 20
const lines = Math.ceil(Number(process.env["BENCH_LINES"] ?? 200_000) / cells) * cells
const instances = lines / cells
const cellIds = new Set(Array.from({ length: cells }, (_, c) => `c${c}`))
const pad = "x".repeat(1000)

/** A line as the runner writes one, padded (in its inference) to about 1.5 KB. */
const line = (cell: string, instance: string): string => {
  const l: ResultLine.ResultLine = {
    cell,
    cellName: `retriever.k=${cell}`,
    instance,
    personaId: instance,
    type: "consistent",
    status: "ok",
    params: { retriever: { use: "top", k: 1 }, summarizer: null, inferrer: null, generator: null },
    meta: { sessions: 8, historyTokens: 1200, relevantMeanPosition: 4.5, relevant: ["s4", "s5"], stale: ["s1"] },
    selected: ["s8"],
    ranking: [
      { sessionId: "s8", score: 8 },
      { sessionId: "s7", score: 7 }
    ],
    summaries: null,
    inference: { preference: pad, analysis: "" },
    generation: null,
    scores: { "retrieval.found": 0, "retrieval.share": { num: 0, den: 1 } },
    usage: { calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} },
    error: null
  }
  return Results.encodeLine(l)
}

let peakRss = 0,
  peakHeap = 0
const sample = () => {
  const m = process.memoryUsage()
  peakRss = Math.max(peakRss, m.rss)
  peakHeap = Math.max(peakHeap, m.heapUsed)
}
const timer = setInterval(sample, 20)
const mb = (n: number) => `${(n / 1e6).toFixed(0)} MB`

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-result-log-bench-"))
const open = ResultLog.open({ dir, cells: cellIds })

const program = Effect.gen(function* () {
  const t0 = performance.now()
  const { appended, finalized, opened, rewritten } = yield* Effect.scoped(
    Effect.gen(function* () {
      const log = yield* open
      const opened = performance.now()
      for (let i = 0; i < lines; i++) {
        const cell = `c${cells - 1 - (i % cells)}`,
          instance = `i${Math.floor(i / cells)}`
        log.append({ cell, instance, text: line(cell, instance) })
        if (i % 2000 === 1999) yield* log.flush
      }
      yield* log.flush
      const appended = performance.now()
      const final = yield* log.finalize({
        cellOrder: new Map(Array.from({ length: cells }, (_, c) => [`c${c}`, c])),
        instanceOrder: new Map(Array.from({ length: instances }, (_, i) => [`i${i}`, i])),
        complete: true
      })
      if (final.order.length !== lines) throw new Error(`finalize ordered ${final.order.length} lines, not ${lines}`)
      return { opened, appended, finalized: performance.now(), rewritten: final.order.some((n, k) => n !== k) }
    })
  )
  const size = fs.statSync(path.join(dir, ResultLog.fileName)).size
  const mid = { rss: peakRss, heap: peakHeap }
  const r0 = performance.now()
  const kept = yield* Effect.scoped(Effect.map(open, (log) => log.opened.kept.length))
  const r1 = performance.now()
  console.log(
    `result log (generated lines): open ${(opened - t0).toFixed(0)} ms, append+flush ${lines} lines ${(appended - opened).toFixed(0)} ms, ` +
      `finalize ${(finalized - appended).toFixed(0)} ms (${mb(size)}${rewritten ? ", sorted" : ""}), reopen ${(r1 - r0).toFixed(0)} ms (${kept} lines decoded and kept); ` +
      `peak rss ${mb(mid.rss)} (with reopen ${mb(peakRss)}), peak heap ${mb(mid.heap)} (with reopen ${mb(peakHeap)})`
  )
})

Effect.runPromise(program.pipe(Effect.provide(NodeFileSystem.layer))).finally(() => {
  clearInterval(timer)
  fs.rmSync(dir, { recursive: true, force: true })
})
