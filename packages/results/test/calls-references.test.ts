// calls.jsonl without repetition: a call (in practice, one the cache answered) whose request and
// answer the file already holds refers to that first record (its pair) instead of storing them again; reading an
// instance's calls fills them back in, across instances, resumed runs and merged shards; the
// counts and older files read as before.
import { Usage } from "@cupid-lab/core"
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Calls from "../src/Calls.js"

const history = "User: I am vegan.\n".repeat(50)

/** One completion as Models records it: `key` is the cache key, `text` the answer. */
const entry = (key: string, prompt: string, text: string, cached: boolean): Usage.UsageEntry => ({
  stage: "infer",
  provider: "openai",
  model: "m",
  kind: "complete",
  promptTokens: 10,
  completionTokens: 2,
  cached,
  requests: cached ? 0 : 1,
  detail: {
    latencyMs: cached ? 0 : 40,
    key,
    request: { messages: [{ role: "user", content: prompt }], temperature: 0 },
    answer: Usage.excerptOf(text),
    reading: { ok: true, value: text.length }
  }
})

const pair = (cell: string, instance: string, usage: ReadonlyArray<Usage.UsageEntry>, mode: Calls.Mode = "full") =>
  Calls.line({ cell, instance, ranAt: "t" }, usage, mode)!

const write = (file: string, lines: ReadonlyArray<Calls.Line>, recorded: Calls.Recorded) =>
  fs.appendFileSync(file, lines.map((l) => Calls.encode(l, recorded)).join(""))

const read = (file: string) =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Calls.Line)

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cupid-calls-refs-")), Calls.fileName)

