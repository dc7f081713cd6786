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
import type { Trace } from "@cupid-lab/core"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export interface TraceTotals {
  /** Wall-clock milliseconds summed over pairs, per stage (pairs overlap when concurrency > 1). */
  readonly stageTimeMs: Readonly<Record<string, number>>
  readonly modelCalls: { readonly made: number; readonly cached: number }
  readonly tokens: { readonly prompt: number; readonly completion: number }
  readonly failuresByStage: Readonly<Record<string, number>>
}

export interface RunInfo extends TraceTotals {
  readonly startedAt: string
  readonly endedAt: string
  readonly durationMs: number
  readonly interrupted: boolean
  readonly config: { readonly file: string; readonly name: string; readonly hash: string }
  readonly dataset: { readonly source: string; readonly resolved: string; readonly fingerprint: string; readonly instances: number; readonly skipped: number }
  readonly cells: number
  readonly pairs: { readonly total: number; readonly resumed: number; readonly ran: number; readonly failed: number; readonly lines: number }
  /** Pairs computed by this run per second of its duration. */
  readonly pairsPerSecond: number | null
  /** Validation, data counting and building (`prepare`), the pair loop, sorting and summarizing (`write`). */
  readonly phasesMs: { readonly prepare: number; readonly pairs: number; readonly write: number }
  readonly cache: { readonly hits: number; readonly misses: number; readonly writes: number }
  /** What plugins fitted on training data, per cell: training source and fingerprint, fitted parameters. */
  readonly fits?: ReadonlyArray<{ readonly cell: string; readonly plugin: string; readonly train: string; readonly trainFingerprint: string; readonly parameters: Readonly<Record<string, unknown>> }>
  readonly versions: Readonly<Record<string, string>>
}

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
    tokens: 0,
    prompt: 0,
    completion: 0,
    add: (trace: Trace.Trace) => {
      for (const k in trace.timings) time.set(k, (time.get(k) ?? 0) + trace.timings[k]!)
      for (const u of trace.usage) {
        acc.calls++
        if (u.cached) acc.cachedCalls++
        acc.prompt += u.promptTokens
        acc.completion += u.completionTokens
        acc.tokens += u.promptTokens + u.completionTokens
      }
      if (trace.error !== undefined) failures.set(trace.error.stage, (failures.get(trace.error.stage) ?? 0) + 1)
    },
    result: (): TraceTotals => ({
      stageTimeMs: sorted(time),
      modelCalls: { made: acc.calls - acc.cachedCalls, cached: acc.cachedCalls },
      tokens: { prompt: acc.prompt, completion: acc.completion },
      failuresByStage: sorted(failures)
    })
  }
  return acc
}

const here = path.dirname(fileURLToPath(import.meta.url))

const versionOf = (packageJson: string): string | undefined => {
  try {
    return (JSON.parse(fs.readFileSync(packageJson, "utf8")) as { version?: string }).version
  } catch {
    return undefined
  }
}

/** Versions of Node, the workspace packages and the libraries results depend on. */
export const versions = (): Record<string, string> => {
  const out: Record<string, string> = { node: process.versions.node }
  const packages = path.resolve(here, "..", "..")
  for (const p of ["core", "retrievers", "scorers", "providers", "experiments"]) {
    const v = versionOf(path.join(packages, p, "package.json"))
    if (v !== undefined) out[`@cupid-lab/${p}`] = v
  }
  const modules = path.resolve(packages, "..", "node_modules")
  for (const dep of ["effect", "openai", "cohere-ai", "@huggingface/transformers", "wink-nlp"]) {
    const v = versionOf(path.join(modules, dep, "package.json"))
    if (v !== undefined) out[dep] = v
  }
  return out
}

export const encode = (info: RunInfo): string => `${JSON.stringify(info, null, 2)}\n`
