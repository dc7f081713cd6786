/**
 * `<run>/results.jsonl`: one line per (cell, instance), appended as pairs complete, safe to kill
 * (each pair's calls.jsonl line goes first, in the same flush). Opening it takes the directory's
 * lock and keeps the `ok` lines of the grid's cells; failed lines are dropped so their pairs run
 * again. {@link Log.finalize} leaves the file sorted by (dataset order, cell order).
 *
 * @example
 * const log = yield* ResultLog.open({ dir: "runs/x", cells: new Set(ids) }) // in a Scope
 * if (!log.isDone(cell, instance)) log.append({ cell, instance, text })
 */
import { Files } from "@cupid-lab/core"
import { Errors, RunId, Calls, type ResultLine, RunDir } from "@cupid-lab/results"
import { FileSystem } from "@effect/platform"
import { Array as Arr, Effect, Either, type Scope } from "effect"
import * as path from "node:path"

export const fileName = "results.jsonl"
export const orphanFileName = "results.orphaned.jsonl"
export const corruptFileName = "results.corrupt.jsonl"

export interface Opened {
  /** Lines kept from an earlier run (status ok, cell in the grid), decoded, in file order. */
  readonly kept: ReadonlyArray<ResultLine.Row>
  /** Failed lines dropped so that their pairs run again. */
  readonly retried: number
  /** A partial last line left by a kill (or a full disk), dropped. */
  readonly truncated: boolean
  /** Lines of cells not in the grid, moved to results.orphaned.jsonl. */
  readonly orphaned: number
  /** Corrupt lines moved to results.corrupt.jsonl (only with `repair`). */
  readonly corrupt: number
  /** The lock of a sweep that is gone ("PID 123 on host, started ..."), taken over. */
  readonly staleLock: string | undefined
}

export interface Options {
  /** The run directory (created if missing). */
  readonly dir: string
  /** Ids of the grid's cells: lines of other cells move to results.orphaned.jsonl. */
  readonly cells: ReadonlySet<string>
  /** Keep the intact lines of a file with corrupt ones (else a corrupt line stops the open), moving those to results.corrupt.jsonl. */
  readonly repair?: boolean
}

export interface Order {
  readonly cellOrder: ReadonlyMap<string, number>
  readonly instanceOrder: ReadonlyMap<string, number>
  /** Every instance of the dataset was seen: lines of other instances move to results.orphaned.jsonl (else they stay, last). */
  readonly complete: boolean
}

export interface Finalized {
  /** The file's lines in final order, as their positions in the order they were kept and appended. */
  readonly order: ReadonlyArray<number>
  /** Lines moved to results.orphaned.jsonl. */
  readonly orphaned: number
}

export interface Log {
  readonly file: string
  readonly opened: Opened
  readonly isDone: (cell: string, instance: string) => boolean
  /**
   * Buffer one whole line (ending in "\n") and the pair's line of calls, if any (encoded against
   * what calls.jsonl holds: a call it holds already refers to its first record); written at the next flush.
   */
  readonly append: (line: {
    readonly cell: string
    readonly instance: string
    readonly text: string
    readonly calls?: Calls.Line | undefined
  }) => void
  /** Write what is buffered with one append. After a failed write, every later flush fails with the same error. */
  readonly flush: Effect.Effect<void, Errors.RunError>
  /** Flush, then leave the file sorted (rewritten atomically when it is not). */
  readonly finalize: (order: Order) => Effect.Effect<Finalized, Errors.RunError>
}

/** What to do next, in words, after a write failed with `e`. */
const remedy = (e: unknown): string => {
  const code = Files.code(e) ?? ""
  const fix = ["ENOSPC", "EDQUOT", "EFBIG"].includes(code)
    ? "free space"
    : ["EACCES", "EPERM", "EROFS"].includes(code)
      ? "fix the permissions"
      : "fix the cause"
  return `${fix} and rerun the same command to resume`
}

const writeFailed = (file: string, e: unknown, safe: number, doing: string, where = "the file"): Errors.RunError =>
  new Errors.RunError({
    path: file,
    reason: `cannot ${doing}: ${Files.describe(e)}; ${safe} result line${safe === 1 ? " is" : "s are"} safely in ${where}; ${remedy(e)}`
  })

