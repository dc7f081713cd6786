/**
 * Reading a run directory back: `summary.json`, `results.jsonl` and, when present, `run.json`,
 * each decoded once; a malformed file is a {@link RunError} naming the file, the line and the field.
 *
 * @example
 * const run = yield* RunDir.read("runs/contextual") // { summary, index, info }, or a RunError
 */
import { type Domain, Files, Issues } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Either, Option, ParseResult, Schema, type Scope } from "effect"
import * as path from "node:path"
import { RunError } from "./Errors.js"
import * as ResultLine from "./ResultLine.js"
import type { Row } from "./ResultLine.js"
import * as RunInfoModule from "./RunInfo.js"

import * as Columns from "./Columns.js"
import { decoder } from "./internal/fastDecode.js"

/** `run.json` (see RunInfo.ts) with every top-level field optional: a record of an older or newer runner still reads. */
const RunInfoSchema = Schema.partial(RunInfoModule.RunInfo)
/** The run directory's summary (summary.json) and run record (run.json). */
export const summaryFileName = "summary.json"
export const infoFileName = "run.json"

export type RunInfo = typeof RunInfoSchema.Type

export interface Run {
  readonly dir: string
  readonly summary: ResultLine.Summary
  readonly index: Columns.Index
  /** From run.json, when the file exists. */
  readonly info: RunInfo | undefined
  /** The first instance of each type, when the caller has them (the sweep); else reports read them from the run's data. */
  readonly examples?: ReadonlyArray<Domain.Instance>
}

const firstIssue = (e: ParseResult.ParseError): string => {
  const issue = Issues.clean(ParseResult.ArrayFormatter.formatErrorSync(e), "field")[0]
  if (issue === undefined) return "does not match the expected shape"
  const at = formatPath(issue.path)
  return `${at === "" ? "" : `field ${at}: `}${issue.message}`
}

// Tens of thousands of lines per file: the plain checks compiled from the schema answer them.
const decodeRow = decoder(ResultLine.Row, { errors: "all" })
const decodeSummary = Schema.decodeUnknownEither(ResultLine.Summary, { onExcessProperty: "ignore" })
const decodeInfo = Schema.decodeUnknownEither(RunInfoSchema, { onExcessProperty: "ignore" })

const readJson = (fileSystem: FileSystem.FileSystem, file: string, what: string): Effect.Effect<unknown, RunError> =>
  fileSystem.readFileString(file, "utf8").pipe(
    Effect.mapError((e) => new RunError({ path: file, reason: `cannot read ${what}: ${Files.describe(e)}` })),
    Effect.flatMap((text) =>
      Effect.try({
        try: (): unknown => JSON.parse(text),
        catch: (e) =>
          new RunError({
            path: file,
            reason: `${what} is not valid JSON (${e instanceof Error ? e.message : String(e)})`
          })
      })
    )
  )

/** A decoder of one JSON line (without its newline, `lineNo` 1-based) whose errors name the file and the line. */
export const parseLine =
  <A>(decode: (value: unknown) => Either.Either<A, string>) =>
  (text: string, lineNo: number, file: string): Either.Either<A, RunError> =>
    Either.try({
      try: (): unknown => JSON.parse(text),
      catch: () => "not valid JSON; expected one result line per line"
    }).pipe(
      Either.flatMap(decode),
      Either.mapLeft((why) => new RunError({ path: file, reason: `line ${lineNo}: ${why}` }))
    )

/** Decode one line of results.jsonl; a problem names the field. */
export const parseRow = parseLine((value) => Either.mapLeft(decodeRow(value), firstIssue))

/** Every line of a results.jsonl file, decoded one by one into `add`, in file order; a line cut short fails. */
const foldRows = (
  fileSystem: FileSystem.FileSystem,
  file: string,
  add: (row: Row, raw: Buffer) => void
): Effect.Effect<void, RunError> =>
  scan(fileSystem, file, (raw, lineNo) => {
    const text = raw.toString("utf8", 0, raw.length - 1)
    if (text.trim() === "") return
    const row = parseRow(text, lineNo, file)
    if (Either.isLeft(row)) return row.left
    add(row.right, raw)
  }).pipe(
    Effect.flatMap(({ lines, partial }) =>
      partial
        ? Effect.fail(
            new RunError({
              path: file,
              reason: `line ${lines + 1}: cut short (no newline at the end of the file); was the sweep killed? rerun it to complete the run`
            })
          )
        : Effect.void
    ),
    Effect.catchTag("SystemError", "BadArgument", (e) =>
      Effect.fail(new RunError({ path: file, reason: `cannot read the results: ${Files.describe(e)}` }))
    )
  )

export const parseSummary = (value: unknown, file: string): Either.Either<ResultLine.Summary, RunError> =>
  Either.mapLeft(decodeSummary(value), (e) => new RunError({ path: file, reason: firstIssue(e) }))

export const parseInfo = (value: unknown, file: string): Either.Either<RunInfo, RunError> =>
  Either.mapLeft(decodeInfo(value), (e) => new RunError({ path: file, reason: firstIssue(e) }))

/** Write one of a run directory's files atomically; a failure is a RunError naming the file. */
export const write = (file: string, data: string | Uint8Array): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Files.writeFileAtomic(file, data).pipe(
    Effect.mapError((e) => new RunError({ path: file, reason: `cannot write: ${Files.describe(e)}` }))
  )

/** Create a run directory (and its parents); a failure is a RunError naming it. */
export const makeDirectory = (dir: string): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Files.makeDirectory(dir).pipe(
    Effect.mapError((e) => new RunError({ path: dir, reason: `cannot create the run directory: ${Files.describe(e)}` }))
  )

