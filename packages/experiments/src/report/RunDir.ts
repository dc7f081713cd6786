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
import type { Domain } from "@cupid-lab/core"
import { Either, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { RunError } from "../Errors.js"
import * as ResultLine from "../ResultLine.js"
import * as RunInfoModule from "../RunInfo.js"
import * as Issues from "../internal/Issues.js"
import { formatPath } from "../internal/Tree.js"

/** What reports keep of a result line (see {@link ResultLine.Row}). */
export type Row = ResultLine.Row

/**
 * `run.json` (written by the runner, see RunInfo.ts): how a run went, not what it computed
 * (wall-clock, cache state, versions). Every top-level field is optional here, so a report still
 * renders from a record written by an older or newer runner; what is missing is not shown.
 */
const RunInfoSchema = Schema.partial(RunInfoModule.RunInfo)
export type RunInfo = typeof RunInfoSchema.Type

export interface Run {
  readonly dir: string
  readonly summary: ResultLine.Summary
  /** Result lines in file order. */
  readonly rows: ReadonlyArray<Row>
  /** From run.json, when the file exists. */
  readonly info: RunInfo | undefined
  /**
   * The first instance of each type, for the examples section, when the caller has them (the
   * sweep does); otherwise the report reads them from the run's dataset.
   */
  readonly examples?: ReadonlyArray<Domain.Instance>
}

const firstIssue = (e: ParseResult.ParseError): string => {
  const issue = Issues.clean(ParseResult.ArrayFormatter.formatErrorSync(e), "field")[0]
  if (issue === undefined) return "does not match the expected shape"
  const at = formatPath(issue.path)
  return `${at === "" ? "" : `field ${at}: `}${issue.message}`
}

/** Decode one parsed result line into a {@link Row}; `Left` holds the first problem, naming the field. */
export const decodeRow = (value: unknown): Either.Either<Row, string> =>
  Either.mapLeft(decodeRowEither(value), firstIssue)
const decodeRowEither = Schema.decodeUnknownEither(ResultLine.Row, { onExcessProperty: "ignore", errors: "all" })
const decodeSummary = Schema.decodeUnknownEither(ResultLine.Summary, { onExcessProperty: "ignore" })
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
    if (Either.isLeft(row)) throw new RunError({ path: file, reason: `line ${lineNo}: ${row.left}` })
    rows.push(row.right)
  }
  return rows
}

export const parseSummary = (value: unknown, file: string): ResultLine.Summary => {
  const s = decodeSummary(value)
  if (Either.isLeft(s)) throw new RunError({ path: file, reason: firstIssue(s.left) })
  return s.right
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