/** Shown of the corrupt lines' numbers in the error. */
const shownCorrupt = 6

const corruptError = (file: string, bad: ReadonlyArray<number>, why: string, intact: number): Errors.RunError => {
  const more =
    bad.length > 1
      ? ` (and ${bad.length - 1} more line${bad.length > 2 ? "s" : ""}: ${bad.slice(1, shownCorrupt).join(", ")}${bad.length > shownCorrupt ? ", ..." : ""})`
      : ""
  return new Errors.RunError({
    path: file,
    reason:
      `line ${bad[0]} is ${why}${more}; the file was edited or damaged. ` +
      `Rerun with --repair to keep the ${intact} intact lines and move the corrupt ones to ${corruptFileName}`
  })
}

/** A line's fate when an earlier run's file is opened. */
type Fate = "keep" | "drop" | "orphan" | "corrupt"

/** Which lines of an earlier run count as done: a whole line that decodes, of a cell in the grid, status ok, the first of its pair. */
const fateOf = (
  raw: Buffer,
  lineNo: number,
  file: string,
  cells: ReadonlySet<string>,
  done: ReadonlySet<string>
): { readonly fate: Fate; readonly row?: ResultLine.Row; readonly why?: string } => {
  if (raw.length === 1) return { fate: "drop" }
  const row = RunDir.parseRow(raw.toString("utf8", 0, raw.length - 1), lineNo, file)
  if (Either.isLeft(row)) return { fate: "corrupt", why: row.left.reason.replace(/^line \d+: /, "") }
  const r = row.right
  if (!cells.has(r.cell)) return { fate: "orphan" }
  if (r.status === "failed" || done.has(pairKey(r.cell, r.instance))) return { fate: "drop", row: r }
  return { fate: "keep", row: r }
}

export const pairKey = (cell: string, instance: string) => `${cell}\u0000${instance}`

/** Core's temporary files (Files.temporaryName): `<name>.<pid>.<n>.tmp`. */
const temporary = /\.\d+\.\d+\.tmp$/

/** Bytes read per step when looking for a file's last newline. */
const tailBytes = 1 << 20

/** Cut `file` after its last "\n" (a line cut short by a kill); nothing when it is whole or missing. */
const cutPartialLine = (fileSystem: FileSystem.FileSystem, file: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      if (!(yield* fileSystem.exists(file))) return
      const size = Number((yield* fileSystem.stat(file)).size)
      const input = yield* fileSystem.open(file, { flag: "r" })
      const buf = Buffer.alloc(tailBytes)
      let end = size
      while (end > 0) {
        const start = Math.max(0, end - tailBytes)
        yield* input.seek(start, "start")
        const n = Number(yield* input.read(buf.subarray(0, end - start)))
        const nl = buf.subarray(0, n).lastIndexOf(10)
        if (nl !== -1) {
          end = start + nl + 1
          break
        }
        end = start
      }
      if (end < size) yield* fileSystem.truncate(file, end)
    })
  )

