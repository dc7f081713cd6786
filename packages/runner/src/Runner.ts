/**
 * The sweep: prepare (validate the config, build every cell), open the run directory's log, run
 * every pair not done yet, then sort the log and write summary.json, the reports and run.json. An
 * interruption or the budget stops taking pairs; what is done is still written.
 *
 * @example
 * const outcome = yield* Runner.sweep(yield* Config.load("configs/smoke.yaml")) // outcome.files.summary
 */
import { type Domain, Pipeline, type Trace } from "@cupid-lab/core"
import { Calls, Columns, type ResultLine, Results, RunDir, Summary, RunId, RunInfo, Shard } from "@cupid-lab/results"
import { Cause, Clock, Effect, Exit, Struct } from "effect"
import * as path from "node:path"
import { type Config, hash as configHash } from "./Config.js"

import * as Finish from "./Finish.js"
import * as ResultLog from "./ResultLog.js"

import * as Batches from "./Batches.js"
import type * as Build from "./Build.js"
import * as Budget from "./Budget.js"
import * as PairLoop from "./PairLoop.js"
import {
  noInstances,
  type Options,
  plainPair,
  prepare,
  type Prepared,
  runPair,
  runPairNow,
  type Version
} from "./Prepare.js"
import * as Progress from "./Progress.js"

import * as RunPlace from "./RunPlace.js"

/** The families a config declares, as the summary records them (nothing when it declares none). */
const declaredFamilies = (report: ResultLine.Families): { readonly families?: ResultLine.Families } => {
  const f = Struct.pick(report, "primary", "correction", "reference")
  return Object.keys(f).length === 0 ? {} : { families: f }
}

export type { OpenDataset, Options, SweepError } from "./Prepare.js"
export { type DryRun, dryRun } from "./Prepare.js"

/** A sweep's options; `publish` writes the finished run's reports (the command line passes the report's). */
export interface SweepOptions<P> extends Options {
  readonly publish?: Finish.Publish<P>
}

export const sweep = <P = never>(config: Config, options: SweepOptions<P> = {}) =>
  Effect.scoped(
    Effect.gen(function* () {
      const startedAt = yield* Clock.currentTimeMillis
      const budget = yield* Budget.preflight(config, options)
      const batches = batching(config, options)
        ? yield* Batches.make({
            ...(options.log !== undefined ? { log: options.log } : {}),
            ...(budget !== undefined ? { admit: budget.admitWave } : {})
          })
        : undefined
      const p = yield* prepare(config, options, false, batches?.queue)
      const identity = RunPlace.identity(config, p.opened, options.shard)
      const dir = RunPlace.directory(config, identity)
      yield* RunId.check(dir, identity)
      const log = yield* ResultLog.open({
        dir,
        cells: new Set(p.grid.cells.map((c) => c.id)),
        repair: options.repair === true
      })
      yield* RunId.claim(dir, identity)
      if (batches !== undefined) yield* batches.open(dir)
      if (!config.outGiven && options.shard === undefined) yield* RunId.linkLatest(dir)
      notices(dir, identity.id, log.opened, options.log ?? (() => {}))
      const preparedAt = yield* Clock.currentTimeMillis
      // The pairs run interruptibly; what follows (sorting, reports) runs whatever ended them.
      return yield* Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(runPairs(config, p, log, options, startedAt, restore, budget, batches), (pairs) =>
          finish(config, p, log, options, pairs, { startedAt, preparedAt, dir })
        )
      )
    })
  )

const notices = (dir: string, id: string, o: ResultLog.Opened, log: (line: string) => void) => {
  log(`run ${id}: ${dir}`)
  if (o.staleLock !== undefined) log(`took over the lock of a sweep that is gone (${o.staleLock})`)
  if (o.kept.length + o.retried + o.orphaned + o.corrupt > 0 || o.truncated) {
    log(
      `resuming in ${dir}: ${o.kept.length} pairs done` +
        (o.retried > 0 ? `, ${o.retried} failed pairs to retry` : "") +
        (o.truncated ? ", dropped a line cut short by an earlier kill" : "") +
        (o.corrupt > 0 ? `, ${o.corrupt} corrupt lines moved to ${ResultLog.corruptFileName}` : "") +
        (o.orphaned > 0
          ? `, ${o.orphaned} lines of cells no longer in the config moved to ${ResultLog.orphanFileName}`
          : "")
    )
  }
}

