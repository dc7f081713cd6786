/**
 * The pipeline's own cost per (cell, instance) pair: `Pipeline.run` over generated instances with
 * model-free stages that do almost nothing (a recency ranking, a fixed inference, two scorers
 * reading the trace), so what is timed is the framework around the stages: the usage ledger, stage
 * attribution, timings, spans, the selection checks and the trace. Prints microseconds of CPU time
 * per pair (median and spread of 7 rounds; CPU time, because on a shared machine wall time mostly
 * measures the other processes) and the wall time's median, for two cells: retriever + scorers, and
 * retriever + inferrer + scorers.
 *
 *   npm run bench -- pipeline
 */
import { Effect } from "effect"
import * as Domain from "../src/Domain.js"
import type * as Pipeline from "../src/Pipeline.js"
import { run } from "../src/Pipeline.js"
import * as Retriever from "../src/Retriever.js"
import * as Scorer from "../src/Scorer.js"
import { Synthetic } from "@cupid-lab/data"

const pairs = Number(process.env["BENCH_PAIRS"] ?? 30_000)
const rounds = 7

const instances = [...Synthetic.generate({ ...Synthetic.defaults, personas: 100, seed: 3 })].map(Domain.fromRow)

const retriever: Pipeline.BuiltRetriever = {
  plugin: "recency",
  needsGold: false,
  service: {
    needsSummaries: false,
    retrieve: ({ query }) =>
      Effect.succeed(
        Retriever.fromScores(
          query.sessions.map((s) => [s.id, s.index] as const),
          2
        )
      )
  }
}

const selectedCount: Pipeline.Built<Scorer.Service> = {
  plugin: "count",
  service: {
    metrics: [Scorer.metric({ name: "retrieval.count", description: "sessions selected", family: "retrieval" })],
    score: ({ trace }) => Effect.succeed({ "retrieval.count": trace.retrieval?.selected.length ?? 0 })
  }
}

const relevantShare: Pipeline.Built<Scorer.Service> = {
  plugin: "share",
  service: {
    metrics: [
      Scorer.metric({
        name: "retrieval.share",
        description: "relevant share",
        family: "retrieval",
        aggregate: Scorer.ratio
      })
    ],
    score: ({ instance, trace }) => {
      const selected = trace.retrieval?.selected ?? []
      const relevant = new Set(instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id))
      return Effect.succeed({
        "retrieval.share": { num: selected.filter((id) => relevant.has(id)).length, den: selected.length }
      })
    }
  }
}

const cells: ReadonlyArray<{ readonly name: string; readonly pipeline: Pipeline.CellPipeline }> = [
  { name: "retriever + 2 scorers", pipeline: { retriever, scorers: [selectedCount, relevantShare] } },
  {
    name: "retriever + inferrer + 2 scorers",
    pipeline: {
      retriever,
      inferrer: {
        plugin: "fixed",
        service: { infer: () => Effect.succeed({ preference: "Keep it short.", analysis: "" }) }
      },
      scorers: [selectedCount, relevantShare]
    }
  }
]

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const round = (pipeline: Pipeline.CellPipeline): Effect.Effect<{ readonly cpu: number; readonly wall: number }> =>
  Effect.gen(function* () {
    const start = performance.now()
    const cpu = process.cpuUsage()
    for (let i = 0; i < pairs; i++) {
      const trace = yield* run(pipeline, instances[i % instances.length]!)
      if (trace.error !== undefined) throw new Error(`pair ${i} failed: ${trace.error.message}`)
    }
    const used = process.cpuUsage(cpu)
    return { cpu: (used.user + used.system) / pairs, wall: ((performance.now() - start) * 1000) / pairs }
  })

for (const cell of cells) {
  await Effect.runPromise(round(cell.pipeline)) // warm-up
  const cpu: Array<number> = [],
    wall: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    const t = await Effect.runPromise(round(cell.pipeline))
    cpu.push(t.cpu)
    wall.push(t.wall)
  }
  console.log(
    `${cell.name}: ${median(cpu).toFixed(1)} us CPU per pair (median of ${rounds} rounds of ${pairs}; min ${Math.min(...cpu).toFixed(1)}, max ${Math.max(...cpu).toFixed(1)}); wall ${median(wall).toFixed(1)} us`
  )
}
