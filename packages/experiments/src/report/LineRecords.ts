/**
 * A run's lines as compact binary records, one store per cell: what {@link Rows} keeps of each
 * line instead of holding it in memory. A store is bytes in memory (tests, `report --run`, small
 * sweeps) or a file in a spill directory (a large sweep), so a sweep holds no per-line data: a cell's
 * records are read back when its columns are needed (the summary, the paired tests), and the
 * results files read every cell's records back in line order ({@link merge}).
 *
 * A record, little-endian:
 *
 * | field | bytes |
 * | --- | --- |
 * | record length (all fields) | u32 |
 * | line number in the results file | u32 |
 * | instance number | u32 |
 * | flags: 1 failed, 2 has a selection, 4 has usage, 8 has an error | u8 |
 * | selection (session ids joined by one space) | str, when flagged |
 * | calls, prompt tokens, completion tokens | 3 × f64, when flagged |
 * | error stage, plugin, tag, message | 4 × str, when flagged |
 * | scores | u16 count, then per score: u16 key number, u8 kind (0 none, 1 a value, 2 counts), f64 value or 2 × f64 counts |
 *
 * where str is a u32 byte length and UTF-8 bytes. Spill files are scratch data of one process (the
 * sweep that writes them removes them), read with node's synchronous calls like any buffer.
 *
 * @example
 * import * as LineRecords from "@cupid-lab/experiments/report/LineRecords"
 * const store = LineRecords.memory()
 * const w = new LineRecords.Writer()
 * w.start(0, 3, { failed: false, selection: "s1 s2", usage: undefined, error: null })
 * w.score(0, 0.5)
 * store.append(w.finish())
 * const r = LineRecords.cursor(store.ref())
 * r.next() // true; r.line === 0, r.instance === 3
 */
import * as fs from "node:fs"
import * as path from "node:path"

export interface LineError {
  readonly stage: string
  readonly plugin: string
  readonly tag: string
  readonly message: string
}

/** Where a cell's records are: bytes in memory, or a spill file. Plain data: a worker thread can be given it. */
export type StoreRef =
  | { readonly _tag: "Memory"; readonly bytes: Uint8Array }
  | { readonly _tag: "File"; readonly path: string; readonly size: number }

export interface Store {
  /** Append one record (as {@link Writer.finish} gives it). */
  readonly append: (record: Uint8Array) => void
  /** The records appended so far (a file's buffer is written out first). */
  readonly ref: () => StoreRef
}

const FAILED = 1, SELECTION = 2, USAGE = 4, ERROR = 8
export const kinds = { none: 0, value: 1, counts: 2 } as const

/** Records in memory, in one growing buffer. */
export const memory = (): Store => {
  let bytes = new Uint8Array(0)
  let size = 0
  return {
    append: (record) => {
      if (size + record.length > bytes.length) {
        const next = new Uint8Array(Math.max(4096, bytes.length * 2, size + record.length))
        next.set(bytes.subarray(0, size))
        bytes = next
      }
      bytes.set(record, size)
      size += record.length
    },
    ref: () => ({ _tag: "Memory", bytes: bytes.subarray(0, size) })
  }
}

const bufferBytes = 1 << 16

/**
 * Records in a file (created empty now), written a buffer at a time. A failed write throws the
 * system error (the caller names the spill directory); the records before it stay in the file.
 */
export const file = (target: string): Store => {
  fs.writeFileSync(target, new Uint8Array(0))
  const buffer = new Uint8Array(bufferBytes)
  let used = 0
  let size = 0
  const flush = () => {
    if (used === 0) return
    fs.appendFileSync(target, buffer.subarray(0, used))
    size += used
    used = 0
  }
  return {
    append: (record) => {
      if (used + record.length > buffer.length) flush()
      if (record.length > buffer.length) {
        fs.appendFileSync(target, record)
        size += record.length
      } else {
        buffer.set(record, used)
        used += record.length
      }
    },
    ref: () => {
      flush()
      return { _tag: "File", path: target, size }
    }
  }
}

