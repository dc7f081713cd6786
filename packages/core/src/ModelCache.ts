/**
 * One content-addressed cache for every model call of every sweep.
 *
 * Keys are the SHA-256 of the canonical JSON of everything that determines an answer: call kind,
 * provider, model, every configured generation parameter and the full request (all messages, or
 * the text to embed). Failures are never stored. Identical calls in flight at the same time are
 * made once.
 *
 * Storage is one small JSON file per entry under `<dir>/<first two hex digits>/<key>.json`,
 * written to a temporary name and renamed into place. Files were chosen over a single SQLite file
 * because they need no native build on any machine, several sweep processes can share one cache
 * directory without a lock (rename is atomic, and equal keys carry equal values), and entries can
 * be inspected, copied or pruned with ordinary tools.
 *
 * @example
 * import { ModelCache } from "@cupid-lab/core"
 * const layer = ModelCache.layerFile(".cache/models")
 */
import { Cause, Context, Deferred, Effect, FiberId, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { canonicalJson, sha256Hex } from "./Hash.js"

export interface Stats {
  readonly hits: number
  readonly misses: number
  readonly writes: number
}

export interface Service {
  readonly get: (key: string) => Effect.Effect<Option.Option<unknown>>
  readonly set: (key: string, value: unknown) => Effect.Effect<void>
  readonly has: (key: string) => Effect.Effect<boolean>
  readonly stats: Effect.Effect<Stats>
  /**
   * Look the key up; on a miss run `compute`, store its success and return it. Concurrent calls
   * with the same key share one computation. Returns whether the value came from the cache.
   */
  readonly getOrCompute: <A, E, R>(
    key: string,
    compute: Effect.Effect<A, E, R>
  ) => Effect.Effect<{ readonly value: A; readonly cached: boolean }, E, R>
}

export class ModelCache extends Context.Tag("@cupid-lab/core/ModelCache")<ModelCache, Service>() {}

/** The cache key of a call: hash of its canonical JSON. */
export const key = (parts: Record<string, unknown>): string => sha256Hex(canonicalJson(parts))

interface Store {
  read(key: string): unknown | undefined
  write(key: string, value: unknown): void
}

const make = (store: Store): Service => {
  let hits = 0, misses = 0, writes = 0
  const inFlight = new Map<string, Deferred.Deferred<unknown, unknown>>()
  const get = (k: string) =>
    Effect.sync(() => {
      const v = store.read(k)
      if (v === undefined) misses++
      else hits++
      return Option.fromNullable(v)
    })
  const set = (k: string, v: unknown) =>
    Effect.sync(() => {
      store.write(k, v)
      writes++
    })
  const getOrCompute = <A, E, R>(
    k: string,
    compute: Effect.Effect<A, E, R>
  ): Effect.Effect<{ value: A; cached: boolean }, E, R> =>
    Effect.suspend((): Effect.Effect<{ value: A; cached: boolean }, E, R> => {
      const stored = store.read(k)
      if (stored !== undefined) {
        hits++
        return Effect.succeed({ value: stored as A, cached: true })
      }
      const pending = inFlight.get(k)
      if (pending !== undefined) {
        hits++
        return Deferred.await(pending as Deferred.Deferred<A, E>).pipe(
          Effect.map((value) => ({ value, cached: true })),
          // The fiber computing the value was interrupted (not this one): compute it here instead
          // of failing a call that nothing went wrong with.
          Effect.catchAllCause((cause) => Cause.isInterruptedOnly(cause) ? getOrCompute(k, compute) : Effect.failCause(cause))
        )
      }
      misses++
      const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
      inFlight.set(k, deferred as Deferred.Deferred<unknown, unknown>)
      return compute.pipe(
        Effect.tap((value) => set(k, value)),
        // onExit also runs on interruption, so waiters are never left on a value that cannot come.
        Effect.onExit((exit) => {
          inFlight.delete(k)
          return Deferred.done(deferred, exit)
        }),
        Effect.map((value) => ({ value, cached: false }))
      )
    })
  return {
    get,
    set,
    has: (k) => Effect.sync(() => store.read(k) !== undefined),
    stats: Effect.sync(() => ({ hits, misses, writes })),
    getOrCompute
  }
}

/** A cache held in memory for the life of the layer (tests, dry runs). */
export const layerMemory: Layer.Layer<ModelCache> = Layer.sync(ModelCache, () => {
  const map = new Map<string, unknown>()
  return make({ read: (k) => map.get(k), write: (k, v) => void map.set(k, v) })
})

/**
 * A cache that reads `base` but keeps its own writes in memory. Dry runs use it so that a call
 * repeated within the run counts as answered by the cache (as it would be in a real run) while
 * nothing is written to `base`.
 */
export const overlay = (base: Service): Service => {
  const local = new Map<string, unknown>()
  return make({
    read: (k) => local.get(k) ?? Option.getOrUndefined(Effect.runSync(base.get(k))),
    write: (k, v) => void local.set(k, v)
  })
}

/** The file-backed cache described above, rooted at `dir` (created when missing). */
export const layerFile = (dir: string): Layer.Layer<ModelCache> =>
  Layer.sync(ModelCache, () => make(fileStore(dir)))

export const fileStore = (dir: string): Store => {
  const memo = new Map<string, unknown>()
  const fileOf = (k: string) => path.join(dir, k.slice(0, 2), `${k}.json`)
  return {
    read(k) {
      const m = memo.get(k)
      if (m !== undefined) return m
      let text: string
      try {
        text = fs.readFileSync(fileOf(k), "utf8")
      } catch {
        return undefined
      }
      try {
        const value = (JSON.parse(text) as { value: unknown }).value
        memo.set(k, value)
        return value
      } catch {
        // A corrupt entry (e.g. a disk filled mid-write by another tool) is treated as a miss.
        return undefined
      }
    },
    write(k, value) {
      const file = fileOf(k)
      fs.mkdirSync(path.dirname(file), { recursive: true })
      const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
      fs.writeFileSync(tmp, JSON.stringify({ key: k, value }))
      fs.renameSync(tmp, file)
      memo.set(k, value)
    }
  }
}
