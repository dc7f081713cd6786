import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { ResultStore } from "../src/index.js"
import { lines, tempDir } from "./support.js"

const text = (cell: string, instance: string, status: "ok" | "failed" = "ok") => `${JSON.stringify({ cell, instance, status })}\n`

describe("ResultStore", () => {
  it("appends whole lines and knows what is done after a reopen", () => {
    const dir = tempDir()
    const store = ResultStore.open(dir, new Set(["a", "b"]))
    expect(store.opened).toEqual({ kept: 0, retried: 0, truncated: false, orphaned: 0, corrupt: 0, staleLock: undefined })
    store.append({ cell: "a", instance: "i1", text: text("a", "i1") })
    store.append({ cell: "b", instance: "i1", text: text("b", "i1") })
    expect(fs.readFileSync(store.file, "utf8")).toBe("") // buffered until a flush
    store.flush()
    store.close()
    const again = ResultStore.open(dir, new Set(["a", "b"]))
    expect(again.opened.kept).toBe(2)
    expect(again.isDone("a", "i1")).toBe(true)
    expect(again.isDone("a", "i2")).toBe(false)
    again.close()
  })

  it("on open drops a cut-short last line and failed lines, and moves lines of other cells away", () => {
    const dir = tempDir()
    const file = path.join(dir, ResultStore.fileName)
    fs.writeFileSync(
      file,
      text("a", "i1") + text("a", "i2", "failed") + text("gone", "i1") + text("a", "i1") + text("b", "i2") + `{"cell":"b","inst`
    )
    const store = ResultStore.open(dir, new Set(["a", "b"]))
    expect(store.opened).toEqual({ kept: 2, retried: 1, truncated: true, orphaned: 1, corrupt: 0, staleLock: undefined })
    expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("b", "i2"))
    expect(fs.readFileSync(path.join(dir, ResultStore.orphanFileName), "utf8")).toBe(text("gone", "i1"))
    expect(store.isDone("a", "i2")).toBe(false)
    store.close()
  })

  it("a corrupt line in the middle stops the open with its line number; --repair keeps every intact line", () => {
    const dir = tempDir()
    const file = path.join(dir, ResultStore.fileName)
    const content = text("a", "i1") + "not json\n" + text("a", "i2") + "[1, 2]\n" + text("a", "i3")
    fs.writeFileSync(file, content)
    expect(() => ResultStore.open(dir, new Set(["a"]))).toThrow(
      `${file}: line 2 is not valid JSON (and 1 more line: 4); the file was edited or damaged. Rerun with --repair to keep the 3 intact lines and move the corrupt ones to results.corrupt.jsonl`
    )
    // nothing changed, and the lock was given back
    expect(fs.readFileSync(file, "utf8")).toBe(content)
    expect(fs.existsSync(path.join(dir, ResultStore.lockFileName))).toBe(false)
    const repaired = ResultStore.open(dir, new Set(["a"]), { repair: true })
    expect(repaired.opened).toMatchObject({ kept: 3, corrupt: 2 })
    expect(fs.readFileSync(file, "utf8")).toBe(text("a", "i1") + text("a", "i2") + text("a", "i3"))
    expect(fs.readFileSync(path.join(dir, ResultStore.corruptFileName), "utf8")).toBe("not json\n[1, 2]\n")
    repaired.close()
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([])
  })

  it("finalize sorts by cell order, then dataset order", () => {
    const dir = tempDir()
    const store = ResultStore.open(dir, new Set(["a", "b"]))
    for (const [c, i] of [["b", "i2"], ["a", "i2"], ["b", "i1"], ["a", "i1"], ["a", "i3"]] as const) store.append({ cell: c, instance: i, text: text(c, i) })
    const seen: Array<string> = []
    const result = store.finalize({
      cellOrder: new Map([["a", 0], ["b", 1]]),
      instanceOrder: new Map([["i1", 0], ["i2", 1]]),
      complete: true,
      onLine: (l) => seen.push(l)
    })
    expect(result).toEqual({ lines: 4, orphaned: 1 })
    const expected = [text("a", "i1"), text("a", "i2"), text("b", "i1"), text("b", "i2")]
    expect(fs.readFileSync(store.file, "utf8")).toBe(expected.join(""))
    expect(seen).toEqual(expected.map((l) => l.trimEnd()))
    // i3 is not in the dataset any more
    expect(lines(path.join(dir, ResultStore.orphanFileName))).toEqual([text("a", "i3").trimEnd()])
  })

  it("when interrupted, lines whose instance was not reached yet stay, after the others", () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, ResultStore.fileName), text("a", "i9") + text("a", "i2"))
    const store = ResultStore.open(dir, new Set(["a"]))
    store.append({ cell: "a", instance: "i1", text: text("a", "i1") })
    store.finalize({ cellOrder: new Map([["a", 0]]), instanceOrder: new Map([["i1", 0], ["i2", 1]]), complete: false })
    expect(fs.readFileSync(store.file, "utf8")).toBe(text("a", "i1") + text("a", "i2") + text("a", "i9"))
  })

  it("readDone reads without changing anything", () => {
    const dir = tempDir()
    const file = path.join(dir, ResultStore.fileName)
    const content = text("a", "i1") + text("a", "i2", "failed") + text("z", "i1") + "damaged\n" + `{"cell":`
    fs.writeFileSync(file, content)
    expect([...ResultStore.readDone(dir, new Set(["a"]))]).toEqual(["a\u0000i1"])
    expect(fs.readFileSync(file, "utf8")).toBe(content)
    expect(ResultStore.readDone(path.join(dir, "none"), new Set(["a"])).size).toBe(0)
  })
})
