/**
 * Progress of a sweep on stderr: a live one-line bar on a terminal, plain periodic lines otherwise.
 *
 * @example
 * Runner.sweep(config, { progress: Progress.make(process.stderr) })
 */
import { ProgressLine } from "@cupid-lab/core"
import * as Batches from "./Batches.js"

export interface Snapshot {
  readonly cells: number
  readonly instancesSeen: number
  /** Unknown (undefined) until the data has been read, unless its source says how many it holds. */
  readonly instancesTotal: number | undefined
  /** Pairs finished, including those done by an earlier run. */
  readonly pairsDone: number
  readonly pairsTotal: number | undefined
  /** Pairs this run has computed (the rate and ETA are based on these). */
  readonly pairsRun: number
  readonly pairsToRun: number | undefined
  readonly failed: number
  readonly cacheHits: number
  readonly calls: number
  readonly tokens: number
  readonly elapsedMs: number
  /** Provider batch jobs the sweep is waiting on. */
  readonly batches?: ReadonlyArray<Batches.Live>
}

export type Progress = ProgressLine.Progress<Snapshot>

const { compact, duration } = ProgressLine

export const eta = (s: Snapshot): number =>
  s.pairsRun === 0 || s.pairsToRun === undefined
    ? NaN
    : (Math.max(0, s.pairsToRun - s.pairsRun) * s.elapsedMs) / s.pairsRun

export const fraction = (s: Snapshot): number =>
  s.pairsTotal === undefined ? 0 : s.pairsTotal === 0 ? 1 : Math.min(1, s.pairsDone / s.pairsTotal)

export const describe = (s: Snapshot): string =>
  [
    s.pairsTotal === undefined
      ? `${s.pairsDone} pairs`
      : `${s.pairsDone}/${s.pairsTotal} pairs (${(100 * fraction(s)).toFixed(1)}%)`,
    `${s.cells} cells x ${s.instancesSeen}${s.instancesTotal === undefined ? "" : `/${s.instancesTotal}`} instances`,
    `ETA ${s.pairsToRun !== undefined && s.pairsRun >= s.pairsToRun ? "0s" : duration(eta(s))}`,
    `calls ${compact(s.calls)} (cached ${compact(s.cacheHits)})`,
    `tokens ${compact(s.tokens)}`,
    `failed ${s.failed}`,
    ...(s.batches ?? []).map(Batches.describe)
  ].join(" · ")

export const make = (sink: ProgressLine.Sink, options: { readonly intervalMs?: number } = {}): Progress =>
  ProgressLine.make(sink, { describe, fraction, ...options })

export const silent: Progress = { update: () => {}, done: () => {} }
