/**
 * One content-addressed cache for every model call of every sweep.
 *
 * Keys are the SHA-256 of the canonical JSON of everything that determines an answer: call kind,
 * provider, model, every configured generation parameter and the full request (all messages, or
 * the text to embed). Failures are never stored. Identical calls in flight at the same time are
 * made once.
 *
 * Storage is one small JSON file per entry under `<dir>/<first two hex digits>/<key>.json`, written
 * to a temporary name and renamed into place: no native build (as SQLite would need), no lock for
 * several sweep processes sharing one directory (rename is atomic; equal keys carry equal values),
 * entries inspected, copied or pruned with ordinary tools. Machines sharing a directory (a network
 * file system) never write one temporary file (its name carries host, process id and a random
 * token), and concurrent writers of one key leave one whole entry (the last rename's).
 *
 * The cache never fails a call:
 * - an entry that cannot be used (not JSON, truncated, of the wrong shape for its caller's
 *   `schema`) is a miss, reported once per file through `onWarning`, and replaced by the fresh
 *   answer; an entry its caller's `accept` rejects is a miss and is replaced too;
 * - when an entry cannot be written (full disk, read-only directory) the answer is still returned
 *   and shared within the run, one warning names the directory and the error code, and the cache
 *   is read-only from then on; `stats.writeErrors` counts the answers that were not stored.
 *
 * @example
 * import { ModelCache } from "@cupid-lab/core"
 * const layer = ModelCache.layerFile(".cache/models", { onWarning: (line) => process.stderr.write(`${line}\n`) })
 */
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Cause, Context, Deferred, Effect, Either, FiberId, Layer, Option, ParseResult, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import { canonicalJson, sha256Hex } from "./Hash.js"

/** The cache's counters, as run.json records them. */
export const Stats = Schema.Struct({
  /** Calls answered by a stored entry or by an identical call in flight. */
  hits: Schema.Number,
  misses: Schema.Number,
  writes: Schema.Number,
  /** Stored entries ignored because they could not be read or had the wrong shape (each also a miss). */
  invalid: Schema.Number,
  /** Stored entries ignored because their caller's `accept` rejected them (each also a miss). */
  rejected: Schema.Number,
  /** Answers not stored because writing failed: the failed write and every write skipped after it. */
  writeErrors: Schema.Number
})
export type Stats = typeof Stats.Type

/** What a caller knows about the values it stores under a key. */
export interface Check<A> {
  /** The shape of a stored value; an entry that does not decode is a miss, reported with its file. */
  readonly schema?: Schema.Schema<A>
  /** Whether the caller can use a stored value; one it rejects is a miss, replaced by the new value. */
  readonly accept?: (value: A) => boolean
}

export interface Service {
  /** A usable stored value; without a `check`, whatever is stored. */
  readonly get: <A = unknown>(key: string, check?: Check<A>) => Effect.Effect<Option.Option<A>>
  /** Store a value (in memory for the rest of the run even when the write to disk fails). */
  readonly set: (key: string, value: unknown) => Effect.Effect<void>
  readonly has: (key: string) => Effect.Effect<boolean>
  readonly stats: Effect.Effect<Stats>
  /**
   * Look the key up; on a miss run `compute`, store its success and return it. Concurrent calls
   * with the same key share one computation. Returns whether the value came from the cache.
   */
  readonly getOrCompute: <A, E, R>(
    key: string,
    compute: Effect.Effect<A, E, R>,
    check?: Check<A>
  ) => Effect.Effect<{ readonly value: A; readonly cached: boolean }, E, R>
}

export class ModelCache extends Context.Tag("@cupid-lab/core/ModelCache")<ModelCache, Service>() {}

/** The cache key of a call: hash of its canonical JSON. */
export const key = (parts: Record<string, unknown>): string => sha256Hex(canonicalJson(parts))

export interface Options {
  /**
   * Where notices go, one line each: an entry ignored (once per file), the cache turned read-only
   * (once). Default: Effect's logger at level Warning.
   */
  readonly onWarning?: ((line: string) => void) | undefined
}

