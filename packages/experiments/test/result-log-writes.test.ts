// A write that fails (full disk, permissions) ends the sweep with the reason in words and the
// number of lines safely in the file; those lines stay whole, no temporary file is left, the lock
// is given back, and the same command resumes.
import { FaultyFileSystem } from "@cupid-lab/core/testing"
import { ResultLog } from "@cupid-lab/runner"
import { type Calls, RunId } from "@cupid-lab/results"
import { FileSystem } from "@effect/platform"
import { NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { mountTmpfs, resultLine } from "./support.js"

const made: Array<string> = []
const tempDir = (prefix = "cupid-result-log-writes-") => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** 500 bytes a line: easy to count what fits. */
const text = (instance: string) => resultLine("a", instance, { bytes: 500 })
/** The error `effect` fails with (a success is a defect: the test expected a failure). */
const failure = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<E> =>
  Effect.flatMap(Effect.either(effect), (r) =>
    r._tag === "Left" ? Effect.succeed(r.left) : Effect.dieMessage("expected a failure")
  )
const tmpFiles = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))
const order = { cellOrder: new Map([["a", 0]]), instanceOrder: new Map<string, number>(), complete: false }

const withLog = <A, E>(
  dir: string,
  fileSystem: Layer.Layer<FileSystem.FileSystem>,
  use: (log: ResultLog.Log) => Effect.Effect<A, E>
) => Effect.scoped(Effect.flatMap(ResultLog.open({ dir, cells: new Set(["a"]) }), use)).pipe(Effect.provide(fileSystem))
/** Writes to results.jsonl (and its temporary copies) fail after `bytes`. */
const full = (bytes: number, code?: string) =>
  FaultyFileSystem.layer({
    failAfterBytes: bytes,
    paths: (p) => path.basename(p).startsWith(ResultLog.fileName),
    ...(code === undefined ? {} : { code })
  })

