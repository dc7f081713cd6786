/**
 * The records of a run directory, one Effect Schema each and nowhere else: a line of
 * `<out>/results.jsonl` ({@link ResultLine}, one per (cell, instance)) and `<out>/summary.json`
 * ({@link Summary}). The runner encodes with them; reports, the CSV, `compare` and user tools
 * decode with them. Keep them stable.
 *
 * Nothing here depends on wall-clock time or on the state of the model cache, so the same config,
 * data and cache give byte-identical files. Non-finite numbers (a metric that does not apply) are
 * written as `null`.
 *
 * @example
 * import { ResultLine } from "@cupid-lab/experiments"
 * import { Schema } from "effect"
 * const line = Schema.decodeUnknownSync(ResultLine.ResultLine)(JSON.parse(text))
 * line.scores["inference.precision_micro"] // { num: 3, den: 4 }
 */
import { Domain, Scorer } from "@cupid-lab/core"
import { Schema } from "effect"

const Int = Schema.Number

/** A number that may be missing or not finite (JSON has no NaN): `null` then. */
export const NullableNumber = Schema.NullOr(Schema.Number)

export const Counts = Schema.Struct({ calls: Int, promptTokens: Int, completionTokens: Int })

/** Token usage without cache flags: a call counts the same whether it was answered by the cache. */
export const UsageSummary = Schema.Struct({
  calls: Int,
  promptTokens: Int,
  completionTokens: Int,
  /** Per stage (`retrieve`, `summarize`, `infer`, `generate`, `score`). */
  byStage: Schema.Record({ key: Schema.String, value: Counts }),
  /** Per `provider/model`. */
  byModel: Schema.Record({ key: Schema.String, value: Counts })
})
export type UsageSummary = typeof UsageSummary.Type

/** Instance facts the analyses need (recency and history-length plots), derived from data and gold. */
export const InstanceMeta = Schema.Struct({
  sessions: Int,
  /** Approximate tokens of the whole history (see core's Tokens.count). */
  historyTokens: Int,
  /** Mean 1-based position of the relevant sessions; null when there is none. */
  relevantMeanPosition: NullableNumber,
  relevant: Schema.Array(Schema.String),
  stale: Schema.Array(Schema.String)
})
export type InstanceMeta = typeof InstanceMeta.Type

/** One instance's score for one metric: a number (`Mean` metrics; null when not finite) or counts (`Ratio` metrics). */
export const Score = Schema.Union(NullableNumber, Scorer.Count)
export type Score = typeof Score.Type

export const LineError = Schema.Struct({ stage: Schema.String, plugin: Schema.String, tag: Schema.String, message: Schema.String })

export const Status = Schema.Literal("ok", "failed")

export const ResultLine = Schema.Struct({
  /** Stable cell id: hash of the cell's normalized parameters. */
  cell: Schema.String,
  cellName: Schema.String,
  instance: Schema.String,
  personaId: Schema.String,
  type: Domain.InstanceType,
  status: Status,
  /** Normalized parameters of the cell: { retriever: { use, ...options }, inferrer: {...}, ... }. */
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  meta: InstanceMeta,
  selected: Schema.NullOr(Schema.Array(Schema.String)),
  ranking: Schema.NullOr(Schema.Array(Schema.Struct({ sessionId: Schema.String, score: NullableNumber }))),
  summaries: Schema.NullOr(Schema.Array(Schema.Struct({
    sessionId: Schema.String,
    context: Schema.Array(Schema.String),
    preferences: Schema.Array(Schema.String)
  }))),
  inference: Schema.NullOr(Schema.Struct({ preference: Schema.String, analysis: Schema.String })),
  generation: Schema.NullOr(Schema.Struct({ text: Schema.String })),
  scores: Schema.Record({ key: Schema.String, value: Score }),
  usage: UsageSummary,
  error: Schema.NullOr(LineError),
  /** How the scorers rated each checklist item (preference match: gold items, then inferred ones); absent when no scorer rated items. */
  ratings: Schema.optionalWith(Schema.Array(Scorer.ItemRating), { exact: true }),
  /** Per metric judged more than once (the judge's `repeats`), each repeat's value in order; the score is their mean. Absent when no scorer repeated. */
  repeats: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Array(NullableNumber) }), { exact: true })
})
export type ResultLine = typeof ResultLine.Type

/**
 * What reports keep of a line: everything but the ranking, the session summaries and the
 * inference's analysis (decoding drops them, which keeps a large run's lines small in memory).
 */
export const Row = Schema.Struct({
  ...ResultLine.omit("ranking", "summaries", "inference").fields,
  inference: Schema.NullOr(Schema.Struct({ preference: Schema.String }))
})
export type Row = typeof Row.Type

export const MetricEstimate = Schema.Struct({
  /** Instances the value is computed from (finite values only). */
  n: Int,
  mean: NullableNumber,
  ci95: Schema.Tuple(NullableNumber, NullableNumber)
})
export type MetricEstimate = typeof MetricEstimate.Type

