/**
 * Everything a sweep would do, without sending a request or writing a file: the pipeline runs with
 * dry models (cached answers where the cache has them, the callers' example answers otherwise).
 *
 * @example
 * (yield* DryRun.dryRun(config)).calls.toSend // requests a sweep would send
 */
import { Stage, type Trace } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type { Config } from "../config/Config.js"
import type * as Grid from "../config/Grid.js"
import * as ResultLog from "../results/ResultLog.js"
import * as PairLoop from "./PairLoop.js"
import { noInstances, type Options, prepare, type SweepError } from "./Prepare.js"
import * as RunId from "./RunId.js"
import * as Shard from "./Shard.js"
import * as Transforms from "./Transforms.js"

export interface DryRun {
  readonly grid: Grid.Grid
  /** The run directory a sweep would write to, and the run's id. */
  readonly out: string
  readonly run: string
  readonly instances: number
  readonly pairs: { readonly total: number; readonly done: number; readonly toRun: number }
  /** Model calls the pairs still to run would make. */
  readonly calls: { readonly total: number; readonly toSend: number; readonly cached: number }
  /** Estimated tokens of the calls that would be sent. */
  readonly tokens: { readonly prompt: number; readonly completion: number }
  /** Estimated tokens of all the calls, as if the cache shared nothing. */
  readonly allTokens: { readonly prompt: number; readonly completion: number }
  /** Calls per pipeline stage, in pipeline order (`retrieve`, `summarize`, `infer`, `generate`, `score`, others). */
  readonly byStage: Readonly<Record<string, { readonly total: number; readonly toSend: number; readonly cached: number }>>
  readonly byModel: Readonly<Record<string, { readonly toSend: number; readonly cached: number; readonly promptTokens: number; readonly completionTokens: number }>>
  /** Pairs whose pipeline failed even with made-up answers (usually a plugin's bug or bad data). */
  readonly failed: number
}

/** Run the sweep's pairs with dry models and count what it would send. */
export const dryRun = (config: Config, options: Options = {}): Effect.Effect<DryRun, SweepError, FileSystem.FileSystem> =>
  Effect.scoped(
    Effect.gen(function*() {
      const p = yield* prepare(config, options, true)
      const identity = RunId.of(config, p.opened, options.shard)
      const dir = RunId.directory(config, identity)
      yield* RunId.check(dir, identity)
      const done = yield* ResultLog.readDone(dir, new Set(p.grid.cells.map((c) => c.id)))
      const byModel: Record<string, { toSend: number; cached: number; promptTokens: number; completionTokens: number }> = {}
      const byStage: Record<string, { total: number; toSend: number; cached: number }> = {}
      const allTokens = { prompt: 0, completion: 0 }
      let failed = 0, pairsDone = 0, instances = 0, share = 0
      const count = (trace: Trace.Trace) => {
        if (trace.error !== undefined) failed++
        for (const u of trace.usage) {
          const m = (byModel[`${u.provider}/${u.model}`] ??= { toSend: 0, cached: 0, promptTokens: 0, completionTokens: 0 })
          const s = (byStage[u.stage] ??= { total: 0, toSend: 0, cached: 0 })
          s.total++
          allTokens.prompt += u.promptTokens
          allTokens.completion += u.completionTokens
          if (u.cached) {
            s.cached++
            m.cached++
          } else {
            s.toSend++
            m.toSend++
            m.promptTokens += u.promptTokens
            m.completionTokens += u.completionTokens
          }
        }
      }
      yield* PairLoop.run({
        items: p.opened.instances,
        expand: (instance) => {
          instances++
          const versions = p.transformed(instance)
          return p.built.filter((c) => Shard.includes(options.shard, c.cell.id, instance.id)).filter((c) => {
            share++
            const isDone = done.has(ResultLog.pairKey(c.cell.id, instance.id))
            if (isDone) pairsDone++
            return !isDone
          }).map((cell) => ({ cell, version: versions(cell.cell.transform) }))
        },
        work: ({ cell, version }) => Effect.map(Transforms.run(cell.pipeline, version), count),
        concurrency: config.concurrency,
        tick: { every: "1 second", run: Effect.void }
      })
      if (instances === 0) return yield* noInstances(config, p.opened)
      const sum = <K extends string>(of: Record<string, Record<K, number>>, key: K) => Object.values(of).reduce((t, x) => t + x[key], 0)
      return {
        out: dir,
        run: identity.id,
        grid: p.grid,
        instances,
        pairs: { total: share, done: pairsDone, toRun: share - pairsDone },
        calls: { total: sum(byStage, "total"), toSend: sum(byStage, "toSend"), cached: sum(byStage, "cached") },
        tokens: { prompt: sum(byModel, "promptTokens"), completion: sum(byModel, "completionTokens") },
        allTokens,
        byStage: Object.fromEntries(Object.entries(byStage).sort(([a], [b]) => Stage.order(a) - Stage.order(b) || a.localeCompare(b))),
        byModel: Object.fromEntries(Object.keys(byModel).sort().map((k) => [k, byModel[k]!])),
        failed
      } satisfies DryRun
    })
  )

