/**
 * Reading a run directory back for reports: `summary.json`, `results.jsonl` and, when present,
 * `run.json`. Every file is decoded once, here; a malformed file is a {@link RunError} naming the
 * file, the line and the field, and what was expected.
 *
 * Result lines are decoded one at a time into columns ({@link Columns.Index}): what tables,
 * statistics, charts, the CSV and the examples need; the lines themselves are not kept.
 *
 * @example
 * import { RunDir } from "@cupid-lab/experiments/results/RunDir"
 * const run = yield* RunDir.read("runs/contextual") // fails with a RunError
 * run.summary.cells.length; run.index.lines
 */
import { type Domain, Files } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Either, Option, ParseResult, Schema } from "effect"
import * as path from "node:path"
import { RunError } from "../Errors.js"
import * as ResultLine from "./ResultLine.js"
import * as RunInfoModule from "../run/RunInfo.js"
import * as Issues from "@cupid-lab/core/Issues"
import * as Columns from "./Columns.js"
import { formatPath } from "../config/Tree.js"

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
  /** The result lines as columns (see Columns.ts), built in one pass in file order. */
  readonly index: Columns.Index
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

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const readJson = (fileSystem: FileSystem.FileSystem, file: string, what: string): Effect.Effect<unknown, RunError> =>
  fileSystem.readFileString(file, "utf8").pipe(
    Effect.mapError((e) => new RunError({ path: file, reason: `cannot read ${what}: ${Files.describe(e)}` })),
    Effect.flatMap((text) =>
      Effect.try({
        try: (): unknown => JSON.parse(text),
        catch: (e) => new RunError({ path: file, reason: `${what} is not valid JSON (${message(e)})` })
      })
    )
  )

/** Decode one line of results.jsonl (without its newline); `lineNo` is 1-based, `file` names the source in errors. */
export const parseRow = (text: string, lineNo: number, file: string): Either.Either<Row, RunError> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return Either.left(new RunError({ path: file, reason: `line ${lineNo}: not valid JSON; expected one result line per line` }))
  }
  return Either.mapLeft(decodeRow(value), (why) => new RunError({ path: file, reason: `line ${lineNo}: ${why}` }))
}

/** Parse result lines (the text of results.jsonl); `file` names the source in errors. */
export const parseRows = (text: string, file: string): Either.Either<Array<Row>, RunError> => {
  const rows: Array<Row> = []
  let lineNo = 0
  for (const line of text.split("\n")) {
    lineNo++
    if (line.trim() === "") continue
    const row = parseRow(line, lineNo, file)
    if (Either.isLeft(row)) return Either.left(row.left)
    rows.push(row.right)
  }
  return Either.right(rows)
}

/** Read results.jsonl chunk by chunk, decoding each line and handing it to `add` as it comes (neither the text nor the lines are held). */
const foldRowsWith = (fileSystem: FileSystem.FileSystem, file: string, add: (row: Row) => void): Effect.Effect<void, RunError> => {
  let lineNo = 0
  return scan(fileSystem, file, (lines) =>
    Effect.suspend(() => {
      for (const raw of lines) {
        lineNo++
        const text = raw.toString("utf8", 0, raw.length - 1)
        if (text.trim() === "") continue
        const row = parseRow(text, lineNo, file)
        if (Either.isLeft(row)) return Effect.fail(row.left)
        add(row.right)
      }
      return Effect.void
    })
  ).pipe(
    Effect.flatMap(({ partial }) =>
      partial
        ? Effect.fail(new RunError({ path: file, reason: `line ${lineNo + 1}: cut short (no newline at the end of the file); was the sweep killed? rerun it to complete the run` }))
        : Effect.void
    ),
    Effect.catchTag("SystemError", "BadArgument", (e) => Effect.fail(new RunError({ path: file, reason: `cannot read the results: ${Files.describe(e)}` })))
  )
}

/** Every line of a results.jsonl file, decoded one by one into `add`, in file order. */
export const foldRows = (file: string, add: (row: Row) => void): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fileSystem) => foldRowsWith(fileSystem, file, add))

/** Every line of a results.jsonl file as a {@link Row} (held in memory: for tools that need whole lines, such as the viewer). */
export const readRows = (file: string): Effect.Effect<Array<Row>, RunError, FileSystem.FileSystem> => {
  const rows: Array<Row> = []
  return Effect.as(foldRows(file, (row) => void rows.push(row)), rows)
}

/** The columns reports read, built from a results.jsonl file in one pass. */
export const readIndex = (file: string): Effect.Effect<Columns.Index, RunError, FileSystem.FileSystem> =>
  Effect.flatMap(readRows(file), (rows) => indexed(rows, file))

/** The index of a file's rows, or why they are not one run's. */
const indexed = (rows: ReadonlyArray<Row>, file: string): Effect.Effect<Columns.Index, RunError> => {
  const problem = Columns.problem(rows)
  return problem === undefined ? Effect.succeed(Columns.index(rows)) : Effect.fail(new RunError({ path: file, reason: problem }))
}

export const parseSummary = (value: unknown, file: string): Either.Either<ResultLine.Summary, RunError> =>
  Either.mapLeft(decodeSummary(value), (e) => new RunError({ path: file, reason: firstIssue(e) }))

export const parseInfo = (value: unknown, file: string): Either.Either<RunInfo, RunError> =>
  Either.mapLeft(decodeInfo(value), (e) => new RunError({ path: file, reason: firstIssue(e) }))

