/**
 * `<out>/results.jsonl`: one line per (cell, instance), appended as pairs complete, safe to kill.
 *
 * - Every line reaches the file whole: lines are buffered and written with one append per flush,
 *   and a line cut short by a kill (the only way a line can be partial) is dropped on open.
 * - On open, `ok` lines are kept, `failed` lines are dropped (so they are retried), and lines of
 *   cells no longer in the grid move to `results.orphaned.jsonl`; the file is rewritten atomically
 *   (temporary file + rename) before anything is appended, so a pair is never in it twice.
 * - `finalize` rewrites the file sorted by (cell order, dataset order), atomically, so the same
 *   config, data and cache give a byte-identical file however the run was interrupted.
 *
 * Lines are not held in memory: the store keeps each line's offset and reads it back to sort.
 *
 * @example
 * import { ResultStore } from "@cupid-lab/experiments"
 * const store = ResultStore.open("runs/contextual", new Set(grid.cells.map((c) => c.id)))
 * if (!store.isDone(cell.id, instance.id)) store.append({ cell: cell.id, instance: instance.id, text })
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { RunError } from "./Errors.js"

export const fileName = "results.jsonl"
export const orphanFileName = "results.orphaned.jsonl"

interface Entry {
  readonly cell: string
  readonly instance: string
  readonly offset: number
  readonly length: number
  /** Order of arrival, to keep sorting stable for lines whose instance position is unknown. */
  readonly seq: number
}

export interface Opened {
  /** Lines kept from an earlier run (status ok, cell in the grid). */
  readonly kept: number
  /** Failed lines dropped so that their pairs run again. */
  readonly retried: number
  /** A partial last line left by a kill, dropped. */
  readonly truncated: boolean
  /** Lines of cells not in the grid, moved to results.orphaned.jsonl. */
  readonly orphaned: number
}

export interface FinalizeOptions {
  readonly cellOrder: ReadonlyMap<string, number>
  readonly instanceOrder: ReadonlyMap<string, number>
  /**
   * True when every instance of the dataset was seen: lines of instances that are not in it (e.g.
   * after lowering `--limit`) then move to results.orphaned.jsonl. When false (interrupted), they
   * stay, after the lines whose position is known.
   */
  readonly complete: boolean
  /** Called with every line, in final order (used to build the summary in the same pass). */
  readonly onLine?: (text: string, cell: string, instance: string) => void
}

export interface Store {
  readonly file: string
  readonly opened: Opened
  readonly isDone: (cell: string, instance: string) => boolean
  /** Number of lines in the file (kept + appended). */
  readonly size: () => number
  /** Buffer one whole line (ending in "\n"); written at the next flush. */
  readonly append: (line: { readonly cell: string; readonly instance: string; readonly text: string }) => void
  readonly flush: () => void
  /** Flush, sort, rewrite atomically and close. Returns the number of lines moved out. */
  readonly finalize: (options: FinalizeOptions) => { readonly lines: number; readonly orphaned: number }
  readonly close: () => void
}

const key = (cell: string, instance: string) => `${cell}\u0000${instance}`

const writeAll = (fd: number, buffer: Buffer): void => {
  let off = 0
  while (off < buffer.length) off += fs.writeSync(fd, buffer, off, buffer.length - off)
}

/** Write `chunks` to `file` through a temporary file and a rename, so readers never see half a file. */
const replaceFile = (file: string, write: (fd: number) => void): void => {
  const tmp = `${file}.${process.pid}.tmp`
  const fd = fs.openSync(tmp, "w")
  try {
    write(fd)
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
  fs.renameSync(tmp, file)
}

interface Header {
  readonly cell: string
  readonly instance: string
  readonly status: string
}

const parseHeader = (text: string, file: string, lineNo: number): Header => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new RunError({ path: file, reason: `line ${lineNo}: not valid JSON; the file was edited or written by something else (move it away to start over)` })
  }
  const v = value as Partial<Record<string, unknown>>
  if (typeof v.cell !== "string" || typeof v.instance !== "string" || (v.status !== "ok" && v.status !== "failed")) {
    throw new RunError({ path: file, reason: `line ${lineNo}: expected a result line with string "cell" and "instance" and "status" ok or failed` })
  }
  return { cell: v.cell, instance: v.instance, status: v.status }
}

