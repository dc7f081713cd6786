import { isUtf8 } from "node:buffer"
import { createHash } from "node:crypto"
import { createReadStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { asyncBufferFromFile, parquetMetadataAsync, parquetRead, parquetSchema } from "hyparquet"
import { Domain, Errors } from "@cupid-lab/core"

/**
 * One row as read from a file, before schema decoding. `row` is the 1-based line or row number, or
 * the file name for directory sources. `malformed` marks a row that could not even be parsed as
 * JSON: a row-level problem the skip policy may pass over.
 */
export type RawRow =
  | { readonly row: number | string; readonly value: unknown }
  | { readonly row: number | string; readonly malformed: string }

/** Readers yield small batches of rows; a thrown DatasetError is fatal for the whole source. */
export type RowBatches = AsyncIterable<ReadonlyArray<RawRow>>

const batchSize = 64

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const parseJson = (text: string, row: number | string): RawRow => {
  try {
    return { row, value: JSON.parse(text) }
  } catch (e) {
    return { row, malformed: `malformed JSON (${errorMessage(e)})` }
  }
}

/**
 * The largest row read (a JSONL line, a file of a directory source): larger ones are refused as
 * rows, before they are parsed, so memory per row stays bounded (a 100 MB line used to take 3.3 GB).
 * A CUPID row is about 30 kB; a history of 10,000 CUPID-sized sessions about 32 MB, which the
 * default of 64 MB reads (an `embedding` sweep over it peaks at 0.9 GB). `CUPID_MAX_ROW_MB` changes it.
 */
const defaultMaxRowMb = 64

export const maxRowBytes = (): number => {
  const mb = Number(process.env["CUPID_MAX_ROW_MB"])
  return (Number.isFinite(mb) && mb > 0 ? mb : defaultMaxRowMb) * 1024 * 1024
}

const tooLarge = (row: number | string, limit: number): RawRow => ({
  row,
  malformed: `larger than ${limit / 1024 / 1024} MB, the limit per row (a CUPID row is a few tens of kB); raise it with the environment variable CUPID_MAX_ROW_MB`
})

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })
const notUtf8 = "not UTF-8 text: it holds bytes that are not UTF-8 (save the file as UTF-8)"

/** Text from bytes that must be UTF-8: undefined when they are not (never a silent U+FFFD). */
const decodeUtf8 = (bytes: Uint8Array): string | undefined => (isUtf8(bytes) ? utf8.decode(bytes) : undefined)

/** The 1-based line of `bytes` that first holds something that is not UTF-8. */
const firstBadLine = (bytes: Buffer): number => {
  let line = 1
  for (let start = 0; start <= bytes.length; line++) {
    const end = bytes.indexOf(10, start)
    if (!isUtf8(bytes.subarray(start, end === -1 ? bytes.length : end))) return line
    if (end === -1) break
    start = end + 1
  }
  return line
}

/**
 * One JSON object per line; blank lines are ignored but still counted, so row numbers are line
 * numbers. Lines are split as bytes: a line that is not UTF-8, or over {@link maxRowBytes}, is a
 * bad row (an over-long line is passed over, never held whole).
 */
export async function* jsonlRows(file: string): RowBatches {
  const input = createReadStream(file)
  const limit = maxRowBytes()
  try {
    let batch: Array<RawRow> = []
    let lineNo = 0
    let parts: Array<Buffer> = [],
      size = 0,
      over = false
    const line = (bytes: Buffer) => {
      lineNo++
      if (over) return void batch.push(tooLarge(lineNo, limit))
      const text = decodeUtf8(bytes)
      if (text === undefined) return void batch.push({ row: lineNo, malformed: notUtf8 })
      const clean = lineNo === 1 ? text.replace(/^\uFEFF/, "") : text
      if (clean.trim() !== "") batch.push(parseJson(clean, lineNo))
    }
    const take = (bytes: Buffer) => {
      size += bytes.length
      if (size <= limit) return void parts.push(bytes)
      over = true
      parts = []
    }
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let start = 0
      for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
        take(chunk.subarray(start, end))
        line(parts.length === 1 ? parts[0]! : Buffer.concat(parts))
        parts = []
        size = 0
        over = false
        start = end + 1
      }
      if (start < chunk.length) take(chunk.subarray(start))
      if (batch.length >= batchSize) {
        yield batch
        batch = []
      }
    }
    if (parts.length > 0 || over) line(Buffer.concat(parts))
    if (batch.length > 0) yield batch
  } catch (e) {
    throw new Errors.DatasetError({ source: file, reason: `cannot read file (${errorMessage(e)})` })
  } finally {
    input.destroy()
  }
}