/** A stored entry that exists but cannot be used; `reason` says why. */
class Unreadable {
  readonly _tag = "Unreadable"
  constructor(readonly reason: string) {}
}

/** A failed write: `code` is the system error code (`ENOSPC`, `EACCES`, ...). */
class WriteFailed {
  readonly _tag = "WriteFailed"
  constructor(readonly code: string) {}
}

/**
 * Where entries live; the cache around it keeps this run's values in memory, except those whose
 * entry on disk is longer than {@link keptChars} (a model that loops answers tens of MB): they
 * are read again when asked for, so the run holds no more than the calls in flight.
 */
interface Store {
  /** A user-facing name for the place of an entry (its file), and the place writes go to (named when they fail). */
  readonly where: (key: string) => string
  readonly root: string
  /** The stored value, with the length of its entry in characters (0 for a store in memory). */
  readonly read: <A>(
    key: string,
    check: Check<A>
  ) => Effect.Effect<Option.Option<{ readonly value: unknown; readonly chars: number }>, Unreadable>
  /** Store the value; succeeds with the length of its entry in characters (0 for a store in memory). */
  readonly write: (key: string, value: unknown) => Effect.Effect<number, WriteFailed>
}

/** Entries on disk longer than this (in characters of JSON) are not kept in memory after use. */
export const keptChars = 1024 * 1024

const issues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((i) => (i.path.length === 0 ? i.message : `${i.path.join(".")}: ${i.message}`))
    .join("; ")

