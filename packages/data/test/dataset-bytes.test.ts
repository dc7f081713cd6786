// What a data file's bytes may be: UTF-8 text (anything else is reported with its file and row,
// never read as U+FFFD), and rows no larger than the limit per row (CUPID_MAX_ROW_MB), so that
// one huge row cannot take the memory of the process.
import { afterEach, describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Dataset from "../src/Dataset.js"
import * as Synthetic from "../src/Synthetic.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-bytes-"))
const write = (name: string, bytes: string | Buffer) => {
  const file = path.join(dir, name)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, bytes)
  return file
}
const [a, b, c] = [...Synthetic.generate({ ...Synthetic.defaults, personas: 1, seed: 5 })]
const line = (row: unknown) => Buffer.from(`${JSON.stringify(row)}\n`)
/** Row `b` with the id `café` whose é is written in Latin-1 (one byte 0xE9): not UTF-8. */
const latin1 = () => {
  const text = JSON.stringify({ ...b, persona_id: "caf\u00e9" })
  const at = text.indexOf("caf") + 3
  return Buffer.concat([
    Buffer.from(text.slice(0, at)),
    Buffer.from([0xe9]),
    Buffer.from(text.slice(at + 1)),
    Buffer.from("\n")
  ])
}
const failure = (source: string, options?: Dataset.LoadOptions) =>
  Effect.map(Effect.either(Dataset.loadAll(source, options)), (e) => (Either.isLeft(e) ? e.left.message : "no error"))

afterEach(() => {
  delete process.env["CUPID_MAX_ROW_MB"]
})

const notUtf8 = "not UTF-8 text: it holds bytes that are not UTF-8 (save the file as UTF-8)"

describe("a data file that is not UTF-8", () => {
  NodeTest.it.effect(
    "a JSONL line is a bad row: named with its file and row, skipped and listed under skip, never mangled",
    () =>
      Effect.gen(function* () {
        const source = write("latin1.jsonl", Buffer.concat([line(a), latin1(), line(c)]))
        expect(yield* failure(source)).toBe(`${source}, row 2: ${notUtf8}`)
        const loaded = yield* Dataset.loadAll(source, { onInvalid: "skip" })
        expect(loaded.instances.map((i) => i.id)).toEqual([
          `${a!.persona_id}:${a!.instance_type}`,
          `${c!.persona_id}:${c!.instance_type}`
        ])
        expect(loaded.skipped).toEqual([{ row: "2", reason: notUtf8 }])
        expect(JSON.stringify(loaded.instances)).not.toContain("\ufffd")
      })
  )

  NodeTest.it.effect(
    "a JSON array names the element (row) it reads it as; a directory source names the file and its line",
    () =>
      Effect.gen(function* () {
        const array = write(
          "latin1.json",
          Buffer.concat([Buffer.from(`[\n${JSON.stringify(a)},\n`), latin1(), Buffer.from("]\n")])
        )
        // (JSON arrays are read one element at a time: the second element holds the bytes)
        expect(yield* failure(array)).toBe(`${array}, row 2: ${notUtf8}`)
        write("latin1-dir/a.json", JSON.stringify(a))
        write("latin1-dir/b.json", Buffer.concat([Buffer.from("\n"), latin1()]))
        expect(yield* failure(path.join(dir, "latin1-dir"))).toBe(
          `${path.join(dir, "latin1-dir")}, row b.json: line 2: ${notUtf8}`
        )
      })
  )

  NodeTest.it.effect("valid UTF-8 (accents, emoji, a BOM) reads as before", () =>
    Effect.gen(function* () {
      const source = write(
        "utf8.jsonl",
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), line({ ...a, current_request: "Caf\u00e9 \u{1F600}" })])
      )
      expect((yield* Dataset.loadAll(source)).instances[0]!.query.request).toBe("Caf\u00e9 \u{1F600}")
    })
  )
})

describe("the limit per row", () => {
  NodeTest.it.effect(
    "a row over it is refused, with the limit and how to raise it, without being held; the rows around it read",
    () =>
      Effect.gen(function* () {
        // 0.1 MB = 104,857 bytes: the generated rows are smaller, the padded one larger.
        process.env["CUPID_MAX_ROW_MB"] = "0.1"
        const huge = { ...b, current_request: "x".repeat(200_000) }
        const source = write("huge.jsonl", Buffer.concat([line(a), line(huge), line(c)]))
        const reason =
          "larger than 0.1 MB, the limit per row (a CUPID row is a few tens of kB); raise it with the environment variable CUPID_MAX_ROW_MB"
        expect(yield* failure(source)).toBe(`${source}, row 2: ${reason}`)
        expect((yield* Dataset.loadAll(source, { onInvalid: "skip" })).skipped).toEqual([{ row: "2", reason }])
        write("huge-dir/a.json", JSON.stringify(a))
        write("huge-dir/b.json", JSON.stringify(huge))
        expect(yield* failure(path.join(dir, "huge-dir"))).toBe(`${path.join(dir, "huge-dir")}, row b.json: ${reason}`)
        // Raised, the same row reads.
        process.env["CUPID_MAX_ROW_MB"] = "1"
        expect((yield* Dataset.loadAll(source)).instances).toHaveLength(3)
      })
  )
})
