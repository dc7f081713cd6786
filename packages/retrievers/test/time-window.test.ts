import { Domain, Hash, Plugin, type Retriever } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { suite } from "../src/testing/Conformance.js"
import * as TimeWindow from "../src/TimeWindow.js"
import { env } from "./support.js"

// 2023-04-12 is a Wednesday; that week starts on Monday 2023-04-10.
const today = "2023-04-12T09:30"
const read = (request: string) => {
  const r = TimeWindow.range(request, today)
  return r === undefined ? undefined : [r.start, r.end]
}

describe("TimeWindow.range: the days a request names, from its date", () => {
  it("relative days, weeks, weekends, months and years", () => {
    expect(read("What did I order yesterday?")).toEqual(["2023-04-11", "2023-04-11"])
    expect(read("Which museum did I visit last week?")).toEqual(["2023-04-03", "2023-04-09"])
    expect(read("Who did I meet last weekend?")).toEqual(["2023-04-08", "2023-04-09"])
    expect(read("What did I read this week?")).toEqual(["2023-04-10", "2023-04-12"])
    expect(read("How much did I spend last month?")).toEqual(["2023-03-01", "2023-03-31"])
    expect(read("Which city did I fly to last year?")).toEqual(["2022-01-01", "2022-12-31"])
    expect(read("What have I cooked in the past 3 days?")).toEqual(["2023-04-09", "2023-04-12"])
  })

  it("n units ago: a window around that day", () => {
    expect(read("What did I plant a few days ago?")).toEqual(["2023-04-09", "2023-04-09"])
    // 2023-02-12 +- 15 days
    expect(read("Which book did I start two months ago?")).toEqual(["2023-01-28", "2023-02-27"])
    // 2023-03-29 +- 3 days
    expect(read("Where did I hike 2 weeks ago?")).toEqual(["2023-03-26", "2023-04-01"])
    expect(read("How many months ago did I move?")).toBeUndefined()
  })

  it("weekdays, month names (the latest one not after the request), dates, since, unions", () => {
    expect(read("What did I eat last Friday?")).toEqual(["2023-04-07", "2023-04-07"])
    expect(read("Who called me last Wednesday?")).toEqual(["2023-04-05", "2023-04-05"])
    expect(read("What did I buy in March?")).toEqual(["2023-03-01", "2023-03-31"])
    expect(read("Where was I in June?")).toEqual(["2022-06-01", "2022-06-30"])
    expect(read("What happened on March 5th?")).toEqual(["2023-03-05", "2023-03-05"])
    expect(read("What did I paint in May 2021?")).toEqual(["2021-05-01", "2021-05-31"])
    expect(read("May I ask what I bought?")).toBeUndefined()
    expect(read("What have I learned since last month?")).toEqual(["2023-03-01", "2023-04-12"])
    expect(read("What changed between last Friday and yesterday?")).toEqual(["2023-04-07", "2023-04-11"])
  })

  it("no time named, or only a time after the request: no range", () => {
    expect(read("How many bikes do I own?")).toBeUndefined()
    expect(read("What are my plans this weekend?")).toBeUndefined()
  })
})

const dated = (index: number, date: string | undefined, text: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [{ role: "user", content: text }]
  return {
    id: Domain.sessionId(index),
    index,
    hash: Hash.contentHash(dialogue),
    dialogue,
    ...(date === undefined ? {} : { date })
  }
}

describe("time-window plugin", () => {
  const sessions = [
    dated(0, "2023-03-20T10:00", "I cooked a risotto for my sister."),
    dated(1, "2023-04-01T10:00", "I cooked a curry for the neighbours."),
    dated(2, "2023-04-05T10:00", "I cooked pancakes and a curry."),
    dated(3, undefined, "I cooked soup."),
    dated(4, "2023-04-20T10:00", "I cooked a curry after the question was asked.")
  ]

  it("keeps sessions within the named range and margin, undated ones, and none after the request", () => {
    const query = { request: "What did I cook last week?", date: today, sessions }
    // Last week: 04-03..04-09; margin 2: 04-01..04-11. s1 (03-20) is out, s5 (04-20) is after the request.
    expect([...TimeWindow.kept(query, 2)]).toEqual(["s2", "s3", "s4"])
    expect([...TimeWindow.kept(query, 0)]).toEqual(["s3", "s4"])
    expect([...TimeWindow.kept({ ...query, request: "What do I cook?" }, 2)]).toEqual(["s1", "s2", "s3", "s4"])
    const { date: _, ...undated } = query
    expect([...TimeWindow.kept(undated, 2)]).toEqual(["s1", "s2", "s3", "s4", "s5"])
  })

  it.effect("prunes the base ranking and its turn ranking, keeping their order and scores", () =>
    Effect.gen(function* () {
      const query: Domain.Query = { key: "w", request: "Which curry did I cook last week?", date: today, sessions }
      const service = (yield* Plugin.build("retriever", {
        use: "time-window",
        base: { use: "bm25", granularity: "turn" },
        margin: 2
      })) as Retriever.Service
      const r = yield* service.retrieve({ query })
      expect(r.ranking.map((x) => x.sessionId).sort()).toEqual(["s2", "s3", "s4"])
      expect(r.turns!.map((t) => t.sessionId).sort()).toEqual(["s2", "s3", "s4"])
      // s5 mentions curry too but is dated after the request.
      expect(r.ranking[0]!.sessionId).toBe("s3")
    }).pipe(Effect.scoped, Effect.provide(env()))
  )
})

suite({ plugin: TimeWindow.plugin })
suite({
  plugin: TimeWindow.plugin,
  options: { base: { use: "bm25", representation: "user-turns", granularity: "turn" }, margin: 0 }
})
