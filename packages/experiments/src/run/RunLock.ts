/**
 * One sweep at a time per run directory: `<dir>/.lock` holds the PID, host and start time of the
 * sweep writing there; the lock of a process that is gone on this host is taken over.
 *
 * @example
 * const stale = yield* RunLock.acquire(dir) // in a Scope; "PID 123 on host, started ..." when taken over
 */
import { Files } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Clock, Effect, Either, Schema, type Scope } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { RunError } from "../Errors.js"

export const lockFileName = ".lock"

const Holder = Schema.Struct({
  pid: Schema.Int,
  host: Schema.String,
  startedAt: Schema.String,
  /** When the process started, in clock ticks since boot (Linux): tells a reused PID apart. */
  processStart: Schema.optional(Schema.String)
})
type Holder = typeof Holder.Type
const decodeHolder = Schema.decodeUnknownEither(Schema.parseJson(Holder))

const describeHolder = (h: Holder) => `PID ${h.pid} on ${h.host}, started ${h.startedAt}`

/** Whether a process of this host is running (EPERM: it is, under another user). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return Files.code(e) === "EPERM"
  }
}

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), where there is a /proc. */
const processStart = (fileSystem: FileSystem.FileSystem, pid: number) =>
  fileSystem.readFileString(`/proc/${pid}/stat`).pipe(
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
    Effect.map((stat) => stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]),
    Effect.orElseSucceed(() => undefined)
  )

/** Whether the sweep that wrote `holder` may still run: always on another host; here, while its PID is the same live process. */
const running = (fileSystem: FileSystem.FileSystem, holder: Holder, host: string) =>
  Effect.gen(function*() {
    if (holder.host !== host) return true
    if (!alive(holder.pid)) return false
    if (holder.processStart === undefined) return true
    const now = yield* processStart(fileSystem, holder.pid)
    return now === undefined || now === holder.processStart
  })

const heldBy = (dir: string, file: string, holder: Holder) =>
  new RunError({
    path: dir,
    reason: `another sweep (${describeHolder(holder)}) is writing to this run directory; ` +
      `wait for it to end, stop it (kill ${holder.pid}), or give this sweep another --out. ` +
      `If that process is gone (or was on another machine), delete ${file} and rerun`
  })

/**
 * Take `<dir>/.lock` for the scope, or fail naming the sweep that holds it; a lock whose process is
 * gone (or an unreadable one) is taken over and its holder returned. One `acquireRelease`, so an
 * interruption cannot leave the lock behind.
 */
export const acquire = (dir: string): Effect.Effect<string | undefined, RunError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(take(dir), ({ file, mine }) =>
      // Removed only while it is still this sweep's (never another's that took over meanwhile).
      Effect.flatMap(FileSystem.FileSystem, (fileSystem) =>
        fileSystem.readFileString(file).pipe(
          Effect.flatMap((now) => (now === mine ? fileSystem.remove(file) : Effect.void)),
          Effect.ignore
        ))),
    (held) => held.stale
  )

const take = (dir: string) =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const file = path.join(dir, lockFileName)
    const started = yield* processStart(fileSystem, process.pid)
    const me: Holder = {
      pid: process.pid,
      host: os.hostname(),
      startedAt: new Date(yield* Clock.currentTimeMillis).toISOString(),
      ...(started === undefined ? {} : { processStart: started })
    }
    const mine = `${JSON.stringify(me)}\n`
    const cannot = (doing: string) => (e: unknown) => new RunError({ path: file, reason: `cannot ${doing} the run directory's lock: ${Files.describe(e)}` })
    const read = fileSystem.readFileString(file).pipe(
      Effect.map((text) => ({ text, holder: Either.getOrUndefined(decodeHolder(text)) })),
      Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "NotFound", () => Effect.succeed(undefined)),
      Effect.mapError(cannot("read"))
    )
    let stale: string | undefined
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = yield* fileSystem.writeFileString(file, mine, { flag: "wx" }).pipe(
        Effect.as(true),
        Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => Effect.succeed(false)),
        Effect.mapError(cannot("create"))
      )
      if (created) return { file, mine, stale }
      let found = yield* read
      if (found === undefined) continue // released meanwhile
      if (found.holder === undefined) {
        // A lock being written right now is briefly empty: look again before calling it damaged.
        yield* Effect.sleep("200 millis")
        found = yield* read
        if (found === undefined) continue
      }
      const holder = found.holder
      if (holder !== undefined && (yield* running(fileSystem, holder, me.host))) return yield* heldBy(dir, file, holder)
      // Gone: move it aside (only one of several sweeps can), check it was the one judged stale, take over.
      const aside = `${file}.${process.pid}.stale`
      const moved = yield* fileSystem.rename(file, aside).pipe(Effect.as(true), Effect.orElseSucceed(() => false))
      if (moved) {
        const text = yield* fileSystem.readFileString(aside).pipe(Effect.orElseSucceed(() => ""))
        if (text !== found.text) {
          // Another sweep took the lock between our read and the rename: give it back.
          yield* fileSystem.rename(aside, file).pipe(Effect.ignore)
          const other = Either.getOrUndefined(decodeHolder(text))
          if (other !== undefined) return yield* heldBy(dir, file, other)
          continue
        }
        yield* fileSystem.remove(aside, { force: true }).pipe(Effect.ignore)
      }
      stale = holder === undefined ? `an unreadable lock` : describeHolder(holder)
    }
    return yield* new RunError({ path: file, reason: "other sweeps kept taking the run directory's lock at the same moment; rerun" })
  })
