/**
 * Writing files so that readers never see half of one, and saying why a write failed in words.
 *
 * The project's one atomic write, over `@effect/platform`'s `FileSystem`: the content goes to a
 * temporary file in the target's directory (`<file>.<pid>.<n>.tmp`), is synced to disk, and
 * replaces the target by a rename. On any failure or interruption the temporary file is removed
 * and the effect fails with the original error; the target is left as it was.
 *
 * @example
 * import { Files } from "@cupid-lab/core"
 * import { NodeFileSystem } from "@effect/platform-node"
 *
 * yield* Files.writeFileAtomic("runs/x/summary.json", text)
 * // large files: write chunk by chunk, the same guarantees
 * yield* Files.writeFileAtomicWith("runs/x/results.jsonl", (write) =>
 *   Effect.forEach(chunks, write, { discard: true }))
 * // failures in words
 * Files.describe(error) // "no space left on device (ENOSPC)"
 */
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect } from "effect"
import * as path from "node:path"

/** Writes one chunk to the temporary file (all of it: a short write is continued). */
export type Write = (chunk: Uint8Array) => Effect.Effect<void, PlatformError>

let counter = 0

/** The temporary name next to `file` (same directory, so the rename never crosses file systems). */
export const temporaryName = (file: string): string => `${file}.${process.pid}.${counter++}.tmp`

/**
 * Replace `file` atomically with what `write` writes, chunk by chunk (for files too large to build
 * in memory). Returns what `write` returns.
 */
export const writeFileAtomicWith = <A, E, R>(
  file: string,
  write: (write: Write) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | PlatformError, R | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fileSystem = yield* FileSystem.FileSystem
    const tmp = temporaryName(file)
    return yield* Effect.scoped(
      Effect.gen(function* () {
        const out = yield* fileSystem.open(tmp, { flag: "w" })
        // (an empty chunk is no write: the platform's writeAll takes 0 bytes written for a full disk)
        const result = yield* write((chunk) => (chunk.length === 0 ? Effect.void : out.writeAll(chunk)))
        yield* out.sync
        return result
      })
    ).pipe(
      // The file is closed when the scope ends, before the rename.
      Effect.tap(() => fileSystem.rename(tmp, file)),
      Effect.onError(() => fileSystem.remove(tmp, { force: true }).pipe(Effect.ignore))
    )
  })

/**
 * Create `dir` and its missing parents. Node reports a recursive create on a read-only file system
 * as ENOENT; the first missing parent is then created alone, which fails with the real cause
 * (EROFS, EACCES).
 */
export const makeDirectory = (dir: string): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fileSystem) =>
    fileSystem.makeDirectory(dir, { recursive: true }).pipe(
      Effect.catchIf(
        (e) => e._tag === "SystemError" && e.reason === "NotFound",
        () =>
          Effect.gen(function* () {
            let missing = path.resolve(dir)
            while (!(yield* fileSystem.exists(path.dirname(missing)).pipe(Effect.orElseSucceed(() => true))))
              missing = path.dirname(missing)
            yield* fileSystem.makeDirectory(missing)
            yield* fileSystem.makeDirectory(dir, { recursive: true })
          })
      )
    )
  )

/** Whether `file` exists; one that cannot be checked (e.g. no permission on its folder) counts as absent. */
export const exists = (fileSystem: FileSystem.FileSystem, file: string): Effect.Effect<boolean> =>
  fileSystem.exists(file).pipe(Effect.orElseSucceed(() => false))

/** Replace `file` atomically with `data` (a string is written as UTF-8). */
export const writeFileAtomic = (
  file: string,
  data: string | Uint8Array
): Effect.Effect<void, PlatformError, FileSystem.FileSystem> =>
  writeFileAtomicWith(file, (write) => write(typeof data === "string" ? new TextEncoder().encode(data) : data))

const words: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EIO: "input/output error",
  EISDIR: "is a directory",
  ENOTDIR: "not a directory",
  ENOENT: "no such file or directory",
  EEXIST: "file already exists",
  EMFILE: "too many open files",
  EFBIG: "file too large"
}

const ownCode = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/**
 * The system error code of a failed file operation ("ENOSPC"), when it has one: read from a Node
 * error, or from the Node error a platform `SystemError` carries as its cause.
 */
export const code = (e: unknown): string | undefined =>
  ownCode(e) ?? (typeof e === "object" && e !== null && "cause" in e ? ownCode(e.cause) : undefined)

/** Why a file operation failed, in words with the system code: "no space left on device (ENOSPC)". */
export const describe = (e: unknown): string => {
  const c = code(e)
  if (c !== undefined) return `${words[c] ?? "system error"} (${c})`
  return e instanceof Error ? e.message : String(e)
}
