import { Domain } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Selector from "../src/Selector.js"
import * as Simple from "../src/Simple.js"
import { suite } from "../src/testing/Conformance.js"
import { env } from "./support.js"

const query = (n: number): Domain.Query => ({
  key: "p",
  request: "anything",
  sessions: Array.from({ length: n }, (_, index) => ({
    id: Domain.sessionId(index),
    index,
    hash: `h${index}`,
    dialogue: []
  }))
})

describe("all", () => {
  it.effect("selects every session, ranked newest first", () =>
    Effect.gen(function* () {
      const service = yield* Simple.all.make({})
      const r = yield* service.retrieve({ query: query(3) })
      expect(r.selected).toEqual(["s1", "s2", "s3"])
      expect(r.ranking.map((x) => x.sessionId)).toEqual(["s3", "s2", "s1"])
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

describe("recency", () => {
  it.effect("ranks newest first; its default cut keeps the 2 most recent, in chronological order", () =>
    Effect.gen(function* () {
      const service = yield* Simple.recency.make({})
      expect(Simple.recency.defaultSelect).toEqual({ top: 2 })
      const r5 = yield* service.retrieve({ query: query(5) })
      expect(r5.ranking.map((x) => x.sessionId)).toEqual(["s5", "s4", "s3", "s2", "s1"])
      expect(Selector.apply({ top: 2 }, r5, query(5)).selected).toEqual(["s4", "s5"])
      expect(Selector.apply({ top: 2 }, yield* service.retrieve({ query: query(1) }), query(1)).selected).toEqual([
        "s1"
      ])
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

suite({ plugin: Simple.all })
suite({ plugin: Simple.recency })
