/**
 * `<out>/run.json`: how one run of a sweep went, as opposed to what it computed. Times, rates,
 * cache hits and versions live here only, so that the other outputs stay byte-identical.
 *
 * @example
 * const stats = RunInfo.accumulator() // stats.add(trace); stats.result().stageTimeMs: { retrieve: 812, ... }
 */
import { type Trace, Usage } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Option, Schema, type Types } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const Int = Schema.Number
const NumberRecord = Schema.Record({ key: Schema.String, value: Schema.Number })

export const TraceTotals = Schema.Struct({
  /** Summed over pairs, per stage (pairs overlap when concurrency > 1). */
  stageTimeMs: NumberRecord,
  /**
   * Model calls of this run: `made` (not answered by the cache, failed ones included), `cached`,
   * `requestsSent` (every HTTP request the servers received, retries included), `retries`, and
   * `limiterMs`: the milliseconds the calls waited for their models' rate limiters, summed over
   * calls (absent when none waited; calls overlap, so it can pass the run's duration).
   */
  modelCalls: Schema.Struct({
    made: Int,
    cached: Int,
    requestsSent: Schema.optionalWith(Int, { default: () => 0 }),
    retries: Schema.optionalWith(Int, { default: () => 0 }),
    limiterMs: Schema.optional(Int)
  }),
  tokens: Schema.Struct({ prompt: Int, completion: Int }),
  failuresByStage: NumberRecord
})

export const Fit = Schema.Struct({
  cell: Schema.String,
  plugin: Schema.String,
  train: Schema.String,
  trainFingerprint: Schema.String,
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type Fit = typeof Fit.Type

export const BudgetSpend = Schema.Struct({ usd: Schema.Number, estimatedUsd: Schema.Number, spentUsd: Schema.Number })

export const RunInfo = Schema.Struct({
  ...TraceTotals.fields,
  startedAt: Schema.String,
  endedAt: Schema.String,
  durationMs: Schema.Number,
  interrupted: Schema.Boolean,
  /** Why the sweep stopped before every pair ran, other than an interruption: `budget`. */
  stopped: Schema.optionalWith(Schema.Literal("budget"), { exact: true }),
  budget: Schema.optionalWith(BudgetSpend, { exact: true }),
  /** The config's file and what the data source resolved to; the identity is in run-id.json, the counts in summary.json. */
  config: Schema.Struct({ file: Schema.String }),
  dataset: Schema.Struct({ resolved: Schema.String }),
  pairs: Schema.Struct({ total: Int, resumed: Int, ran: Int, failed: Int, lines: Int }),
  /** Pairs computed by this run per second of its duration. */
  pairsPerSecond: Schema.NullOr(Schema.Number),
  /** Validation and building (`prepare`), the pair loop (`pairs`), sorting, summarizing and reports (`write`). */
  phasesMs: Schema.Struct({ prepare: Schema.Number, pairs: Schema.Number, write: Schema.Number }),
  cache: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** What plugins fitted on training data, per cell: training source and fingerprint, fitted parameters. */
  fits: Schema.optionalWith(Schema.Array(Fit), { exact: true }),
  versions: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type RunInfo = typeof RunInfo.Type

const sorted = (m: Map<string, number>): Record<string, number> =>
  Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)))

export const accumulator = () => {
  const time = new Map<string, number>()
  const failures = new Map<string, number>()
  const usage: Types.Mutable<Usage.UsageTotals> = Usage.totals([])
  const bump = (m: Map<string, number>, key: string, by: number) => m.set(key, (m.get(key) ?? 0) + by)
  let limiterMs = 0
  return {
    usage,
    add: (trace: Trace.Trace) => {
      for (const k in trace.timings) bump(time, k, trace.timings[k]!)
      const t = Usage.totals(trace.usage)
      for (const k of Object.keys(usage) as Array<keyof Usage.UsageTotals>) usage[k] += t[k]
      if (trace.error !== undefined) bump(failures, trace.error.stage, 1)
      for (const e of trace.usage) limiterMs += e.detail?.limiterMs ?? 0
    },
    result: (): typeof TraceTotals.Type => ({
      stageTimeMs: sorted(time),
      modelCalls: {
        made: usage.calls - usage.cachedCalls,
        cached: usage.cachedCalls,
        requestsSent: usage.requests,
        retries: usage.retries,
        ...(limiterMs > 0 ? { limiterMs: Math.round(limiterMs) } : {})
      },
      tokens: { prompt: usage.promptTokens, completion: usage.completionTokens },
      failuresByStage: sorted(failures)
    })
  }
}

const here = path.dirname(fileURLToPath(import.meta.url))

const PackageJson = Schema.parseJson(Schema.Struct({ version: Schema.String }))

/** Versions of Node, the workspace packages and the libraries results depend on. */
export const versions: Effect.Effect<Record<string, string>, never, FileSystem.FileSystem> = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const packages = path.resolve(here, "..", "..")
  const modules = path.resolve(packages, "..", "node_modules")
  // Every workspace package, as the packages folder holds them (a new package is recorded too).
  const workspace = [...(yield* fs.readDirectory(packages).pipe(Effect.orElseSucceed(() => [])))].sort()
  const dirs = [
    ...workspace.map((p) => [`@cupid-lab/${p}`, path.join(packages, p)] as const),
    ...["effect", "openai", "cohere-ai", "@huggingface/transformers", "wink-nlp"].map(
      (dep) => [dep, path.join(modules, dep)] as const
    )
  ]
  const out: Record<string, string> = { node: process.versions.node }
  for (const [name, dir] of dirs) {
    const json = yield* fs
      .readFileString(path.join(dir, "package.json"))
      .pipe(Effect.flatMap(Schema.decodeUnknown(PackageJson)), Effect.option)
    if (Option.isSome(json)) out[name] = json.value.version
  }
  return out
})

export const encode = (info: RunInfo): string => `${JSON.stringify(Schema.encodeSync(RunInfo)(info), null, 2)}\n`