const make = (store: Store, warn: (line: string) => Effect.Effect<void>): Service => {
  let hits = 0,
    misses = 0,
    writes = 0,
    invalid = 0,
    rejected = 0,
    writeErrors = 0
  let readOnly = false
  // Values this run computed or read and checked; they answer later calls without a read.
  const local = new Map<string, unknown>()
  const inFlight = new Map<string, Deferred.Deferred<unknown, unknown>>()
  const warned = new Set<string>()

  const ignore = (k: string, reason: string) =>
    Effect.suspend(() => {
      invalid++
      const where = store.where(k)
      if (warned.has(where)) return Effect.void
      warned.add(where)
      return warn(`model cache: ignoring ${where}: ${reason}; the call is made again and the entry replaced`)
    })

  /** A usable value for `k`, from this run's values or the store; counts nothing but ignored entries. */
  const lookup = <A>(k: string, check: Check<A>): Effect.Effect<Option.Option<A>> => {
    const usable = (value: unknown, chars = 0): Effect.Effect<Option.Option<A>> => {
      let typed: A
      if (check.schema === undefined) {
        // Without a schema the caller takes what it stored under its own key, as before.
        typed = value as A
      } else {
        const decoded = Schema.decodeUnknownEither(check.schema)(value, { errors: "all" })
        if (Either.isLeft(decoded))
          return Effect.as(ignore(k, `the stored value does not fit: ${issues(decoded.left)}`), Option.none())
        typed = decoded.right
      }
      if (check.accept !== undefined && !check.accept(typed)) {
        rejected++
        return Effect.succeed(Option.none())
      }
      if (chars <= keptChars) local.set(k, typed)
      return Effect.succeed(Option.some(typed))
    }
    return Effect.suspend(() => {
      if (local.has(k)) return usable(local.get(k))
      return store.read(k, check).pipe(
        Effect.matchEffect({
          onFailure: (e) => Effect.as(ignore(k, e.reason), Option.none<A>()),
          onSuccess: Option.match({
            onNone: () => Effect.succeed(Option.none<A>()),
            onSome: (stored) => usable(stored.value, stored.chars)
          })
        })
      )
    })
  }

  const save = (k: string, v: unknown): Effect.Effect<void> =>
    Effect.suspend(() => {
      local.set(k, v)
      if (readOnly) {
        writeErrors++
        return Effect.void
      }
      return store.write(k, v).pipe(
        Effect.matchEffect({
          onSuccess: (chars) =>
            Effect.sync(() => {
              writes++
              // On disk now: a large value is read again when asked for rather than held all run.
              if (chars > keptChars && local.get(k) === v) local.delete(k)
            }),
          onFailure: (e) =>
            Effect.suspend(() => {
              writeErrors++
              if (readOnly) return Effect.void
              readOnly = true
              return warn(
                `model cache: cannot write to ${store.root} (${e.code}); answers are still returned, but this run stores no more of them (the cache is read-only until it ends)`
              )
            })
        })
      )
    })

  const getOrCompute = <A, E, R>(
    k: string,
    compute: Effect.Effect<A, E, R>,
    check: Check<A> = {}
  ): Effect.Effect<{ value: A; cached: boolean }, E, R> => {
    // Runs without yielding between the check of `inFlight` and the claim of the key.
    const shareOrClaim = (seen?: unknown): Effect.Effect<{ value: A; cached: boolean }, E, R> => {
      const pending = inFlight.get(k)
      if (pending !== undefined) {
        hits++
        // The value type is the caller's: every caller of one key stores and reads one type.
        return Deferred.await(pending as Deferred.Deferred<A, E>).pipe(
          Effect.map((value) => ({ value, cached: true })),
          // The fiber computing the value was interrupted (not this one): compute it here instead
          // of failing a call that nothing went wrong with.
          Effect.catchAllCause((cause) =>
            Cause.isInterruptedOnly(cause) ? getOrCompute(k, compute, check) : Effect.failCause(cause)
          )
        )
      }
      // Another fiber may have computed and kept a value while this one was reading the store.
      if (local.has(k) && local.get(k) !== seen) {
        // The value type is the caller's: every caller of one key stores and reads one type.
        const value = local.get(k) as A
        if (check.accept === undefined || check.accept(value)) {
          hits++
          return Effect.succeed({ value, cached: true })
        }
      }
      misses++
      const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
      inFlight.set(k, deferred as Deferred.Deferred<unknown, unknown>)
      return compute.pipe(
        Effect.tap((value) => save(k, value)),
        // onExit also runs on interruption, so waiters are never left on a value that cannot come.
        Effect.onExit((exit) => {
          inFlight.delete(k)
          return Deferred.done(deferred, exit)
        }),
        Effect.map((value) => ({ value, cached: false }))
      )
    }
    return Effect.suspend(() => {
      if (inFlight.has(k)) return shareOrClaim()
      // What this run held for the key before the lookup (a value the caller may reject).
      const seen = local.get(k)
      return Effect.flatMap(lookup(k, check), (found) => {
        if (Option.isSome(found)) {
          hits++
          return Effect.succeed({ value: found.value, cached: true })
        }
        return shareOrClaim(seen)
      })
    })
  }

  return {
    get: <A = unknown>(k: string, check: Check<A> = {}) =>
      Effect.map(lookup(k, check), (found) => {
        if (Option.isSome(found)) hits++
        else misses++
        return found
      }),
    set: save,
    has: (k) => Effect.map(lookup(k, {}), Option.isSome),
    stats: Effect.sync(() => ({ hits, misses, writes, invalid, rejected, writeErrors })),
    getOrCompute
  }
}

const warnWith =
  (options: Options) =>
  (line: string): Effect.Effect<void> =>
    options.onWarning === undefined ? Effect.logWarning(line) : Effect.sync(() => options.onWarning?.(line))

const nothingStored: Store = {
  where: () => "memory",
  root: "memory",
  read: () => Effect.succeed(Option.none()),
  write: () => Effect.succeed(0)
}

/** A cache held in memory for the life of the layer (tests, dry runs). */
export const layerMemory: Layer.Layer<ModelCache> = Layer.sync(ModelCache, () => make(nothingStored, Effect.logWarning))

/**
 * A cache that reads `base` but keeps its own writes in memory. Dry runs use it so that a call
 * repeated within the run counts as answered by the cache (as it would be in a real run) while
 * nothing is written to `base`. Entries of `base` are checked (and reported) by `base`.
 */
