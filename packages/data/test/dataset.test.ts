import { afterAll, beforeAll, describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import { Domain } from "@cupid-lab/core"
import { Chunk, Effect, Either, Stream } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Dataset from "../src/Dataset.js"

import * as CupidParquet from "../src/CupidParquet.js"
import * as Synthetic from "../src/Synthetic.js"

let dir: string
const file = (name: string) => path.join(dir, name)
const write = (name: string, text: string) => {
  fs.mkdirSync(path.dirname(file(name)), { recursive: true })
  fs.writeFileSync(file(name), text)
  return file(name)
}
const jsonl = (rows: ReadonlyArray<unknown>) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n"

/** 4 personas x 3 types, 8 sessions each, from the generator: realistic nesting, unicode included. */
const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 4, seed: 11 })]
const expected = rows.map(Domain.fromRow)

const small = (persona: string, type: Domain.CupidType = "consistent"): Domain.CupidRow => ({
  persona_id: persona,
  instance_type: type,
  current_request: "Plan the offsite.",
  current_context_factor: "the offsite",
  current_contextual_preference: "Numbered steps.",
  current_checklist: ["Numbered?"],
  prior_interactions: [0, 1, 2, 3].map((i) => ({
    context_factor: i % 2 === 0 ? "the offsite" : "my manager",
    contextual_preference: "Numbered steps.",
    dialogue: [
      { role: "user" as const, content: `question ${i}` },
      { role: "assistant" as const, content: `answer ${i}` }
    ]
  }))
})

const withRole = (row: Domain.CupidRow, session: number, message: number, role: string): unknown => ({
  ...row,
  prior_interactions: row.prior_interactions.map((p, i) =>
    i !== session ? p : { ...p, dialogue: p.dialogue.map((m, j) => (j === message ? { ...m, role } : m)) }
  )
})

const failure = (source: string, options?: Dataset.LoadOptions) =>
  Effect.map(Effect.either(Dataset.loadAll(source, options)), (e) => (Either.isLeft(e) ? e.left.message : "no error"))

const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex")

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-dataset-"))
  write("all.jsonl", jsonl(rows))
  write("all.json", JSON.stringify(rows, null, 2))
  // Row groups of 5 rows: 12 rows span three groups, so row numbers must carry across groups.
  await CupidParquet.write(file("all.parquet"), rows, { rowGroupSize: 5 })
  rows.forEach((r, i) =>
    write(`instances/${String(i).padStart(3, "0")}-${r.persona_id}-${r.instance_type}.json`, JSON.stringify(r))
  )
  write("instances/README.md", "not an instance")
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("Dataset.open: the same instances from every format", () => {
  NodeTest.it.effect("jsonl, json array, parquet and directory decode to equal instances", () =>
    Effect.gen(function* () {
      for (const source of [file("all.jsonl"), file("all.json"), file("all.parquet"), file("instances")]) {
        const loaded = yield* Dataset.loadAll(source)
        expect(loaded.instances, source).toEqual(expected)
        expect(loaded.skipped).toEqual([])
      }
    })
  )

  NodeTest.it.effect("the parquet fixture really has nested lists of structs over several row groups", () =>
    Effect.gen(function* () {
      const { parquetMetadataAsync, asyncBufferFromFile } = yield* Effect.promise(() => import("hyparquet"))
      const meta = yield* Effect.promise(async () =>
        parquetMetadataAsync(await asyncBufferFromFile(file("all.parquet")))
      )
      expect(meta.num_rows).toBe(12n)
      expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([5, 5, 2])
      expect(meta.schema.map((s) => s.name)).toContain("dialogue")
    })
  )

  NodeTest.it.effect("a synthetic source yields what the generator writes", () =>
    Effect.gen(function* () {
      const loaded = yield* Dataset.loadAll("synthetic:personas=4,seed=11")
      expect(loaded.instances).toEqual(expected)
    })
  )

  NodeTest.it.effect("resolved paths and fingerprints: file bytes, directory names + contents, synthetic options", () =>
    Effect.gen(function* () {
      const opened = yield* Dataset.open(path.relative(process.cwd(), file("all.jsonl")))
      expect(opened.resolved).toBe(file("all.jsonl"))
      expect(opened.fingerprint).toBe(sha256(fs.readFileSync(file("all.jsonl"))))
      const parquet = yield* Dataset.open(file("all.parquet"))
      expect(parquet.fingerprint).toBe(sha256(fs.readFileSync(file("all.parquet"))))

      const before = (yield* Dataset.open(file("instances"))).fingerprint
      expect(before).toMatch(/^[0-9a-f]{64}$/)
      expect((yield* Dataset.open(file("instances"))).fingerprint).toBe(before)
      const edited = file("instances/000-" + rows[0]!.persona_id + "-consistent.json")
      const original = fs.readFileSync(edited, "utf8")
      fs.writeFileSync(edited, original + " ")
      expect((yield* Dataset.open(file("instances"))).fingerprint).not.toBe(before)
      fs.writeFileSync(edited, original)

      const a = yield* Dataset.open("synthetic:personas=4,seed=11")
      const b = yield* Dataset.open("synthetic:seed=11,personas=4")
      const c = yield* Dataset.open("synthetic:personas=4,seed=12")
      expect(a.fingerprint).toBe(b.fingerprint)
      expect(a.fingerprint).not.toBe(c.fingerprint)
      expect(a.resolved).toBe(
        "synthetic:personas=4,sessions=8,seed=11,position=spread,contrastive=0.1,stale=0.1,types=consistent+contrastive+changing,difficulty=hard"
      )
    })
  )

  NodeTest.it.effect("sample resolves to the bundled file from any working directory", () =>
    Effect.gen(function* () {
      expect(path.isAbsolute(Dataset.samplePath)).toBe(true)
      expect(Dataset.samplePath.endsWith(path.join("packages", "data", "data", "sample.jsonl"))).toBe(true)
      const lines = fs
        .readFileSync(Dataset.samplePath, "utf8")
        .split("\n")
        .filter((l) => l.trim() !== "").length
      const cwd = process.cwd()
      process.chdir(os.tmpdir())
      const loaded = yield* Dataset.loadAll("sample").pipe(Effect.ensuring(Effect.sync(() => process.chdir(cwd))))
      expect(loaded.instances.length).toBe(lines)
    })
  )
})

