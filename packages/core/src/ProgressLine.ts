/**
 * A progress display on stderr, one for every long command (the sweep, the synthesis): a live
 * one-line bar on a terminal, plain periodic `progress:` lines otherwise (100 ms and 10 s apart by
 * default). The caller says what a snapshot reads as and how far along it is; snapshots carry their
 * elapsed time, so no clock is read here.
 *
 * @example
 * import { ProgressLine } from "@cupid-lab/core"
 * const progress = ProgressLine.make(process.stderr, { describe: (s) => `${s.done}/${s.total}`, fraction: (s) => s.done / s.total })
 * progress.update({ done: 3, total: 10, elapsedMs: 1200 })
 */

export interface Sink {
  readonly write: (text: string) => unknown
  readonly isTTY?: boolean
  readonly columns?: number
}

export interface Progress<S> {
  readonly update: (s: S) => void
  /** Render the final state (and end the live line). */
  readonly done: (s: S) => void
}

/** `12s`, `3m05s`, `2h07m`; `?` when not finite. */
export const duration = (ms: number): string => {
  if (!Number.isFinite(ms)) return "?"
  const s = Math.round(ms / 1000)
  if (s < 60) return `${s}s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`
}

/** `999`, `1.2k`, `45k`, `3.4M`. */
export const compact = (n: number): string =>
  n >= 1e6
    ? `${(n / 1e6).toFixed(1)}M`
    : n >= 1e4
      ? `${(n / 1e3).toFixed(0)}k`
      : n >= 1e3
        ? `${(n / 1e3).toFixed(1)}k`
        : String(n)

export const bar = (fraction: number, width: number): string => {
  const filled = Math.max(0, Math.min(width, Math.round(fraction * width)))
  return `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`
}

export interface Describe<S> {
  /** The facts of a snapshot as one line (without the bar). */
  readonly describe: (s: S) => string
  /** How far along, from 0 to 1. */
  readonly fraction: (s: S) => number
  readonly intervalMs?: number
}

/** Renders at most every `intervalMs` (default: 100 ms on a terminal, 10 s otherwise). */
export const make = <S extends { readonly elapsedMs: number }>(sink: Sink, how: Describe<S>): Progress<S> => {
  const tty = sink.isTTY === true
  const interval = how.intervalMs ?? (tty ? 100 : 10_000)
  let last = Number.NEGATIVE_INFINITY
  const render = (s: S, final: boolean) => {
    if (tty) {
      const text = `${bar(how.fraction(s), 24)} ${how.describe(s)}`
      const width = Math.max(20, (sink.columns ?? 120) - 1)
      sink.write(`\r${text.length > width ? text.slice(0, width) : text.padEnd(width)}${final ? "\n" : ""}`)
    } else sink.write(`progress: ${how.describe(s)}\n`)
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
