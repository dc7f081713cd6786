/**
 * Progress of a synthesis on stderr, drawn like the sweep's: a live one-line bar on a terminal,
 * plain periodic lines otherwise (100 ms and 10 s apart by default), with the personas done, the
 * ETA from this run's pace, model calls (and how many the cache answered), tokens and list-price
 * dollars so far.
 *
 * @example
 * import { Progress } from "@cupid-lab/synthesis"
 * const progress = Progress.make(process.stderr)
 * progress.update({ personasDone: 3, personasTotal: 10, ... })
 */
import { ProgressLine } from "@cupid-lab/core"

export interface Snapshot {
  readonly personasDone: number
  readonly personasTotal: number
  /** Personas done by this run (the ETA is based on these). */
  readonly personasRun: number
  readonly personasToRun: number
  readonly calls: number
  readonly cachedCalls: number
  readonly tokens: number
  /** NaN when a model has no price. */
  readonly usd: number
  readonly failures: number
  readonly elapsedMs: number
}

export type Sink = ProgressLine.Sink
export type Progress = ProgressLine.Progress<Snapshot>

const { compact, duration } = ProgressLine

export const usd = (x: number): string =>
  Number.isNaN(x) ? "$? (a model has no price)" : `$${x.toFixed(x < 10 ? 4 : 2)}`

/** Time left at this run's pace. */
export const eta = (s: Snapshot): number =>
  s.personasRun === 0 ? NaN : (Math.max(0, s.personasToRun - s.personasRun) * s.elapsedMs) / s.personasRun

export const describe = (s: Snapshot): string =>
  [
    `${s.personasDone}/${s.personasTotal} personas`,
    `ETA ${s.personasRun >= s.personasToRun ? "0s" : duration(eta(s))}`,
    `calls ${compact(s.calls)} (cached ${compact(s.cachedCalls)})`,
    `tokens ${compact(s.tokens)}`,
    usd(s.usd),
    `failed ${s.failures}`
  ].join(" · ")

export const make = (sink: Sink, options: { readonly intervalMs?: number } = {}): Progress =>
  ProgressLine.make(sink, {
    describe,
    fraction: (s) => (s.personasTotal === 0 ? 1 : s.personasDone / s.personasTotal),
    ...options
  })

export const silent: Progress = { update: () => {}, done: () => {} }