const exists = (fileSystem: FileSystem.FileSystem, file: string) => fileSystem.exists(file).pipe(Effect.orElseSucceed(() => false))

/** Read a run directory. Fails with a {@link RunError} when summary.json or results.jsonl is missing or malformed. */
export const read = (dir: string): Effect.Effect<Run, RunError, FileSystem.FileSystem> => readWith(dir, () => {})

/**
 * Read a run directory as {@link read} does, handing every decoded line to `also` as well (the
 * results viewer keeps whole lines for its instance pages), so the file is read once. With
 * `info: "caller"` run.json is left to the caller (the viewer reads it leniently: a malformed
 * record costs the start time, not the run).
 */
export const readWith = (
  dir: string,
  also: (row: Row) => void,
  options: { readonly info?: "read" | "caller" } = {}
): Effect.Effect<Run, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const info = yield* fileSystem.stat(dir).pipe(Effect.option)
    if (Option.isNone(info) || info.value.type !== "Directory") {
      return yield* new RunError({ path: dir, reason: "not a run directory (expected a directory written by a sweep, holding summary.json and results.jsonl)" })
    }
    const summaryFile = path.join(dir, "summary.json")
    const resultsFile = path.join(dir, "results.jsonl")
    const infoFile = path.join(dir, "run.json")
    if (!(yield* exists(fileSystem, summaryFile))) {
      return yield* new RunError({ path: summaryFile, reason: "missing; a sweep writes it when it finishes (rerun the sweep to complete the run)" })
    }
    if (!(yield* exists(fileSystem, resultsFile))) return yield* new RunError({ path: resultsFile, reason: "missing; the run has no results" })
    const summary = yield* Effect.flatMap(readJson(fileSystem, summaryFile, "the summary"), (v) => parseSummary(v, summaryFile))
    const rows: Array<Row> = []
    yield* foldRowsWith(fileSystem, resultsFile, (row) => {
      rows.push(row)
      also(row)
    })
    const index = yield* indexed(rows, resultsFile)
    const runInfo = options.info !== "caller" && (yield* exists(fileSystem, infoFile))
      ? yield* Effect.flatMap(readJson(fileSystem, infoFile, "the run record"), (v) => parseInfo(v, infoFile))
      : undefined
    return { dir, summary, index, info: runInfo }
  })

/** Bytes read per call. */
const chunkBytes = 8 << 20

/**
 * Calls `onLines` with the complete lines of `file`, chunk by chunk, in order (each a view with its
 * "\n", valid until the returned effect ends). Returns whether a partial last line (no "\n")
 * follows them.
 */
export const scan = <E, R>(
  fileSystem: FileSystem.FileSystem,
  file: string,
  onLines: (lines: ReadonlyArray<Buffer>) => Effect.Effect<void, E, R>
): Effect.Effect<{ readonly partial: boolean }, E | PlatformError, R> =>
  Effect.scoped(Effect.gen(function*() {
    const input = yield* fileSystem.open(file, { flag: "r" })
    let buf = Buffer.allocUnsafe(chunkBytes)
    let filled = 0
    for (;;) {
      if (filled === buf.length) {
        // One line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafe(buf.length * 2)
        buf.copy(bigger, 0, 0, filled)
        buf = bigger
      }
      const n = Number(yield* input.read(buf.subarray(filled)))
      if (n === 0) break
      filled += n
      const view = buf.subarray(0, filled)
      const lines: Array<Buffer> = []
      let start = 0
      for (let nl = view.indexOf(10, start); nl !== -1; nl = view.indexOf(10, start)) {
        lines.push(view.subarray(start, nl + 1))
        start = nl + 1
      }
      if (lines.length > 0) yield* onLines(lines)
      buf.copy(buf, 0, start, filled)
      filled -= start
    }
    return { partial: filled > 0 }
  }))

/**
 * The lines of a JSON-lines `file` about one instance, decoded with `schema`, in file order: lines
 * that do not mention the instance are skipped undecoded (an instance page reads one instance of a
 * large file). Lines that mention it but do not decode are counted in `unreadable`, never dropped
 * silently. A missing file has no lines.
 */
export const linesAbout = <A extends { readonly instance: string }, I>(
  file: string,
  instance: string,
  schema: Schema.Schema<A, I>,
  what: string
): Effect.Effect<{ readonly lines: ReadonlyArray<A>; readonly unreadable: number }, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const lines: Array<A> = []
    let unreadable = 0
    if (!(yield* fileSystem.exists(file).pipe(Effect.orElseSucceed(() => false)))) return { lines, unreadable }
    const decode = Schema.decodeUnknownEither(Schema.parseJson(schema))
    const needle = Buffer.from(JSON.stringify(instance))
    yield* scan(fileSystem, file, (raw) =>
      Effect.sync(() => {
        for (const line of raw) {
          if (line.indexOf(needle) === -1) continue
          const decoded = decode(line.toString("utf8", 0, line.length - 1))
          if (Either.isLeft(decoded)) unreadable++
          else if (decoded.right.instance === instance) lines.push(decoded.right)
        }
      })
    ).pipe(Effect.mapError((e) => new RunError({ path: file, reason: `cannot read the ${what}: ${Files.describe(e)}` })))
    return { lines, unreadable }
  })
