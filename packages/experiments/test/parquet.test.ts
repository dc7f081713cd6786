import { NodeContext, NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { parquetMetadata, parquetReadObjects } from "hyparquet"
import * as fs from "node:fs"
import * as path from "node:path"
import { Exports, RunDir, type ResultLine } from "@cupid-lab/results"
import { Report } from "@cupid-lab/report"

import { cellA, cellB, dataset, parseRows, tempDir, writeRun } from "./report-fixtures.js"
import { runPromise } from "./support.js"

const formulaName = `=HYPERLINK("http://x","y")`
const unicodeName = "bm25 — «café» 日本語 🎉"
const unicodeError = "délai dépassé: „Zeitüberschreitung“ ⏱ 超时\nretry, later"

/** Two cells: a name that starts with `=`, a unicode name, a null recall, a failure, an empty selection. */
const writeFixtureRun = (dir: string): Array<ResultLine.ResultLine> => {
  writeRun(dir, {
    cells: [
      {
        ...cellA,
        name: formulaName,
        results: [cellA.results[0]!, { recall: null, counts: [1, 2, 1, 3] }, cellA.results[2]!, cellA.results[3]!]
      },
      {
        ...cellB,
        name: unicodeName,
        results: [cellB.results[0]!, { error: unicodeError }, cellB.results[2]!, cellB.results[3]!]
      }
    ]
  })
  const file = path.join(dir, "results.jsonl")
  const lines = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l): ResultLine.ResultLine => JSON.parse(l))
  const edited = lines.map((l, i) => (i === 2 ? { ...l, selected: [] } : l))
  fs.writeFileSync(file, edited.map((l) => `${JSON.stringify(l)}\n`).join(""))
  return edited
}

/** The score keys of the fixtures' metrics, in the CSV's (sorted) column order. */
const scoreTitles = [
  "inference.f1",
  "inference.precision_micro.num",
  "inference.precision_micro.den",
  "inference.recall_micro.num",
  "inference.recall_micro.den",
  "retrieval.recall"
]

const scoreValue = (s: ResultLine.Score | undefined, part?: "num" | "den"): number | null => {
  if (s === undefined || s === null) return null
  if (typeof s === "number") return part === undefined && Number.isFinite(s) ? s : null
  return part === undefined ? null : s[part]
}

/** What a row of results.parquet should hold for a result line, written out independently of Exports.ts. */
const expected = (l: ResultLine.ResultLine): Record<string, string | number | null> => ({
  cell: l.cell,
  cell_name: l.cellName,
  instance: l.instance,
  persona_id: l.personaId,
  type: l.type,
  status: l.status,
  selected: l.selected === null ? null : l.selected.join(" "),
  "inference.f1": scoreValue(l.scores["inference.f1"]),
  "inference.precision_micro.num": scoreValue(l.scores["inference.precision_micro"], "num"),
  "inference.precision_micro.den": scoreValue(l.scores["inference.precision_micro"], "den"),
  "inference.recall_micro.num": scoreValue(l.scores["inference.recall_micro"], "num"),
  "inference.recall_micro.den": scoreValue(l.scores["inference.recall_micro"], "den"),
  "retrieval.recall": scoreValue(l.scores["retrieval.recall"]),
  calls: l.usage.calls,
  prompt_tokens: l.usage.promptTokens,
  completion_tokens: l.usage.completionTokens,
  error_stage: l.error?.stage ?? null,
  error_plugin: l.error?.plugin ?? null,
  error_message: l.error?.message ?? null
})

const readParquet = (file: string) =>
  Effect.promise(async () => {
    const bytes = fs.readFileSync(file)
    const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)
    const metadata = parquetMetadata(buffer)
    return { metadata, rows: await parquetReadObjects({ file: buffer }), bytes }
  })

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
const parseCsv = (text: string): Array<Array<string>> => {
  const records: Array<Array<string>> = []
  let record: Array<string> = [],
    field = "",
    quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') ((field += '"'), i++)
      else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"') quoted = true
    else if (ch === ",") (record.push(field), (field = ""))
    else if (ch === "\r" && text[i + 1] === "\n")
      (record.push(field), records.push(record), (record = []), (field = ""), i++)
    else field += ch
  }
  return records
}

/** The CSV field the parquet value is written as: empty for null, a leading `'` on formula-like text. */
const asCsvField = (v: unknown): string =>
  v === null ? "" : typeof v === "number" ? String(v) : /^[=+\-@\t\r]/.test(String(v)) ? `'${String(v)}` : String(v)

/**
 * DuckDB's Node client is not a dependency (about 70 MB): `node tools/test-extras.mjs`, which
 * `npm test` runs first, installs it and names its version. Typed here for what the test calls.
 */
