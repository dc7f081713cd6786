import { Domain, Hash, Plugin } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Selector from "../src/Selector.js"
import * as Hybrid from "../src/Hybrid.js"
import { suite } from "../src/testing/Conformance.js"
import { env as testEnv } from "./support.js"

describe("Hybrid.fuse", () => {
  it("sums 1 / (rrfK + rank) over the rankings", () => {
    const a = [
      { sessionId: "s1", score: 9 },
      { sessionId: "s2", score: 5 },
      { sessionId: "s3", score: 1 }
    ]
    const b = [
      { sessionId: "s3", score: 0.9 },
      { sessionId: "s1", score: 0.2 }
    ]
    const fused = Hybrid.fuse([a, b], 60)
    expect(fused.get("s1")).toBeCloseTo(1 / 61 + 1 / 62, 12)
    expect(fused.get("s2")).toBeCloseTo(1 / 62, 12)
    expect(fused.get("s3")).toBeCloseTo(1 / 63 + 1 / 61, 12)
    expect(Hybrid.fuse([a, b], 0).get("s3")).toBeCloseTo(1 / 3 + 1, 12)
  })
})

const env = testEnv()

const session = (index: number, user: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [{ role: "user", content: user }]
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

describe("hybrid plugin", () => {
  it.effect("fuses a lexical ranking with a recency ranking", () =>
    Effect.gen(function* () {
      const service = yield* Plugin.build("retriever", {
        use: "hybrid",
        a: { use: "bm25", k: 3 },
        b: { use: "recency" },
        rrfK: 60
      })
      const query: Domain.Query = {
        key: "p",
        request: "telescope alignment",
        sessions: [session(0, "telescope alignment drifts"), session(1, "soup recipe"), session(2, "tax forms")]
      }
      // bm25 ranks s1 first (only match), then s3, s2 (ties broken by recency); recency ranks s3, s2, s1.
      // s1: 1/61 + 1/63; s3: 1/62 + 1/61 -> s3 wins by a hair; s2: 1/63 + 1/62.
      const r = yield* (service as import("@cupid-lab/core").Retriever.Service).retrieve({ query })
      expect(r.ranking.map((x) => x.sessionId)).toEqual(["s3", "s1", "s2"])
      expect(r.ranking[0]!.score).toBeCloseTo(1 / 62 + 1 / 61, 12)
      expect(Selector.apply({ top: 1 }, r, query).selected).toEqual(["s3"])
    }).pipe(Effect.scoped, Effect.provide(env))
  )

  it.effect("refuses a part that reads gold", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Plugin.build("retriever", { use: "hybrid", a: { use: "bm25" }, b: { use: "oracle" } })
      )
      expect(error.message).toContain(`part "oracle" reads gold labels`)
    }).pipe(Effect.scoped, Effect.provide(env))
  )

  it.effect("reports a part with bad options with the part's name", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Plugin.build("retriever", { use: "hybrid", a: { use: "bm25", kk: 2 }, b: { use: "recency" } })
      )
      expect(error.message).toContain(`plugin "bm25"`)
      expect(error.message).toContain("kk")
    }).pipe(Effect.scoped, Effect.provide(env))
  )
})

suite({ plugin: Hybrid.plugin, options: { a: { use: "bm25", representation: "user-turns" }, b: { use: "embedding" } } })
suite({ plugin: Hybrid.plugin, options: { a: { use: "context-factor" }, b: { use: "bm25", k: 4 }, rrfK: 10 } })