describe("Dataset.open: filters, limit, re-runs", () => {
  NodeTest.it.effect("types filter and limit take the first n of those types in file order", () =>
    Effect.gen(function* () {
      const loaded = yield* Dataset.loadAll(file("all.jsonl"), { types: ["changing", "contrastive"], limit: 3 })
      expect(loaded.instances.map((i) => i.id)).toEqual(
        expected
          .filter((i) => i.type !== "consistent")
          .slice(0, 3)
          .map((i) => i.id)
      )
      const none = yield* Dataset.loadAll(file("all.parquet"), { limit: 0 })
      expect(none.instances).toEqual([])
    })
  )

  NodeTest.it.effect("instances is re-runnable and reads lazily: a limit stops before a later bad line", () =>
    Effect.gen(function* () {
      const source = write("lazy.jsonl", jsonl([small("p1"), small("p2")]) + "{broken\n")
      const opened = yield* Dataset.open(source, { limit: 2 })
      const first = yield* Stream.runCollect(opened.instances)
      const second = yield* Stream.runCollect(opened.instances)
      expect(Chunk.toArray(first).map((i) => i.id)).toEqual(["p1:consistent", "p2:consistent"])
      expect(Chunk.toArray(second)).toEqual(Chunk.toArray(first))
    })
  )

  NodeTest.it.effect("fail policy: instances before the first bad row are delivered, then the stream fails", () =>
    Effect.gen(function* () {
      const source = write(
        "fail-late.jsonl",
        jsonl([small("p1"), small("p2"), { ...small("p3"), instance_type: "contrastve" }, small("p4")])
      )
      const seen: Array<string> = []
      const opened = yield* Dataset.open(source)
      const result = yield* Effect.either(
        Stream.runForEach(opened.instances, (i) => Effect.sync(() => seen.push(i.id)))
      )
      expect(seen).toEqual(["p1:consistent", "p2:consistent"])
      expect(Either.isLeft(result) && result.left.message).toBe(
        `${source}, row 3, instance_type: expected one of consistent, contrastive, changing, found "contrastve"`
      )
    })
  )

  NodeTest.it.effect("blank lines and a byte-order mark are tolerated; row numbers stay line numbers", () =>
    Effect.gen(function* () {
      const source = write(
        "blank.jsonl",
        "\uFEFF" +
          JSON.stringify(small("p1")) +
          "\n\n  \n" +
          JSON.stringify({ ...small("p2"), current_request: 7 }) +
          "\n"
      )
      expect(yield* failure(source)).toBe(`${source}, row 4, current_request: expected string, found 7`)
    })
  )
})