/**
 * Read a run directory, handing every decoded line to `also` as well (with its bytes, valid during the call); with
 * `info: "caller"` run.json is left to the caller. Fails with a {@link RunError} when summary.json or results.jsonl is missing or malformed.
 */
export const read = Effect.fn("RunDir.read")(function* (
  dir: string,
  options: { readonly also?: (row: Row, raw: Buffer) => void; readonly info?: "read" | "caller" } = {}
): Effect.fn.Return<Run, RunError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  const info = yield* fileSystem.stat(dir).pipe(Effect.option)
  if (Option.isNone(info) || info.value.type !== "Directory") {
    return yield* new RunError({
      path: dir,
      reason: "not a run directory (expected a directory written by a sweep, holding summary.json and results.jsonl)"
    })
  }
  const summaryFile = path.join(dir, summaryFileName)
  const resultsFile = path.join(dir, "results.jsonl")
  const infoFile = path.join(dir, infoFileName)
  if (!(yield* Files.exists(fileSystem, summaryFile))) {
    return yield* new RunError({
      path: summaryFile,
      reason: "missing; a sweep writes it when it finishes (rerun the sweep to complete the run)"
    })
  }
  if (!(yield* Files.exists(fileSystem, resultsFile)))
    return yield* new RunError({ path: resultsFile, reason: "missing; the run has no results" })
  const summary = yield* Effect.flatMap(readJson(fileSystem, summaryFile, "the summary"), (v) =>
    parseSummary(v, summaryFile)
  )
  const rows: Array<Row> = []
  yield* foldRows(fileSystem, resultsFile, (row, raw) => {
    rows.push(row)
    options.also?.(row, raw)
  })
  const problem = Columns.problem(rows)
  if (problem !== undefined) return yield* new RunError({ path: resultsFile, reason: problem })
  const runInfo =
    options.info !== "caller" && (yield* Files.exists(fileSystem, infoFile))
      ? yield* Effect.flatMap(readJson(fileSystem, infoFile, "the run record"), (v) => parseInfo(v, infoFile))
      : undefined
  return { dir, summary, index: Columns.index(rows), info: runInfo }
})

/**
 * Calls `onLine` with each whole line of `file` in order (a view with its "\n", valid during the
 * call, and its 1-based number); an error it returns stops the scan. Returns the number of whole
 * lines and whether a partial last line (no "\n") follows them.
 */
export const scan = Effect.fn("RunDir.scan")(
  function* <E = never>(
    fileSystem: FileSystem.FileSystem,
    file: string,
    onLine: (line: Buffer, lineNo: number) => E | undefined
  ): Effect.fn.Return<{ readonly lines: number; readonly partial: boolean }, E | PlatformError, Scope.Scope> {
    const input = yield* fileSystem.open(file, { flag: "r" })
    let buf = Buffer.allocUnsafe(8 << 20)
    let filled = 0,
      lines = 0
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
      let start = 0
      for (let nl = view.indexOf(10); nl !== -1; nl = view.indexOf(10, start)) {
        const error = onLine(view.subarray(start, nl + 1), ++lines)
        if (error !== undefined) return yield* Effect.fail(error)
        start = nl + 1
      }
      buf.copy(buf, 0, start, filled)
      filled -= start
    }
    return { lines, partial: filled > 0 }
  },
  (effect) => Effect.scoped(effect)
)

/** {@link scan} of a file that may be missing (then it has no lines); a failed read is "cannot read the <what>". */
export const scanIfPresent = Effect.fn("RunDir.scanIfPresent")(function* (
  file: string,
  what: string,
  onLine: (line: Buffer, lineNo: number) => void
) {
  const fileSystem = yield* FileSystem.FileSystem
  if (!(yield* Files.exists(fileSystem, file))) return { lines: 0, partial: false }
  return yield* scan<never>(fileSystem, file, (line, lineNo) => void onLine(line, lineNo)).pipe(
    Effect.mapError((e) => new RunError({ path: file, reason: `cannot read the ${what}: ${Files.describe(e)}` }))
  )
})

/**
 * The lines of a JSON-lines `file` about one instance, decoded with `schema`, in file order (lines
 * that do not mention it are skipped undecoded); those that do not decode are counted in `unreadable`.
 */
export const linesAbout = Effect.fn("RunDir.linesAbout")(function* <A extends { readonly instance: string }, I>(
  file: string,
  instance: string,
  schema: Schema.Schema<A, I>,
  what: string
): Effect.fn.Return<
  { readonly lines: ReadonlyArray<A>; readonly unreadable: number },
  RunError,
  FileSystem.FileSystem
> {
  const lines: Array<A> = []
  let unreadable = 0
  const decode = Schema.decodeUnknownEither(Schema.parseJson(schema))
  const needle = Buffer.from(JSON.stringify(instance))
  yield* scanIfPresent(file, what, (line) => {
    if (line.indexOf(needle) === -1) return
    const decoded = decode(line.toString("utf8", 0, line.length - 1))
    if (Either.isLeft(decoded)) unreadable++
    else if (decoded.right.instance === instance) lines.push(decoded.right)
  })
  return { lines, unreadable }
})

/** `["sweep", "retriever", 2, "use"]` -> `sweep.retriever[2].use` */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce(
    (out: string, s) => (typeof s === "number" ? `${out}[${s}]` : out === "" ? String(s) : `${out}.${String(s)}`),
    ""
  )
