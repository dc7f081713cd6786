/**
 * Retrieval throughput (queries per second) and peak heap per retriever at 8, 100, 1,000 and
 * 10,000 sessions per history, on synthetic data (core's Synthetic generator).
 *
 *   npm run bench -- retrievers.bench
 *
 * Each retriever runs in its own child process so that memos and heap figures are its own. Per
 * size the queries run twice: "cold" includes analysing every session text for the first time
 * (tokenizing, tagging, embedding); "warm" repeats the same queries with the per-text memos filled,
 * which is what later cells of a sweep pay. Peak heap is sampled after every query (heapUsed minus
 * the heap after a full collection before the size started). `hybrid` is left out: it costs its two
 * parts plus a rank fusion.
 */
import { Corpus, Domain, ModelCache, Models, Plugin, type Retriever } from "@cupid-lab/core"
import { Synthetic } from "@cupid-lab/data"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { fork } from "node:child_process"
import { fileURLToPath } from "node:url"
import * as Builtins from "../src/Builtins.js"
import * as Selector from "../src/Selector.js"

// Three instances per persona (they share most session texts, as in CUPID); one at 10,000.
const sizes: ReadonlyArray<{
  readonly sessions: number
  readonly personas: number
  readonly types?: readonly [Domain.CupidType, ...Array<Domain.CupidType>]
}> = [
  { sessions: 8, personas: 10 },
  { sessions: 100, personas: 2 },
  { sessions: 1_000, personas: 1 },
  { sessions: 10_000, personas: 1, types: ["changing"] }
]

const specs: ReadonlyArray<{ readonly use: string } & Record<string, unknown>> = [
  { use: "all" },
  { use: "recency", k: 2 },
  { use: "bm25", k: 2 },
  { use: "embedding", k: 2 },
  { use: "context-factor" },
  { use: "context-factor", policy: "detect-change" },
  { use: "oracle" }
]

interface Figure {
  readonly sessions: number
  readonly queries: number
  readonly coldQps: number
  readonly warmQps: number
  readonly buildMs: number
  readonly peakHeapMb: number
}

const gc = (): void => (globalThis as { gc?: () => void }).gc?.()

const measureOne = (spec: { readonly use: string } & Record<string, unknown>) =>
  Effect.gen(function* () {
    const out: Array<Figure> = []
    for (const size of sizes) {
      const rows = [
        ...Synthetic.generate({
          ...Synthetic.defaults,
          personas: size.personas,
          sessionsPerHistory: size.sessions,
          seed: 5,
          types: size.types ?? Synthetic.defaults.types
        })
      ]
      const instances = rows.map(Domain.fromRow)
      gc()
      const base = process.memoryUsage().heapUsed
      let peak = base
      const env = Layer.mergeAll(
        Models.layerEmpty,
        Corpus.layerFromQueries(
          instances.map((i) => i.query),
          `bench-${size.sessions}-${size.personas}`
        ),
        Layer.succeed(Plugin.Plugins, Plugin.makeRegistry(Builtins.plugins))
      ).pipe(Layer.provideMerge(ModelCache.layerMemory))
      const figure = yield* Effect.gen(function* () {
        const t0 = performance.now()
        const plugin = yield* (yield* Plugin.Plugins).get("retriever", spec.use)
        const service = yield* Selector.build(spec)
        const buildMs = performance.now() - t0
        const pass = Effect.gen(function* () {
          const start = performance.now()
          for (const instance of instances) {
            yield* plugin.needsGold === true
              ? (service as Retriever.GoldService).retrieve({ query: instance.query }, instance.gold)
              : (service as Retriever.Service).retrieve({ query: instance.query })
            peak = Math.max(peak, process.memoryUsage().heapUsed)
          }
          return instances.length / ((performance.now() - start) / 1000)
        })
        const coldQps = yield* pass
        const warmQps = yield* pass
        return {
          sessions: size.sessions,
          queries: instances.length,
          coldQps,
          warmQps,
          buildMs,
          peakHeapMb: (peak - base) / 2 ** 20
        }
      }).pipe(Effect.scoped, Effect.provide(env))
      out.push(figure)
    }
    return out
  })

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

if (process.argv[2] === "--one") {
  const spec = specs[Number(process.argv[3])]!
  Effect.runPromise(measureOne(spec).pipe(Effect.provide(NodeContext.layer))).then(
    (figures) => process.send?.(figures),
    (e) => {
      console.error(e)
      process.exit(1)
    }
  )
} else {
  const self = fileURLToPath(import.meta.url)
  const runChild = (i: number) =>
    new Promise<ReadonlyArray<Figure>>((resolve, reject) => {
      const child = fork(self, ["--one", String(i)], { execArgv: ["--import", "tsx", "--expose-gc"] })
      let result: ReadonlyArray<Figure> | undefined
      child.on("message", (m) => (result = m as ReadonlyArray<Figure>))
      child.on("exit", (code) =>
        result !== undefined && code === 0 ? resolve(result) : reject(new Error(`${specs[i]!.use} exited with ${code}`))
      )
    })
  const main = async () => {
    console.log(`node ${process.version}, ${(await import("node:os")).cpus().length} cores; synthetic data (seed 5)`)
    console.log("| retriever | sessions/history | queries | build ms | cold q/s | warm q/s | peak heap MB |")
    console.log("|---|---|---|---|---|---|---|")
    for (let i = 0; i < specs.length; i++) {
      const { use, ...options } = specs[i]!
      const label = `${use}${Object.keys(options).length > 0 ? ` ${JSON.stringify(options).replaceAll('"', "")}` : ""}`
      for (const f of await runChild(i)) {
        console.log(
          `| ${label} | ${f.sessions.toLocaleString("en")} | ${f.queries} | ${fmt(f.buildMs)} | ${fmt(f.coldQps)} | ${fmt(f.warmQps)} | ${fmt(f.peakHeapMb)} |`
        )
      }
    }
  }
  main().catch((e) => {
    console.error(e)
    process.exit(1)
  })
}