export const overlay = (base: Service): Service =>
  make(
    {
      where: () => "memory",
      root: "memory",
      read: (k, check) =>
        Effect.map(
          base.get(k, check),
          Option.map((value) => ({ value, chars: 0 }))
        ),
      write: () => Effect.succeed(0)
    },
    Effect.logWarning
  )

/** The file-backed cache described above, rooted at `dir` (created when missing), on the `FileSystem` the caller provides. */
export const layerFile = (dir: string, options: Options = {}): Layer.Layer<ModelCache, never, FileSystem.FileSystem> =>
  Layer.effect(
    ModelCache,
    Effect.map(FileSystem.FileSystem, (fs) => make(fileStore(fs, dir), warnWith(options)))
  )

/** How one entry is stored: its key (checked against the file name) and the value. */
const Entry = Schema.Struct({ key: Schema.String, value: Schema.Unknown })
const decodeEntry = Schema.decodeUnknownEither(Schema.parseJson(Entry))
const encodeEntry = Schema.encodeSync(Schema.parseJson(Entry))

const errorCode = (e: PlatformError): string => {
  if (e._tag === "BadArgument") return "BadArgument"
  const cause: unknown = e.cause
  if (typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string")
    return cause.code
  return e.reason
}

let tmpCounter = 0

/**
 * What makes this process's temporary names its own in a directory shared by several machines: the
 * process id alone is not (containers often all run as PID 1), so the host and a random token join it.
 */
const writerId = `${os.hostname().replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}-${randomBytes(6).toString("hex")}`

const fileStore = (fs: FileSystem.FileSystem, dir: string): Store => {
  const fileOf = (k: string) => path.join(dir, k.slice(0, 2), `${k}.json`)
  const made = new Set<string>() // subdirectories made, once a process (one removed mid-run then fails writes)
  return {
    where: fileOf,
    root: dir,
    read: (k) =>
      fs.readFileString(fileOf(k)).pipe(
        Effect.matchEffect({
          onFailure: (e) =>
            e._tag === "SystemError" && e.reason === "NotFound"
              ? Effect.succeed(Option.none())
              : Effect.fail(new Unreadable(`cannot be read (${errorCode(e)})`)),
          onSuccess: (text) => {
            const decoded = decodeEntry(text)
            if (Either.isLeft(decoded)) {
              const transform = decoded.left.issue._tag === "Transformation" && decoded.left.issue.kind === "Encoded"
              return Effect.fail(
                new Unreadable(
                  transform
                    ? `not valid JSON (${issues(decoded.left)}; the file may be truncated)`
                    : `not a cache entry (expected {"key": ..., "value": ...}; ${issues(decoded.left)})`
                )
              )
            }
            const entry = decoded.right
            if (entry.key !== k)
              return Effect.fail(new Unreadable(`it holds the entry of key ${entry.key}, not of its file name`))
            if (entry.value === undefined) return Effect.fail(new Unreadable(`not a cache entry (it has no "value")`))
            return Effect.succeed(Option.some({ value: entry.value, chars: text.length }))
          }
        })
      ),
    write: (k, value) => {
      const file = fileOf(k)
      const tmp = `${file}.${writerId}.${++tmpCounter}.tmp`
      const sub = path.dirname(file)
      const mkdir = Effect.tap(fs.makeDirectory(sub, { recursive: true }), () => made.add(sub))
      const ready = made.has(sub) ? Effect.void : mkdir
      return ready.pipe(
        Effect.zipRight(
          // The entry's JSON and its UTF-8 bytes are the only copies of the value a write makes.
          Effect.suspend(() => {
            const text = encodeEntry({ key: k, value })
            return Effect.as(fs.writeFileString(tmp, text), text.length)
          }).pipe(
            Effect.zipLeft(fs.rename(tmp, file)),
            // A partial temporary file (e.g. the disk filled mid-write) is never left behind.
            Effect.tapError(() => Effect.ignore(fs.remove(tmp)))
          )
        ),
        Effect.mapError((e) => new WriteFailed(errorCode(e)))
      )
    }
  }
}