describe("ResultLog: write errors", () => {
  it.effect(
    "a full disk during a flush: the error in words, the whole lines stay, the partial one is dropped on the next open",
    () =>
      Effect.gen(function* () {
        expect(text("i0").length).toBe(500)
        const dir = tempDir()
        const file = path.join(dir, ResultLog.fileName)
        // two lines in the first flush; of the next three, one whole and 100 bytes of the second fit
        const error = yield* Effect.flip(
          withLog(dir, full(3 * 500 + 100), (log) =>
            Effect.gen(function* () {
              for (const i of [0, 1]) log.append({ cell: "a", instance: `i${i}`, text: text(`i${i}`) })
              yield* log.flush
              for (const i of [2, 3, 4]) log.append({ cell: "a", instance: `i${i}`, text: text(`i${i}`) })
              const first = yield* failure(log.flush)
              // later flushes and the finalization fail with the same error, writing nothing more
              log.append({ cell: "a", instance: "i5", text: text("i5") })
              expect(yield* failure(log.flush)).toBe(first)
              expect(yield* failure(log.finalize(order))).toBe(first)
              return yield* first
            })
          )
        )
        expect(error._tag).toBe("RunError")
        expect(error.message).toBe(
          `${file}: cannot append to the results: no space left on device (ENOSPC); 3 result lines are safely in the file; free space and rerun the same command to resume`
        )
        expect(fs.readFileSync(file, "utf8")).toBe(text("i0") + text("i1") + text("i2") + text("i3").slice(0, 100))
        expect(tmpFiles(dir)).toEqual([])
        expect(fs.existsSync(path.join(dir, RunId.lockFileName))).toBe(false)
        // the same command, once there is space: the three whole lines are kept, the partial one dropped
        const opened = yield* withLog(dir, NodeFileSystem.layer, (log) => Effect.succeed(log.opened))
        expect(opened).toMatchObject({ truncated: true, corrupt: 0, retried: 0 })
        expect(opened.kept.map((r) => r.instance)).toEqual(["i0", "i1", "i2"])
        expect(fs.readFileSync(file, "utf8")).toBe(text("i0") + text("i1") + text("i2"))
      })
  )

  it.effect(
    "a full disk while writing the sorted copy: the file keeps every line (unsorted), no temporary file is left",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = path.join(dir, ResultLog.fileName)
        // the four appended lines fit; the sorted copy stops after 300 of its 2,000 bytes
        const error = yield* Effect.flip(
          withLog(dir, full(4 * 500 + 300), (log) =>
            Effect.gen(function* () {
              for (const i of [3, 1, 2, 0]) log.append({ cell: "a", instance: `i${i}`, text: text(`i${i}`) })
              yield* log.flush
              return yield* log.finalize({
                ...order,
                instanceOrder: new Map([
                  ["i0", 0],
                  ["i1", 1],
                  ["i2", 2],
                  ["i3", 3]
                ]),
                complete: true
              })
            })
          )
        )
        expect(error.message).toBe(
          `${file}: cannot write the sorted results: no space left on device (ENOSPC); 4 result lines are safely in the file; free space and rerun the same command to resume`
        )
        expect(fs.readFileSync(file, "utf8")).toBe(text("i3") + text("i1") + text("i2") + text("i0"))
        expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
        // resumed with space: sorted
        yield* withLog(dir, NodeFileSystem.layer, (log) =>
          log.finalize({
            ...order,
            instanceOrder: new Map([
              ["i0", 0],
              ["i1", 1],
              ["i2", 2],
              ["i3", 3]
            ]),
            complete: true
          })
        )
        expect(fs.readFileSync(file, "utf8")).toBe(text("i0") + text("i1") + text("i2") + text("i3"))
      })
  )

  it.effect("a full disk while tidying an earlier run's file on open: the file is left as it was", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const failed = resultLine("a", "i9", { status: "failed" })
      const content = text("i0") + failed + text("i1")
      fs.writeFileSync(file, content)
      const error = yield* Effect.flip(withLog(dir, full(100), () => Effect.void))
      expect(error.message).toBe(
        `${file}: cannot tidy the results before resuming: no space left on device (ENOSPC); 3 result lines are safely in the file; free space and rerun the same command to resume`
      )
      expect(fs.readFileSync(file, "utf8")).toBe(content)
      expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
    })
  )

  it.effect("a write refused for permissions says so, and what to fix", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const error = yield* Effect.flip(
        withLog(dir, full(0, "EACCES"), (log) => {
          log.append({ cell: "a", instance: "i0", text: text("i0") })
          return log.flush
        })
      )
      expect(error.message).toBe(
        `${file}: cannot append to the results: permission denied (EACCES); 0 result lines are safely in the file; fix the permissions and rerun the same command to resume`
      )
      expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
    })
  )
})

const probe = mountTmpfs(64 * 1024)
if (typeof probe === "string") console.log(`result-log-writes: the real full-disk test is skipped: ${probe}`)
else probe.unmount()