describe("Dataset.open: bad input names file, row and field", () => {
  NodeTest.it.effect("missing file, unsupported type, empty directory", () =>
    Effect.gen(function* () {
      expect(yield* failure(file("nope.jsonl"))).toBe(
        `${file("nope.jsonl")}: no such file or directory (a data source is a .parquet, .jsonl or .json file, a directory of .json files, ` +
          "sample, sample-test, hf:kixlab/CUPID, hf:kixlab/CUPID-Unverified, synthetic:<key>=<value>,..., longmemeval:<file>, locomo:<file> or prefeval:<dir>)"
      )
      const csv = write("data.csv", "a,b\n")
      expect(yield* failure(csv)).toBe(
        `${csv}: unsupported file type ".csv"; expected .parquet, .jsonl (or .ndjson) or .json`
      )
      fs.mkdirSync(file("empty-dir"), { recursive: true })
      expect(yield* failure(file("empty-dir"))).toBe(`${file("empty-dir")}: no .json files in this directory`)
    })
  )

  NodeTest.it.effect("unreadable parquet", () =>
    Effect.gen(function* () {
      const bad = write("bad.parquet", "this is not parquet")
      expect(yield* failure(bad)).toBe(`${bad}: not a readable parquet file (parquet file invalid (footer != PAR1))`)
    })
  )

  NodeTest.it.effect("schema violations: nested field path, expected vs found", () =>
    Effect.gen(function* () {
      const role = write("role.jsonl", jsonl([small("p1"), withRole(small("p2"), 3, 1, "system")]))
      expect(yield* failure(role)).toBe(
        `${role}, row 2, prior_interactions[3].dialogue[1].role: expected one of user, assistant, found "system"`
      )

      const { current_request: _, ...missing } = small("p1")
      const missingFile = write("missing.jsonl", jsonl([missing]))
      expect(yield* failure(missingFile)).toBe(
        `${missingFile}, row 1, current_request: expected string, found nothing (missing field)`
      )

      const checklist = write("checklist.jsonl", jsonl([{ ...small("p1"), current_checklist: "Numbered?" }]))
      expect(yield* failure(checklist)).toBe(
        `${checklist}, row 1, current_checklist: expected an array, found "Numbered?"`
      )

      const content = write(
        "content.json",
        JSON.stringify([
          small("p1"),
          small("p2"),
          {
            ...small("p3"),
            prior_interactions: [{ ...small("p3").prior_interactions[0]!, dialogue: [{ role: "user", content: null }] }]
          }
        ])
      )
      expect(yield* failure(content)).toBe(
        `${content}, row 3, prior_interactions[0].dialogue[0].content: expected string, found null`
      )
    })
  )

  NodeTest.it.effect("unknown instance type", () =>
    Effect.gen(function* () {
      const source = write("type.jsonl", jsonl([{ ...small("p1"), instance_type: "contrastve" }]))
      expect(yield* failure(source)).toBe(
        `${source}, row 1, instance_type: expected one of consistent, contrastive, changing, found "contrastve"`
      )
    })
  )

  NodeTest.it.effect("duplicate instance ids (persona_id + instance_type)", () =>
    Effect.gen(function* () {
      const source = write("dup.jsonl", jsonl([small("p1"), small("p1", "changing"), small("p1")]))
      expect(yield* failure(source)).toBe(`${source}, row 3: duplicate instance id "p1:consistent" (first at row 1)`)
    })
  )

  NodeTest.it.effect("malformed JSON line, a line that is not an object, a .json file that is not an array", () =>
    Effect.gen(function* () {
      const source = write("broken.jsonl", JSON.stringify(small("p1")) + "\n" + '{"persona_id": "p1"\n')
      expect(yield* failure(source)).toBe(
        `${source}, row 2: malformed JSON (Expected ',' or '}' after property value in JSON at position 19)`
      )
      const array = write("array-line.jsonl", "[1, 2]\n")
      expect(yield* failure(array)).toBe(`${array}, row 1: expected a JSON object (one instance), found an array of 2`)
      const object = write("object.json", JSON.stringify(small("p1")))
      expect(yield* failure(object)).toBe(`${object}: expected a JSON array of instances, found an object`)
    })
  )

  NodeTest.it.effect("parquet rows are numbered across row groups; nulls are reported as found null", () =>
    Effect.gen(function* () {
      const bad = [small("p1"), small("p2"), small("p3"), { ...small("p4"), current_request: null }]
      yield* Effect.promise(() => CupidParquet.write(file("null.parquet"), bad, { rowGroupSize: 3 }))
      expect(yield* failure(file("null.parquet"))).toBe(
        `${file("null.parquet")}, row 4, current_request: expected string, found null`
      )
    })
  )

  NodeTest.it.effect("directory sources name the file as the row", () =>
    Effect.gen(function* () {
      write("dir-bad/a.json", JSON.stringify(small("p1")))
      write("dir-bad/b.json", JSON.stringify({ ...small("p2"), instance_type: "later" }))
      expect(yield* failure(file("dir-bad"))).toBe(
        `${file("dir-bad")}, row b.json, instance_type: expected one of consistent, contrastive, changing, found "later"`
      )
    })
  )

  NodeTest.it.effect("bad synthetic specs and options", () =>
    Effect.gen(function* () {
      expect(yield* failure("synthetic:foo=1")).toBe(
        'synthetic:foo=1: unknown key "foo"; valid keys: personas, sessions, seed, position, contrastive, stale, types, difficulty, mentions, topic, feedback, relevant, similarity'
      )
      expect(yield* failure("synthetic:sessions=5")).toBe(
        "synthetic:sessions=5, sessions: expected an integer from 8 to 10000"
      )
      expect(yield* failure("synthetic:types=consistent+later")).toContain("synthetic:types=consistent+later, types")
      expect(yield* failure(file("all.jsonl"), { limit: -1 })).toBe(
        `${file("all.jsonl")}, limit: expected a whole number >= 0, found -1`
      )
      expect(yield* failure(file("all.jsonl"), { types: [] })).toBe(
        `${file("all.jsonl")}, types: expected at least one of consistent, contrastive, changing, found none`
      )
    })
  )
})