const duckdbPackage = "@duckdb/node-api"
interface DuckDBReader {
  readonly columnNames: () => Array<string>
  readonly columnTypes: () => ReadonlyArray<{ readonly toString: () => string }>
  readonly getRowObjectsJS: () => Array<Record<string, unknown>>
}
interface DuckDBConnection {
  readonly runAndReadAll: (sql: string, values: Array<string>) => Promise<DuckDBReader>
  readonly closeSync: () => void
}
interface DuckDB {
  readonly DuckDBInstance: {
    readonly create: (
      path: string
    ) => Promise<{ readonly connect: () => Promise<DuckDBConnection>; readonly closeSync: () => void }>
  }
}
interface Queried {
  readonly names: Array<string>
  readonly types: Array<string>
  readonly rows: Array<Record<string, unknown>>
}

/** Runs `use` with an in-memory DuckDB; fails, never skips, when the client is not installed. */
const withDuckDB = async <A>(
  use: (query: (sql: string, file: string) => Promise<Queried>) => Promise<A>
): Promise<A> => {
  const duckdb: DuckDB = await import(duckdbPackage).catch((cause: unknown) => {
    throw new Error(
      `${duckdbPackage} (DuckDB's Node client) is not installed: run \`node tools/test-extras.mjs\` (npm test runs it first)`,
      { cause }
    )
  })
  const instance = await duckdb.DuckDBInstance.create(":memory:")
  const connection = await instance.connect()
  try {
    return await use(async (sql, file) => {
      const reader = await connection.runAndReadAll(sql, [file])
      return { names: reader.columnNames(), types: reader.columnTypes().map(String), rows: reader.getRowObjectsJS() }
    })
  } finally {
    connection.closeSync()
    instance.closeSync()
  }
}

const tmpFiles = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))

const titles = (columns: ReadonlyArray<Exports.Column>) => columns.map((c) => c.title)