export const Slice = Schema.Literal("all", "consistent", "contrastive", "changing")
export type Slice = typeof Slice.Type
export const slices: ReadonlyArray<Slice> = Slice.literals

export const SliceSummary = Schema.Struct({
  /** Instances of this slice scored (status ok). */
  n: Int,
  /** Instances of this slice whose pipeline failed (not in any mean). */
  failed: Int,
  metrics: Schema.Record({ key: Schema.String, value: MetricEstimate })
})
export type SliceSummary = typeof SliceSummary.Type

/** What a run records of each plugin a cell uses, so reports read facts from the run, not from code. */
export const PluginFact = Schema.Struct({
  stage: Schema.String,
  name: Schema.String,
  readsGold: Schema.Boolean,
  heuristic: Schema.Boolean,
  package: Schema.String,
  version: Schema.String
})
export type PluginFact = typeof PluginFact.Type

export const CellSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** True when any stage of the cell reads gold (oracle retrieval, oracle preference). */
  usesGold: Schema.Boolean,
  /** True when the cell's retriever reads gold labels: an oracle retrieval cell. */
  oracleRetrieval: Schema.Boolean,
  /** Stages built by plugins that declare themselves heuristic (e.g. an extractive inferrer). */
  heuristicStages: Schema.Array(Schema.String),
  plugins: Schema.Array(PluginFact),
  slices: Schema.Struct({ all: SliceSummary, consistent: SliceSummary, contrastive: SliceSummary, changing: SliceSummary }),
  /**
   * The instance types of another benchmark (LongMemEval's question types, LoCoMo's categories,
   * PrefEval's topics), each summarized as a slice; absent when every instance is a CUPID type.
   */
  types: Schema.optional(Schema.Record({ key: Schema.String, value: SliceSummary }))
})
export type CellSummary = typeof CellSummary.Type

/** A metric as the run declares it (the scorer's own declaration). */
export const MetricDescription = Scorer.MetricInfo
export type MetricDescription = Scorer.MetricInfo

const Correction = Schema.Literal("holm", "bonferroni", "bh", "none")

/**
 * How reports group the differences against the baseline into families of tests (config
 * `report.primary`, `report.correction`, `report.reference`); defaults are applied by the analysis
 * (analysis/Families.ts): primary = the main metric on every slice, corrected with Holm; every other
 * difference exploratory, corrected with Benjamini-Hochberg; no reference cell.
 */
export const Families = Schema.Struct({
  primary: Schema.optionalWith(
    Schema.Struct({
      metrics: Schema.optionalWith(Schema.Array(Schema.String).pipe(Schema.minItems(1)), { exact: true }),
      slices: Schema.optionalWith(Schema.Array(Slice).pipe(Schema.minItems(1)), { exact: true })
    }),
    { exact: true }
  ),
  correction: Schema.optionalWith(
    Schema.Struct({ primary: Schema.optionalWith(Correction, { exact: true }), exploratory: Schema.optionalWith(Correction, { exact: true }) }),
    { exact: true }
  ),
  /** Cells (by name or id) shown as reference points: with intervals, outside every family. */
  reference: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})
export type Families = typeof Families.Type

export const Summary = Schema.Struct({
  config: Schema.Struct({ name: Schema.String, hash: Schema.String }),
  dataset: Schema.Struct({
    source: Schema.String,
    hash: Schema.String,
    instances: Int,
    /** Rows skipped under `onInvalid: skip`, with their ids (or row numbers) and reasons. */
    skipped: Schema.Array(Schema.Struct({ row: Schema.String, reason: Schema.String }))
  }),
  seed: Int,
  /** Bootstrap resamples behind every ci95 over fewer than `largeSample` instances. */
  resamples: Int,
  /**
   * From this many instances on, a ci95 is the large-sample (delta-method) interval, and reports
   * test differences with the normal approximation of the permutation test. Absent in runs that
   * always resampled.
   */
  largeSample: Schema.optional(Int),
  /** Id of the cell others are compared against (`report.baseline`, else the `all` retriever's cell, else the first). */
  baseline: Schema.String,
  /** The report's main metric when the config names one (`report.main`); else reports choose it from the metrics. */
  main: Schema.optional(Schema.String),
  /**
   * Model calls over every attempt recorded in calls.jsonl (absent when no pair called a model):
   * calls, those the cache answered, HTTP requests the servers received (retries included), the
   * retries among them and calls that failed.
   */
  modelCalls: Schema.optional(Schema.Struct({ attempts: Int, calls: Int, cached: Int, requests: Int, retries: Int, failed: Int, unreadable: Schema.optional(Int) })),
  /** The config's families of tests (`report.primary`, `report.correction`, `report.reference`), when it declares any. */
  families: Schema.optional(Families),
  /** The config's sweep axes as written (`retriever`, `retriever.select`, `transform.pad`), in file order; absent when it sweeps nothing. */
  axes: Schema.optional(Schema.Array(Schema.String)),
  metrics: Schema.Array(MetricDescription),
  cells: Schema.Array(CellSummary)
})
export type Summary = typeof Summary.Type
