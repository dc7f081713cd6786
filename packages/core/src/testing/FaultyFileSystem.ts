/**
 * A `FileSystem` for tests of write failures: the real Node file system, except that once a number
 * of bytes has been written through it, writes fail the way a full disk (or a revoked permission,
 * or a failing device) makes them fail. The write that crosses the limit writes the bytes that
 * still fit first, as a real short write on a full disk does.
 *
 * @example
 * import { FaultyFileSystem } from "@cupid-lab/core/testing"
 * program.pipe(Effect.provide(FaultyFileSystem.layer({ failAfterBytes: 1000, paths: (p) => p.endsWith(".jsonl") })))
 * // -> fails with a SystemError whose cause has code "ENOSPC"
 */
import { FileSystem } from "@effect/platform"
import { type PlatformError, SystemError, type SystemErrorReason } from "@effect/platform/Error"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Layer } from "effect"

export interface Options {
  /** Bytes that are written normally (counted over every matching file); later writes fail. */
  readonly failAfterBytes: number
  /** The system error code of the failures (default "ENOSPC"). */
  readonly code?: string
  /** Which files count and fail (default: all). */
  readonly paths?: (path: string) => boolean
}

const reasons: Readonly<Record<string, SystemErrorReason>> = { EACCES: "PermissionDenied", ENOENT: "NotFound" }

/** The error Node's file system would give, wrapped as the platform's. */
const failure = (code: string, method: string, path: string): SystemError => {
  const cause = Object.assign(new Error(`${code}: write failed, ${method} '${path}'`), { code, syscall: "write", path })
  return new SystemError({
    reason: reasons[code] ?? "Unknown",
    module: "FileSystem",
    method,
    pathOrDescriptor: path,
    syscall: "write",
    description: cause.message,
    cause
  })
}

/** Wrap `real` so that writes to matching files fail after `failAfterBytes` bytes. */
export const make = (real: FileSystem.FileSystem, options: Options): FileSystem.FileSystem => {
  const code = options.code ?? "ENOSPC"
  const counts = options.paths ?? (() => true)
  let left = options.failAfterBytes
  /** Writes what still fits with `write`, then fails if something did not fit. */
  const limited = (
    path: string,
    method: string,
    data: Uint8Array,
    write: (data: Uint8Array) => Effect.Effect<void, PlatformError>
  ) =>
    Effect.suspend(() => {
      if (!counts(path)) return write(data)
      const fits = Math.max(0, Math.min(left, data.length))
      left -= fits
      const head = fits > 0 ? write(data.subarray(0, fits)) : Effect.void
      return fits === data.length ? head : Effect.zipRight(head, Effect.fail(failure(code, method, path)))
    })
  const wrap = (path: string, file: FileSystem.File): FileSystem.File => ({
    [FileSystem.FileTypeId]: FileSystem.FileTypeId,
    fd: file.fd,
    get stat() {
      return file.stat
    },
    get sync() {
      return file.sync
    },
    seek: (offset, from) => file.seek(offset, from),
    read: (buffer) => file.read(buffer),
    readAlloc: (size) => file.readAlloc(size),
    truncate: (length) => file.truncate(length),
    write: (buffer) =>
      Effect.as(
        limited(path, "write", buffer, (b) => file.writeAll(b)),
        FileSystem.Size(buffer.length)
      ),
    writeAll: (buffer) => limited(path, "writeAll", buffer, (b) => file.writeAll(b))
  })
  return FileSystem.make({
    ...real,
    open: (path, openOptions) => Effect.map(real.open(path, openOptions), (file) => wrap(path, file)),
    writeFile: (path, data, writeOptions) =>
      counts(path)
        ? Effect.suspend(() => {
            const fits = Math.max(0, Math.min(left, data.length))
            left -= fits
            // A whole-file write that does not fit leaves what fitted, like a real one.
            return fits === data.length
              ? real.writeFile(path, data, writeOptions)
              : Effect.zipRight(
                  real.writeFile(path, data.subarray(0, fits), writeOptions),
                  Effect.fail(failure(code, "writeFile", path))
                )
          })
        : real.writeFile(path, data, writeOptions)
  })
}

/** The Node file system with failing writes (a fresh byte budget each time the layer is built). */
export const layer = (options: Options): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) => make(real, options))
  ).pipe(Layer.provide(NodeFileSystem.layer))