describe("results.parquet", () => {
  it.effect("holds every row and column of results.csv, typed: strings, doubles with nulls, no formula guard", () =>
    Effect.gen(function* () {
      const dir = tempDir("parquet")
      const lines = writeFixtureRun(dir)
      const written = yield* Report.write(dir, { openDataset: dataset() })
      expect(written.parquet).toBe(path.join(dir, "results.parquet"))
      expect(tmpFiles(dir)).toEqual([])
      const { metadata, rows } = yield* readParquet(written.parquet)

      const header = [...titles(Exports.leading), ...scoreTitles, ...titles(Exports.trailing)]
      const leaves = metadata.schema.slice(1)
      expect(leaves.map((e) => e.name)).toEqual(header)
      const typeOf = (name: string) => leaves.find((e) => e.name === name)
      for (const name of scoreTitles)
        expect(typeOf(name)).toMatchObject({ type: "DOUBLE", repetition_type: "OPTIONAL" })
      for (const name of ["calls", "prompt_tokens", "completion_tokens"]) expect(typeOf(name)?.type).toBe("DOUBLE")
      for (const name of ["cell", "cell_name", "instance", "persona_id", "type", "status"]) {
        expect(typeOf(name)).toMatchObject({ type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "REQUIRED" })
      }
      for (const name of ["selected", "error_stage", "error_plugin", "error_message"]) {
        expect(typeOf(name)).toMatchObject({ type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" })
      }
      expect(metadata.created_by).toBe("cupid-lab")
      expect(metadata.key_value_metadata ?? []).toEqual([])

      // Every value equals the line's, including the nulls, the empty selection, the unicode and the `=`.
      expect(rows).toEqual(lines.map(expected))
      expect(rows.map((r) => r["cell_name"])).toContain(formulaName)
      expect(rows.some((r) => r["error_message"] === unicodeError)).toBe(true)
      expect(rows.filter((r) => r["retrieval.recall"] === null)).toHaveLength(2) // the null recall and the failure
      expect(rows[2]!["selected"]).toBe("")

      // ... and the CSV's field, where the CSV writes null as empty and guards formulas with a `'`.
      const csv = parseCsv(fs.readFileSync(written.csv, "utf8"))
      expect(csv[0]).toEqual(header)
      expect(csv.slice(1)).toEqual(rows.map((r) => header.map((h) => asCsvField(r[h]))))
      expect(csv[1]![1]).toBe(`'${formulaName}`)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("is byte-identical from one write to the next, and goes through the atomic write", () =>
    Effect.gen(function* () {
      const dir = tempDir("parquet-det")
      writeFixtureRun(dir)
      const file = path.join(dir, "results.parquet")
      yield* Report.write(dir, { openDataset: dataset() })
      const first = fs.readFileSync(file)
      yield* Report.write(dir, { openDataset: dataset() })
      expect(fs.readFileSync(file).equals(first)).toBe(true)
      const run = yield* RunDir.read(dir)
      const again = path.join(dir, "again.parquet")
      yield* Exports.writeParquet(again, run.index.table).pipe(Effect.provide(NodeFileSystem.layer))
      expect(fs.readFileSync(again).equals(first)).toBe(true)
      expect(tmpFiles(dir)).toEqual([])

      // A target that cannot be replaced: the write fails and removes its temporary file.
      const blocked = path.join(dir, "blocked.parquet")
      fs.mkdirSync(path.join(blocked, "inside"), { recursive: true })
      const failure = yield* Effect.flip(
        Exports.writeParquet(blocked, run.index.table).pipe(Effect.provide(NodeFileSystem.layer))
      )
      expect(failure._tag).toBe("SystemError")
      expect(tmpFiles(dir)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "writes row group by row group: the same rows whatever the group size; non-finite scores become null; an empty run has the fixed columns",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("parquet-groups")
        const lines = writeFixtureRun(dir)
        const parsed = parseRows(lines.map((l) => JSON.stringify(l)).join("\n"), "results.jsonl")
        const rows = Either.getOrThrow(parsed).map((r, i) =>
          i === 0
            ? {
                ...r,
                scores: { ...r.scores, "retrieval.recall": Number.NaN, "inference.f1": Number.POSITIVE_INFINITY }
              }
            : r
        )
        const file = path.join(dir, "groups.parquet")
        yield* Exports.writeParquet(file, rows, { rowGroupRows: 3 }).pipe(Effect.provide(NodeFileSystem.layer))
        const read = yield* readParquet(file)
        expect(read.metadata.row_groups.map((g) => Number(g.num_rows))).toEqual([3, 3, 2])
        expect(read.rows).toEqual(
          lines.map((l, i) =>
            i === 0 ? { ...expected(l), "retrieval.recall": null, "inference.f1": null } : expected(l)
          )
        )

        const empty = path.join(dir, "empty.parquet")
        yield* Exports.writeParquet(empty, []).pipe(Effect.provide(NodeFileSystem.layer))
        const none = yield* readParquet(empty)
        expect(Number(none.metadata.num_rows)).toBe(0)
        expect(none.metadata.schema.slice(1).map((e) => e.name)).toEqual([
          ...titles(Exports.leading),
          ...titles(Exports.trailing)
        ])
      })
  )

  it("DuckDB, a second Parquet reader, reads the same columns, types and values", async () => {
    const dir = tempDir("parquet-duckdb")
    const lines = writeFixtureRun(dir)
    const written = await runPromise(Report.write(dir, { openDataset: dataset() }))
    const { schema, data, count } = await withDuckDB(async (query) => ({
      schema: await query(
        "SELECT name, type, converted_type, repetition_type FROM parquet_schema($1)",
        written.parquet
      ),
      data: await query("SELECT * FROM read_parquet($1)", written.parquet),
      count: await query("SELECT count(*)::INTEGER AS n FROM read_parquet($1)", written.parquet)
    }))

    const header = [...titles(Exports.leading), ...scoreTitles, ...titles(Exports.trailing)]
    const requiredText = ["cell", "cell_name", "instance", "persona_id", "type", "status"]
    const isText = (name: string) =>
      [...requiredText, "selected", "error_stage", "error_plugin", "error_message"].includes(name)
    expect(data.names).toEqual(header)
    expect(Object.fromEntries(data.names.map((n, i) => [n, data.types[i]]))).toEqual(
      Object.fromEntries(header.map((n) => [n, isText(n) ? "VARCHAR" : "DOUBLE"]))
    )
    expect(schema.rows.slice(1)).toEqual(
      header.map((name) => ({
        name,
        type: isText(name) ? "BYTE_ARRAY" : "DOUBLE",
        converted_type: isText(name) ? "UTF8" : null,
        repetition_type: requiredText.includes(name) ? "REQUIRED" : "OPTIONAL"
      }))
    )
    expect(count.rows).toEqual([{ n: lines.length }])
    // Every value of every row, the nulls, the empty selection, the unicode and the `=` included.
    expect(data.rows).toEqual(lines.map(expected))
    expect(data.rows.map((r) => r["cell_name"])).toContain(formulaName)
    expect(data.rows.some((r) => r["error_message"] === unicodeError)).toBe(true)
    expect(data.rows[2]!["selected"]).toBe("")
  })
})
