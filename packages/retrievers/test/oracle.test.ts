import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Oracle from "../src/Oracle.js"
import { suite } from "../src/testing/Conformance.js"
import * as Histories from "../src/testing/Histories.js"
import { env } from "./support.js"

describe("oracle", () => {
  it("declares that it reads gold", () => {
    expect(Oracle.plugin.needsGold).toBe(true)
  })

  it.effect("selects exactly the relevant sessions and ranks stale ones next", () =>
    Effect.gen(function* () {
      const instance = Histories.instance({ sessions: 10, type: "changing", seed: 4 })
      const service = yield* Oracle.plugin.make({})
      const r = yield* service.retrieve({ query: instance.query }, instance.gold)
      const ids = (label: string) => instance.gold.sessions.filter((s) => s.label === label).map((s) => s.id)
      expect(r.selected).toEqual(ids("relevant"))
      expect(ids("relevant").length).toBe(2)
      const top = r.ranking.slice(0, 4).map((x) => x.sessionId)
      expect(top.slice(0, 2).sort()).toEqual([...ids("relevant")].sort())
      expect(top.slice(2).sort()).toEqual([...ids("stale")].sort())
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

suite({ plugin: Oracle.plugin })
