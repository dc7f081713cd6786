import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Usage from "../src/Usage.js"

const call = (promptTokens: number, extra: Partial<Usage.UsageEntry> = {}) =>
  Usage.record({
    provider: "p",
    model: "m",
    kind: "complete",
    promptTokens,
    completionTokens: 1,
    cached: false,
    ...extra
  })

describe("Usage ledgers", () => {
  it.effect(
    "a held ledger labels calls with the stage set last; an explicit withStage wins; no ledger, no record",
    () =>
      Effect.gen(function* () {
        const ledger = Usage.ledger()
        yield* call(1) // outside any ledger: dropped
        yield* Usage.into(ledger, call(2))
        ledger.stage = "retrieve"
        yield* Usage.into(ledger, Effect.all([call(3), Usage.withStage("judge", call(4))], { concurrency: 2 }))
        ledger.stage = "score"
        yield* Usage.into(ledger, call(5))
        expect(ledger.entries.map((e) => [e.stage, e.promptTokens])).toEqual([
          ["unattributed", 2],
          ["retrieve", 3],
          ["judge", 4],
          ["score", 5]
        ])
      })
  )

  it.effect("track and trackExit open a fresh ledger each; trackExit keeps the calls of a failed effect", () =>
    Effect.gen(function* () {
      const [, entries] = yield* Usage.track(Usage.withStage("infer", Effect.zip(call(1), call(2))))
      expect(entries.map((e) => e.stage)).toEqual(["infer", "infer"])
      const { exit, usage } = yield* Usage.trackExit(Effect.zipRight(call(7, { cached: true }), Effect.fail("no")))
      expect(exit._tag).toBe("Failure")
      expect(usage.map((e) => e.promptTokens)).toEqual([7])
    })
  )

  it("totals count requests and retries as the servers saw them", () => {
    const e = (cached: boolean, requests?: number, failed?: boolean): Usage.UsageEntry => ({
      stage: "s",
      provider: "p",
      model: "m",
      kind: "complete",
      promptTokens: 10,
      completionTokens: 2,
      cached,
      ...(requests === undefined ? {} : { requests }),
      ...(failed === undefined ? {} : { failed })
    })
    // uncached without a count: 1 request; 3 requests: 2 retries; cached: 0 requests; a failed call after 2 requests: 1 retry
    expect(Usage.totals([e(false), e(false, 3), e(true), e(false, 2, true)])).toEqual({
      calls: 4,
      cachedCalls: 1,
      promptTokens: 40,
      completionTokens: 8,
      requests: 6,
      retries: 3,
      failedCalls: 1
    })
  })
})
