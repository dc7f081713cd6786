/**
 * Reading a run directory back for reports: `summary.json`, `results.jsonl` and, when present,
 * `run.json`. Every file is decoded once, here; a malformed file is a {@link RunError} naming the
 * file, the line and the field, and what was expected.
 *
 * Result lines are kept in a slim form ({@link Row}): what tables, statistics, charts, the CSV
 * and the examples need, without rankings and summaries.
 *
 * @example
 * import { RunDir } from "@cupid-lab/experiments/report/RunDir"
 * const run = RunDir.read("runs/contextual") // throws RunError
 * run.summary.cells.length; run.rows.length
 */
import { Domain } from "@cupid-lab/core"
import { Either, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { RunError } from "../Errors.js"
import type { Summary } from "../ResultLine.js"
import * as Issues from "../internal/Issues.js"
import { formatPath } from "../internal/Tree.js"

const Counts = Schema.Struct({ calls: Schema.Number, promptTokens: Schema.Number, completionTokens: Schema.Number })
const NullableNumber = Schema.NullOr(Schema.Number)

const RowSchema = Schema.Struct({
  cell: Schema.String,
  cellName: Schema.String,
  instance: Schema.String,
  personaId: Schema.String,
  type: Domain.InstanceType,
  status: Schema.Literal("ok", "failed"),
  meta: Schema.Struct({
    sessions: Schema.Number,
    historyTokens: Schema.Number,
    relevantMeanPosition: NullableNumber
  }),
  selected: Schema.NullOr(Schema.Array(Schema.String)),
  inference: Schema.NullOr(Schema.Struct({ preference: Schema.String })),
  generation: Schema.NullOr(Schema.Struct({ text: Schema.String })),
  scores: Schema.Record({ key: Schema.String, value: NullableNumber }),
  usage: Schema.Struct({
    calls: Schema.Number,
    promptTokens: Schema.Number,
    completionTokens: Schema.Number,
    byStage: Schema.Record({ key: Schema.String, value: Counts }),
    byModel: Schema.Record({ key: Schema.String, value: Counts })
  }),
  error: Schema.NullOr(Schema.Struct({ stage: Schema.String, plugin: Schema.String, tag: Schema.String, message: Schema.String }))
})

/** What reports keep of a result line. */
export type Row = typeof RowSchema.Type

const Estimate = Schema.Struct({
  n: Schema.Number,
  mean: NullableNumber,
  ci95: Schema.Tuple(NullableNumber, NullableNumber)
})
const SliceSchema = Schema.Struct({
  n: Schema.Number,
  failed: Schema.Number,
  metrics: Schema.Record({ key: Schema.String, value: Estimate })
})
const SummarySchema = Schema.Struct({
  config: Schema.Struct({ name: Schema.String, hash: Schema.String }),
  dataset: Schema.Struct({
    source: Schema.String,
    hash: Schema.String,
    instances: Schema.Number,
    skipped: Schema.Array(Schema.Struct({ row: Schema.String, reason: Schema.String }))
  }),
  seed: Schema.Number,
  resamples: Schema.optionalWith(Schema.Number, { exact: true }),
  baseline: Schema.optionalWith(Schema.String, { exact: true }),
  metrics: Schema.Array(Schema.Struct({
    name: Schema.String,
    description: Schema.String,
    higherIsBetter: Schema.Boolean,
    heuristic: Schema.Boolean,
    aggregate: Schema.Union(
      Schema.Literal("mean", "pooled"),
      Schema.Struct({ f1Of: Schema.Tuple(Schema.String, Schema.String) })
    )
  })),
  cells: Schema.Array(Schema.Struct({
    id: Schema.String,
    name: Schema.String,
    params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    usesGold: Schema.Boolean,
    heuristicStages: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
    slices: Schema.Struct({ all: SliceSchema, consistent: SliceSchema, contrastive: SliceSchema, changing: SliceSchema })
  }))
})

const Int = Schema.Number
const NumberRecord = Schema.Record({ key: Schema.String, value: Schema.Number })

/**
 * `run.json` (written by the runner, see RunInfo.ts): how a run went, not what it computed
 * (wall-clock, cache state, versions). Every field is optional here, so a report still renders
 * from a record written by an older or newer runner; what is missing is not shown.
 */
const RunInfoSchema = Schema.partial(Schema.Struct({
  startedAt: Schema.String,
  endedAt: Schema.String,
  durationMs: Schema.Number,
  interrupted: Schema.Boolean,
  cells: Int,
  pairs: Schema.partial(Schema.Struct({ total: Int, resumed: Int, ran: Int, failed: Int, lines: Int })),
  pairsPerSecond: Schema.NullOr(Schema.Number),
  cache: Schema.partial(Schema.Struct({ hits: Int, misses: Int, writes: Int })),
  modelCalls: Schema.partial(Schema.Struct({ made: Int, cached: Int })),
  tokens: Schema.partial(Schema.Struct({ prompt: Int, completion: Int })),
  stageTimeMs: NumberRecord,
  failuresByStage: NumberRecord,
  versions: Schema.Record({ key: Schema.String, value: Schema.String })
}))
export type RunInfo = typeof RunInfoSchema.Type

export interface Run {
  readonly dir: string
  readonly summary: Summary
  /** Result lines in file order. */
  readonly rows: ReadonlyArray<Row>
  /** From run.json, when the file exists. */
  readonly info: RunInfo | undefined
}

const firstIssue = (e: ParseResult.ParseError): string => {
  const issue = Issues.clean(ParseResult.ArrayFormatter.formatErrorSync(e), "field")[0]
  if (issue === undefined) return "does not match the expected shape"
  const at = formatPath(issue.path)
  return `${at === "" ? "" : `field ${at}: `}${issue.message}`
}

const decodeRow = Schema.decodeUnknownEither(RowSchema, { onExcessProperty: "ignore", errors: "all" })
const decodeSummary = Schema.decodeUnknownEither(SummarySchema, { onExcessProperty: "ignore" })
const decodeInfo = Schema.decodeUnknownEither(RunInfoSchema, { onExcessProperty: "ignore" })

const readJson = (file: string, what: string): unknown => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (e) {
    throw new RunError({ path: file, reason: `cannot read ${what}: ${(e as Error).message}` })
  }
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new RunError({ path: file, reason: `${what} is not valid JSON (${(e as Error).message})` })
  }
}

