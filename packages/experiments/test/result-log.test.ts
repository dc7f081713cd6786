// results.jsonl as the sweep writes and reopens it: whole lines appended per flush, an earlier
// run's file tidied on open (failed, cut-short and duplicate lines dropped, other cells' lines moved
// away, killed writers' temporary files removed), and the file left sorted by finalize.
import { NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ResultLog } from "@cupid-lab/runner"
import { Calls } from "@cupid-lab/results"
import { Usage } from "@cupid-lab/core"

import { resultLine } from "./support.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-result-log-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const text = (cell: string, instance: string, status: "ok" | "failed" = "ok") => resultLine(cell, instance, { status })

/** Run `use` with the log of `dir` (opened in a scope closed around it). */
const withLog = <A, E>(
  dir: string,
  cells: ReadonlyArray<string>,
  use: (log: ResultLog.Log) => Effect.Effect<A, E>,
  repair = false
) =>
  Effect.scoped(Effect.flatMap(ResultLog.open({ dir, cells: new Set(cells), repair }), use)).pipe(
    Effect.provide(NodeFileSystem.layer)
  )

const pairs = (rows: ReadonlyArray<{ readonly cell: string; readonly instance: string }>) =>
  rows.map((r) => `${r.cell}/${r.instance}`)

describe("ResultLog", () => {
  it.effect("appends whole lines and knows what is done after a reopen, with the kept lines decoded", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      yield* withLog(dir, ["a", "b"], (log) =>
        Effect.gen(function* () {
          expect(log.file).toBe(file)
          expect(log.opened).toEqual({
            kept: [],
            retried: 0,
            truncated: false,
            orphaned: 0,
            corrupt: 0,
            staleLock: undefined
          })
          log.append({ cell: "a", instance: "i1", text: text("a", "i1") })
          log.append({ cell: "b", instance: "i1", text: text("b", "i1") })
          expect(log.isDone("a", "i1")).toBe(true)
          expect(fs.readFileSync(file, "utf8")).toBe("") // buffered until a flush
          yield* log.flush
          expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("b", "i1"))
          log.append({ cell: "a", instance: "i2", text: text("a", "i2") })
          // not flushed: the scope's end writes it
        })
      )
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("b", "i1") + text("a", "i2"))
      expect(fs.readdirSync(dir).sort()).toEqual([ResultLog.fileName])
      yield* withLog(dir, ["a", "b"], (again) =>
        Effect.sync(() => {
          expect(pairs(again.opened.kept)).toEqual(["a/i1", "b/i1", "a/i2"])
          // whole rows, as reports read them
          expect(again.opened.kept[1]).toMatchObject({
            cell: "b",
            cellName: "cell b",
            personaId: "p",
            type: "consistent",
            status: "ok",
            selected: ["s1"],
            scores: { "retrieval.hit": 1 },
            meta: { sessions: 4, relevant: ["s2", "s3"] },
            error: null
          })
          expect(again.isDone("a", "i2")).toBe(true)
          expect(again.isDone("b", "i2")).toBe(false)
        })
      )
    })
  )

  it.effect(
    "on open drops a cut-short last line, failed lines and a second line of a pair, and moves lines of other cells away",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = path.join(dir, ResultLog.fileName)
        fs.writeFileSync(
          file,
          text("a", "i1") +
            text("a", "i2", "failed") +
            text("gone", "i1") +
            text("a", "i1") +
            text("b", "i2") +
            text("b", "i3").slice(0, 40)
        )
        yield* withLog(dir, ["a", "b"], (log) =>
          Effect.sync(() => {
            expect({ ...log.opened, kept: pairs(log.opened.kept) }).toEqual({
              kept: ["a/i1", "b/i2"],
              retried: 1,
              truncated: true,
              orphaned: 1,
              corrupt: 0,
              staleLock: undefined
            })
            expect(log.isDone("a", "i2")).toBe(false)
            expect(log.isDone("b", "i3")).toBe(false)
          })
        )
        expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("b", "i2"))
        expect(fs.readFileSync(path.join(dir, ResultLog.orphanFileName), "utf8")).toBe(text("gone", "i1"))
        expect(fs.readdirSync(dir).sort()).toEqual([ResultLog.fileName, ResultLog.orphanFileName])
      })
  )

  it.effect("a partial last line alone is cut off in place", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      fs.writeFileSync(file, text("a", "i1") + text("a", "i2").slice(0, -30))
      const inode = fs.statSync(file).ino
      yield* withLog(dir, ["a"], (log) =>
        Effect.sync(() => expect(log.opened).toMatchObject({ truncated: true, retried: 0, corrupt: 0 }))
      )
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1"))
      expect(fs.statSync(file).ino).toBe(inode)
    })
  )

  it.effect("removes the temporary files a killed writer left on open, and nothing else", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      fs.writeFileSync(file, text("a", "i1"))
      const leftovers = [`${ResultLog.fileName}.4242.0.tmp`, "summary.json.4242.7.tmp", "results.parquet.1.12.tmp"]
      for (const name of leftovers) fs.writeFileSync(path.join(dir, name), "half a file")
      // not core's temporary names: a user's files stay
      const others = ["notes.tmp", "results.jsonl.tmp", "draft.4242.tmp", "summary.json.4242.7.tmp.bak"]
      for (const name of others) fs.writeFileSync(path.join(dir, name), "mine")
      yield* withLog(dir, ["a"], (log) =>
        Effect.sync(() => {
          expect(pairs(log.opened.kept)).toEqual(["a/i1"])
          expect(fs.readdirSync(dir).filter((f) => leftovers.includes(f))).toEqual([])
        })
      )
      expect(fs.readdirSync(dir).sort()).toEqual([ResultLog.fileName, ...others].sort())
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1"))
    })
  )

  it.effect(
    "finalize sorts by dataset order, then cell order, moves lines of instances not in the dataset away, and gives the final order",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const result = yield* withLog(dir, ["a", "b"], (log) => {
          for (const [c, i] of [
            ["b", "i2"],
            ["a", "i2"],
            ["b", "i1"],
            ["a", "i1"],
            ["a", "i3"]
          ] as const) {
            log.append({ cell: c, instance: i, text: text(c, i) })
          }
          return log.finalize({
            cellOrder: new Map([
              ["a", 0],
              ["b", 1]
            ]),
            instanceOrder: new Map([
              ["i1", 0],
              ["i2", 1]
            ]),
            complete: true
          })
        })
        // positions in arrival order: a/i1 came 4th (3), b/i1 3rd (2), a/i2 2nd (1), b/i2 1st (0)
        expect(result).toEqual({ order: [3, 2, 1, 0], orphaned: 1 })
        expect(fs.readFileSync(path.join(dir, ResultLog.fileName), "utf8")).toBe(
          text("a", "i1") + text("b", "i1") + text("a", "i2") + text("b", "i2")
        )
        // i3 is not in the dataset any more
        expect(fs.readFileSync(path.join(dir, ResultLog.orphanFileName), "utf8")).toBe(text("a", "i3"))
        expect(fs.readdirSync(dir).sort()).toEqual([ResultLog.fileName, ResultLog.orphanFileName])
      })
  )

  it.effect("when interrupted, lines whose instance was not reached yet stay, after the others", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      fs.writeFileSync(file, text("a", "i9") + text("a", "i2"))
      const result = yield* withLog(dir, ["a"], (log) => {
        log.append({ cell: "a", instance: "i1", text: text("a", "i1") })
        return log.finalize({
          cellOrder: new Map([["a", 0]]),
          instanceOrder: new Map([
            ["i1", 0],
            ["i2", 1]
          ]),
          complete: false
        })
      })
      expect(result).toEqual({ order: [2, 1, 0], orphaned: 0 })
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("a", "i2") + text("a", "i9"))
      expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
    })
  )

  /** Append `ids` (cell a), flush, let `edit` change the file, then finalize: the error, the file, the directory. */
  const finalizeAfter = (dir: string, ids: ReadonlyArray<string>, edit: (file: string) => void) =>
    Effect.flip(
      withLog(dir, ["a"], (log) =>
        Effect.gen(function* () {
          for (const i of ids) log.append({ cell: "a", instance: i, text: text("a", i) })
          yield* log.flush
          edit(path.join(dir, ResultLog.fileName))
          return yield* log.finalize({
            cellOrder: new Map([["a", 0]]),
            instanceOrder: new Map([
              ["i1", 0],
              ["i2", 1]
            ]),
            complete: true
          })
        })
      )
    )
  const changed = (file: string, size: number, expected: number) =>
    `${file}: the file changed while the sweep ran (${size} bytes, expected ${expected}); was it edited by something else?`

  it.effect(
    "a file changed by something else while the log held it stops finalize, saying so; the file is not rewritten",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = path.join(dir, ResultLog.fileName)
        const error = yield* finalizeAfter(dir, ["i2", "i1"], (f) => fs.appendFileSync(f, "an editor's line\n"))
        const expected = text("a", "i2") + text("a", "i1") + "an editor's line\n"
        expect(error._tag).toBe("RunError")
        expect(error.message).toBe(changed(file, Buffer.byteLength(expected), Buffer.byteLength(expected) - 17))
        expect(fs.readFileSync(file, "utf8")).toBe(expected)
        expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
      })
  )

  it.effect("a line missing from a file already in order stops finalize too (no rewrite hides it)", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const error = yield* finalizeAfter(dir, ["i1", "i2"], (f) =>
        fs.truncateSync(f, Buffer.byteLength(text("a", "i1")))
      )
      expect(error.message).toBe(
        changed(file, Buffer.byteLength(text("a", "i1")), Buffer.byteLength(text("a", "i1") + text("a", "i2")))
      )
    })
  )

  it.effect("sorting 3,000 lines of 30 KB (90 MB) gives every line whole and in order", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const memo = new Map<string, string>()
      const line = (c: string, i: number) => {
        const key = `${c}/${i}`
        let t = memo.get(key)
        if (t === undefined) memo.set(key, (t = resultLine(c, `i${i}`, { bytes: 30_000 })))
        return t
      }
      const result = yield* withLog(dir, ["a", "b", "c"], (log) =>
        Effect.gen(function* () {
          // arrival: cell-major, backwards; final order: instance-major
          for (const c of ["c", "b", "a"]) {
            for (let i = 999; i >= 0; i--) log.append({ cell: c, instance: `i${i}`, text: line(c, i) })
            yield* log.flush
          }
          return yield* log.finalize({
            cellOrder: new Map([
              ["a", 0],
              ["b", 1],
              ["c", 2]
            ]),
            instanceOrder: new Map(Array.from({ length: 1000 }, (_, i) => [`i${i}`, i])),
            complete: true
          })
        })
      )
      // line n of the final file (instance n/3, cell n%3) arrived at position cell*1000 + (999 - instance), cells counted c, b, a
      expect(result.orphaned).toBe(0)
      expect(result.order).toEqual(
        Array.from({ length: 3000 }, (_, n) => (2 - (n % 3)) * 1000 + 999 - Math.floor(n / 3))
      )
      const out = fs.readFileSync(path.join(dir, ResultLog.fileName), "utf8")
      expect(out.length).toBe(3000 * 30_000)
      const expected = Array.from({ length: 3000 }, (_, n) => line(["a", "b", "c"][n % 3]!, Math.floor(n / 3)))
      expect(out === expected.join("")).toBe(true)
      expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
    })
  )

  it.effect("lines appended in final order are not rewritten", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const { inode, result } = yield* withLog(dir, ["a", "b"], (log) =>
        Effect.gen(function* () {
          for (const [c, i] of [
            ["a", "i1"],
            ["b", "i1"],
            ["a", "i2"],
            ["b", "i2"]
          ] as const)
            log.append({ cell: c, instance: i, text: text(c, i) })
          yield* log.flush
          const inode = fs.statSync(file).ino
          const result = yield* log.finalize({
            cellOrder: new Map([
              ["a", 0],
              ["b", 1]
            ]),
            instanceOrder: new Map([
              ["i1", 0],
              ["i2", 1]
            ]),
            complete: true
          })
          return { inode, result }
        })
      )
      expect(result).toEqual({ order: [0, 1, 2, 3], orphaned: 0 })
      expect(fs.statSync(file).ino).toBe(inode)
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("b", "i1") + text("a", "i2") + text("b", "i2"))
    })
  )

  it.effect(
    "lines that arrive as whole instances out of order are sorted, and the lines of a cell gone from the config move away",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = path.join(dir, ResultLog.fileName)
        const result = yield* withLog(dir, ["a", "b", "c"], (log) => {
          // Runs of consecutive cells per instance: i2 (a, b, c), then i1 (a, b, c).
          for (const i of ["i2", "i1"])
            for (const c of ["a", "b", "c"]) log.append({ cell: c, instance: i, text: text(c, i) })
          return log.finalize({
            // b is no longer a cell of the sweep
            cellOrder: new Map([
              ["a", 0],
              ["c", 1]
            ]),
            instanceOrder: new Map([
              ["i1", 0],
              ["i2", 1]
            ]),
            complete: true
          })
        })
        expect(result).toEqual({ order: [3, 5, 0, 2], orphaned: 2 })
        expect(fs.readFileSync(file, "utf8")).toBe(
          text("a", "i1") + text("c", "i1") + text("a", "i2") + text("c", "i2")
        )
        expect(fs.readFileSync(path.join(dir, ResultLog.orphanFileName), "utf8")).toBe(
          text("b", "i2") + text("b", "i1")
        )
      })
  )

  it.effect("in final order with lines of an earlier run: not rewritten", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      fs.writeFileSync(file, text("a", "i1") + text("b", "i1"))
      const inode = fs.statSync(file).ino
      const result = yield* withLog(dir, ["a", "b"], (log) => {
        log.append({ cell: "a", instance: "i2", text: text("a", "i2") })
        return log.finalize({
          cellOrder: new Map([
            ["a", 0],
            ["b", 1]
          ]),
          instanceOrder: new Map([
            ["i1", 0],
            ["i2", 1]
          ]),
          complete: true
        })
      })
      expect(result).toEqual({ order: [0, 1, 2], orphaned: 0 })
      expect(fs.statSync(file).ino).toBe(inode)
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("b", "i1") + text("a", "i2"))
    })
  )

  it.effect("readDone reads without changing anything", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const content =
        text("a", "i1") +
        text("a", "i2", "failed") +
        text("z", "i1") +
        "damaged\n" +
        `${JSON.stringify({ cell: "a", instance: "i3", status: "ok" })}\n` +
        text("a", "i4").slice(0, 20)
      fs.writeFileSync(file, content)
      fs.writeFileSync(path.join(dir, `${ResultLog.fileName}.1.2.tmp`), "left by a kill")
      expect([...(yield* ResultLog.readDone(dir, new Set(["a"])))]).toEqual(["a\u0000i1"])
      expect(fs.readFileSync(file, "utf8")).toBe(content)
      expect(fs.readdirSync(dir).sort()).toEqual([ResultLog.fileName, `${ResultLog.fileName}.1.2.tmp`])
      expect((yield* ResultLog.readDone(path.join(dir, "none"), new Set(["a"]))).size).toBe(0)
      expect(fs.existsSync(path.join(dir, "none"))).toBe(false)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
  it.effect(
    "each pair's calls go to calls.jsonl before its result line; the file is only appended to, and a line cut short by a kill is cut off on open",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const callsFile = path.join(dir, Calls.fileName)
        const line = (n: number): Calls.Line => ({ cell: "a", instance: `i${n}`, ranAt: "t", calls: [] })
        const calls = (n: number) => `${JSON.stringify(line(n))}\n`
        yield* withLog(dir, ["a"], (log) =>
          Effect.gen(function* () {
            log.append({ cell: "a", instance: "i1", text: text("a", "i1", "failed"), calls: line(1) })
            log.append({ cell: "a", instance: "i2", text: text("a", "i2") }) // no calls: nothing in calls.jsonl
            expect(fs.existsSync(callsFile)).toBe(false)
            yield* log.flush
            expect(fs.readFileSync(callsFile, "utf8")).toBe(calls(1))
          })
        )
        // A kill in the middle of a calls line.
        fs.appendFileSync(callsFile, calls(3).slice(0, 20))
        yield* withLog(dir, ["a"], (log) =>
          Effect.gen(function* () {
            // The failed pair runs again: its earlier attempt stays in calls.jsonl, the new one follows.
            expect(log.opened.retried).toBe(1)
            expect(fs.readFileSync(callsFile, "utf8")).toBe(calls(1))
            log.append({ cell: "a", instance: "i1", text: text("a", "i1"), calls: line(1) })
          })
        )
        expect(fs.readFileSync(callsFile, "utf8")).toBe(calls(1) + calls(1))
        // An offline sweep leaves no calls.jsonl.
        const offline = tempDir()
        yield* withLog(offline, ["a"], (log) =>
          Effect.sync(() => log.append({ cell: "a", instance: "i1", text: text("a", "i1") }))
        )
        expect(fs.readdirSync(offline)).toEqual([ResultLog.fileName])
      })
  )
  it.effect(
    "a call an earlier run in the directory recorded refers to that record, which the instance's calls read back",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const callsFile = path.join(dir, Calls.fileName)
        const call = (cached: boolean): Usage.UsageEntry => ({
          stage: "infer",
          provider: "openai",
          model: "m",
          kind: "complete",
          promptTokens: 100,
          completionTokens: 3,
          cached,
          detail: {
            latencyMs: 1,
            key: "k",
            request: { messages: [{ role: "user", content: "a long history ".repeat(100) }] },
            answer: Usage.excerptOf("vegan")
          }
        })
        const calls = (cell: string, cached: boolean) =>
          Calls.line({ cell, instance: "i1", ranAt: "t" }, [call(cached)], "full")
        yield* withLog(dir, ["a", "b"], (log) =>
          Effect.sync(() => log.append({ cell: "a", instance: "i1", text: text("a", "i1"), calls: calls("a", false) }))
        )
        // The resumed run: its first call of the same request, answered by the cache, refers to the earlier record.
        yield* withLog(dir, ["a", "b"], (log) =>
          Effect.sync(() => log.append({ cell: "b", instance: "i1", text: text("b", "i1"), calls: calls("b", true) }))
        )
        const [first, repeat] = fs
          .readFileSync(callsFile, "utf8")
          .trimEnd()
          .split("\n")
          .map((l) => JSON.parse(l) as Calls.Line)
        expect(first!.calls[0]).toMatchObject({ key: "k", answer: "vegan" })
        expect(repeat!.calls[0]).toMatchObject({ key: "k", cached: true, sameAs: { cell: "a", instance: "i1" } })
        expect(repeat!.calls[0]).not.toHaveProperty("request")
        const read = yield* Calls.ofInstance(callsFile, "i1").pipe(Effect.provide(NodeFileSystem.layer))
        expect(read.byCell.get("b")!.line.calls[0]).toMatchObject({
          request: first!.calls[0]!.request,
          answer: "vegan"
        })
      })
  )
})
