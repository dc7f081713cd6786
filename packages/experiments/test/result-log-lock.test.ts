// One sweep per run directory: a second sweep on the same --out is refused at once naming the
// first, and the lock of a sweep that is gone (killed) never blocks the next run.
import { NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ResultLog } from "@cupid-lab/runner"
import { RunId } from "@cupid-lab/results"

import { resultLine, runProcess } from "./support.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-result-log-lock-"))
  made.push(dir)
  return dir
}
const children: Array<ChildProcess> = []
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL")
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const lockFile = (dir: string) => path.join(dir, RunId.lockFileName)
const host = os.hostname()

/** Open the log of `dir` in a scope, run `use` with it, close the scope. */
const withLog = <A, E>(dir: string, use: (log: ResultLog.Log) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.flatMap(ResultLog.open({ dir, cells: new Set(["a"]) }), use)).pipe(
    Effect.provide(NodeFileSystem.layer)
  )

/** A second process running `fixture` on `dir`, once it says `ready`. */
const second = async (fixture: string, dir: string, ready: string): Promise<ChildProcess> => {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "fixtures", fixture), dir], {
    stdio: ["pipe", "pipe", "pipe"]
  })
  children.push(child)
  let stderr = ""
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()))
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes(ready) && resolve())
    child.on("exit", (code) => reject(new Error(`${fixture} exited (${code}) before saying "${ready}": ${stderr}`)))
  })
  return child
}
/** A second process holding the log of `dir`, once it says it has the lock. */
const holder = (dir: string) => second("hold-log.ts", dir, "locked")
const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null || child.signalCode !== null ? resolve(child.exitCode) : child.on("exit", resolve)
  )

/** A PID that existed a moment ago and is gone now. */
const deadPid = runProcess(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).pipe(
  Effect.flatMap((r) =>
    r.code === 0 ? Effect.succeed(Number(r.stdout)) : Effect.dieMessage(`node -e exited ${r.code}: ${r.stderr}`)
  )
)