describe("Dataset.open: skip policy", () => {
  NodeTest.it.effect("bad rows are skipped and listed with row, id and reason; good rows still load", () =>
    Effect.gen(function* () {
      const source = write(
        "mixed.jsonl",
        [
          JSON.stringify(small("p1")),
          JSON.stringify({ ...small("p2"), instance_type: "contrastve" }),
          "{not json",
          JSON.stringify(small("p1")),
          JSON.stringify(withRole(small("p3"), 0, 0, "bot")),
          JSON.stringify(small("p4", "changing"))
        ].join("\n")
      )
      const opened = yield* Dataset.open(source, { onInvalid: "skip" })
      const ids = Chunk.toArray(yield* Stream.runCollect(opened.instances)).map((i) => i.id)
      expect(ids).toEqual(["p1:consistent", "p4:changing"])
      expect(opened.skipped()).toEqual([
        {
          row: "2",
          id: "p2:contrastve",
          reason: 'instance_type: expected one of consistent, contrastive, changing, found "contrastve"'
        },
        { row: "3", reason: "malformed JSON (Expected property name or '}' in JSON at position 1)" },
        { row: "4", id: "p1:consistent", reason: 'duplicate instance id "p1:consistent" (first at row 1)' },
        {
          row: "5",
          id: "p3:consistent",
          reason: 'prior_interactions[0].dialogue[0].role: expected one of user, assistant, found "bot"'
        }
      ])
      // A second run starts a fresh list rather than appending to the first.
      yield* Stream.runDrain(opened.instances)
      expect(opened.skipped().length).toBe(4)
      const all = yield* Dataset.loadAll(source, { onInvalid: "skip" })
      expect(all.skipped.map((s) => s.row)).toEqual(["2", "3", "4", "5"])
    })
  )
})

describe("Dataset.open: the size a source knows without reading its instances", () => {
  const sizeOf = (source: string, options?: Dataset.LoadOptions) =>
    Effect.flatMap(Dataset.open(source, options), (o) => o.size ?? Effect.succeed(undefined))

  NodeTest.it.effect("counts JSONL lines with content and reads a parquet footer; a limit caps them", () =>
    Effect.gen(function* () {
      expect(yield* sizeOf(file("all.jsonl"))).toBe(12)
      expect(yield* sizeOf(file("all.parquet"))).toBe(12)
      expect(yield* sizeOf(file("all.jsonl"), { limit: 5 })).toBe(5)
      expect(yield* sizeOf(file("all.parquet"), { limit: 50 })).toBe(12)
      // blank and white-space lines do not count; a last line without a newline does
      const lines = jsonl(rows.slice(0, 3)).split("\n")
      const spaced = write("spaced.jsonl", `\n${lines[0]}\n  \t\r\n${lines[1]}\n\n${lines[2]}`)
      expect(yield* sizeOf(spaced)).toBe(3)
      expect((yield* Dataset.loadAll(spaced)).instances.length).toBe(3)
    })
  )

  NodeTest.it.effect("is exact for synthetic data, and unknown where it would need a read", () =>
    Effect.gen(function* () {
      expect(yield* sizeOf("synthetic:personas=7,seed=1")).toBe(21)
      expect(yield* sizeOf("synthetic:personas=7,seed=1", { types: ["changing", "consistent"] })).toBe(14)
      expect(yield* sizeOf("synthetic:personas=7,seed=1", { types: ["changing"], limit: 3 })).toBe(3)
      expect(yield* sizeOf(file("all.json"))).toBeUndefined()
      expect(yield* sizeOf(file("instances"))).toBeUndefined()
      // a types filter needs each row's type: not known without reading
      expect(yield* sizeOf(file("all.jsonl"), { types: ["changing"] })).toBeUndefined()
    })
  )
})
