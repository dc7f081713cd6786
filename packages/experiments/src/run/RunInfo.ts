/**
 * `<out>/run.json`: what happened during one run of a sweep, as opposed to what it computed.
 * Times, rates, cache hits and versions live here (and only here), so that results.jsonl,
 * summary.json and report.md stay byte-identical across reruns.
 *
 * @example
 * import { RunInfo } from "@cupid-lab/experiments"
 * const stats = RunInfo.accumulator()
 * stats.add(trace)
 * stats.result().stageTimeMs // { retrieve: 812, infer: 40210, ... }
 */
import { type Trace, Usage } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const Int = Schema.Number
const NumberRecord = Schema.Record({ key: Schema.String, value: Schema.Number })

export const TraceTotals = Schema.Struct({
  /** Wall-clock milliseconds summed over pairs, per stage (pairs overlap when concurrency > 1). */
  stageTimeMs: NumberRecord,
  /**
   * Model calls of this run: `made` (not answered by the cache, failed ones included), `cached`,
   * `requestsSent` (every HTTP request the servers received, retries included) and `retries`.
   */
  modelCalls: Schema.Struct({ made: Int, cached: Int, requestsSent: Schema.optionalWith(Int, { default: () => 0 }), retries: Schema.optionalWith(Int, { default: () => 0 }) }),
  tokens: Schema.Struct({ prompt: Int, completion: Int }),
  failuresByStage: NumberRecord
})
export type TraceTotals = typeof TraceTotals.Type

export const Fit = Schema.Struct({
  cell: Schema.String,
  plugin: Schema.String,
  train: Schema.String,
  trainFingerprint: Schema.String,
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

export const RunInfo = Schema.Struct({
  ...TraceTotals.fields,
  startedAt: Schema.String,
  endedAt: Schema.String,
  durationMs: Schema.Number,
  interrupted: Schema.Boolean,
  /** Why the sweep stopped before every pair ran, other than an interruption: `budget`. */
  stopped: Schema.optionalWith(Schema.Literal("budget"), { exact: true }),
  /** The budget in USD, the dry run's estimate for the pairs to run and what this run spent (see Budget.ts). */
  budget: Schema.optionalWith(Schema.Struct({ usd: Schema.Number, estimatedUsd: Schema.Number, spentUsd: Schema.Number }), { exact: true }),
  config: Schema.Struct({ file: Schema.String, name: Schema.String, hash: Schema.String }),
  dataset: Schema.Struct({ source: Schema.String, resolved: Schema.String, fingerprint: Schema.String, instances: Int, skipped: Int }),
  cells: Int,
  pairs: Schema.Struct({ total: Int, resumed: Int, ran: Int, failed: Int, lines: Int }),
  /** Pairs computed by this run per second of its duration. */
  pairsPerSecond: Schema.NullOr(Schema.Number),
  /** Validation and building (`prepare`), the pair loop (`pairs`), sorting, summarizing and reports (`write`). */
  phasesMs: Schema.Struct({ prepare: Schema.Number, pairs: Schema.Number, write: Schema.Number }),
  /** Model cache statistics (see core's ModelCache). */
  cache: Schema.Record({ key: Schema.String, value: Schema.Number }),
  /** What plugins fitted on training data, per cell: training source and fingerprint, fitted parameters. */
  fits: Schema.optionalWith(Schema.Array(Fit), { exact: true }),
  versions: Schema.Record({ key: Schema.String, value: Schema.String })
})
export type RunInfo = typeof RunInfo.Type

const sorted = (m: Map<string, number>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const k of [...m.keys()].sort()) out[k] = m.get(k)!
  return out
}

export interface Accumulator {
  readonly add: (trace: Trace.Trace) => void
  readonly calls: number
  readonly cachedCalls: number
  readonly tokens: number
  readonly result: () => TraceTotals
}

export const accumulator = (): Accumulator => {
  const time = new Map<string, number>()
  const failures = new Map<string, number>()
  const acc = {
    calls: 0,
    cachedCalls: 0,
    requests: 0,
    retries: 0,
    tokens: 0,
    prompt: 0,
    completion: 0,
    add: (trace: Trace.Trace) => {
      for (const k in trace.timings) time.set(k, (time.get(k) ?? 0) + trace.timings[k]!)
      const t = Usage.totals(trace.usage)
      acc.calls += t.calls
      acc.cachedCalls += t.cachedCalls
      acc.requests += t.requests
      acc.retries += t.retries
      acc.prompt += t.promptTokens
      acc.completion += t.completionTokens
      acc.tokens += t.promptTokens + t.completionTokens
      if (trace.error !== undefined) failures.set(trace.error.stage, (failures.get(trace.error.stage) ?? 0) + 1)
    },
    result: (): TraceTotals => ({
      stageTimeMs: sorted(time),
      modelCalls: { made: acc.calls - acc.cachedCalls, cached: acc.cachedCalls, requestsSent: acc.requests, retries: acc.retries },
      tokens: { prompt: acc.prompt, completion: acc.completion },
      failuresByStage: sorted(failures)
    })
  }
  return acc
}

const here = path.dirname(fileURLToPath(import.meta.url))

const versionOf = (fs: FileSystem.FileSystem, packageJson: string): Effect.Effect<string | undefined> =>
  fs.readFileString(packageJson).pipe(
    Effect.flatMap((text) => Effect.try(() => (JSON.parse(text) as { version?: string }).version)),
    Effect.orElseSucceed(() => undefined)
  )

/** Versions of Node, the workspace packages and the libraries results depend on. */
export const versions: Effect.Effect<Record<string, string>, never, FileSystem.FileSystem> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const out: Record<string, string> = { node: process.versions.node }
  const packages = path.resolve(here, "..", "..", "..")
  for (const p of ["core", "retrievers", "scorers", "providers", "experiments"]) {
    const v = yield* versionOf(fs, path.join(packages, p, "package.json"))
    if (v !== undefined) out[`@cupid-lab/${p}`] = v
  }
  const modules = path.resolve(packages, "..", "node_modules")
  for (const dep of ["effect", "openai", "cohere-ai", "@huggingface/transformers", "wink-nlp"]) {
    const v = yield* versionOf(fs, path.join(modules, dep, "package.json"))
    if (v !== undefined) out[dep] = v
  }
  return out
})

export const encode = (info: RunInfo): string => `${JSON.stringify(Schema.encodeSync(RunInfo)(info), null, 2)}\n`
