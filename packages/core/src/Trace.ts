/**
 * Everything one pipeline run produced for one instance: each stage's output, the model calls it
 * made, how long each stage took, and the error that stopped it, if any.
 */
import type { InstanceType, SessionSummary } from "./Domain.js"
import type { GeneratedResponse } from "./Generator.js"
import type { InferredPreference } from "./Inferrer.js"
import type { Retrieval } from "./Retriever.js"
import type { ItemRating, Repeats, Value } from "./Scorer.js"
import type { UsageEntry } from "./Usage.js"

export interface TraceError {
  readonly stage: string
  readonly plugin: string
  readonly tag: string
  readonly message: string
}

export interface Trace {
  readonly instanceId: string
  readonly instanceType: InstanceType
  readonly retrieval?: Retrieval
  readonly summaries?: ReadonlyArray<SessionSummary>
  readonly inference?: InferredPreference
  readonly generation?: GeneratedResponse
  readonly scores: Readonly<Record<string, Value>>
  /** Checklist item ratings the scorers recorded (preference match); absent when none did. */
  readonly ratings?: ReadonlyArray<ItemRating>
  /** Per-repeat values of metrics a scorer judged more than once (the judge's `repeats`); absent when none did. */
  readonly repeats?: Repeats
  /** Every model call, attributed to its stage. */
  readonly usage: ReadonlyArray<UsageEntry>
  /**
   * Wall-clock milliseconds per stage step (`retrieve`, `score`, ...), summed over its calls: the
   * durations of the stage's spans (`stage.<step>`). Not part of reproducible outputs.
   */
  readonly timings: Readonly<Record<string, number>>
  readonly error?: TraceError
}
