/**
 * The record format of `<out>/results.jsonl` (one line per (cell, instance)) and of
 * `<out>/summary.json`. Reports, `compare` and user tools read these; keep them stable.
 *
 * Nothing here depends on wall-clock time or on the state of the model cache, so the same config,
 * data and cache give byte-identical files. Non-finite scores (a metric that does not apply) are
 * written as `null`.
 */
import type { Domain, Trace } from "@cupid-lab/core"

export interface UsageSummary {
  readonly calls: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** Per stage (`retrieve`, `summarize`, `infer`, `generate`, `score`). */
  readonly byStage: Readonly<Record<string, { readonly calls: number; readonly promptTokens: number; readonly completionTokens: number }>>
  /** Per `provider/model`. */
  readonly byModel: Readonly<Record<string, { readonly calls: number; readonly promptTokens: number; readonly completionTokens: number }>>
}

/** Instance facts the analyses need (recency and history-length plots), derived from data and gold. */
export interface InstanceMeta {
  readonly sessions: number
  /** Approximate tokens of the whole history (see core's Tokens.count). */
  readonly historyTokens: number
  /** Mean 1-based position of the relevant sessions; null when there is none. */
  readonly relevantMeanPosition: number | null
  readonly relevant: ReadonlyArray<string>
  readonly stale: ReadonlyArray<string>
}

export interface ResultLine {
  /** Stable cell id: hash of the cell's normalized parameters. */
  readonly cell: string
  readonly cellName: string
  readonly instance: string
  readonly personaId: string
  readonly type: Domain.InstanceType
  readonly status: "ok" | "failed"
  /** Normalized parameters of the cell: { retriever: { use, ...options }, inferrer: {...}, ... }. */
  readonly params: Readonly<Record<string, unknown>>
  readonly meta: InstanceMeta
  readonly selected: ReadonlyArray<string> | null
  readonly ranking: ReadonlyArray<{ readonly sessionId: string; readonly score: number }> | null
  readonly summaries: ReadonlyArray<Domain.SessionSummary> | null
  readonly inference: { readonly preference: string; readonly analysis: string } | null
  readonly generation: { readonly text: string } | null
  readonly scores: Readonly<Record<string, number | null>>
  readonly usage: UsageSummary
  readonly error: Trace.TraceError | null
}

export interface MetricEstimate {
  readonly n: number
  readonly mean: number | null
  readonly ci95: readonly [number | null, number | null]
}

export type Slice = "all" | Domain.InstanceType
export const slices: ReadonlyArray<Slice> = ["all", "consistent", "contrastive", "changing"]

export interface SliceSummary {
  /** Instances of this slice scored (status ok). */
  readonly n: number
  /** Instances of this slice whose pipeline failed (not in any mean). */
  readonly failed: number
  readonly metrics: Readonly<Record<string, MetricEstimate>>
}

export interface CellSummary {
  readonly id: string
  readonly name: string
  readonly params: Readonly<Record<string, unknown>>
  /** True when any stage of the cell reads gold (oracle retrieval, oracle preference). */
  readonly usesGold: boolean
  /** Stages built by plugins that declare themselves heuristic (e.g. an extractive inferrer). */
  readonly heuristicStages?: ReadonlyArray<string>
  readonly slices: Readonly<Record<Slice, SliceSummary>>
}

export interface MetricDescription {
  readonly name: string
  readonly description: string
  readonly higherIsBetter: boolean
  readonly heuristic: boolean
  readonly aggregate: "mean" | "pooled" | { readonly f1Of: readonly [string, string] }
}

export interface Summary {
  readonly config: { readonly name: string; readonly hash: string }
  readonly dataset: {
    readonly source: string
    readonly hash: string
    readonly instances: number
    /** Rows skipped under `onInvalid: skip`, with their ids (or row numbers) and reasons. */
    readonly skipped: ReadonlyArray<{ readonly row: string; readonly reason: string }>
  }
  readonly seed: number
  /** Bootstrap resamples behind every ci95. */
  readonly resamples?: number
  /** Id of the cell others are compared against (`report.baseline`, else the `all` retriever's cell, else the first). */
  readonly baseline?: string
  readonly metrics: ReadonlyArray<MetricDescription>
  readonly cells: ReadonlyArray<CellSummary>
}
