// A corrupt line in the middle of results.jsonl stops the open with its line number (nothing is
// changed); with repair, every intact line is kept and the corrupt ones move aside, nothing lost.
// A line is intact only when it is a whole result line: `{cell, instance, status}` alone is not.
import { NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ResultLog } from "@cupid-lab/runner"
import { resultLine } from "./support.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-result-log-corrupt-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const text = (cell: string, instance: string) => resultLine(cell, instance)
const opened = (dir: string, repair: boolean) =>
  Effect.scoped(Effect.map(ResultLog.open({ dir, cells: new Set(["a"]), repair }), (log) => log.opened)).pipe(
    Effect.provide(NodeFileSystem.layer)
  )
const summary = (o: ResultLog.Opened) => ({ ...o, kept: o.kept.map((r) => `${r.cell}/${r.instance}`) })

describe("ResultLog: corrupt lines", () => {
  it.effect(
    "a corrupt line in the middle stops the open with the line numbers and the advice to repair; nothing changes",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const file = path.join(dir, ResultLog.fileName)
        const content = text("a", "i1") + "not json\n" + text("a", "i2") + "[1, 2]\n" + text("a", "i3")
        fs.writeFileSync(file, content)
        const error = yield* Effect.flip(opened(dir, false))
        expect(error._tag).toBe("RunError")
        expect(error.message).toBe(
          `${file}: line 2 is not valid JSON; expected one result line per line (and 1 more line: 4); the file was edited or damaged. ` +
            `Rerun with --repair to keep the 3 intact lines and move the corrupt ones to results.corrupt.jsonl`
        )
        expect(fs.readFileSync(file, "utf8")).toBe(content)
        expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName]) // no lock, no temporary file
      })
  )

  it.effect("many corrupt lines: all are counted, the first six are named, the first with the field it lacks", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      // lines 2, 4, ..., 20 hold only a cell, an instance and a status (10 of them); 11 lines are intact
      let content = text("a", "i0")
      for (let i = 1; i <= 10; i++)
        content += `${JSON.stringify({ cell: "a", instance: `x${i}`, status: "ok" })}\n` + text("a", `i${i}`)
      fs.writeFileSync(file, content)
      const error = yield* Effect.flip(opened(dir, false))
      expect(error.message).toBe(
        `${file}: line 2 is field cellName: is missing (and 9 more lines: 4, 6, 8, 10, 12, ...); the file was edited or damaged. ` +
          `Rerun with --repair to keep the 11 intact lines and move the corrupt ones to results.corrupt.jsonl`
      )
      expect(fs.readFileSync(file, "utf8")).toBe(content)
    })
  )

  it.effect("a line of the right shape but a wrong field (a score that is text) is corrupt, named with its field", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const bad = text("a", "i2").replace(`"retrieval.hit":1`, `"retrieval.hit":"high"`)
      expect(bad).not.toBe(text("a", "i2"))
      fs.writeFileSync(file, text("a", "i1") + bad)
      const error = yield* Effect.flip(opened(dir, false))
      expect(error.message).toBe(
        `${file}: line 2 is field scores.retrieval.hit: Expected number | null | { readonly num: number; readonly den: number }, actual "high"; ` +
          `the file was edited or damaged. Rerun with --repair to keep the 1 intact lines and move the corrupt ones to results.corrupt.jsonl`
      )
    })
  )

  it.effect("with repair, every intact line is kept and the corrupt ones are appended to results.corrupt.jsonl", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      const corruptFile = path.join(dir, ResultLog.corruptFileName)
      const bare = `${JSON.stringify({ cell: "a", instance: "i4", status: "ok" })}\n`
      fs.writeFileSync(corruptFile, "from an earlier repair\n")
      fs.writeFileSync(
        file,
        text("a", "i1") +
          "not json\n" +
          text("a", "i2") +
          "[1, 2]\n" +
          bare +
          text("a", "i3") +
          text("a", "i5").slice(0, 50)
      )
      const stats = yield* opened(dir, true)
      expect(summary(stats)).toEqual({
        kept: ["a/i1", "a/i2", "a/i3"],
        retried: 0,
        truncated: true,
        orphaned: 0,
        corrupt: 3,
        staleLock: undefined
      })
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("a", "i2") + text("a", "i3"))
      expect(fs.readFileSync(corruptFile, "utf8")).toBe("from an earlier repair\nnot json\n[1, 2]\n" + bare)
      expect(fs.readdirSync(dir).sort()).toEqual([ResultLog.corruptFileName, ResultLog.fileName])
      // and the next open, without repair, is clean
      expect(summary(yield* opened(dir, false))).toMatchObject({
        kept: ["a/i1", "a/i2", "a/i3"],
        corrupt: 0,
        truncated: false
      })
    })
  )

  it.effect("a partial last line is a kill, not corruption: dropped silently", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, ResultLog.fileName)
      fs.writeFileSync(file, text("a", "i1") + "not json and no newline")
      expect(summary(yield* opened(dir, false))).toMatchObject({ kept: ["a/i1"], truncated: true, corrupt: 0 })
      expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1"))
    })
  )
})
