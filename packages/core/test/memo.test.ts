import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Memo from "../src/Memo.js"

const words = Memo.namespace<ReadonlyArray<string>>("test/words", 3)
const lengths = Memo.namespace<number>("test/lengths", 3)
/** Another use that happens to pick the same name: still its own store. */
const sameName = Memo.namespace<number>("test/lengths", 3)

describe("Memo.Store", () => {
  it("drops the oldest insertion when full; reads do not reorder", () => {
    const store = new Memo.Store<number>(2)
    store.set("a", 1)
    store.set("b", 2)
    expect(store.get("a")).toBe(1)
    store.set("c", 3)
    expect([store.get("a"), store.get("b"), store.get("c")]).toEqual([undefined, 2, 3])
    // Replacing a key that is there evicts nothing.
    store.set("b", 20)
    expect([store.size, store.get("b"), store.get("c")]).toEqual([2, 20, 3])
  })

  it("computes a missing value once", () => {
    const store = new Memo.Store<number>(10)
    let calls = 0
    const compute = () => ++calls
    expect([store.getOrSet("k", compute), store.getOrSet("k", compute)]).toEqual([1, 1])
    expect(calls).toBe(1)
  })

  it("refuses a capacity below 1", () => {
    expect(() => Memo.namespace("test/none", 0)).toThrow(/test\/none: capacity must be a whole number >= 1, got 0/)
  })
})

describe("Memo.Service", () => {
  it("gives each namespace one store, bounded by the namespace's capacity", () => {
    const memo = Memo.unsafeMake()
    memo.store(lengths).set("a", 1)
    expect(memo.store(lengths).get("a")).toBe(1)
    expect(memo.store(sameName).get("a")).toBeUndefined()
    memo.store(words).set("a", ["x"])
    expect(memo.store(lengths).get("a")).toBe(1)
    for (const k of ["b", "c", "d"]) memo.store(lengths).set(k, 0)
    expect(memo.store(lengths).size).toBe(3)
    expect(memo.store(lengths).get("a")).toBeUndefined()
  })

  it("keeps attached stores per owner object", () => {
    const memo = Memo.unsafeMake()
    const q1 = {},
      q2 = {}
    memo.attached(q1, lengths).set("history", 1)
    expect(memo.attached(q1, lengths).get("history")).toBe(1)
    expect(memo.attached(q2, lengths).get("history")).toBeUndefined()
    expect(memo.store(lengths).get("history")).toBeUndefined()
    expect(Memo.unsafeMake().attached(q1, lengths).get("history")).toBeUndefined()
  })

  it.effect("current is the provided memo, else a fresh one each time", () =>
    Effect.gen(function* () {
      const a = yield* Memo.current
      const b = yield* Memo.current
      expect(a).not.toBe(b)
      a.store(lengths).set("x", 1)
      expect(b.store(lengths).get("x")).toBeUndefined()
      const provided = Memo.unsafeMake()
      const [c, d] = yield* Effect.provideService(Effect.all([Memo.current, Memo.current]), Memo.Memo, provided)
      expect(c).toBe(provided)
      expect(d).toBe(provided)
    })
  )

  it.effect("shared hands one memo to everything under it, and each layer build makes a new one", () =>
    Effect.gen(function* () {
      const [a, b] = yield* Memo.shared(Effect.all([Memo.current, Memo.current]))
      expect(a).toBe(b)
      const fromLayer = yield* Effect.provide(Memo.current, Memo.layer)
      const again = yield* Effect.provide(Memo.current, Memo.layer)
      expect(fromLayer).not.toBe(again)
      const outer = Memo.unsafeMake()
      const inner = yield* Effect.provideService(Memo.shared(Memo.current), Memo.Memo, outer)
      expect(inner).toBe(outer)
    })
  )
})
