// The one atomic write: a reader sees the old file or the new one, never half of one, and a failed
// write leaves the old file and no temporary file behind.
import { NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Files from "../src/Files.js"
import * as FaultyFileSystem from "../src/testing/FaultyFileSystem.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "files-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

describe("Files.writeFileAtomic", () => {
  it.effect("writes a string as UTF-8 and bytes as they are, replacing the file", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "summary.json")
      fs.writeFileSync(file, "old")
      yield* Files.writeFileAtomic(file, "café\n")
      expect(fs.readFileSync(file)).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xc3, 0xa9, 0x0a]))
      yield* Files.writeFileAtomic(file, new Uint8Array([1, 2, 3]))
      expect([...fs.readFileSync(file)]).toEqual([1, 2, 3])
      expect(fs.readdirSync(dir)).toEqual(["summary.json"])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("an empty string or chunk makes an empty file (a write of 0 bytes is no error)", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "instances.jsonl")
      fs.writeFileSync(file, "old")
      yield* Files.writeFileAtomic(file, "")
      expect(fs.readFileSync(file, "utf8")).toBe("")
      yield* Files.writeFileAtomicWith(file, (write) =>
        Effect.zipRight(write(new Uint8Array(0)), write(new TextEncoder().encode("x")))
      )
      expect(fs.readFileSync(file, "utf8")).toBe("x")
      expect(fs.readdirSync(dir)).toEqual(["instances.jsonl"])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("the streaming form writes every chunk in order and returns the writer's value", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "big.jsonl")
      const n = yield* Files.writeFileAtomicWith(file, (write) =>
        Effect.gen(function* () {
          for (let i = 0; i < 3; i++) yield* write(new TextEncoder().encode(`line ${i}\n`))
          return 3
        })
      )
      expect(n).toBe(3)
      expect(fs.readFileSync(file, "utf8")).toBe("line 0\nline 1\nline 2\n")
      expect(fs.readdirSync(dir)).toEqual(["big.jsonl"])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("a full disk (ENOSPC) fails with the original error, leaves the file as it was and no temporary file", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "summary.json")
      fs.writeFileSync(file, "the old summary\n")
      // 10 bytes fit, the 11th does not
      const exit = yield* Effect.exit(
        Files.writeFileAtomic(file, "x".repeat(4096)).pipe(
          Effect.provide(FaultyFileSystem.layer({ failAfterBytes: 10 }))
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error?._tag).toBe("SystemError")
        expect(Files.code(error)).toBe("ENOSPC")
        expect(Files.describe(error)).toBe("no space left on device (ENOSPC)")
      }
      expect(fs.readFileSync(file, "utf8")).toBe("the old summary\n")
      expect(fs.readdirSync(dir)).toEqual(["summary.json"])
    })
  )

  it.effect("a failure in the middle of a streamed write removes the temporary file (the writer's own error)", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = path.join(dir, "results.jsonl")
      const error = yield* Effect.flip(
        Files.writeFileAtomicWith(file, (write) =>
          Effect.gen(function* () {
            yield* write(new TextEncoder().encode("first\n"))
            return yield* Effect.fail("the reader failed" as const)
          })
        )
      )
      expect(error).toBe("the reader failed")
      expect(fs.readdirSync(dir)).toEqual([])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  // root writes anywhere, so there the injected EACCES below stands in for it
  it.effect.skipIf(process.getuid?.() === 0)(
    "a directory that cannot be written is EACCES in words, nothing left behind",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        fs.chmodSync(dir, 0o500)
        const error = yield* Effect.flip(Files.writeFileAtomic(path.join(dir, "run.json"), "{}"))
        fs.chmodSync(dir, 0o700)
        expect(Files.describe(error)).toBe("permission denied (EACCES)")
        expect(fs.readdirSync(dir)).toEqual([])
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("an injected EACCES on write is described in words, nothing left behind", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const error = yield* Effect.flip(
        Files.writeFileAtomic(path.join(dir, "run.json"), "{}").pipe(
          Effect.provide(FaultyFileSystem.layer({ failAfterBytes: 0, code: "EACCES" }))
        )
      )
      expect(Files.describe(error)).toBe("permission denied (EACCES)")
      expect(fs.readdirSync(dir)).toEqual([])
    })
  )
})

describe("Files.describe", () => {
  it("names the code in words, or gives the message of an error without one", () => {
    expect(Files.describe(Object.assign(new Error("x"), { code: "EIO" }))).toBe("input/output error (EIO)")
    expect(Files.describe(Object.assign(new Error("x"), { code: "EWHATEVER" }))).toBe("system error (EWHATEVER)")
    expect(Files.describe(new Error("plain"))).toBe("plain")
  })
})

describe("makeDirectory", () => {
  it.effect("creates missing parents, and an empty atomic write makes an empty file", () =>
    Effect.gen(function* () {
      const dir = path.join(tempDir(), "a", "b", "c")
      yield* Files.makeDirectory(dir)
      expect(fs.statSync(dir).isDirectory()).toBe(true)
      yield* Files.writeFileAtomic(path.join(dir, "empty"), new Uint8Array(0))
      expect(fs.readFileSync(path.join(dir, "empty")).length).toBe(0)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("names the real cause where Node reports a recursive create on a read-only file system as ENOENT", () =>
    Effect.gen(function* () {
      // Node's own behaviour on a read-only mount: recursive -> ENOENT, the single create -> EROFS.
      const readOnly = FileSystem.layerNoop({
        exists: (p) => Effect.succeed(p === "/" || p === "/ro"),
        makeDirectory: (p, options) =>
          Effect.fail(
            new SystemError({
              module: "FileSystem",
              method: "makeDirectory",
              reason: options?.recursive === true ? "NotFound" : "PermissionDenied",
              pathOrDescriptor: p,
              description: options?.recursive === true ? "ENOENT" : "EROFS: read-only file system"
            })
          )
      })
      const error = yield* Effect.flip(Files.makeDirectory("/ro/new/run")).pipe(Effect.provide(readOnly))
      expect(error._tag === "SystemError" && error.reason).toBe("PermissionDenied")
      expect(error._tag === "SystemError" && error.pathOrDescriptor).toBe("/ro/new")
    })
  )
})
