/**
 * Everything before the first pair runs: the plugin registry, the grid, the data, the models and
 * their cache, every cell built (a bad config fails early) and each instance's versions under the
 * cells' history transforms. A dry run then runs the pairs with dry models and counts their calls.
 *
 * @example
 * (yield* Prepare.dryRun(config)).calls.toSend // requests a sweep would send, without writing a file
 */
import {
  type Batch,
  Corpus,
  type Domain,
  Errors as CoreErrors,
  Memo,
  ModelCache,
  Models,
  Pipeline,
  Plugin,
  ReferencePrompts,
  type Scorer,
  Stage,
  type Trace
} from "@cupid-lab/core"
import { Dataset, Transform } from "@cupid-lab/data"
import { type Errors, RunId, Shard } from "@cupid-lab/results"
import type { FileSystem } from "@effect/platform"
import { Context, Effect, Either, Stream } from "effect"
import * as path from "node:path"
import type { Config } from "./Config.js"
import type { ConfigError } from "./Errors.js"
import * as Grid from "./Grid.js"
import * as Plugins from "./Plugins.js"
import * as ResultLog from "./ResultLog.js"
import * as Build from "./Build.js"
import * as PairLoop from "./PairLoop.js"
import type * as Progress from "./Progress.js"

import * as RunPlace from "./RunPlace.js"

export type OpenDataset = (
  source: string,
  options: Dataset.LoadOptions
) => Effect.Effect<Dataset.Opened, CoreErrors.DatasetError, FileSystem.FileSystem>

export interface Options {
  /** The plugins besides the config's own modules; default every package's built-ins. */
  readonly plugins?: ReadonlyArray<Plugin.AnyPlugin>
  readonly openDataset?: OpenDataset
  readonly progress?: Progress.Progress
  readonly log?: (line: string) => void
  /** Keep the intact lines of a damaged results.jsonl (the corrupt ones move aside) instead of stopping. */
  readonly repair?: boolean
  readonly shard?: Shard.Shard
  /** `--batch`: every model whose provider has batch jobs sends its calls as batch jobs. */
  readonly batch?: boolean
}

export type SweepError = ConfigError | Errors.RunError | CoreErrors.DatasetError

/** `batch`: the sweep's batch queue, for the models that send batch jobs (none in a dry run). */
export const prepare = (config: Config, options: Options, dryRun: boolean, batch?: Batch.Queue) =>
  Effect.gen(function* () {
    const registry = yield* Plugins.registry(config, options.plugins ?? Plugins.builtins())
    const grid = yield* Grid.expand(config, registry)
    const open = options.openDataset ?? Dataset.open
    const opened = yield* open(config.data.source, {
      onInvalid: config.data.onInvalid,
      ...(config.data.types !== undefined ? { types: config.data.types } : {}),
      ...(config.data.limit !== undefined ? { limit: config.data.limit } : {})
    })
    const pool = yield* poolFor(config, grid, open)
    const transformed = transformer(config.seed, pool)
    const bundles = yield* Build.models(config, registry, {
      dryRun,
      ...(options.batch === true ? { batchAll: true } : {}),
      ...(batch !== undefined ? { batch } : {})
    })
    const cache = yield* Effect.provide(
      ModelCache.ModelCache,
      ModelCache.layerFile(config.cacheDir, { onWarning: options.log })
    )
    const models = Models.make(bundles, cache, { dryRun })
    const corpus: Corpus.Service = {
      queries: Stream.map(opened.instances, (i) => i.query),
      fingerprint: opened.fingerprint
    }
    // The authors' prompt files: a dry run prices the sweep with stand-ins when they cannot be had.
    const reference = ReferencePrompts.fromEnvironment({
      ...(config.referenceDir !== undefined ? { dir: path.resolve(config.referenceDir) } : {}),
      cacheDir: path.join(path.dirname(path.resolve(config.cacheDir)), "reference"),
      placeholders: dryRun,
      onPlaceholder: (file) =>
        options.log?.(
          `warning: the authors' ${file} is not available (set CUPID_REFERENCE_DIR or referenceDir, docs/paper-ablations.md); this dry run prices its calls with a stand-in of the same size`
        )
    })
    // One memo for every plugin built: a session analysed for one cell is not analysed again for the next.
    const env = Context.make(Models.Models, models).pipe(
      Context.add(ModelCache.ModelCache, cache),
      Context.add(Corpus.Corpus, corpus),
      Context.add(Plugin.Plugins, registry),
      Context.add(Memo.Memo, Memo.unsafeMake()),
      Context.add(ReferencePrompts.ReferencePrompts, reference)
    )
    const built = yield* Build.cells(config, grid, env)
    // Every row the pair loop will read is read and checked first, keeping none: a bad row stops the
    // sweep before any pair runs (docs/config.md, "Data validation"). The count is for progress.
    const instances =
      opened.validate !== undefined
        ? yield* opened.validate
        : opened.size === undefined
          ? undefined
          : yield* opened.size
    const metrics: ReadonlyArray<Scorer.MetricInfo> = built[0]?.pipeline.scorers.flatMap((s) => s.service.metrics) ?? []
    return { grid, built, opened, instances, cache, metrics, transformed }
  })