/** Rows of a JSONL file without parsing them: lines holding anything but white space. */
export const jsonlRowCount = async (file: string): Promise<number> => {
  let count = 0
  let blank = true
  for await (const chunk of createReadStream(file)) {
    const bytes = chunk as Buffer
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!
      if (b === 10) {
        if (!blank) count++
        blank = true
      } else if (blank && b !== 32 && b !== 9 && b !== 13) blank = false
    }
  }
  return blank ? count : count + 1
}

/** Rows of a parquet file from its footer (no row is read). */
export const parquetRowCount = async (file: string): Promise<number> =>
  Number((await parquetMetadataAsync(await asyncBufferFromFile(file))).num_rows)

const firstValue: Readonly<Record<string, string>> = {
  "{": "an object",
  '"': "a string",
  t: "a boolean",
  f: "a boolean",
  n: "null"
}

/**
 * The elements of a JSON array file, one at a time: memory holds one element and one read chunk,
 * not the file (LongMemEval_M's file is gigabytes: 500 questions with some 500 sessions each). Elements are cut at the commas
 * and the closing bracket of the top level (strings and nesting are tracked byte by byte; UTF-8
 * never puts those bytes inside a multi-byte character), then parsed, so an element that does not
 * parse is a malformed row like a bad JSONL line. A file that is not an array, or ends inside it,
 * fails as a whole.
 */
export async function* jsonArrayRows(file: string): RowBatches {
  const notArray = (found: string) =>
    new Errors.DatasetError({ source: file, reason: `expected a JSON array of instances, found ${found}` })
  let batch: Array<RawRow> = []
  let parts: Array<Buffer> = []
  let started = false
  let ended = false
  let depth = 0
  let inString = false
  let escaped = false
  let inElement = false
  let row = 0
  const finish = (): void => {
    const decoded = decodeUtf8(Buffer.concat(parts))
    const text = decoded?.trim()
    parts = []
    inElement = false
    row++
    batch.push(
      text === undefined
        ? { row, malformed: notUtf8 }
        : text === ""
          ? { row, malformed: "malformed JSON (an empty element)" }
          : parseJson(text, row)
    )
  }
  let first = true
  for await (const chunk of createReadStream(file)) {
    let bytes = chunk as Buffer
    if (first && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3)
    first = false
    let start = 0
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!
      if (ended) {
        if (b !== 32 && b !== 9 && b !== 10 && b !== 13)
          throw new Errors.DatasetError({
            source: file,
            reason: "malformed JSON (content after the closing bracket of the array)"
          })
        continue
      }
      if (!started) {
        if (b === 32 || b === 9 || b === 10 || b === 13) continue
        if (b !== 91)
          throw notArray(
            firstValue[String.fromCharCode(b)] ??
              (b === 45 || (b >= 48 && b <= 57) ? "a number" : "something that is not JSON")
          )
        started = true
        depth = 1
        continue
      }
      if (inString) {
        if (escaped) escaped = false
        else if (b === 92) escaped = true
        else if (b === 34) inString = false
        continue
      }
      if (b === 34) inString = true
      else if (b === 91 || b === 123) depth++
      else if (b === 93 || b === 125) depth--
      if (depth === 1 && b === 44) {
        if (inElement) parts.push(bytes.subarray(start, i))
        finish()
        continue
      }
      if (depth === 0) {
        if (inElement) parts.push(bytes.subarray(start, i))
        if (inElement || row > 0) finish()
        ended = true
        continue
      }
      if (!inElement && b !== 32 && b !== 9 && b !== 10 && b !== 13) {
        inElement = true
        start = i
      }
    }
    if (inElement) parts.push(Buffer.from(bytes.subarray(start)))
    if (batch.length >= batchSize) {
      yield batch
      batch = []
    }
  }
  if (!started) throw notArray("an empty file")
  if (!ended) throw new Errors.DatasetError({ source: file, reason: "malformed JSON (the file ends inside the array)" })
  if (batch.length > 0) yield batch
}

