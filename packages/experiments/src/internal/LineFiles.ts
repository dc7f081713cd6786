import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Data, Effect } from "effect"

/** Bytes read per call: few enough calls that reading is as fast as the disk. */
const chunkBytes = 8 << 20
/** Bytes of lines gathered in memory at once when copying lines out of order. */
const windowBytes = 64 << 20

/**
 * Calls `onLines` with the complete lines of `file`, chunk by chunk, in order (each a view with its
 * "\n", valid until the returned effect ends). Returns the byte length of the complete lines and
 * whether a partial last line (no "\n") follows them.
 */
export const scan = <E, R>(
  fileSystem: FileSystem.FileSystem,
  file: string,
  onLines: (lines: ReadonlyArray<Buffer>) => Effect.Effect<void, E, R>
): Effect.Effect<{ readonly end: number; readonly partial: boolean }, E | PlatformError, R> =>
  Effect.scoped(Effect.gen(function*() {
    const input = yield* fileSystem.open(file, { flag: "r" })
    let buf = Buffer.allocUnsafe(chunkBytes)
    let filled = 0
    let end = 0
    for (;;) {
      if (filled === buf.length) {
        // One line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafe(buf.length * 2)
        buf.copy(bigger, 0, 0, filled)
        buf = bigger
      }
      const n = Number(yield* input.read(buf.subarray(filled)))
      if (n === 0) break
      filled += n
      const view = buf.subarray(0, filled)
      const lines: Array<Buffer> = []
      let start = 0
      for (let nl = view.indexOf(10, start); nl !== -1; nl = view.indexOf(10, start)) {
        lines.push(view.subarray(start, nl + 1))
        start = nl + 1
      }
      if (lines.length > 0) yield* onLines(lines)
      end += start
      buf.copy(buf, 0, start, filled)
      filled -= start
    }
    return { end, partial: filled > 0 }
  }))

export interface Span {
  readonly offset: number
  readonly length: number
}

/**
 * Reads the spans of `file` in the order given, window by window (at most 64 MB of lines in memory),
 * each window read front to back in large chunks: `onWindow` gets the window's bytes (a view valid
 * until the returned effect ends), the spans in it and where each starts in those bytes.
 */
export const copyInOrder = <S extends Span, E, R>(
  fileSystem: FileSystem.FileSystem,
  file: string,
  spans: ReadonlyArray<S>,
  onWindow: (bytes: Buffer, spans: ReadonlyArray<S>, starts: ReadonlyArray<number>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | PlatformError | ShortFile, R> =>
  Effect.scoped(Effect.gen(function*() {
    if (spans.length === 0) return
    const input = yield* fileSystem.open(file, { flag: "r" })
    let chunk = Buffer.allocUnsafe(chunkBytes)
    let chunkStart = 0, chunkLength = 0
    let out = Buffer.allocUnsafe(0)
    /** Load the chunk that starts at `offset` (and holds at least `length` bytes). */
    const load = (offset: number, length: number) =>
      Effect.gen(function*() {
        if (length > chunk.length) chunk = Buffer.allocUnsafe(length)
        yield* input.seek(offset, "start")
        chunkStart = offset
        chunkLength = 0
        while (chunkLength < chunk.length) {
          const n = Number(yield* input.read(chunk.subarray(chunkLength)))
          if (n === 0) break
          chunkLength += n
        }
        if (chunkLength < length) return yield* Effect.fail(new ShortFile())
      })
    let first = 0
    while (first < spans.length) {
      let last = first, bytes = 0
      while (last < spans.length && (last === first || bytes + spans[last]!.length <= windowBytes)) bytes += spans[last++]!.length
      const window = spans.slice(first, last)
      const starts = new Array<number>(window.length)
      let at = 0
      for (let i = 0; i < window.length; i++) {
        starts[i] = at
        at += window[i]!.length
      }
      const byOffset = window.map((_, i) => i).sort((a, b) => window[a]!.offset - window[b]!.offset)
      // One buffer for every window (the previous one is written by then): no new pages to fault in.
      if (out.length < bytes) out = Buffer.allocUnsafe(bytes)
      chunkStart = 0
      chunkLength = 0
      for (const i of byOffset) {
        const s = window[i]!
        if (s.offset < chunkStart || s.offset + s.length > chunkStart + chunkLength) yield* load(s.offset, s.length)
        out.set(chunk.subarray(s.offset - chunkStart, s.offset - chunkStart + s.length), starts[i]!)
      }
      yield* onWindow(out.subarray(0, bytes), window, starts)
      first = last
    }
  }))

/** The file ended before a line it was known to hold (changed by something else meanwhile). */
export class ShortFile extends Data.TaggedError("ShortFile") {}