const runPairs = (
  config: Config,
  p: Prepared,
  log: ResultLog.Log,
  options: Options,
  startedAt: number,
  restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>,
  budget: Budget.Tracker | undefined,
  batches: Batches.Engine | undefined
) =>
  Effect.gen(function* () {
    const progress = options.progress ?? Progress.silent
    const rows: Array<ResultLine.Row> = []
    const instanceOrder = new Map<string, number>()
    const examples = new Map<Domain.InstanceType, Domain.Instance>()
    const stats = RunInfo.accumulator()
    const tokens = new Map<string, number>()
    const ranAt = new Date(startedAt).toISOString()
    const resumed = log.opened.kept.length
    let failed = 0,
      share = 0,
      seenAll = false
    const cells = p.built.length
    const snapshot = (now: number): Progress.Snapshot => {
      const pairsTotal = seenAll
        ? share
        : p.instances === undefined
          ? undefined
          : Math.ceil((p.instances * cells) / (options.shard?.count ?? 1))
      return {
        cells,
        instancesSeen: instanceOrder.size,
        instancesTotal: seenAll ? instanceOrder.size : p.instances,
        pairsDone: resumed + rows.length,
        pairsTotal,
        pairsRun: rows.length,
        pairsToRun: pairsTotal === undefined ? undefined : pairsTotal - resumed,
        failed,
        cacheHits: stats.usage.cachedCalls,
        calls: stats.usage.calls,
        tokens: stats.usage.promptTokens + stats.usage.completionTokens,
        elapsedMs: now - startedAt,
        ...(batches !== undefined ? { batches: batches.live() } : {})
      }
    }
    const clock = yield* Effect.clock
    const tick = Effect.suspend(() => {
      progress.update(snapshot(clock.unsafeCurrentTimeMillis()))
      return log.flush
    })
    /** A pair's trace into the log, the rows and the run's counts. */
    const record = ({ cell, meta, version }: Pair, trace: Trace.Trace) => {
      const line = Results.fromTrace(cell.info, version.instance, meta, trace)
      log.append({
        cell: cell.cell.id,
        instance: version.instance.id,
        text: Results.encodeLine(line),
        calls: Calls.line({ cell: cell.cell.id, instance: version.instance.id, ranAt }, trace.usage, config.transcripts)
      })
      rows.push(Results.toRow(line))
      stats.add(trace)
      budget?.record(trace.usage)
      if (trace.error !== undefined) failed++
    }
    const loop = yield* restore(
      PairLoop.run({
        items: p.opened.instances,
        expand: (instance): Array<Pair> => {
          if (!instanceOrder.has(instance.id)) instanceOrder.set(instance.id, instanceOrder.size)
          if (!examples.has(instance.type)) examples.set(instance.type, instance)
          const mine = Shard.includes(options.shard, instance.id) ? p.built : []
          share += mine.length
          const todo = mine.filter((c) => !log.isDone(c.cell.id, instance.id))
          if (todo.length === 0) return []
          const versions = p.transformed(instance)
          // An instance's facts once per version, shared by the cells that see it.
          const metas = new Map<Domain.Instance, ResultLine.InstanceMeta>()
          return todo.map((cell) => {
            const version = versions(cell.cell.transform)
            let meta = metas.get(version.instance)
            if (meta === undefined) metas.set(version.instance, (meta = Results.instanceMeta(version.instance, tokens)))
            return { cell, version, meta }
          })
        },
        work: (pair) =>
          Effect.map(counted(batches, runPair(pair.cell.pipeline, pair.version)), (trace) => {
            // Cut while it waited on a batch (the sweep was interrupted): not done, a rerun runs it.
            if (trace.error?.tag !== Pipeline.interruptedTag) record(pair, trace)
          }),
        // Retrieval cells (every stage plain): no effect per pair.
        now: {
          can: (pair) => plainPair(pair.cell.pipeline, pair.version),
          run: (pair) => record(pair, runPairNow(pair.cell.pipeline, pair.version))
        },
        // Batched calls wait hours: every pending pair is in flight, so that a wave holds them all.
        concurrency: batches !== undefined ? Math.max(config.concurrency, batchConcurrency) : config.concurrency,
        ...(budget !== undefined ? { admit: budget.admit } : {}),
        tick: { every: "200 millis", run: tick }
      })
    ).pipe(Effect.exit)
    const endedAt = yield* Clock.currentTimeMillis
    // A budget's stop ends the loop like an interruption: not every instance was seen.
    const interrupted = (Exit.isFailure(loop) && Cause.isInterruptedOnly(loop.cause)) || budget?.stopped() === true
    // A bad row or a write error: that error (the log's finalizer writes what is buffered).
    if (Exit.isFailure(loop) && !interrupted) return yield* Effect.failCause(loop.cause)
    seenAll = !interrupted
    const pending = batches?.live() ?? []
    if (interrupted && pending.length > 0) options.log?.(Batches.stillRunning(pending, path.dirname(log.file)))
    if (seenAll && instanceOrder.size === 0) return yield* noInstances(config, p.opened)
    progress.done(snapshot(endedAt))
    return {
      rows,
      instanceOrder,
      examples: [...examples.values()],
      interrupted,
      ...(budget !== undefined ? { budget } : {}),
      share,
      failed,
      stats,
      endedAt
    }
  })

/** One cell on one instance (the instance as the cell's transform made it). */
interface Pair {
  readonly cell: Build.BuiltCell
  readonly version: Version
  readonly meta: ResultLine.InstanceMeta
}

/** Pairs in flight at once when models send batch jobs. */
const batchConcurrency = 10_000