/** The `.json` files of a directory in file-name order; every other file is ignored. */
export const directoryEntries = async (dir: string): Promise<ReadonlyArray<string>> => {
  const entries = await fs.readdir(dir, { withFileTypes: true })
  const names = entries.filter((e) => e.isFile() && e.name.toLowerCase().endsWith(".json")).map((e) => e.name)
  // Code-unit order, not locale order, so the same directory reads the same way on every machine.
  return names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}

/** One instance per file, read one file at a time. */
export async function* directoryRows(dir: string, names: ReadonlyArray<string>): RowBatches {
  const limit = maxRowBytes()
  for (const name of names) {
    const file = path.join(dir, name)
    if ((await fs.stat(file)).size > limit) {
      yield [tooLarge(name, limit)]
      continue
    }
    const bytes = await fs.readFile(file)
    const text = decodeUtf8(bytes)
    yield [
      text === undefined
        ? { row: name, malformed: `line ${firstBadLine(bytes)}: ${notUtf8}` }
        : parseJson(text.replace(/^\uFEFF/, ""), name)
    ]
  }
}

const wantedColumns: ReadonlyArray<string> = Domain.releasedColumns

/**
 * A parquet file in the released schema, one row group at a time: memory holds one row group's rows
 * (the released file has a few hundred rows per group). Only the seven released columns are read.
 */
export async function* parquetRows(file: string): RowBatches {
  const unreadable = (e: unknown) =>
    new Errors.DatasetError({ source: file, reason: `not a readable parquet file (${errorMessage(e)})` })
  let buffer: Awaited<ReturnType<typeof asyncBufferFromFile>>
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>
  try {
    buffer = await asyncBufferFromFile(file)
    metadata = await parquetMetadataAsync(buffer)
  } catch (e) {
    throw unreadable(e)
  }
  const present = new Set(parquetSchema(metadata).children.map((c) => c.element.name))
  const columns = wantedColumns.filter((c) => present.has(c))
  let rowStart = 0
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows)
    let rows: Array<Record<string, unknown>> = []
    try {
      await parquetRead({
        file: buffer,
        metadata,
        columns,
        rowStart,
        rowEnd,
        rowFormat: "object",
        onComplete: (data: Array<Record<string, unknown>>) => {
          rows = data
        }
      })
    } catch (e) {
      throw unreadable(e)
    }
    const first = rowStart
    for (let start = 0; start < rows.length; start += batchSize) {
      yield rows.slice(start, start + batchSize).map((value, i) => ({ row: first + start + i + 1, value }))
    }
    rowStart = rowEnd
  }
}

/** SHA-256 of a file's bytes, streamed. */
export const fileSha256 = (file: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = createHash("sha256")
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")))
  })

/** SHA-256 over the sorted file names and their contents, each length-prefixed so boundaries cannot shift. */
export const directorySha256 = async (dir: string, names: ReadonlyArray<string>): Promise<string> => {
  const hash = createHash("sha256")
  for (const name of names) {
    const bytes = await fs.readFile(path.join(dir, name))
    hash.update(`${Buffer.byteLength(name)}:${name}:${bytes.byteLength}:`)
    hash.update(bytes)
  }
  return hash.digest("hex")
}
