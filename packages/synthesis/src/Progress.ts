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

export interface Sink {
  readonly write: (text: string) => unknown
  readonly isTTY?: boolean
  readonly columns?: number
}

export interface Progress {
  readonly update: (s: Snapshot) => void
  readonly done: (s: Snapshot) => void
}

const duration = (ms: number): string => {
  if (!Number.isFinite(ms)) return "?"
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

const compact = (n: number): string =>
  n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e4 ? `${(n / 1e3).toFixed(0)}k` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n)

export const usd = (x: number): string => (Number.isNaN(x) ? "$? (a model has no price)" : `$${x.toFixed(x < 10 ? 4 : 2)}`)

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

const bar = (fraction: number, width: number): string => {
  const filled = Math.max(0, Math.min(width, Math.round(fraction * width)))
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

export const make = (sink: Sink, options: { readonly intervalMs?: number } = {}): Progress => {
  const tty = sink.isTTY === true
  const interval = options.intervalMs ?? (tty ? 100 : 10_000)
  let last = Number.NEGATIVE_INFINITY
  const render = (s: Snapshot, final: boolean) => {
    if (tty) {
      const text = `${bar(s.personasTotal === 0 ? 1 : s.personasDone / s.personasTotal, 24)} ${describe(s)}`
      const width = Math.max(20, (sink.columns ?? 120) - 1)
      sink.write(`\r${text.length > width ? text.slice(0, width) : text.padEnd(width)}${final ? "\n" : ""}`)
    } else sink.write(`progress: ${describe(s)}\n`)
  }
  return {
    update: (s) => {
      if (s.elapsedMs - last < interval) return
      last = s.elapsedMs
      render(s, false)
    },
    done: (s) => render(s, true)
  }
}

export const silent: Progress = { update: () => {}, done: () => {} }