/** The log of `dir` for the scope: takes the directory's lock and tidies an earlier run's file; at the end, flushes and unlocks. */
export const open = Effect.fn("ResultLog.open")(function* (
  options: Options
): Effect.fn.Return<Log, Errors.RunError, FileSystem.FileSystem | Scope.Scope> {
  const fileSystem = yield* FileSystem.FileSystem
  const { cells, dir } = options
  const file = path.join(dir, fileName)
  yield* RunDir.makeDirectory(dir)
  const staleLock = yield* RunId.lock(dir)
  // Under the lock, a temporary file is a killed writer's leftover.
  for (const name of yield* fileSystem.readDirectory(dir).pipe(Effect.orElseSucceed(() => []))) {
    if (temporary.test(name)) yield* Effect.ignore(fileSystem.remove(path.join(dir, name)))
  }

  // Each line of the file, kept or appended, in file order: its pair and bytes.
  const pairs: Array<{
    readonly cell: string
    readonly instance: string
    readonly start: number
    readonly bytes: number
  }> = []
  const done = new Set<string>()
  let end = 0
  const add = (cell: string, instance: string, bytes: number) => {
    done.add(pairKey(cell, instance))
    pairs.push({ cell, instance, start: end, bytes })
    end += bytes
  }
  const read: Array<ReturnType<typeof fateOf> & { readonly lineNo: number; readonly text: Buffer }> = []
  const { partial: truncated } = yield* RunDir.scanIfPresent(file, "results", (raw, lineNo) => {
    const line = fateOf(raw, lineNo, file, cells, done)
    if (line.fate === "keep") add(line.row!.cell, line.row!.instance, raw.length)
    read.push({ ...line, lineNo, text: Buffer.from(raw) })
  })
  const linesOf = (fate: Fate) => read.filter((l) => l.fate === fate)
  const kept = linesOf("keep").map((l) => l.row!)
  const corrupt = linesOf("corrupt"),
    orphaned = linesOf("orphan").length
  const retried = read.filter((l) => l.fate === "drop" && l.row?.status === "failed").length
  if (corrupt.length > 0 && options.repair !== true) {
    return yield* corruptError(
      file,
      corrupt.map((l) => l.lineNo),
      corrupt[0]!.why!,
      read.length - corrupt.length
    )
  }
  if (kept.length === read.length && truncated) {
    // Only a partial last line to drop (a kill, a full disk): cut off in place, which needs no free space.
    yield* fileSystem
      .truncate(file, end)
      .pipe(Effect.mapError((e) => writeFailed(file, e, read.length, "drop the partial last line")))
  } else if (kept.length !== read.length) {
    // Corrupt and orphaned lines go to their files (nothing is lost), then the kept ones replace the file.
    const pick = (fate: Fate) => Buffer.concat(linesOf(fate).map((l) => l.text))
    yield* Effect.gen(function* () {
      if (corrupt.length > 0)
        yield* fileSystem.writeFile(path.join(dir, corruptFileName), pick("corrupt"), { flag: "a" })
      if (orphaned > 0) yield* fileSystem.writeFile(path.join(dir, orphanFileName), pick("orphan"), { flag: "a" })
      yield* Files.writeFileAtomic(file, pick("keep"))
    }).pipe(Effect.mapError((e) => writeFailed(file, e, read.length, "tidy the results before resuming")))
  }

  const callsFile = path.join(dir, Calls.fileName)
  yield* cutPartialLine(fileSystem, callsFile).pipe(
    Effect.mapError(
      (e) =>
        new Errors.RunError({
          path: callsFile,
          reason: `cannot drop the partial last line: ${Files.describe(e)}; ${remedy(e)}`
        })
    )
  )
  // What calls.jsonl holds in full, earlier runs' lines included: where the calls appended now refer.
  const recorded = yield* Calls.recorded(callsFile)
  let callsBuffer: Array<string> = []

  const out = yield* fileSystem
    .open(file, { flag: "a" })
    .pipe(Effect.mapError((e) => writeFailed(file, e, pairs.length, "open the results for appending")))
  let buffer: Array<string> = []
  // Lines known to be whole in the file.
  let written = pairs.length
  let failure: Errors.RunError | undefined
  const lock = yield* Effect.makeSemaphore(1)

  // Uninterruptible once it holds the lock: a flush interrupted after taking the buffer would lose its lines.
  const flush: Effect.Effect<void, Errors.RunError> = lock.withPermits(1)(
    Effect.uninterruptible(
      Effect.suspend(() => {
        if (failure !== undefined) return Effect.fail(failure)
        if (buffer.length === 0) return Effect.void
        const lines = buffer
        buffer = []
        const bytes = Buffer.from(lines.join(""), "utf8")
        // The calls first: a result line in the file always has its calls in theirs.
        const transcripts = callsBuffer
        callsBuffer = []
        // Appended to at the first pair with calls only: an offline sweep leaves no calls.jsonl.
        const writeCalls =
          transcripts.length === 0
            ? Effect.void
            : fileSystem
                .writeFile(callsFile, Buffer.from(transcripts.join(""), "utf8"), { flag: "a" })
                .pipe(
                  Effect.catchAll((e) =>
                    Effect.fail((failure = writeFailed(callsFile, e, written, "append the call transcripts", fileName)))
                  )
                )
        return Effect.zipRight(
          writeCalls,
          out.writeAll(bytes).pipe(
            Effect.tap(() => Effect.sync(() => void (written += lines.length))),
            // Part of the buffer may be in the file: whole lines count as written; the next open drops a partial one.
            Effect.catchAll((e) =>
              out.stat.pipe(
                Effect.map((info) => {
                  const size = Number(info.size)
                  return (
                    written +
                    pairs.slice(written, written + lines.length).filter((p) => p.start + p.bytes <= size).length
                  )
                }),
                Effect.orElseSucceed(() => written),
                Effect.flatMap((safe) => Effect.fail((failure = writeFailed(file, e, safe, "append to the results"))))
              )
            )
          )
        )
      })
    )
  )

  // Scope end: whatever is buffered is written (an interrupted sweep keeps its last pairs).
  yield* Effect.addFinalizer(() => Effect.ignore(flush))

  const finalize = (order: Order): Effect.Effect<Finalized, Errors.RunError> =>
    Effect.gen(function* () {
      yield* flush
      const ranks = pairs.map(
        (p) => [order.instanceOrder.get(p.instance) ?? Number.POSITIVE_INFINITY, order.cellOrder.get(p.cell)] as const
      )
      const [stay, away] = Arr.partition(
        pairs.map((_, n) => n),
        (n) => ranks[n]![1] === undefined || (order.complete && ranks[n]![0] === Number.POSITIVE_INFINITY)
      )
      // A stable sort: lines of one pair (none after open) keep their order.
      const sorted = stay.sort((a, b) => ranks[a]![0] - ranks[b]![0] || ranks[a]![1]! - ranks[b]![1]!)
      const size = yield* fileSystem.stat(file).pipe(
        Effect.map((info) => Number(info.size)),
        Effect.mapError((e) => writeFailed(file, e, written, "check the results"))
      )
      if (size !== end) return yield* changedWhileRunning(file, size, end)
      if (away.length === 0 && sorted.every((n, k) => n === k)) return { order: sorted, orphaned: 0 }
      // Rewritten atomically: on a failed write the file stays as it was, for the next run to sort.
      yield* Effect.gen(function* () {
        const text = yield* fileSystem.readFile(file)
        if (end !== text.length) return yield* changedWhileRunning(file, text.length, end)
        const slice = (n: number) => text.subarray(pairs[n]!.start, pairs[n]!.start + pairs[n]!.bytes)
        if (away.length > 0)
          yield* fileSystem.writeFile(path.join(dir, orphanFileName), Buffer.concat(away.map(slice)), { flag: "a" })
        yield* Files.writeFileAtomic(file, Buffer.concat(sorted.map(slice)))
      }).pipe(
        Effect.mapError((e) =>
          e instanceof Errors.RunError ? e : writeFailed(file, e, written, "write the sorted results")
        )
      )
      return { order: sorted, orphaned: away.length }
    }).pipe(Effect.provideService(FileSystem.FileSystem, fileSystem))

  return {
    file,
    opened: { kept, retried, truncated, orphaned, corrupt: corrupt.length, staleLock },
    isDone: (cell, instance) => done.has(pairKey(cell, instance)),
    append: ({ calls, cell, instance, text }) => {
      add(cell, instance, Buffer.byteLength(text, "utf8"))
      buffer.push(text)
      if (calls !== undefined) callsBuffer.push(Calls.encode(calls, recorded))
    },
    flush,
    finalize
  } satisfies Log
})

const changedWhileRunning = (file: string, size: number, expected: number) =>
  new Errors.RunError({
    path: file,
    reason: `the file changed while the sweep ran (${size} bytes, expected ${expected}); was it edited by something else?`
  })

/** The pairs a results directory already holds ({@link pairKey} of ok lines of `cells`), read without changing anything (dry runs). */
export const readDone = (
  dir: string,
  cells: ReadonlySet<string>
): Effect.Effect<Set<string>, Errors.RunError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const file = path.join(dir, fileName)
    const done = new Set<string>()
    yield* RunDir.scanIfPresent(file, "results", (raw) => {
      const { fate, row } = fateOf(raw, 0, file, cells, done)
      if (fate === "keep") done.add(pairKey(row!.cell, row!.instance))
    })
    return done
  })