describe("ResultLog: one sweep per run directory", () => {
  it("a second sweep on a directory another process holds fails at once, naming its PID and host; it opens again once released", async () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, ResultLog.fileName), resultLine("a", "i1"))
    const child = await holder(dir)
    const exit = await Effect.runPromiseExit(withLog(dir, () => Effect.void))
    expect(Exit.isFailure(exit)).toBe(true)
    const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
    expect(error?._tag).toBe("RunError")
    expect(error?.message).toMatch(
      new RegExp(
        `^${dir}: another sweep \\(PID ${child.pid} on ${host}, started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) is writing to this run directory; ` +
          `wait for it to end, stop it \\(kill ${child.pid}\\), or give this sweep another --out\\. ` +
          `If that process is gone \\(or was on another machine\\), delete ${lockFile(dir)} and rerun$`
      )
    )
    // the holder's lock and the results are untouched
    expect(JSON.parse(fs.readFileSync(lockFile(dir), "utf8"))).toMatchObject({ pid: child.pid, host })
    child.stdin!.end()
    expect(await exited(child)).toBe(0)
    expect(fs.existsSync(lockFile(dir))).toBe(false)
    const kept = await Effect.runPromise(withLog(dir, (log) => Effect.succeed(log.opened.kept)))
    expect(kept.map((r) => `${r.cell}/${r.instance}`)).toEqual(["a/i1"])
    expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
  })

  it("the lock left by a SIGKILLed sweep is taken over, with a notice naming it", async () => {
    const dir = tempDir()
    const child = await holder(dir)
    const pid = child.pid!
    child.kill("SIGKILL")
    await exited(child)
    expect(fs.existsSync(lockFile(dir))).toBe(true) // a kill runs no finalizer
    const stale = await Effect.runPromise(withLog(dir, (log) => Effect.succeed(log.opened.staleLock)))
    expect(stale).toMatch(new RegExp(`^PID ${pid} on ${host}, started \\d{4}-`))
    expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
  })

  it("a sweep SIGKILLed while appending: its lock is taken over, and the whole lines it wrote are kept, in order, with no partial one", async () => {
    const dir = tempDir()
    const file = path.join(dir, ResultLog.fileName)
    const child = await second("append-log.ts", dir, "writing")
    const pid = child.pid!
    // flushes of 2 MB follow each other: a kill now lands in or between writes
    while (fs.statSync(file).size < 8_000_000) await new Promise((resolve) => setTimeout(resolve, 5))
    child.kill("SIGKILL")
    await exited(child)
    const before = fs.statSync(file).size
    const opened = await Effect.runPromise(withLog(dir, (log) => Effect.succeed(log.opened)))
    expect(opened.staleLock).toMatch(new RegExp(`^PID ${pid} on ${host}, started `))
    const n = opened.kept.length
    expect(n).toBeGreaterThanOrEqual(400)
    // the writer's ids (fixtures/append-log.ts)
    const id = (i: number) => `i${String(i).padStart(7, "0")}`
    expect(opened.kept.map((r) => r.instance)).toEqual(Array.from({ length: n }, (_, i) => id(i)))
    // whatever followed the last whole line (a partial one, if the kill cut a write) is gone
    expect(opened.truncated).toBe(before % 20_000 !== 0)
    const text = fs.readFileSync(file, "utf8")
    expect(text.length).toBe(n * 20_000)
    expect(text === Array.from({ length: n }, (_, i) => resultLine("a", id(i), { bytes: 20_000 })).join("")).toBe(true)
    expect(fs.readdirSync(dir)).toEqual([ResultLog.fileName])
  })

  it.effect("a lock written by a process that is gone is taken over; the new lock holds this PID and host", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const dead = yield* deadPid
      fs.writeFileSync(lockFile(dir), JSON.stringify({ pid: dead, host, startedAt: "2026-01-01T00:00:00.000Z" }))
      yield* withLog(dir, (log) =>
        Effect.sync(() => {
          expect(log.opened.staleLock).toBe(`PID ${dead} on ${host}, started 2026-01-01T00:00:00.000Z`)
          expect(JSON.parse(fs.readFileSync(lockFile(dir), "utf8"))).toMatchObject({ pid: process.pid, host })
        })
      )
      expect(fs.existsSync(lockFile(dir))).toBe(false)
    })
  )

  it.effect.skipIf(!fs.existsSync("/proc/self/stat"))(
    "a lock whose PID now belongs to another process (here: this one, after a restart) is taken over",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        // as left by a killed sweep in a container whose next sweep got the same PID
        fs.writeFileSync(
          lockFile(dir),
          JSON.stringify({ pid: process.pid, host, startedAt: "2026-01-01T00:00:00.000Z", processStart: "1" })
        )
        yield* withLog(dir, (log) =>
          Effect.sync(() => {
            expect(log.opened.staleLock).toBe(`PID ${process.pid} on ${host}, started 2026-01-01T00:00:00.000Z`)
            const mine = JSON.parse(fs.readFileSync(lockFile(dir), "utf8"))
            expect(mine.processStart).toBe(fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")[19])
          })
        )
        expect(fs.existsSync(lockFile(dir))).toBe(false)
      })
  )

  it.live("an empty lock (a kill between creating and writing it) is taken over after a second look", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      fs.writeFileSync(lockFile(dir), "")
      const stale = yield* withLog(dir, (log) => Effect.succeed(log.opened.staleLock))
      expect(stale).toBe("an unreadable lock")
      expect(fs.existsSync(lockFile(dir))).toBe(false)
    })
  )

  it.effect("a lock of another host is refused: whether that sweep runs cannot be told from here", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const text = JSON.stringify({ pid: yield* deadPid, host: "other-machine", startedAt: "2026-01-01T00:00:00.000Z" })
      fs.writeFileSync(lockFile(dir), text)
      const error = yield* Effect.flip(withLog(dir, () => Effect.void))
      expect(error.message).toContain("another sweep (PID ")
      expect(error.message).toContain(" on other-machine, started 2026-01-01T00:00:00.000Z)")
      expect(fs.readFileSync(lockFile(dir), "utf8")).toBe(text)
    })
  )

  it.effect("two logs on one directory in the same process: the second is refused while the first is held", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const error = yield* withLog(dir, () => Effect.flip(withLog(dir, () => Effect.void)))
      expect(error.message).toContain(`another sweep (PID ${process.pid} on ${host}`)
      expect(fs.existsSync(lockFile(dir))).toBe(false)
    })
  )

  it.live("the lock is given back when the work fails or is interrupted", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const failed = yield* Effect.flip(withLog(dir, () => Effect.fail("stopped" as const)))
      expect(failed).toBe("stopped")
      expect(fs.existsSync(lockFile(dir))).toBe(false)
      const fiber = yield* Effect.fork(withLog(dir, () => Effect.never))
      while (!fs.existsSync(lockFile(dir))) yield* Effect.sleep("10 millis")
      yield* Fiber.interrupt(fiber)
      expect(fs.existsSync(lockFile(dir))).toBe(false)
    })
  )

  it.live("an open interrupted after it took the lock (while reading an earlier run's file) gives the lock back", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      // 40 MB of an earlier run: reading it back takes long enough to interrupt the open midway
      const line = (i: number) => resultLine("a", `i${i}`, { bytes: 2_000 })
      fs.writeFileSync(path.join(dir, ResultLog.fileName), Array.from({ length: 20_000 }, (_, i) => line(i)).join(""))
      let used = false
      const fiber = yield* Effect.fork(withLog(dir, () => Effect.sync(() => void (used = true))))
      while (!fs.existsSync(lockFile(dir))) yield* Effect.sleep("1 millis")
      yield* Fiber.interrupt(fiber)
      expect(used).toBe(false) // interrupted inside the open
      expect(fs.existsSync(lockFile(dir))).toBe(false)
      // and the directory opens again, every line there
      const kept = yield* withLog(dir, (log) => Effect.succeed(log.opened.kept.length))
      expect(kept).toBe(20_000)
    })
  )

  it.live("an open interrupted at any point never leaves the lock behind", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      fs.writeFileSync(
        path.join(dir, ResultLog.fileName),
        resultLine("a", "i1") + resultLine("a", "i2", { status: "failed" })
      )
      // Each turn of the event loop lets the open go one file operation further: interrupted after
      // 0 to 39 turns, it is stopped before, while and after taking the lock and tidying the file.
      for (let turns = 0; turns < 40; turns++) {
        const fiber = yield* Effect.fork(withLog(dir, () => Effect.never))
        for (let k = 0; k < turns; k++) yield* Effect.sleep("0 millis")
        yield* Fiber.interrupt(fiber)
        expect(fs.existsSync(lockFile(dir)), `interrupted after ${turns} turns`).toBe(false)
      }
      expect(fs.readFileSync(path.join(dir, ResultLog.fileName), "utf8")).toBe(resultLine("a", "i1"))
    })
  )
})
