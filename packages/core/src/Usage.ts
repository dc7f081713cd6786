/**
 * Per-instance accounting of model calls. The pipeline opens a fresh ledger for each instance and
 * sets the ledger's stage as each stage begins; model wrappers record every call into the ledger of
 * the fiber that made it, so usage is attributed correctly even when many instances share one model
 * concurrently.
 *
 * @example
 * import { Usage } from "@cupid-lab/core"
 * const [result, entries] = yield* Usage.track(Usage.withStage("infer", inferrer.infer(input)))
 *
 * const ledger = Usage.ledger()           // held by its caller, who runs one stage after another
 * ledger.stage = "retrieve"
 * yield* Usage.into(ledger, retriever.retrieve(input))
 */
import { Effect, type Exit, FiberRef } from "effect"
import { sha256Hex } from "./Hash.js"
import type { CompletionRequest } from "./LanguageModel.js"

/**
 * What a transcript keeps of an answer: its first `cap` characters (UTF-16 code units, never half
 * of a surrogate pair), with the whole answer's length and SHA-256 (of its UTF-8 bytes), so a
 * longer answer is visibly cut and can still be matched against the cache's copy.
 */
export interface AnswerExcerpt {
  readonly text: string
  readonly chars: number
  readonly sha256: string
  readonly cap: number
}

/** The default of {@link answerCap}: 64 Ki characters, far above any answer a stage reads. */
export const defaultAnswerCap = 65_536

/**
 * How many characters of an answer a transcript keeps: `CUPID_TRANSCRIPT_ANSWER_CHARS` (a
 * non-negative integer) or {@link defaultAnswerCap}. A model that loops can answer tens of MB.
 */
export const answerCap = (): number => {
  const raw = process.env["CUPID_TRANSCRIPT_ANSWER_CHARS"]
  const n = raw === undefined || raw.trim() === "" ? Number.NaN : Number(raw)
  return Number.isInteger(n) && n >= 0 ? n : defaultAnswerCap
}

/** The excerpt of `text` a transcript keeps (see {@link AnswerExcerpt}). */
export const excerptOf = (text: string, cap: number = answerCap()): AnswerExcerpt => {
  if (text.length <= cap) return { text, chars: text.length, sha256: sha256Hex(text), cap }
  const code = cap > 0 ? text.charCodeAt(cap - 1) : 0
  const end = code >= 0xd800 && code <= 0xdbff ? cap - 1 : cap
  // A slice of a long string keeps the whole string alive (V8 shares its characters): copy it out.
  const kept = Buffer.from(text.slice(0, end), "utf8").toString("utf8")
  return { text: kept, chars: text.length, sha256: sha256Hex(text), cap }
}

/**
 * What one call was, for its transcript: never part of a result line (it depends on the clock and
 * on the cache), written by the sweep to the run's calls.jsonl.
 */
export interface CallDetail {
  /** Milliseconds from the call to its answer (a cache lookup takes about none). */
  readonly latencyMs: number
  /** The call's cache key (completions): a call repeated from the cache refers by it to its first transcript. */
  readonly key?: string
  /** A completion's request as the stage made it: messages and decoding settings. */
  readonly request?: CompletionRequest
  /** The body the provider sends for it, when the provider says (LanguageModel.Service.wire). */
  readonly wire?: Readonly<Record<string, unknown>>
  /**
   * The answer as the model (or the cache) returned it, before anything is stripped, cut to
   * {@link answerCap} characters: the ledger never holds a whole answer of tens of MB.
   */
  readonly answer?: AnswerExcerpt
  /** Why the model stopped, as its provider says (absent for answers from the cache). */
  readonly finishReason?: string
  /** What the caller read from the answer (see CompletionRequest.read). */
  readonly reading?: { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string }
  /** Why the call failed: the model error after retries, a truncated answer or a refusal. */
  readonly error?: string
  /** Texts embedded or documents reranked. */
  readonly inputs?: number
  /** Milliseconds of `latencyMs` spent waiting for the model's rate limiters (absent when none held it). */
  readonly limiterMs?: number
  /** The provider batch job that carried the answer (absent for calls sent one by one, and cached ones). */
  readonly batch?: string
}

/** What a call's requests took, as a provider's answer or `ModelError` says (absent: not said). */
export interface Sent {
  readonly requests?: number | undefined
  readonly limiterMs?: number | undefined
}

export interface UsageEntry {
  readonly stage: string
  readonly provider: string
  readonly model: string
  /** `service`: a call to a system under test over HTTP (the `http` stages), not a model. */
  readonly kind: "complete" | "embed" | "rerank" | "service"
  readonly promptTokens: number
  readonly completionTokens: number
  /** True when the answer came from the cache (no request was sent). */
  readonly cached: boolean
  /** HTTP requests sent for this call, retries included (0 when the cache answered). */
  readonly requests?: number
  /** True when the call failed (after its retries); its requests were still sent. */
  readonly failed?: boolean
  /**
   * The model sends its calls as batch jobs, priced at this fraction of the synchronous price
   * (cached calls too: the cost describes the method, not the state of the cache).
   */
  readonly batchRate?: number
  /** The call's transcript (recorded by `Models`' wrappers). */
  readonly detail?: CallDetail
}

/**
 * The calls of one run. `stage` labels the calls recorded from now on: a caller that runs stages
 * one after another (the pipeline) sets it as each begins, which costs no effect per stage.
 */
export interface Ledger {
  readonly entries: Array<UsageEntry>
  stage: string | undefined
}

export const ledger = (): Ledger => ({ entries: [], stage: undefined })

const currentLedger = FiberRef.unsafeMake<Ledger | undefined>(undefined)
const currentStage = FiberRef.unsafeMake<string | undefined>(undefined)

/**
 * Record one call into the current ledger (a no-op outside {@link track} and {@link into}). Its
 * stage: the innermost {@link withStage}, else the ledger's `stage`, else `unattributed`.
 */
export const record = (entry: Omit<UsageEntry, "stage">): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentLedger), (ledger) =>
    ledger === undefined
      ? Effect.void
      : Effect.map(FiberRef.get(currentStage), (stage) => {
          ledger.entries.push({ stage: stage ?? ledger.stage ?? "unattributed", ...entry })
        })
  )

/** Run an effect recording the calls it makes into `ledger`. */
export const into = <A, E, R>(ledger: Ledger, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, currentLedger, ledger)

/** Run an effect with a fresh ledger and return its result with the calls it made. */
export const track = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<[A, ReadonlyArray<UsageEntry>], E, R> =>
  Effect.suspend(() => {
    const l = ledger()
    return Effect.map(into(l, effect), (a) => [a, l.entries] as [A, ReadonlyArray<UsageEntry>])
  })

/** Run a ledger-opening effect and hand back the ledger even when it fails. */
export const trackExit = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<{ readonly exit: Exit.Exit<A, E>; readonly usage: ReadonlyArray<UsageEntry> }, never, R> =>
  Effect.suspend(() => {
    const l = ledger()
    return Effect.map(Effect.exit(into(l, effect)), (exit) => ({ exit, usage: l.entries }))
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
export const requestsOf = (e: UsageEntry): number => (e.cached ? 0 : (e.requests ?? 1))

export const totals = (entries: ReadonlyArray<UsageEntry>): UsageTotals => {
  let calls = 0,
    cachedCalls = 0,
    promptTokens = 0,
    completionTokens = 0,
    requests = 0,
    retries = 0,
    failedCalls = 0
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
