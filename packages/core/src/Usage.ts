/**
 * Per-instance accounting of model calls. The pipeline opens a fresh ledger for each instance
 * (and labels each stage); model wrappers record every call into the ledger of the fiber that made
 * it, so usage is attributed correctly even when many instances share one model concurrently.
 *
 * @example
 * import { Usage } from "@cupid-lab/core"
 * const [result, entries] = yield* Usage.track(Usage.withStage("infer", inferrer.infer(input)))
 */
import { Effect, FiberRef } from "effect"

export interface UsageEntry {
  readonly stage: string
  readonly provider: string
  readonly model: string
  readonly kind: "complete" | "embed" | "rerank"
  readonly promptTokens: number
  readonly completionTokens: number
  /** True when the answer came from the cache (no request was sent). */
  readonly cached: boolean
  /** HTTP requests sent for this call, retries included (0 when the cache answered). */
  readonly requests?: number
  /** True when the call failed (after its retries); its requests were still sent. */
  readonly failed?: boolean
}

interface Ledger {
  readonly entries: Array<UsageEntry>
}

const currentLedger = FiberRef.unsafeMake<Ledger | undefined>(undefined)
const currentStage = FiberRef.unsafeMake<string>("unattributed")

/** Record one call into the current ledger (a no-op outside {@link track}). */
export const record = (entry: Omit<UsageEntry, "stage">): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentLedger), (ledger) =>
    ledger === undefined
      ? Effect.void
      : Effect.map(FiberRef.get(currentStage), (stage) => {
          ledger.entries.push({ stage, ...entry })
        })
  )

/** Run an effect with a fresh ledger and return its result with the calls it made. */
export const track = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<[A, ReadonlyArray<UsageEntry>], E, R> =>
  Effect.suspend(() => {
    const ledger: Ledger = { entries: [] }
    return Effect.map(Effect.locally(effect, currentLedger, ledger), (a) => [a, ledger.entries] as [A, ReadonlyArray<UsageEntry>])
  })

/** The calls recorded so far in the current ledger (also when the tracked effect later fails). */
export const snapshot: Effect.Effect<ReadonlyArray<UsageEntry>> = Effect.map(
  FiberRef.get(currentLedger),
  (l) => (l === undefined ? [] : [...l.entries])
)

/** Run a ledger-opening effect and hand back the ledger even when it fails. */
export const trackExit = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly exit: import("effect").Exit.Exit<A, E>; readonly usage: ReadonlyArray<UsageEntry> }, never, R> =>
  Effect.suspend(() => {
    const ledger: Ledger = { entries: [] }
    return Effect.map(Effect.exit(Effect.locally(effect, currentLedger, ledger)), (exit) => ({ exit, usage: ledger.entries }))
  })

/** Attribute the calls made by an effect to a stage. */
export const withStage = <A, E, R>(stage: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, currentStage, stage)

export interface UsageTotals {
  readonly calls: number
  readonly cachedCalls: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** HTTP requests sent, retries included: what the servers received. */
  readonly requests: number
  /** Requests beyond the first of each call. */
  readonly retries: number
  readonly failedCalls: number
}

/** The number of HTTP requests an entry stands for (one per uncached call when its provider does not say). */
const requestsOf = (e: UsageEntry): number => (e.cached ? 0 : e.requests ?? 1)

export const totals = (entries: ReadonlyArray<UsageEntry>): UsageTotals => {
  let calls = 0, cachedCalls = 0, promptTokens = 0, completionTokens = 0, requests = 0, retries = 0, failedCalls = 0
  for (const e of entries) {
    calls++
    if (e.cached) cachedCalls++
    if (e.failed === true) failedCalls++
    const r = requestsOf(e)
    requests += r
    retries += Math.max(0, r - 1)
    promptTokens += e.promptTokens
    completionTokens += e.completionTokens
  }
  return { calls, cachedCalls, promptTokens, completionTokens, requests, retries, failedCalls }
}