/** A spill directory's store for the cell numbered `cell`. */
export const cellFile = (dir: string, cell: number): Store => file(path.join(dir, `cell-${cell}.bin`))

/** What a record holds besides its scores. */
export interface Head {
  readonly failed: boolean
  readonly selection: string | null
  readonly usage: { readonly calls: number; readonly promptTokens: number; readonly completionTokens: number } | undefined
  readonly error: LineError | null
}

/** Encodes one record at a time into a buffer it reuses: {@link start}, {@link score} per score, {@link finish}. */
export class Writer {
  private bytes = new Uint8Array(1024)
  private view = new DataView(this.bytes.buffer)
  /** The same bytes as a Buffer, to encode strings into. */
  private text = Buffer.from(this.bytes.buffer)
  private pos = 0
  private scores = 0
  private scoresAt = 0

  private room(n: number): void {
    if (this.pos + n <= this.bytes.length) return
    const next = new Uint8Array(Math.max(this.bytes.length * 2, this.pos + n))
    next.set(this.bytes.subarray(0, this.pos))
    this.bytes = next
    this.view = new DataView(next.buffer)
    this.text = Buffer.from(next.buffer)
  }
  private u8(x: number): void {
    this.room(1)
    this.view.setUint8(this.pos, x)
    this.pos += 1
  }
  private u16(x: number): void {
    this.room(2)
    this.view.setUint16(this.pos, x, true)
    this.pos += 2
  }
  private u32(x: number): void {
    this.room(4)
    this.view.setUint32(this.pos, x, true)
    this.pos += 4
  }
  private f64(x: number): void {
    this.room(8)
    this.view.setFloat64(this.pos, x, true)
    this.pos += 8
  }
  private str(s: string): void {
    this.room(4 + s.length * 3)
    const n = this.text.write(s, this.pos + 4, "utf8")
    this.view.setUint32(this.pos, n, true)
    this.pos += 4 + n
  }

  start(line: number, instance: number, head: Head): void {
    this.pos = 4
    this.u32(line)
    this.u32(instance)
    this.u8((head.failed ? FAILED : 0) | (head.selection !== null ? SELECTION : 0) | (head.usage !== undefined ? USAGE : 0) | (head.error !== null ? ERROR : 0))
    if (head.selection !== null) this.str(head.selection)
    if (head.usage !== undefined) {
      this.f64(head.usage.calls)
      this.f64(head.usage.promptTokens)
      this.f64(head.usage.completionTokens)
    }
    if (head.error !== null) {
      this.str(head.error.stage)
      this.str(head.error.plugin)
      this.str(head.error.tag)
      this.str(head.error.message)
    }
    this.scoresAt = this.pos
    this.u16(0)
    this.scores = 0
  }

  /** A score of key number `key`: null (no value), a number, or counts. */
  score(key: number, v: number | null | { readonly num: number; readonly den: number }): void {
    this.u16(key)
    if (v === null) this.u8(kinds.none)
    else if (typeof v === "number") {
      this.u8(kinds.value)
      this.f64(v)
    } else {
      this.u8(kinds.counts)
      this.f64(v.num)
      this.f64(v.den)
    }
    this.scores++
  }

  /** The record's bytes (a view of the writer's buffer, valid until the next {@link start}). */
  finish(): Uint8Array {
    this.view.setUint16(this.scoresAt, this.scores, true)
    this.view.setUint32(0, this.pos, true)
    return this.bytes.subarray(0, this.pos)
  }
}

/**
 * Where bytes come from: all at once, or a file a chunk at a time. `fill(at, n)` makes bytes
 * [at, at + n) readable in `bytes`, which holds the source from byte `base` on; false past the end.
 */
interface Source {
  bytes: Uint8Array
  base: number
  readonly fill: (at: number, n: number) => boolean
}