export type Prepared = Effect.Effect.Success<ReturnType<typeof prepare>>

export const noInstances = (config: Config, opened: Dataset.Opened) => {
  const filters = [
    config.data.types !== undefined ? `types ${config.data.types.join(", ")}` : "",
    config.data.limit !== undefined ? `limit ${config.data.limit}` : ""
  ].filter((x) => x !== "")
  return new CoreErrors.DatasetError({
    source: opened.resolved,
    reason: `no instances to run${filters.length > 0 ? ` after the filters (${filters.join(", ")})` : ""}${opened.skipped().length > 0 ? `; ${opened.skipped().length} rows were skipped as invalid` : ""}`
  })
}

const poolFor = (
  config: Config,
  grid: Grid.Grid,
  open: OpenDataset
): Effect.Effect<Transform.Pool | undefined, CoreErrors.DatasetError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    if (!grid.cells.some((c) => c.transform !== null && Transform.needsPool(c.transform))) return undefined
    const all = yield* open(config.data.source, { onInvalid: config.data.onInvalid })
    const builder = Transform.poolBuilder()
    yield* Stream.runForEach(all.instances, (instance) => Effect.sync(() => builder.add(instance)))
    return builder.result()
  })

/** An instance as a cell's transform sees it, or why the transform could not apply. */
export type Version =
  | { readonly instance: Domain.Instance; readonly error?: undefined }
  | { readonly instance: Domain.Instance; readonly error: Trace.TraceError }

const transformer = (seed: number, pool: Transform.Pool | undefined) => (instance: Domain.Instance) => {
  const memo = new Map<string, Version>()
  return (transform: Transform.Spec | null): Version => {
    if (transform === null) return { instance }
    const key = Transform.label(transform)
    let hit = memo.get(key)
    if (hit === undefined) {
      const result = Transform.apply(instance, transform, pool === undefined ? { seed } : { seed, pool })
      hit = Either.isRight(result)
        ? { instance: result.right }
        : { instance, error: { stage: "transform", plugin: key, tag: result.left._tag, message: result.left.message } }
      memo.set(key, hit)
    }
    return hit
  }
}

/** What a pair whose instance could not be transformed records: the transform's error. */
const untransformed = (version: Version, error: Trace.TraceError): Trace.Trace => ({
  instanceId: version.instance.id,
  instanceType: version.instance.type,
  scores: {},
  usage: [],
  timings: {},
  error
})

export const runPair = (pipeline: Pipeline.CellPipeline, version: Version): Effect.Effect<Trace.Trace> =>
  version.error === undefined
    ? Pipeline.run(pipeline, version.instance)
    : Effect.succeed(untransformed(version, version.error))

/** Whether {@link runPairNow} runs the pair: a plain pipeline, or an instance its transform failed on. */
export const plainPair = (pipeline: Pipeline.CellPipeline, version: Version): boolean =>
  version.error !== undefined || Pipeline.isPlain(pipeline)

