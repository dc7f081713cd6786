/**
 * The records of a run directory, one Effect Schema each, for the runner and every reader: a line
 * of `<out>/results.jsonl` ({@link ResultLine}, one per (cell, instance)) and `<out>/summary.json`
 * ({@link Summary}). A number that is not finite (a metric that does not apply) is `null`.
 *
 * @example
 * const line = Schema.decodeUnknownSync(ResultLine.ResultLine)(JSON.parse(text)) // line.scores, line.usage, ...
 */
import { Domain, Scorer } from "@cupid-lab/core"
import { Schema } from "effect"

const Int = Schema.Number

export const NullableNumber = Schema.NullOr(Schema.Number)

/** A number as the records hold it: null when missing or not finite. */
export const finiteOrNull = (x: number | null | undefined): number | null =>
  typeof x === "number" && Number.isFinite(x) ? x : null

export const Counts = Schema.Struct({ calls: Int, promptTokens: Int, completionTokens: Int })

/** Token usage without cache flags: a call counts the same whether it was answered by the cache. */
export const UsageSummary = Schema.Struct({
  ...Counts.fields,
  byStage: Schema.Record({ key: Schema.String, value: Counts }),
  /** Per `provider/model`. */
  byModel: Schema.Record({ key: Schema.String, value: Counts })
})
export type UsageSummary = typeof UsageSummary.Type

/** Instance facts the analyses need (recency and history-length plots). */
export const InstanceMeta = Schema.Struct({
  sessions: Int,
  historyTokens: Int,
  /** Mean 1-based position of the relevant sessions; null when there is none. */
  relevantMeanPosition: NullableNumber,
  relevant: Schema.Array(Schema.String),
  stale: Schema.Array(Schema.String),
  /** Why the instance has no relevant session by its benchmark's account (LongMemEval abstention, LoCoMo adversarial, unlabelled); absent otherwise. */
  withoutEvidence: Schema.optionalWith(Domain.WithoutEvidence, { exact: true })
})
export type InstanceMeta = typeof InstanceMeta.Type

/** One instance's score for one metric: a number (`Mean` metrics) or counts (`Ratio` metrics). */
export const Score = Schema.Union(NullableNumber, Scorer.Count)
export type Score = typeof Score.Type

export const LineError = Schema.Struct({
  stage: Schema.String,
  plugin: Schema.String,
  tag: Schema.String,
  message: Schema.String
})

export const Status = Schema.Literal("ok", "failed")

export const ResultLine = Schema.Struct({
  /** Hash of the cell's normalized parameters. */
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
  summaries: Schema.NullOr(
    Schema.Array(
      Schema.Struct({
        sessionId: Schema.String,
        context: Schema.Array(Schema.String),
        preferences: Schema.Array(Schema.String)
      })
    )
  ),
  inference: Schema.NullOr(Schema.Struct({ preference: Schema.String, analysis: Schema.String })),
  generation: Schema.NullOr(Schema.Struct({ text: Schema.String })),
  scores: Schema.Record({ key: Schema.String, value: Score }),
  usage: UsageSummary,
  error: Schema.NullOr(LineError),
  /** How the scorers rated each checklist item (gold items, then inferred ones). */
  ratings: Schema.optionalWith(Schema.Array(Scorer.ItemRating), { exact: true }),
  /** Per metric judged more than once (the judge's `repeats`), each repeat's value; the score is their mean. */
  repeats: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Array(NullableNumber) }), {
    exact: true
  })
})
export type ResultLine = typeof ResultLine.Type

/** What reports keep of a line in memory: everything but the ranking, the session summaries and the inference's analysis. */
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
  /** Instances scored (status ok) and failed (in no mean). */
  n: Int,
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

/** A `models:` entry as a cell calls it: the entry and what it resolved to. */
export const ModelUse = Schema.Struct({ entry: Schema.String, provider: Schema.String, model: Schema.String })

