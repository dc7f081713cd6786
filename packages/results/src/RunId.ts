/**
 * Who may write in a run directory. A run's identity (its config's hash, its data's fingerprint and
 * history transform, for a shard its share) names it (`runs/<config name>/<run id>`, and `latest`)
 * and `<dir>/run-id.json` records it: a sweep refuses a directory that holds another run. Within
 * it, `<dir>/.lock` lets one sweep at a time write; the lock of a process that is gone is taken over.
 *
 * @example
 * RunId.describe(identity) // "run 3f2a9c0d1e4b (config contextual, hash …; data sample, fingerprint …)"
 */
import { Files, Hash } from "@cupid-lab/core"
import { Transform } from "@cupid-lab/data"
import { FileSystem } from "@effect/platform"
import { Clock, Effect, Either, Option, Schema, type Scope } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import { RunError } from "./Errors.js"
import * as RunDir from "./RunDir.js"
import * as Shard from "./Shard.js"

export const fileName = "run-id.json"
export const latestName = "latest"
export const idPattern = /^[0-9a-f]{12}$/

export const Identity = Schema.Struct({
  id: Schema.String,
  config: Schema.Struct({ name: Schema.String, hash: Schema.String }),
  data: Schema.Struct({
    source: Schema.String,
    fingerprint: Schema.String,
    transform: Schema.optionalWith(Transform.Spec, { exact: true })
  }),
  /** The share of the pairs this directory holds (`sweep --shard`); absent for a whole run. */
  shard: Schema.optionalWith(Shard.Shard, { exact: true })
})
export type Identity = typeof Identity.Type

const shardText = (s: Shard.Shard | undefined): string => (s === undefined ? "the whole run" : Shard.describe(s))

export const same = (a: Identity, b: Identity): boolean =>
  a.id === b.id && a.shard?.index === b.shard?.index && a.shard?.count === b.shard?.count

const transformText = (t: Transform.Spec | undefined): string => (t === undefined ? "none" : Hash.canonicalJson(t))

export const describe = (i: Identity): string =>
  `run ${i.id}${i.shard === undefined ? "" : ` ${Shard.describe(i.shard)}`} (config ${i.config.name}, hash ${i.config.hash}; data ${i.data.source}, fingerprint ${i.data.fingerprint.slice(0, 16)}` +
  `${i.data.transform === undefined ? "" : `, transform ${transformText(i.data.transform)}`})`

export const differences = (mine: Identity, theirs: Identity): string => {
  const transform = transformText(mine.data.transform) !== transformText(theirs.data.transform)
  const parts = [
    // data.transform is part of the config, so a changed transform changes the config's hash too
    mine.config.hash !== theirs.config.hash
      ? transform
        ? "the config (its data.transform among others)"
        : "the config"
      : "",
    mine.data.fingerprint !== theirs.data.fingerprint ? "the data" : "",
    shardText(mine.shard) !== shardText(theirs.shard)
      ? `the share (${shardText(mine.shard)} against ${shardText(theirs.shard)})`
      : ""
  ].filter((x) => x !== "")
  return parts.length === 0
    ? "the identity differs"
    : `${parts.join(" and ")} ${parts.length > 1 ? "differ" : "differs"}`
}

export const decode = Schema.decodeUnknownEither(Schema.parseJson(Identity))

/**
 * Check that `dir` is free for this run or already holds it: fails when it holds another run, or
 * results whose run is not recorded (unless `allowUnrecorded`: under the lock, once the log exists).
 */
export const check = Effect.fn("RunId.check")(function* (
  dir: string,
  identity: Identity,
  allowUnrecorded: boolean = false
): Effect.fn.Return<void, RunError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  const file = path.join(dir, fileName)
  const text = yield* fileSystem.readFileString(file).pipe(Effect.option)
  if (Option.isNone(text)) {
    if (!allowUnrecorded && (yield* Files.exists(fileSystem, path.join(dir, "results.jsonl")))) {
      return yield* new RunError({
        path: dir,
        reason:
          `holds results of a run whose identity is not recorded (no ${fileName}), so this sweep (${describe(identity)}) cannot tell whether resuming them is right; ` +
          `give another --out, or delete the directory to start over`
      })
    }
    return
  }
  const recorded = decode(text.value)
  if (Either.isLeft(recorded)) {
    return yield* new RunError({
      path: file,
      reason: `is not a run identity (expected {"id", "config": {"name", "hash"}, "data": {"source", "fingerprint", "transform"?}, "shard"?}); delete the directory or give another --out`
    })
  }
  const theirs = recorded.right
  if (same(theirs, identity)) return
  return yield* new RunError({
    path: dir,
    reason:
      `holds another run: ${describe(theirs)}; this sweep is ${describe(identity)}; ${differences(identity, theirs)}. ` +
      `Resuming is for the same run only: give another --out (or leave --out and out: unset, for runs/<name>/<run id>), or delete the directory`
  })
})

