import { describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RunError } from "../src/Errors.js"
import { ResultStore } from "../src/index.js"
import { tempDir } from "./support.js"

const text = (cell: string, instance: string) => `${JSON.stringify({ cell, instance, status: "ok", pad: "x".repeat(200) })}\n`
const tmpFiles = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith(".tmp"))
const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })

/** A tiny real file system when this machine lets the tests mount one (root with CAP_SYS_ADMIN). */
const tmpfs = (bytes: number): { readonly dir: string; readonly unmount: () => void } | string => {
  const dir = tempDir("cupid-tmpfs-")
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir])
  if (r.status !== 0) return `cannot mount a tmpfs here (${(r.stderr?.toString() ?? "").trim() || `exit ${r.status}`})`
  return { dir, unmount: () => void spawnSync("umount", [dir]) }
}
const mountable = tmpfs(64 * 1024)
if (typeof mountable !== "string") mountable.unmount()

describe("ResultStore: one sweep per run directory", () => {
  it("a second open of a directory held by another process fails at once, naming its PID", async () => {
    const dir = tempDir()
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "fixtures", "hold-store.ts"), dir], {
      stdio: ["pipe", "pipe", "inherit"]
    })
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on("data", (d: Buffer) => d.toString().includes("locked") && resolve())
        child.on("exit", (code) => reject(new Error(`the holder exited (${code}) before taking the lock`)))
      })
      const started = performance.now()
      expect(() => ResultStore.open(dir, new Set(["a"]))).toThrow(
        new RegExp(`another sweep \\(PID ${child.pid} on [^,]+, started [^)]+\\) is writing to this run directory`)
      )
      expect(performance.now() - started).toBeLessThan(1000)
    } finally {
      child.stdin!.end()
      await new Promise((resolve) => child.on("exit", resolve))
    }
    // released by the holder: the directory opens again
    ResultStore.open(dir, new Set(["a"])).close()
    expect(fs.existsSync(path.join(dir, ResultStore.lockFileName))).toBe(false)
  }, 60_000)

  it("the lock of a process that is gone (a killed sweep) is taken over, with a notice", () => {
    const dir = tempDir()
    // a PID that existed and is gone now
    const dead = Number(execFileSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).toString())
    fs.writeFileSync(path.join(dir, ResultStore.lockFileName), JSON.stringify({ pid: dead, host: os.hostname(), startedAt: "2026-01-01T00:00:00.000Z" }))
    const store = ResultStore.open(dir, new Set(["a"]))
    expect(store.opened.staleLock).toMatch(new RegExp(`^PID ${dead} on .+, started 2026-01-01T00:00:00.000Z$`))
    store.close()
    expect(fs.existsSync(path.join(dir, ResultStore.lockFileName))).toBe(false)
  })
})

describe("ResultStore: write errors", () => {
  it("a full disk while appending ends with the error in words; the lines written before stay whole", () => {
    const dir = tempDir()
    let budget = 2 * text("a", "i0").length + 50 // two whole lines, then part of the third
    const store = ResultStore.open(dir, new Set(["a"]), {
      write: (fd, data) => {
        const n = Math.min(budget, data.length)
        if (n > 0) fs.writeSync(fd, data, 0, n)
        budget -= n
        if (n < data.length) throw enospc()
      }
    })
    for (const i of [0, 1]) store.append({ cell: "a", instance: `i${i}`, text: text("a", `i${i}`) })
    store.flush()
    for (const i of [2, 3]) store.append({ cell: "a", instance: `i${i}`, text: text("a", `i${i}`) })
    let error: unknown
    try {
      store.flush()
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(RunError)
    expect((error as RunError).message).toBe(
      `${store.file}: cannot append to the results: no space left on device (ENOSPC); the 2 result lines written before are intact; free space (or fix the permissions) and rerun the same command to resume`
    )
    // finalizing reports the same error and leaves the file alone
    expect(() => store.finalize({ cellOrder: new Map([["a", 0]]), instanceOrder: new Map(), complete: false })).toThrow(/ENOSPC/)
    store.close()
    expect(tmpFiles(dir)).toEqual([])
    expect(fs.existsSync(path.join(dir, ResultStore.lockFileName))).toBe(false)
    // the next open keeps the two whole lines and drops the part of the third
    const again = ResultStore.open(dir, new Set(["a"]))
    expect(again.opened).toMatchObject({ kept: 2, truncated: true })
    again.close()
  })

  it.skipIf(typeof mountable === "string")(`a real full disk (tmpfs) while appending and while sorting loses no line and leaves no temporary file${typeof mountable === "string" ? ` [skipped: ${mountable}]` : ""}`, () => {
    const fsys = tmpfs(64 * 1024)
    if (typeof fsys === "string") throw new Error(fsys)
    try {
      const dir = fsys.dir
      const store = ResultStore.open(dir, new Set(["a"]))
      let written = 0
      let error: unknown
      for (let i = 0; i < 1000 && error === undefined; i++) {
        store.append({ cell: "a", instance: `i${String(i).padStart(4, "0")}`, text: text("a", `i${String(i).padStart(4, "0")}`) })
        try {
          store.flush()
          written = i + 1
        } catch (e) {
          error = e
        }
      }
      expect((error as RunError).message).toMatch(new RegExp(`cannot append to the results: no space left on device \\(ENOSPC\\); the ${written} result lines written before are intact`))
      store.close()
      // the partial last line is cut off in place, which needs no free space
      const reopened = ResultStore.open(dir, new Set(["a"]))
      expect(reopened.opened).toMatchObject({ kept: written })
      // the file now fills more than half the disk: its sorted copy cannot be written
      expect(() => reopened.finalize({ cellOrder: new Map([["a", 0]]), instanceOrder: new Map(), complete: false })).toThrow(
        /cannot write the sorted results: no space left on device \(ENOSPC\)/
      )
      reopened.close()
      expect(tmpFiles(dir)).toEqual([])
      const last = ResultStore.open(dir, new Set(["a"]))
      expect(last.opened.kept).toBe(written)
      last.close()
    } finally {
      fsys.unmount()
    }
  })
})