describe("calls.jsonl references", () => {
  it.effect("a repeated call refers to the first record; reading an instance fills it back in", () =>
    Effect.gen(function* () {
      const file = tempFile()
      const recorded: Calls.Recorded = new Map()
      write(
        file,
        [
          // The first record of k1 (sent), then k1 from the cache in another cell and in another instance.
          pair("a", "i1", [entry("k1", history, "vegan", false)]),
          pair("b", "i1", [entry("k1", history, "vegan", true), entry("k2", "other", "x", true)]),
          pair("a", "i2", [entry("k1", history, "vegan", true), entry("k2", "other", "x", true)]),
          // The same key with another answer (the first was not cached, the model asked again) is recorded in full.
          pair("c", "i2", [entry("k1", history, "plant-based", true)]),
          // A request sent again that got the same answer refers too.
          pair("d", "i2", [entry("k1", history, "vegan", false)])
        ],
        recorded
      )
      const [a1, b1, a2, c2, d2] = read(file)
      expect(a1!.calls[0]).toMatchObject({ key: "k1", request: { messages: [{ content: history }] }, answer: "vegan" })
      // k2's first record is a cache answer (the cache was filled by another run directory): kept in full.
      expect(b1!.calls[1]).toMatchObject({ key: "k2", cached: true, answer: "x" })
      expect(b1!.calls[0]).toEqual({
        ...a1!.calls[0],
        cached: true,
        requests: 0,
        latencyMs: 0,
        request: undefined,
        answer: undefined,
        answerCap: undefined,
        sameAs: { cell: "a", instance: "i1" }
      })
      expect(Object.keys(b1!.calls[0]!)).not.toContain("request")
      expect(a2!.calls.map((c) => c.sameAs)).toEqual([
        { cell: "a", instance: "i1" },
        { cell: "b", instance: "i1" }
      ])
      expect(c2!.calls[0]).toMatchObject({ answer: "plant-based" })
      expect(c2!.calls[0]).not.toHaveProperty("sameAs")
      expect(d2!.calls[0]).toMatchObject({ cached: false, requests: 1, sameAs: { cell: "a", instance: "i1" } })

      // The viewer's reading: every call with its request and answer, as if stored again.
      const { byCell, unresolved } = yield* Calls.ofInstance(file, "i2")
      expect(unresolved).toBe(0)
      const calls = byCell.get("a")!.line.calls
      expect(calls[0]).toMatchObject({ cached: true, request: a1!.calls[0]!.request, answer: "vegan" })
      expect(calls[1]).toMatchObject({ request: b1!.calls[1]!.request, answer: "x", answerCap: Usage.defaultAnswerCap })
      expect((yield* Calls.ofInstance(file, "i1")).byCell.get("b")!.line.calls[0]!.request).toEqual(
        a1!.calls[0]!.request
      )
      expect(byCell.get("d")!.line.calls[0]).toMatchObject({ cached: false, answer: "vegan" })
      // Every count reads the file as before: 7 calls, 5 from the cache, 2 requests.
      expect(yield* Calls.tally(file)).toEqual({ attempts: 5, calls: 7, cached: 5, requests: 2, retries: 0, failed: 0 })
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect(
    "a resumed run refers to the records of the earlier one; `transcripts: counts` keeps no text to refer to",
    () =>
      Effect.gen(function* () {
        const file = tempFile()
        // The first run kept counts only: nothing to refer to, and no key.
        write(file, [pair("a", "i1", [entry("k1", history, "vegan", false)], "counts")], new Map())
        expect(read(file)[0]!.calls[0]!.key).toBeUndefined()
        expect((yield* Calls.recorded(file)).size).toBe(0)
        // The second (full) records k1 in full at its first call, though the cache answered it.
        write(file, [pair("b", "i1", [entry("k1", history, "vegan", true)])], yield* Calls.recorded(file))
        // A third refers to the second's record.
        write(file, [pair("c", "i1", [entry("k1", history, "vegan", true)])], yield* Calls.recorded(file))
        const [, b, c] = read(file)
        expect(b!.calls[0]!.answer).toBe("vegan")
        expect(c!.calls[0]!.sameAs).toEqual({ cell: "b", instance: "i1" })
        expect((yield* Calls.ofInstance(file, "i1")).byCell.get("c")!.line.calls[0]!.answer).toBe("vegan")
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("merging shards: a call another shard recorded first refers there; unchanged lines keep their bytes", () =>
    Effect.gen(function* () {
      const one = tempFile(),
        two = tempFile()
      write(one, [pair("a", "i1", [entry("k1", history, "vegan", false)])], new Map())
      write(
        two,
        [
          pair("a", "i2", [entry("k1", history, "vegan", true)]), // first in shard 2, second in the merge
          pair("b", "i2", [entry("k1", history, "vegan", true)]), // refers to the line above in shard 2
          pair("c", "i2", [entry("k3", "new", "y", false)])
        ],
        new Map()
      )
      const merged = Calls.relinking()
      const texts = [...fs.readFileSync(one, "utf8").split(/(?<=\n)/), ...fs.readFileSync(two, "utf8").split(/(?<=\n)/)]
      const out = texts.map((t) => Calls.relink(t, merged))
      expect(out[0]).toBe(texts[0])
      expect(out[3]).toBe(texts[3])
      const file = tempFile()
      fs.writeFileSync(file, out.join(""))
      const lines = read(file)
      expect(lines[1]!.calls[0]).toMatchObject({ sameAs: { cell: "a", instance: "i1" } })
      expect(lines[1]!.calls[0]).not.toHaveProperty("answer")
      // The reference to the record that became one follows it.
      expect(lines[2]!.calls[0]!.sameAs).toEqual({ cell: "a", instance: "i1" })
      expect(out[2]).toBe(texts[2]!.replace('"instance":"i2"}', '"instance":"i1"}'))
      const { byCell, unresolved } = yield* Calls.ofInstance(file, "i2")
      expect(unresolved).toBe(0)
      for (const cell of ["a", "b"]) expect(byCell.get(cell)!.line.calls[0]).toMatchObject({ answer: "vegan" })
      expect(fs.statSync(file).size).toBeLessThan(fs.statSync(one).size + fs.statSync(two).size)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("a reference whose record cannot be read is counted, and the call shows without its text", () =>
    Effect.gen(function* () {
      const file = tempFile()
      const recorded: Calls.Recorded = new Map()
      write(file, [pair("a", "i1", [entry("k1", history, "vegan", false)])], recorded)
      fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace('"answer":"vegan"', '"answer":7'))
      write(file, [pair("b", "i1", [entry("k1", history, "vegan", true)])], recorded)
      const { byCell, unreadable, unresolved } = yield* Calls.ofInstance(file, "i1")
      expect([unreadable, unresolved]).toEqual([1, 1])
      expect(byCell.get("b")!.line.calls[0]).toMatchObject({ cached: true, answerChars: 5 })
      expect(byCell.get("b")!.line.calls[0]).not.toHaveProperty("request")
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})
