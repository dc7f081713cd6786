/**
 * Writing files so that readers never see half of one, and saying why a write failed in words.
 * The project's one atomic-write helper: the content goes to a temporary file in the same
 * directory, is flushed to disk, and replaces the target by a rename; on any failure the temporary
 * file is removed and the target is left as it was.
 *
 * @example
 * import { Files } from "@cupid-lab/core"
 * Files.writeAtomic("runs/x/summary.json", text)
 * Files.replace("runs/x/results.jsonl", (fd) => fs.writeSync(fd, bytes))
 * Files.describe(error) // "no space left on device (ENOSPC)"
 */
import * as fs from "node:fs"

let counter = 0

/** Write `file` through a temporary file and a rename; `write` fills the open temporary file. */
export const replace = (file: string, write: (fd: number) => void): void => {
  const tmp = `${file}.${process.pid}.${counter++}.tmp`
  let fd: number | undefined
  try {
    fd = fs.openSync(tmp, "w")
    write(fd)
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fd = undefined
    fs.renameSync(tmp, file)
  } catch (e) {
    if (fd !== undefined) {
      try {
        fs.closeSync(fd)
      } catch {
        // already failing: the first error is the one to report
      }
    }
    fs.rmSync(tmp, { force: true })
    throw e
  }
}

/** Write all of `data` at the descriptor's position (a short write is continued, not lost). */
export const writeAll = (fd: number, data: Uint8Array): void => {
  let off = 0
  while (off < data.length) off += fs.writeSync(fd, data, off, data.length - off)
}

/** Replace `file` with `data` atomically. */
export const writeAtomic = (file: string, data: string | Uint8Array): void =>
  replace(file, (fd) => writeAll(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data))

const words: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "read-only file system",
  EIO: "input/output error",
  EISDIR: "is a directory",
  ENOENT: "no such file or directory",
  EMFILE: "too many open files",
  EFBIG: "file too large"
}

/** The system error code of a failed file operation, when it has one. */
export const code = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

/** Why a file operation failed, in words with the system code: "no space left on device (ENOSPC)". */
export const describe = (e: unknown): string => {
  const c = code(e)
  if (c !== undefined) return `${words[c] ?? "system error"} (${c})`
  return e instanceof Error ? e.message : String(e)
}