/** Parse result lines (the text of results.jsonl); `file` names the source in errors. */
export const parseRows = (text: string, file: string): Array<Row> => {
  const rows: Array<Row> = []
  let lineNo = 0
  for (const line of text.split("\n")) {
    lineNo++
    if (line.trim() === "") continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new RunError({ path: file, reason: `line ${lineNo}: not valid JSON; expected one result line per line` })
    }
    const row = decodeRow(value)
    if (Either.isLeft(row)) throw new RunError({ path: file, reason: `line ${lineNo}: ${firstIssue(row.left)}` })
    rows.push(row.right)
  }
  return rows
}

export const parseSummary = (value: unknown, file: string): Summary => {
  const s = decodeSummary(value)
  if (Either.isLeft(s)) throw new RunError({ path: file, reason: firstIssue(s.left) })
  return s.right as Summary
}

export const parseInfo = (value: unknown, file: string): RunInfo => {
  const info = decodeInfo(value)
  if (Either.isLeft(info)) throw new RunError({ path: file, reason: firstIssue(info.left) })
  return info.right
}

/** Read a run directory. Throws {@link RunError} when summary.json or results.jsonl is missing or malformed. */
export const read = (dir: string): Run => {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new RunError({ path: dir, reason: "not a run directory (expected a directory written by a sweep, holding summary.json and results.jsonl)" })
  }
  const summaryFile = path.join(dir, "summary.json")
  const resultsFile = path.join(dir, "results.jsonl")
  const infoFile = path.join(dir, "run.json")
  if (!fs.existsSync(summaryFile)) {
    throw new RunError({ path: summaryFile, reason: "missing; a sweep writes it when it finishes (rerun the sweep to complete the run)" })
  }
  if (!fs.existsSync(resultsFile)) throw new RunError({ path: resultsFile, reason: "missing; the run has no results" })
  const summary = parseSummary(readJson(summaryFile, "the summary"), summaryFile)
  const rows = parseRows(fs.readFileSync(resultsFile, "utf8"), resultsFile)
  const info = fs.existsSync(infoFile) ? parseInfo(readJson(infoFile, "the run record"), infoFile) : undefined
  return { dir, summary, rows, info }
}