/** Whether any model sends its calls as batch jobs: `--batch`, or an entry's `batch:` other than false. */
const batching = (config: Config, options: Options): boolean =>
  options.batch === true ||
  Object.values(config.models).some((m) => m.options["batch"] !== undefined && m.options["batch"] !== false)

/** A pair counted in flight for the batch queue's waves. */
const counted = <A, E, R>(batches: Batches.Engine | undefined, pair: Effect.Effect<A, E, R>) =>
  batches === undefined
    ? pair
    : Effect.suspend(() => {
        batches.pairStarted()
        return Effect.ensuring(pair, Effect.sync(batches.pairEnded))
      })

/** What the pair loop leaves for the end of the sweep. */
type Pairs = Effect.Effect.Success<ReturnType<typeof runPairs>>

const finish = <P>(
  config: Config,
  p: Prepared,
  log: ResultLog.Log,
  options: SweepOptions<P>,
  pairs: Pairs,
  at: { readonly startedAt: number; readonly preparedAt: number; readonly dir: string }
) =>
  Effect.gen(function* () {
    const { grid, built, opened } = p
    const out = at.dir
    const final = yield* log.finalize({
      cellOrder: new Map(grid.cells.map((c) => [c.id, c.index])),
      instanceOrder: pairs.instanceOrder,
      complete: !pairs.interrupted
    })
    if (final.orphaned > 0)
      options.log?.(`${final.orphaned} lines of instances not in this dataset moved to ${ResultLog.orphanFileName}`)
    const appended = [...log.opened.kept, ...pairs.rows]
    const index = Columns.index(final.order.map((n) => appended[n]!))
    const calls = yield* Calls.tally(path.join(out, Calls.fileName))
    const resumed = log.opened.kept.length
    const ran = pairs.rows.length
    const total = pairs.share
    const summary: ResultLine.Summary = {
      config: { name: config.name, hash: configHash(config) },
      dataset: {
        source: opened.source,
        hash: opened.fingerprint,
        instances: pairs.instanceOrder.size,
        skipped: opened
          .skipped()
          .map((s) => ({ row: s.id === undefined ? s.row : `${s.row} (${s.id})`, reason: s.reason }))
      },
      seed: config.seed,
      resamples: config.bootstrap.resamples,
      largeSample: config.bootstrap.largeSample,
      baseline: grid.baseline.id,
      ...(config.report.main !== undefined ? { main: config.report.main } : {}),
      ...(calls.calls > 0 ? { modelCalls: calls } : {}),
      ...declaredFamilies(config.report),
      ...(config.sweep.length > 0 ? { axes: config.sweep.map((a) => a.key) } : {}),
      ...Summary.of(
        index,
        {
          metrics: p.metrics,
          seed: config.seed,
          resamples: config.bootstrap.resamples,
          largeSample: config.bootstrap.largeSample
        },
        built.map((b) => b.info)
      )
    }
    const files = {
      results: log.file,
      summary: path.join(out, RunDir.summaryFileName),
      report: path.join(out, "report.md"),
      run: path.join(out, RunDir.infoFileName)
    }
    const cacheStats = yield* p.cache.stats
    const versions = yield* RunInfo.versions
    const interrupted = pairs.interrupted && pairs.budget?.stopped() !== true
    const info = (endedAt: number): RunInfo.RunInfo => ({
      startedAt: new Date(at.startedAt).toISOString(),
      endedAt: new Date(endedAt).toISOString(),
      durationMs: endedAt - at.startedAt,
      interrupted,
      ...budgetFields(pairs),
      config: { file: config.file },
      dataset: { resolved: opened.resolved },
      pairs: { total, resumed, ran, failed: pairs.failed, lines: final.order.length },
      pairsPerSecond: endedAt > at.startedAt ? (ran * 1000) / (endedAt - at.startedAt) : null,
      phasesMs: {
        prepare: at.preparedAt - at.startedAt,
        pairs: pairs.endedAt - at.preparedAt,
        write: endedAt - pairs.endedAt
      },
      cache: { ...cacheStats },
      ...(built.some((b) => b.fits.length > 0) ? { fits: built.flatMap((b) => b.fits) } : {}),
      ...pairs.stats.result(),
      versions
    })
    const published = yield* Finish.write({ dir: out, summary, index, examples: pairs.examples }, info, options.publish)
    return {
      out,
      grid,
      interrupted,
      ...budgetFields(pairs),
      instances: summary.dataset.instances,
      pairs: { total, done: final.order.length, ran, resumed, failed: pairs.failed },
      summary,
      files,
      published
    }
  })

export type Outcome<P = never> = Effect.Effect.Success<ReturnType<typeof sweep<P>>>

const budgetFields = (pairs: Pairs): { stopped?: "budget"; budget?: Budget.Spend } =>
  pairs.budget === undefined
    ? {}
    : { ...(pairs.budget.stopped() ? { stopped: "budget" as const } : {}), budget: pairs.budget.spend() }
