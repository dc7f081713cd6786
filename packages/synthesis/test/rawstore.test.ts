/**
 * The raw file a killed run leaves behind: a line cut short is dropped (and the next record starts
 * on its own line), a file written with other settings is refused, and compaction sorts records.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as RawStore from "../src/internal/RawStore.js"

const dirs: Array<string> = []
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-raw-"))
  dirs.push(d)
  return d
}

const checklist = (persona: number, preference: string) => ({
  _tag: "checklist" as const,
  persona,
  preference,
  value: ["a?", "b?"]
})

describe("RawStore", () => {
  it("drops a line cut short by a kill and keeps appending on a fresh line", () => {
    const dir = tempDir()
    const store = Either.getOrThrow(RawStore.open(dir, "fp1", true))
    store.add(checklist(1, "p"))
    store.add(checklist(0, "q"))
    const file = path.join(dir, "raw.jsonl")
    fs.appendFileSync(file, '{"_tag":"checklist","persona":2,"pref')
    const reopened = Either.getOrThrow(RawStore.open(dir, "fp1", true))
    expect(reopened.dropped).toBe(1)
    expect(reopened.records().length).toBe(3) // header + 2
    reopened.add(checklist(2, "r"))
    const again = Either.getOrThrow(RawStore.open(dir, "fp1", true))
    expect(again.dropped).toBe(1)
    expect(again.get(RawStore.keyOf(checklist(2, "r")))).toEqual(checklist(2, "r"))
    again.compact()
    const lines = fs.readFileSync(file, "utf8").trimEnd().split("\n")
    // Header first, then by persona: the cut line is gone.
    expect(lines.map((l) => JSON.parse(l).persona ?? "header")).toEqual(["header", 0, 1, 2])
  })

  it("refuses a raw file written with other settings, naming it", () => {
    const dir = tempDir()
    Either.getOrThrow(RawStore.open(dir, "fp1", true))
    const other = RawStore.open(dir, "fp2", true)
    expect(Either.isLeft(other) && other.left.message).toBe(
      `${path.join(dir, "raw.jsonl")}: was written by a synthesis with other models, prompts or generation options; choose another out directory (or delete it) to start afresh`
    )
  })

  it("a dry run reads the file but writes nothing", () => {
    const dir = path.join(tempDir(), "never-made")
    const store = Either.getOrThrow(RawStore.open(dir, "fp1", false))
    store.add(checklist(0, "q"))
    store.compact()
    expect(fs.existsSync(dir)).toBe(false)
  })
})