const whole = (bytes: Uint8Array): Source => ({ bytes, base: 0, fill: (at, n) => at + n <= bytes.length })

/** Bytes a file cursor reads at a time (less for a smaller file; a longer record gets a larger buffer). */
const chunkBytes = 1 << 18

/** Bytes the file cursors of one merge read at a time, all together (each at least {@link minChunkBytes}). */
const mergeBytes = 32 * 2 ** 20
const minChunkBytes = 1 << 14

/** A file read a chunk at a time (opened for each chunk, so an abandoned read holds no descriptor). */
const chunked = (file: string, size: number, chunk: number): Source => {
  let end = 0
  const source: Source = {
    bytes: new Uint8Array(Math.max(4, Math.min(chunk, size))),
    base: 0,
    fill: (at, n) => {
      if (at + n > size) return false
      if (at >= source.base && at + n <= end) return true
      if (n > source.bytes.length) source.bytes = new Uint8Array(n)
      const fd = fs.openSync(file, "r")
      try {
        const want = Math.min(source.bytes.length, size - at)
        let got = 0
        while (got < want) {
          const r = fs.readSync(fd, source.bytes, got, want - got, at + got)
          if (r === 0) break
          got += r
        }
        source.base = at
        end = at + got
      } finally {
        fs.closeSync(fd)
      }
      if (at + n > end) throw new Error(`${file}: ended at byte ${end}, before the record at ${at} (expected ${size} bytes)`)
      return true
    }
  }
  return source
}

/**
 * A cursor over a store's records. {@link next} moves to the next record and reads its line
 * number, instance and flags; {@link head} reads the selection, usage and error into the cursor's
 * fields, {@link scores} the scores; both until the next call of {@link next}.
 */
export class Cursor {
  line = -1
  instance = -1
  failed = false
  selection: string | null = null
  calls = 0
  promptTokens = 0
  completionTokens = 0
  error: LineError | null = null
  private at = 0
  private bytes: Uint8Array = new Uint8Array(0)
  private view: DataView = new DataView(this.bytes.buffer)
  /** The same bytes as a Buffer, whose UTF-8 decoding of short strings is the fastest node has. */
  private text: Buffer = Buffer.alloc(0)
  private pos = 0
  private flags = 0
  private fieldsAt = 0

  constructor(private readonly source: Source) {}

  next(): boolean {
    const src = this.source
    if (!src.fill(this.at, 4)) return false
    this.sync()
    const length = this.view.getUint32(this.at - src.base, true)
    if (!src.fill(this.at, length)) throw new Error(`a line record at byte ${this.at} is cut short (${length} bytes expected)`)
    this.sync()
    this.pos = this.at - src.base + 4
    this.at += length
    this.line = this.view.getUint32(this.pos, true)
    this.instance = this.view.getUint32(this.pos + 4, true)
    this.flags = this.view.getUint8(this.pos + 8)
    this.failed = (this.flags & FAILED) !== 0
    this.fieldsAt = this.pos + 9
    return true
  }

  /** Views of the source's buffer, when it is a new one. */
  private sync(): void {
    const b = this.source.bytes
    if (b === this.bytes) return
    this.bytes = b
    this.view = new DataView(b.buffer, b.byteOffset, b.byteLength)
    this.text = Buffer.from(b.buffer, b.byteOffset, b.byteLength)
  }

  private str(): string {
    const n = this.view.getUint32(this.pos, true)
    const s = this.text.toString("utf8", this.pos + 4, this.pos + 4 + n)
    this.pos += 4 + n
    return s
  }
  private skipStr(): void {
    this.pos += 4 + this.view.getUint32(this.pos, true)
  }

