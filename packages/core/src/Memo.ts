/**
 * Memos for pure functions of text and data (tokens of a session, an index of a history, a fitted
 * embedder), owned by one sweep. A sweep provides one {@link Memo} to every plugin it builds, so a
 * session analysed for one cell is not analysed again for the next; nothing outlives the sweep,
 * and two sweeps (or two tests) never see each other's entries.
 *
 * Outside a sweep (tests, a single build), {@link current} gives a fresh memo to each build.
 *
 * Every use declares its own {@link Namespace} once, at module level: a name for messages and a
 * capacity. A namespace's store is bounded: when full, the oldest insertions are dropped first
 * (reads do not reorder anything: in a sweep the same texts come back for every cell, so insertion
 * order is as good as recency and much cheaper). {@link Service.attached} keeps a store on an object
 * instead (a query, a model service), for keys computed once per query and reused by every cell.
 *
 * @example
 * import { Memo } from "@cupid-lab/core"
 * const tokens = Memo.namespace<ReadonlyArray<string>>("my-retriever/tokens", 50_000)
 * const make = Effect.gen(function*() {
 *   const memo = yield* Memo.current
 *   const store = memo.store(tokens)
 *   return (text: string) => store.getOrSet(text, () => text.split(" "))
 * })
 * // a sweep: Effect.provide(program, Memo.layer)
 */
import { Context, Effect, Layer, Option } from "effect"

/** A named, bounded memo for values of one type, declared once per use. */
export interface Namespace<V> {
  readonly name: string
  readonly capacity: number
  /** Carries the value type only; never read. */
  readonly _value?: (value: V) => V
}

/** Declare a namespace: one per use, at module level, so that every build of a sweep finds the same store. */
export const namespace = <V>(name: string, capacity: number): Namespace<V> => {
  if (!(Number.isInteger(capacity) && capacity >= 1))
    throw new Error(`memo namespace ${name}: capacity must be a whole number >= 1, got ${capacity}`)
  return { name, capacity }
}

/** A bounded map: reads cost one lookup; when full, the oldest insertion is dropped. */
export class Store<V> {
  private readonly map = new Map<string, V>()
  constructor(readonly capacity: number) {}

  get size(): number {
    return this.map.size
  }

  get(key: string): V | undefined {
    return this.map.get(key)
  }

  set(key: string, value: V): void {
    if (!this.map.has(key) && this.map.size >= this.capacity) {
      const oldest = this.map.keys().next()
      if (oldest.done !== true) this.map.delete(oldest.value)
    }
    this.map.set(key, value)
  }

  getOrSet(key: string, compute: () => V): V {
    const hit = this.map.get(key)
    if (hit !== undefined) return hit
    const v = compute()
    this.set(key, v)
    return v
  }
}

export interface Service {
  /** The store of a namespace in this memo: the same store for every use of that namespace. */
  readonly store: <V>(namespace: Namespace<V>) => Store<V>
  /**
   * A store of a namespace kept on an object (e.g. a query or a model service) for as long as the
   * object lives: what is computed once per query and read by every cell of a sweep.
   */
  readonly attached: <V>(owner: object, namespace: Namespace<V>) => Store<V>
}

export class Memo extends Context.Tag("@cupid-lab/core/Memo")<Memo, Service>() {}

// Keyed by the namespace object itself: its values are all of its type, and two uses never
// collide even if they picked the same name.
type Stores = Map<object, Store<unknown>>

const storeIn = <V>(stores: Stores, namespace: Namespace<V>): Store<V> => {
  let store = stores.get(namespace) as Store<V> | undefined
  if (store === undefined) {
    store = new Store<V>(namespace.capacity)
    stores.set(namespace, store)
  }
  return store
}

/** A new, empty memo (not registered anywhere: the caller owns it). */
export const unsafeMake = (): Service => {
  const stores: Stores = new Map()
  const owners = new WeakMap<object, Stores>()
  return {
    store: (namespace) => storeIn(stores, namespace),
    attached: (owner, namespace) => {
      let own = owners.get(owner)
      if (own === undefined) owners.set(owner, (own = new Map()))
      return storeIn(own, namespace)
    }
  }
}

export const make: Effect.Effect<Service> = Effect.sync(unsafeMake)

/** A fresh memo for everything built under this layer: provide it once per sweep. */
export const layer: Layer.Layer<Memo> = Layer.effect(Memo, make)

/** The provided memo (a sweep's), else a fresh one: a build outside a sweep shares nothing. */
export const current: Effect.Effect<Service> = Effect.flatMap(
  Effect.serviceOption(Memo),
  Option.match({ onNone: () => make, onSome: Effect.succeed })
)

/** Run `effect` with {@link current} provided, so that everything it builds shares one memo. */
export const shared = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Memo>> =>
  Effect.flatMap(current, (memo) => Effect.provideService(effect, Memo, memo))
