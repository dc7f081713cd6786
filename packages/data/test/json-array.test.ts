import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { jsonArrayRows, type RawRow } from "../src/internal/readers.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "json-array-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const write = (name: string, text: string | Buffer) => {
  const f = path.join(dir, name)
  fs.writeFileSync(f, text)
  return f
}

const rows = async (file: string): Promise<Array<RawRow>> => {
  const out: Array<RawRow> = []
  for await (const batch of jsonArrayRows(file)) out.push(...batch)
  return out
}

describe("jsonArrayRows: a JSON array read one element at a time", () => {
  it("elements of every kind, nested brackets and commas inside strings, escaped quotes", async () => {
    const values = [{ a: "x, ] } [ {", b: [1, [2, 3]] }, 'say "hi", [ok]', 3.5, null, true, [], {}, "back\\slash\\"]
    expect(await rows(write("kinds.json", JSON.stringify(values, null, 2)))).toEqual(
      values.map((value, i) => ({ row: i + 1, value }))
    )
    expect(await rows(write("compact.json", JSON.stringify(values)))).toEqual(
      values.map((value, i) => ({ row: i + 1, value }))
    )
  })

  it("an element split across read chunks, multi-byte characters included", async () => {
    const big = Array.from({ length: 3 }, (_, i) => ({ i, text: "é—🙂, ]".repeat(40_000) }))
    const got = await rows(write("big.json", "\uFEFF" + JSON.stringify(big)))
    expect(got).toEqual(big.map((value, i) => ({ row: i + 1, value })))
  })

  it("a bad element is a malformed row; the others are read", async () => {
    expect(await rows(write("bad.json", '[{"a": 1}, {"a": }, , {"a": 3}]'))).toEqual([
      { row: 1, value: { a: 1 } },
      { row: 2, malformed: expect.stringMatching(/^malformed JSON \(/) },
      { row: 3, malformed: "malformed JSON (an empty element)" },
      { row: 4, value: { a: 3 } }
    ])
    expect(await rows(write("trailing.json", "[1,]"))).toEqual([
      { row: 1, value: 1 },
      { row: 2, malformed: "malformed JSON (an empty element)" }
    ])
    expect(await rows(write("empty.json", " [ ] \n"))).toEqual([])
  })

  it("a file that is not an array, ends inside it, or goes on after it fails as a whole", async () => {
    const failure = (f: string) =>
      rows(f).then(
        () => "no error",
        (e: Error) => e.message
      )
    expect(await failure(write("object.json", '{"a": [1]}'))).toBe(
      `${dir}/object.json: expected a JSON array of instances, found an object`
    )
    expect(await failure(write("number.json", "12"))).toBe(
      `${dir}/number.json: expected a JSON array of instances, found a number`
    )
    expect(await failure(write("nothing.json", "  "))).toBe(
      `${dir}/nothing.json: expected a JSON array of instances, found an empty file`
    )
    expect(await failure(write("cut.json", '[{"a": 1}, {"b": "x'))).toBe(
      `${dir}/cut.json: malformed JSON (the file ends inside the array)`
    )
    expect(await failure(write("after.json", "[1] 2"))).toBe(
      `${dir}/after.json: malformed JSON (content after the closing bracket of the array)`
    )
  })
})