/** Open (and repair) the results of `dir` for a grid of `cells`. Throws {@link RunError}. */
export const open = (dir: string, cells: ReadonlySet<string>): Store => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, fileName)
  const orphanFile = path.join(dir, orphanFileName)
  const entries: Array<Entry> = []
  // Per cell, the instances done: the id strings are shared, not copied into one key per pair.
  const done = new Map<string, Set<string>>()
  const isDone = (cell: string, instance: string) => done.get(cell)?.has(instance) === true
  const markDone = (cell: string, instance: string) => {
    let s = done.get(cell)
    if (s === undefined) done.set(cell, (s = new Set()))
    s.add(instance)
  }
  let kept = 0, retried = 0, orphaned = 0, truncated = false
  let size = 0
  let seq = 0

  if (fs.existsSync(file)) {
    const content = fs.readFileSync(file)
    const keep: Array<Buffer> = []
    const orphans: Array<Buffer> = []
    let start = 0, lineNo = 0
    while (start < content.length) {
      const end = content.indexOf(10, start)
      if (end === -1) {
        truncated = true
        break
      }
      lineNo++
      const raw = content.subarray(start, end + 1)
      start = end + 1
      if (raw.length === 1) continue
      const h = parseHeader(raw.toString("utf8", 0, raw.length - 1), file, lineNo)
      if (!cells.has(h.cell)) {
        orphans.push(raw)
        orphaned++
      } else if (h.status === "failed") {
        retried++
      } else if (!isDone(h.cell, h.instance)) {
        markDone(h.cell, h.instance)
        entries.push({ cell: h.cell, instance: h.instance, offset: size, length: raw.length, seq: seq++ })
        size += raw.length
        keep.push(raw)
        kept++
      }
    }
    if (orphans.length > 0) fs.appendFileSync(orphanFile, Buffer.concat(orphans))
    if (truncated || retried > 0 || orphaned > 0 || kept !== lineNo) {
      replaceFile(file, (fd) => {
        for (const b of keep) writeAll(fd, b)
      })
    }
  }

  let fd: number | undefined = fs.openSync(file, "a")
  let buffer: Array<string> = []

  const flush = () => {
    if (buffer.length === 0 || fd === undefined) return
    writeAll(fd, Buffer.from(buffer.join(""), "utf8"))
    buffer = []
  }
  const close = () => {
    flush()
    if (fd !== undefined) fs.closeSync(fd)
    fd = undefined
  }

  return {
    file,
    opened: { kept, retried, truncated, orphaned },
    isDone,
    size: () => entries.length,
    append: ({ cell, instance, text }) => {
      const length = Buffer.byteLength(text, "utf8")
      entries.push({ cell, instance, offset: size, length, seq: seq++ })
      markDone(cell, instance)
      size += length
      buffer.push(text)
    },
    flush,
    close,
    finalize: ({ cellOrder, instanceOrder, complete, onLine }) => {
      close()
      const position = (e: Entry) => instanceOrder.get(e.instance) ?? Number.POSITIVE_INFINITY
      const stay: Array<Entry> = []
      const away: Array<Entry> = []
      for (const e of entries) {
        if (!cellOrder.has(e.cell) || (complete && !instanceOrder.has(e.instance))) away.push(e)
        else stay.push(e)
      }
      stay.sort((a, b) => cellOrder.get(a.cell)! - cellOrder.get(b.cell)! || position(a) - position(b) || a.seq - b.seq)
      const rfd = fs.openSync(file, "r")
      const read = (e: Entry): Buffer => {
        const b = Buffer.allocUnsafe(e.length)
        let off = 0
        while (off < e.length) {
          const n = fs.readSync(rfd, b, off, e.length - off, e.offset + off)
          if (n === 0) throw new RunError({ path: file, reason: "the file became shorter while the sweep ran" })
          off += n
        }
        return b
      }
      try {
        if (away.length > 0) fs.appendFileSync(orphanFile, Buffer.concat(away.map(read)))
        replaceFile(file, (out) => {
          let pending: Array<Buffer> = []
          let bytes = 0
          for (const e of stay) {
            const b = read(e)
            onLine?.(b.toString("utf8", 0, b.length - 1), e.cell, e.instance)
            pending.push(b)
            bytes += b.length
            if (bytes >= 1 << 20) {
              writeAll(out, Buffer.concat(pending))
              pending = []
              bytes = 0
            }
          }
          writeAll(out, Buffer.concat(pending))
        })
      } finally {
        fs.closeSync(rfd)
      }
      return { lines: stay.length, orphaned: away.length }
    }
  }
}

/**
 * The pairs a results directory already holds (`cell\u0000instance` of ok lines of `cells`), read
 * without changing anything (dry runs).
 */
export const readDone = (dir: string, cells: ReadonlySet<string>): Set<string> => {
  const file = path.join(dir, fileName)
  const done = new Set<string>()
  if (!fs.existsSync(file)) return done
  const lines = fs.readFileSync(file, "utf8").split("\n")
  lines.pop() // empty after the last newline, or a line cut short
  lines.forEach((text, i) => {
    if (text.length === 0) return
    const h = parseHeader(text, file, i + 1)
    if (h.status === "ok" && cells.has(h.cell)) done.add(key(h.cell, h.instance))
  })
  return done
}

/** Read every line of a results file (for `report` and tools). */
export const readLines = (file: string): Array<string> => {
  const text = fs.readFileSync(file, "utf8")
  return text.split("\n").filter((l) => l.length > 0)
}