describe("ResultLog: a real full disk", () => {
  it.live.skipIf(typeof probe === "string")(
    "a 64 KB tmpfs filled while appending and while sorting: no line lost, no temporary file",
    () =>
      Effect.gen(function* () {
        const mounted = mountTmpfs(64 * 1024)
        if (typeof mounted === "string") return yield* Effect.die(new Error(mounted))
        const dir = mounted.dir
        const file = path.join(dir, ResultLog.fileName)
        const id = (i: number) => `i${String(i).padStart(4, "0")}`
        yield* Effect.gen(function* () {
          let flushed = 0
          const error = yield* Effect.flip(
            withLog(dir, NodeFileSystem.layer, (log) =>
              Effect.gen(function* () {
                for (let i = 0; i < 1000; i++) {
                  log.append({ cell: "a", instance: id(i), text: text(id(i)) })
                  yield* log.flush
                  flushed = i + 1
                }
              })
            )
          )
          expect(error.message).toBe(
            `${file}: cannot append to the results: no space left on device (ENOSPC); ${flushed} result lines are safely in the file; free space and rerun the same command to resume`
          )
          expect(flushed).toBeGreaterThan(100)
          expect(tmpFiles(dir)).toEqual([])
          expect(fs.existsSync(path.join(dir, RunId.lockFileName))).toBe(false)
          // the partial last line is cut off in place (no space needed); the file now fills the
          // disk, so its sorted copy (the dataset order is the reverse of the file's) cannot be written
          const reversed = new Map(Array.from({ length: 1000 }, (_, i) => [id(i), 999 - i] as const))
          const sortError = yield* Effect.flip(
            withLog(dir, NodeFileSystem.layer, (log) => {
              expect(log.opened).toMatchObject({ truncated: true, corrupt: 0 })
              expect(log.opened.kept.length).toBe(flushed)
              return log.finalize({ ...order, instanceOrder: reversed })
            })
          )
          expect(sortError.message).toBe(
            `${file}: cannot write the sorted results: no space left on device (ENOSPC); ${flushed} result lines are safely in the file; free space and rerun the same command to resume`
          )
          expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
          expect(fs.readFileSync(file, "utf8")).toBe(Array.from({ length: flushed }, (_, i) => text(id(i))).join(""))
        }).pipe(Effect.ensuring(Effect.sync(mounted.unmount)))
      })
  )
  it.effect("calls.jsonl cannot be written: the error names it, and no result line is written without its calls", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const calls: Calls.Line = { cell: "a", instance: "i0", ranAt: "t", calls: [] }
      const failing = FaultyFileSystem.layer({
        failAfterBytes: 0,
        paths: (p) => path.basename(p) === "calls.jsonl",
        code: "ENOSPC"
      })
      const error = yield* Effect.flip(
        withLog(dir, failing, (log) =>
          Effect.gen(function* () {
            log.append({ cell: "a", instance: "i0", text: text("i0"), calls })
            return yield* log.flush
          })
        )
      )
      expect(error._tag).toBe("RunError")
      expect(error.message).toMatch(
        /calls\.jsonl: cannot append the call transcripts: .*no space.*; 0 result lines are safely in results\.jsonl; free space and rerun the same command to resume$/i
      )
      expect(fs.readFileSync(path.join(dir, ResultLog.fileName), "utf8")).toBe("")
    })
  )
  it.live(
    "a flush interrupted while it writes the calls (the sweep's ticker, stopped at the end) still writes its result lines",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const calls: Calls.Line = { cell: "a", instance: "i0", ranAt: "t", calls: [] }
        // The real file system, with appends to calls.jsonl slowed down to leave time to interrupt.
        const slowCalls = Layer.effect(
          FileSystem.FileSystem,
          Effect.map(FileSystem.FileSystem, (fs): FileSystem.FileSystem => ({
            ...fs,
            writeFile: (p, data, options) =>
              path.basename(p) === "calls.jsonl"
                ? Effect.zipRight(Effect.sleep("200 millis"), fs.writeFile(p, data, options))
                : fs.writeFile(p, data, options)
          }))
        ).pipe(Layer.provide(NodeFileSystem.layer))
        const finalized = yield* withLog(dir, slowCalls, (log) =>
          Effect.gen(function* () {
            log.append({ cell: "a", instance: "i0", text: text("i0"), calls })
            const ticker = yield* Effect.fork(log.flush)
            yield* Effect.sleep("50 millis")
            yield* Fiber.interrupt(ticker)
            return yield* log.finalize({ ...order, instanceOrder: new Map([["i0", 0]]) })
          })
        )
        expect(finalized.order).toEqual([0])
        expect(fs.readFileSync(path.join(dir, ResultLog.fileName), "utf8")).toBe(text("i0"))
        expect(fs.readFileSync(path.join(dir, "calls.jsonl"), "utf8")).toBe(`${JSON.stringify(calls)}\n`)
      })
  )
})
