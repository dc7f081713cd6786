// The synchronous store the runner used before ResultStore became a layer over the platform
// FileSystem; kept only until the runner moves to ResultStore.layer, then deleted.
import { Files } from "@cupid-lab/core"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RunError } from "../Errors.js"

export const fileName = "results.jsonl"
export const orphanFileName = "results.orphaned.jsonl"
export const corruptFileName = "results.corrupt.jsonl"
export const lockFileName = ".lock"

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
  /** Corrupt lines moved to results.corrupt.jsonl (only with `repair`). */
  readonly corrupt: number
  /** The lock of a sweep that is gone (PID and host), taken over. */
  readonly staleLock: string | undefined
}

export interface OpenOptions {
  /** Keep the intact lines of a file with corrupt ones, moving those to results.corrupt.jsonl. */
  readonly repair?: boolean
  /** How appended lines reach the file (default: every byte, continuing short writes); tests pass a failing one. */
  readonly write?: (fd: number, data: Uint8Array) => void
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
  /** Flush, sort, rewrite atomically and close the file (the lock stays until `close`). Returns the number of lines moved out. */
  readonly finalize: (options: FinalizeOptions) => { readonly lines: number; readonly orphaned: number }
  /** Flush what is buffered, close the file and give the directory's lock back; safe to call more than once. */
  readonly close: () => void
}

const key = (cell: string, instance: string) => `${cell}\u0000${instance}`

const writeAll = Files.writeAll

const writeFailed = (file: string, e: unknown, intact: number, doing: string): RunError =>
  e instanceof RunError
    ? e
    : new RunError({
      path: file,
      reason: `cannot ${doing}: ${Files.describe(e)}; the ${intact} result lines written before are intact; free space (or fix the permissions) and rerun the same command to resume`
    })

interface Holder {
  readonly pid: number
  readonly host: string
  readonly startedAt: string
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return Files.code(e) === "EPERM"
  }
}

const readHolder = (file: string): Holder | undefined => {
  try {
    const v: unknown = JSON.parse(fs.readFileSync(file, "utf8"))
    if (typeof v !== "object" || v === null) return undefined
    const { pid, host, startedAt } = v as Record<string, unknown>
    return typeof pid === "number" && typeof host === "string" && typeof startedAt === "string" ? { pid, host, startedAt } : undefined
  } catch {
    return undefined
  }
}

/**
 * Take `<dir>/.lock`, or fail naming the sweep that holds it. A lock of a process that is gone on
 * this host (or an unreadable one) is taken over; returns a notice then.
 */