/** {@link runPair} as plain code, for a pair {@link plainPair} accepts. */
export const runPairNow = (pipeline: Pipeline.CellPipeline, version: Version): Trace.Trace =>
  version.error === undefined ? Pipeline.runNow(pipeline, version.instance)! : untransformed(version, version.error)

export const dryRun = (config: Config, options: Options = {}) =>
  Effect.scoped(
    Effect.gen(function* () {
      const p = yield* prepare(config, options, true)
      const identity = RunPlace.identity(config, p.opened, options.shard)
      const dir = RunPlace.directory(config, identity)
      yield* RunId.check(dir, identity)
      const done = yield* ResultLog.readDone(dir, new Set(p.grid.cells.map((c) => c.id)))
      /** `rate`: the model's price as a fraction of its list price (its batch rate, or 1). */
      type ModelCount = { toSend: number; cached: number; promptTokens: number; completionTokens: number; rate: number }
      const byModel: Record<string, ModelCount> = {}
      // Per cell, the calls it would send (a call shared by several cells is charged to the first that makes it).
      const byCell: Record<string, Record<string, ModelCount>> = {}
      const byStage: Record<string, { total: number; toSend: number; cached: number }> = {}
      const allTokens = { prompt: 0, completion: 0 }
      let failed = 0,
        pairsDone = 0,
        instances = 0,
        share = 0
      const zero = (rate: number): ModelCount => ({ toSend: 0, cached: 0, promptTokens: 0, completionTokens: 0, rate })
      const count = (cell: string, trace: Trace.Trace) => {
        if (trace.error !== undefined) failed++
        const ofCell = (byCell[cell] ??= {})
        for (const u of trace.usage) {
          const m = (byModel[`${u.provider}/${u.model}`] ??= zero(u.batchRate ?? 1))
          const c = (ofCell[`${u.provider}/${u.model}`] ??= zero(u.batchRate ?? 1))
          const s = (byStage[u.stage] ??= { total: 0, toSend: 0, cached: 0 })
          s.total++
          allTokens.prompt += u.promptTokens
          allTokens.completion += u.completionTokens
          for (const x of [m, c]) {
            if (u.cached) x.cached++
            else {
              x.toSend++
              x.promptTokens += u.promptTokens
              x.completionTokens += u.completionTokens
            }
          }
          if (u.cached) s.cached++
          else s.toSend++
        }
      }
      yield* PairLoop.run({
        items: p.opened.instances,
        expand: (instance) => {
          instances++
          const versions = p.transformed(instance)
          return (Shard.includes(options.shard, instance.id) ? p.built : [])
            .filter((c) => {
              share++
              const isDone = done.has(ResultLog.pairKey(c.cell.id, instance.id))
              if (isDone) pairsDone++
              return !isDone
            })
            .map((cell) => ({ cell, version: versions(cell.cell.transform) }))
        },
        work: ({ cell, version }) => Effect.map(runPair(cell.pipeline, version), (t) => count(cell.cell.id, t)),
        concurrency: config.concurrency,
        tick: { every: "1 second", run: Effect.void }
      })
      if (instances === 0) return yield* noInstances(config, p.opened)
      const sum = <K extends string>(of: Record<string, Record<K, number>>, key: K) =>
        Object.values(of).reduce((t, x) => t + x[key], 0)
      return {
        out: dir,
        run: identity.id,
        grid: p.grid,
        instances,
        pairs: { total: share, done: pairsDone, toRun: share - pairsDone },
        calls: { total: sum(byStage, "total"), toSend: sum(byStage, "toSend"), cached: sum(byStage, "cached") },
        tokens: { prompt: sum(byModel, "promptTokens"), completion: sum(byModel, "completionTokens") },
        allTokens,
        byStage: Object.fromEntries(
          Object.entries(byStage).sort(([a], [b]) => Stage.order(a) - Stage.order(b) || a.localeCompare(b))
        ),
        byModel: Object.fromEntries(
          Object.keys(byModel)
            .sort()
            .map((k) => [k, byModel[k]!])
        ),
        byCell,
        failed
      }
    })
  )

export type DryRun = Effect.Effect.Success<ReturnType<typeof dryRun>>