/** Under the lock: check again (another sweep may have taken the directory meanwhile), then record the identity. */
export const claim = (dir: string, identity: Identity): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Effect.zipRight(
    check(dir, identity, true),
    RunDir.write(path.join(dir, fileName), `${JSON.stringify(identity, null, 2)}\n`)
  )

/** Point `<parent>/latest` at the run directory `<parent>/<id>`: a relative symlink, else (where none can be made) a file holding the id. */
export const linkLatest = Effect.fn("RunId.linkLatest")(function* (
  runDir: string
): Effect.fn.Return<void, RunError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  const link = path.join(path.dirname(runDir), latestName)
  const id = path.basename(runDir)
  const tmp = Files.temporaryName(link)
  const linked = yield* fileSystem.symlink(id, tmp).pipe(
    Effect.zipRight(fileSystem.rename(tmp, link)),
    Effect.as(true),
    Effect.catchAll(() => Effect.as(fileSystem.remove(tmp, { force: true }).pipe(Effect.ignore), false))
  )
  if (linked) return
  yield* Files.writeFileAtomic(link, `${id}\n`).pipe(
    Effect.mapError(
      (e) =>
        new RunError({
          path: link,
          reason: `cannot point it at ${runDir} (neither as a symlink nor as a file holding the id): ${Files.describe(e)}`
        })
    )
  )
})

/** The run directory a command was given, with `<parent>/latest` replaced by the run it points at; a config's directory is refused. */
export const resolve = Effect.fn("RunId.resolve")(function* (
  dir: string
): Effect.fn.Return<string, RunError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  if (path.basename(dir) === latestName) {
    const id = yield* fileSystem.readLink(dir).pipe(
      Effect.orElse(() => fileSystem.readFileString(dir)),
      Effect.map((text) => text.trim()),
      Effect.orElseSucceed(() => "")
    )
    return idPattern.test(id) ? path.join(path.dirname(dir), id) : dir
  }
  const has = (name: string) => Files.exists(fileSystem, path.join(dir, name))
  if ((yield* has("summary.json")) || !(yield* has(latestName))) return dir
  const ids = (yield* fileSystem.readDirectory(dir).pipe(Effect.orElseSucceed(() => [])))
    .filter((n) => idPattern.test(n))
    .sort()
  return yield* new RunError({
    path: dir,
    reason: `holds the runs of one config by id (${ids.length === 0 ? "none yet" : ids.join(", ")}), not a run; give ${path.join(dir, latestName)} for the newest, or ${path.join(dir, "<run id>")}`
  })
})

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
  Effect.gen(function* () {
    if (holder.host !== host) return true
    if (!alive(holder.pid)) return false
    if (holder.processStart === undefined) return true
    const now = yield* processStart(fileSystem, holder.pid)
    return now === undefined || now === holder.processStart
  })

const heldBy = (dir: string, file: string, holder: Holder) =>
  new RunError({
    path: dir,
    reason:
      `another sweep (${describeHolder(holder)}) is writing to this run directory; ` +
      `wait for it to end, stop it (kill ${holder.pid}), or give this sweep another --out. ` +
      `If that process is gone (or was on another machine), delete ${file} and rerun`
  })

/**
 * Take `<dir>/.lock` for the scope, or fail naming the sweep that holds it; a lock whose process is
 * gone (or an unreadable one) is taken over and its holder returned. One `acquireRelease`, so an
 * interruption cannot leave the lock behind.
 */
export const lock = (dir: string): Effect.Effect<string | undefined, RunError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(take(dir), ({ file, mine }) =>
      // Removed only while it is still this sweep's (never another's that took over meanwhile).
      Effect.flatMap(FileSystem.FileSystem, (fileSystem) =>
        fileSystem.readFileString(file).pipe(
          Effect.flatMap((now) => (now === mine ? fileSystem.remove(file) : Effect.void)),
          Effect.ignore
        )
      )
    ),
    (held) => held.stale
  )

const take = (dir: string) =>
  Effect.gen(function* () {
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
    const cannot = (doing: string) => (e: unknown) =>
      new RunError({ path: file, reason: `cannot ${doing} the run directory's lock: ${Files.describe(e)}` })
    const read = fileSystem.readFileString(file).pipe(
      Effect.map((text) => ({ text, holder: Either.getOrUndefined(decodeHolder(text)) })),
      Effect.catchIf(
        (e) => e._tag === "SystemError" && e.reason === "NotFound",
        () => Effect.succeed(undefined)
      ),
      Effect.mapError(cannot("read"))
    )
    let stale: string | undefined
    for (let attempt = 0; attempt < 3; attempt++) {
      const created = yield* fileSystem.writeFileString(file, mine, { flag: "wx" }).pipe(
        Effect.as(true),
        Effect.catchIf(
          (e) => e._tag === "SystemError" && e.reason === "AlreadyExists",
          () => Effect.succeed(false)
        ),
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
      const moved = yield* fileSystem.rename(file, aside).pipe(
        Effect.as(true),
        Effect.orElseSucceed(() => false)
      )
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
    return yield* new RunError({
      path: file,
      reason: "other sweeps kept taking the run directory's lock at the same moment; rerun"
    })
  })