  /** Read the selection (null when the line has none), usage and error into the cursor's fields. */
  head(): void {
    this.pos = this.fieldsAt
    this.selection = (this.flags & SELECTION) !== 0 ? this.str() : null
    this.calls = this.promptTokens = this.completionTokens = 0
    if ((this.flags & USAGE) !== 0) {
      this.calls = this.view.getFloat64(this.pos, true)
      this.promptTokens = this.view.getFloat64(this.pos + 8, true)
      this.completionTokens = this.view.getFloat64(this.pos + 16, true)
      this.pos += 24
    }
    this.error = (this.flags & ERROR) !== 0 ? { stage: this.str(), plugin: this.str(), tag: this.str(), message: this.str() } : null
  }

  /** Each score of the record: its key number, kind ({@link kinds}) and one or two numbers (NaN when absent). */
  scores(visit: (key: number, kind: number, a: number, b: number) => void): void {
    this.pos = this.fieldsAt
    if ((this.flags & SELECTION) !== 0) this.skipStr()
    if ((this.flags & USAGE) !== 0) this.pos += 24
    if ((this.flags & ERROR) !== 0) for (let k = 0; k < 4; k++) this.skipStr()
    const count = this.view.getUint16(this.pos, true)
    this.pos += 2
    for (let s = 0; s < count; s++) {
      const key = this.view.getUint16(this.pos, true)
      const kind = this.view.getUint8(this.pos + 2)
      this.pos += 3
      if (kind === kinds.value) {
        visit(key, kind, this.view.getFloat64(this.pos, true), NaN)
        this.pos += 8
      } else if (kind === kinds.counts) {
        visit(key, kind, this.view.getFloat64(this.pos, true), this.view.getFloat64(this.pos + 8, true))
        this.pos += 16
      } else visit(key, kind, NaN, NaN)
    }
  }
}

/** A cursor over a store's records: a file's are read a chunk at a time. */
export const cursor = (ref: StoreRef, chunk = chunkBytes): Cursor => new Cursor(ref._tag === "Memory" ? whole(ref.bytes) : chunked(ref.path, ref.size, chunk))


/**
 * The records of several stores in line-number order (each store holds its lines in increasing
 * order), as the results file has them: {@link Merged.next} moves to the next record and gives
 * its store's number (-1 after the last), whose cursor is then on it.
 */
export interface Merged {
  readonly next: () => number
  readonly cursors: ReadonlyArray<Cursor>
}

export const merge = (refs: ReadonlyArray<StoreRef>): Merged => {
  // The cursors' buffers stay within a fixed total however many cells there are.
  const chunk = Math.max(minChunkBytes, Math.min(chunkBytes, Math.floor(mergeBytes / Math.max(1, refs.length))))
  const cursors = refs.map((r) => cursor(r, chunk))
  // A binary heap of store numbers keyed by their cursors' current line.
  const heap: Array<number> = []
  const less = (a: number, b: number) => cursors[a]!.line < cursors[b]!.line
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!less(heap[i]!, heap[parent]!)) return
      ;[heap[i], heap[parent]] = [heap[parent]!, heap[i]!]
      i = parent
    }
  }
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1, r = l + 1
      let m = i
      if (l < heap.length && less(heap[l]!, heap[m]!)) m = l
      if (r < heap.length && less(heap[r]!, heap[m]!)) m = r
      if (m === i) return
      ;[heap[i], heap[m]] = [heap[m]!, heap[i]!]
      i = m
    }
  }
  cursors.forEach((c, s) => {
    if (c.next()) {
      heap.push(s)
      up(heap.length - 1)
    }
  })
  // The store handed out last: advanced when the next record is asked for.
  let pending = -1
  return {
    cursors,
    next: () => {
      if (pending >= 0) {
        if (cursors[pending]!.next()) down(0)
        else {
          const last = heap.pop()!
          if (heap.length > 0) {
            heap[0] = last
            down(0)
          }
        }
        pending = -1
      }
      if (heap.length === 0) return -1
      pending = heap[0]!
      return pending
    }
  }
}