const lock = (dir: string): { readonly release: () => void; readonly stale: string | undefined } => {
  const file = path.join(dir, lockFileName)
  const me: Holder = { pid: process.pid, host: os.hostname(), startedAt: new Date().toISOString() }
  let stale: string | undefined
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(me)}\n`, { flag: "wx" })
      return {
        stale,
        release: () => {
          if (readHolder(file)?.pid === me.pid) fs.rmSync(file, { force: true })
        }
      }
    } catch (e) {
      if (Files.code(e) !== "EEXIST") {
        throw new RunError({ path: file, reason: `cannot lock the run directory: ${Files.describe(e)}` })
      }
    }
    const holder = readHolder(file)
    if (holder !== undefined && (holder.host !== me.host || alive(holder.pid))) {
      throw new RunError({
        path: dir,
        reason: `another sweep (PID ${holder.pid} on ${holder.host}, started ${holder.startedAt}) is writing to this run directory; ` +
          `wait for it to end, stop it, or give this sweep another --out (if that process is gone, delete ${file})`
      })
    }
    stale = holder === undefined ? "an unreadable lock" : `PID ${holder.pid} on ${holder.host}, started ${holder.startedAt}`
    fs.rmSync(file, { force: true })
  }
  throw new RunError({ path: file, reason: "another sweep took the run directory's lock at the same moment; rerun" })
}

interface Header {
  readonly cell: string
  readonly instance: string
  readonly status: string
}

/** A line's header, or why the line is not a result line. */
const readHeader = (text: string): Header | string => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return "not valid JSON"
  }
  if (typeof value !== "object" || value === null) return "not a JSON object"
  const v = value as Partial<Record<string, unknown>>
  if (typeof v.cell !== "string" || typeof v.instance !== "string" || (v.status !== "ok" && v.status !== "failed")) {
    return `not a result line (expected string "cell" and "instance" and "status" ok or failed)`
  }
  return { cell: v.cell, instance: v.instance, status: v.status }
}

const corruptError = (file: string, bad: ReadonlyArray<{ readonly line: number; readonly why: string }>, intact: number): RunError => {
  const first = bad[0]!
  const more = bad.length > 1 ? ` (and ${bad.length - 1} more line${bad.length > 2 ? "s" : ""}: ${bad.slice(1, 6).map((b) => b.line).join(", ")}${bad.length > 6 ? ", ..." : ""})` : ""
  return new RunError({
    path: file,
    reason: `line ${first.line} is ${first.why}${more}; the file was edited or damaged. ` +
      `Rerun with --repair to keep the ${intact} intact lines and move the corrupt ones to ${corruptFileName}`
  })
}

/** Open (and tidy) the results of `dir` for a grid of `cells`, taking the directory's lock. Throws {@link RunError}. */
export const open = (dir: string, cells: ReadonlySet<string>, options: OpenOptions = {}): Store => {
  fs.mkdirSync(dir, { recursive: true })
  const held = lock(dir)
  try {
    return openLocked(dir, cells, options, held)
  } catch (e) {
    held.release()
    throw e
  }
}

const openLocked = (
  dir: string,
  cells: ReadonlySet<string>,
  options: OpenOptions,
  held: { readonly release: () => void; readonly stale: string | undefined }
): Store => {
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
  let kept = 0, retried = 0, orphaned = 0, corrupt = 0, truncated = false
  let size = 0
  let seq = 0

  if (fs.existsSync(file)) {
    const content = fs.readFileSync(file)
    const keep: Array<Buffer> = []
    const orphans: Array<Buffer> = []
    const damaged: Array<Buffer> = []
    const bad: Array<{ line: number; why: string }> = []
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
      const h = readHeader(raw.toString("utf8", 0, raw.length - 1))
      if (typeof h === "string") {
        bad.push({ line: lineNo, why: h })
        damaged.push(raw)
      } else if (!cells.has(h.cell)) {
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
    if (bad.length > 0 && options.repair !== true) throw corruptError(file, bad, lineNo - bad.length)
    try {
      if (damaged.length > 0) fs.appendFileSync(path.join(dir, corruptFileName), Buffer.concat(damaged))
      corrupt = damaged.length
      if (orphans.length > 0) fs.appendFileSync(orphanFile, Buffer.concat(orphans))
      if (retried > 0 || orphaned > 0 || corrupt > 0 || kept !== lineNo) {
        Files.replace(file, (fd) => {
          for (const b of keep) writeAll(fd, b)
        })
      } else if (truncated) {
        // Only a partial last line to drop (a kill, a full disk): cut it off in place, which
        // needs no free space.
        fs.truncateSync(file, start)
      }
    } catch (e) {
      throw writeFailed(file, e, lineNo, "tidy the results before resuming")
    }
  }

  let fd: number | undefined
  try {
    fd = fs.openSync(file, "a")
  } catch (e) {
    throw writeFailed(file, e, entries.length, "open the results for appending")
  }
  let buffer: Array<string> = []
  // Lines known to be whole in the file (kept ones and those of successful flushes).
  let written = entries.length
  let failure: RunError | undefined

  const flush = () => {
    if (failure !== undefined) throw failure
    if (buffer.length === 0 || fd === undefined) return
    try {
      ;(options.write ?? writeAll)(fd, Buffer.from(buffer.join(""), "utf8"))
    } catch (e) {
      // A part of the buffer may have reached the file: at most one partial last line, which the
      // next open drops (a kill leaves the same).
      failure = writeFailed(file, e, written, "append to the results")
      throw failure
    }
    written += buffer.length
    buffer = []
  }
  const closeFile = () => {
    try {
      if (failure === undefined) flush()
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
      fd = undefined
    }
  }
  /** Flush, close, and give the directory's lock back (also when the flush fails). */
  const close = () => {
    try {
      closeFile()
    } finally {
      held.release()
    }
  }

  return {
    file,
    opened: { kept, retried, truncated, orphaned, corrupt, staleLock: held.stale },
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
    finalize: (options) => finalizeLocked(options)
  }

  function finalizeLocked({ cellOrder, instanceOrder, complete, onLine }: FinalizeOptions): { readonly lines: number; readonly orphaned: number } {
      closeFile()
      if (failure !== undefined) throw failure
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
        // On a failed write the sorted copy is removed and the file stays as it was: every line
        // intact, not yet sorted (the next run sorts it).
        Files.replace(file, (out) => {
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
      } catch (e) {
        throw writeFailed(file, e, written, "write the sorted results")
      } finally {
        fs.closeSync(rfd)
      }
      return { lines: stay.length, orphaned: away.length }
  }
}