/** What a run records of a cell besides its numbers. */
export const CellInfo = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  /** Any stage of the cell reads gold (oracle retrieval, oracle preference); `oracleRetrieval`: its retriever does. */
  usesGold: Schema.Boolean,
  oracleRetrieval: Schema.Boolean,
  /** Stages built by plugins that declare themselves heuristic (e.g. an extractive inferrer). */
  heuristicStages: Schema.Array(Schema.String),
  plugins: Schema.Array(PluginFact),
  /** The `models:` entries the cell's stages call, by the name they give (a role or an entry). */
  models: Schema.optional(Schema.Record({ key: Schema.String, value: ModelUse })),
  /** What scored the cell: each scorer's normalized options, and the entries they call (as `models`); absent in older runs. */
  scoring: Schema.optional(
    Schema.Struct({
      scorers: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      models: Schema.Record({ key: Schema.String, value: ModelUse })
    })
  )
})
export type CellInfo = typeof CellInfo.Type

export const CellSummary = Schema.Struct({
  ...CellInfo.fields,
  slices: Schema.Struct({
    all: SliceSummary,
    consistent: SliceSummary,
    contrastive: SliceSummary,
    changing: SliceSummary
  }),
  /** Another benchmark's instance types (LongMemEval's question types, LoCoMo's categories, PrefEval's topics) as slices. */
  types: Schema.optional(Schema.Record({ key: Schema.String, value: SliceSummary }))
})
export type CellSummary = typeof CellSummary.Type

/** A metric as the run declares it (the scorer's own declaration). */
export const MetricDescription = Scorer.MetricInfo
export type MetricDescription = Scorer.MetricInfo

const Correction = Schema.Literal("holm", "bonferroni", "bh", "none")

/** How reports group the differences against the baseline into families of tests, as the config declares them (defaults: analysis/Families.ts). */
export const Families = Schema.Struct({
  primary: Schema.optionalWith(
    Schema.Struct({
      metrics: Schema.optionalWith(Schema.Array(Schema.String).pipe(Schema.minItems(1)), { exact: true }),
      slices: Schema.optionalWith(Schema.Array(Slice).pipe(Schema.minItems(1)), { exact: true })
    }),
    { exact: true }
  ),
  correction: Schema.optionalWith(
    Schema.Struct({
      primary: Schema.optionalWith(Correction, { exact: true }),
      exploratory: Schema.optionalWith(Correction, { exact: true })
    }),
    { exact: true }
  ),
  /** Cells (by name or id) shown as reference points: with intervals, outside every family. */
  reference: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})
export type Families = typeof Families.Type

/**
 * Model calls over every attempt recorded in calls.jsonl: pair attempts with calls, calls, those the
 * cache answered, HTTP requests the servers received (retries included), the retries among them,
 * calls that failed, calls answered in provider batch jobs (absent when none), and lines that could
 * not be read.
 */
export const ModelCalls = Schema.Struct({
  attempts: Int,
  calls: Int,
  cached: Int,
  requests: Int,
  retries: Int,
  failed: Int,
  batched: Schema.optional(Int),
  unreadable: Schema.optional(Int)
})

export const Summary = Schema.Struct({
  config: Schema.Struct({ name: Schema.String, hash: Schema.String }),
  dataset: Schema.Struct({
    source: Schema.String,
    hash: Schema.String,
    instances: Int,
    /** Rows skipped under `onInvalid: skip`. */
    skipped: Schema.Array(Schema.Struct({ row: Schema.String, reason: Schema.String }))
  }),
  seed: Int,
  /** Bootstrap resamples behind every ci95 over fewer than `largeSample` instances. */
  resamples: Int,
  /** From this many instances on, a ci95 is the large-sample (delta-method) interval and tests use the normal approximation. */
  largeSample: Schema.optional(Int),
  /** Id of the cell others are compared against (`report.baseline`, else the `all` retriever's cell, else the first). */
  baseline: Schema.String,
  /** `report.main`, when the config names one. */
  main: Schema.optional(Schema.String),
  modelCalls: Schema.optional(ModelCalls),
  families: Schema.optional(Families),
  /** The config's sweep axes as written (`retriever`, `retriever.select`, `transform.pad`), in file order. */
  axes: Schema.optional(Schema.Array(Schema.String)),
  metrics: Schema.Array(MetricDescription),
  cells: Schema.Array(CellSummary)
})
export type Summary = typeof Summary.Type
