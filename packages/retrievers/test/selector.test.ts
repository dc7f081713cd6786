import { Domain, Retriever } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as Selector from "../src/Selector.js"
import * as Histories from "../src/testing/Histories.js"

/** Six sessions; scores by id, hand-picked: best 10 (s2), then 8 (s5), 6 (s4), 5.9 (s6), 1 (s1), 0 (s3). */
const query: Domain.Query = Histories.instance({ sessions: 6, seed: 3 }).query
const retrieval = Retriever.fromScores([
  ["s1", 1],
  ["s2", 10],
  ["s3", 0],
  ["s4", 6],
  ["s5", 8],
  ["s6", 5.9]
])
const select = (spec: unknown) =>
  Selector.select(Schema.decodeUnknownSync(Selector.Spec)(spec), retrieval.ranking, query)

describe("selectors", () => {
  it("top k: the k best, chronological", () => {
    expect(select({ top: 2 })).toEqual(["s2", "s5"])
    expect(select({ top: 3 })).toEqual(["s2", "s4", "s5"])
    expect(select({ top: 99 })).toEqual(["s1", "s2", "s3", "s4", "s5", "s6"])
  })

  it("threshold: above 0 and at least t of the best", () => {
    expect(select({ threshold: 0.6 })).toEqual(["s2", "s4", "s5"]) // 6 >= 6, 5.9 < 6
    expect(select({ threshold: 0.59 })).toEqual(["s2", "s4", "s5", "s6"])
    expect(select({ threshold: 0.05 })).toEqual(["s1", "s2", "s4", "s5", "s6"]) // s3 scores 0
  })

  it("recent m: the latest m above the cut", () => {
    expect(select({ recent: 2 })).toEqual(["s4", "s5"])
    expect(select({ recent: 2, cut: 0.5 })).toEqual(["s5", "s6"])
    expect(select({ recent: 1, cut: 1 })).toEqual(["s2"])
  })

  it("change detect: the later group when the feedback changes, else every session above the cut", () => {
    // Histories' sessions of one factor share feedback wording, so no change is found here.
    expect(select({ change: "detect" })).toEqual(["s2", "s4", "s5"])
  })

  it("nothing scores above 0: nothing is selected", () => {
    const flat = Retriever.fromScores([
      ["s1", 0],
      ["s2", 0]
    ])
    for (const spec of [{ threshold: 0.5 }, { recent: 2 }, { change: "detect" as const }]) {
      expect(Selector.select(Schema.decodeUnknownSync(Selector.Spec)(spec), flat.ranking, query)).toEqual([])
    }
  })

  it("apply keeps the ranking; labels; bad specs say what is valid", () => {
    const applied = Selector.apply({ top: 1 }, retrieval, query)
    expect(applied.ranking).toBe(retrieval.ranking)
    expect(applied.selected).toEqual(["s2"])
    expect(Selector.label({ recent: 2, cut: 0.6 })).toBe("recent=2,cut=0.6")
    expect(Selector.label({ change: "detect", cut: 0.5, minContrast: 1.2, minGroup: 2 })).toBe("change=detect,cut=0.5")
    const bad = Schema.decodeUnknownEither(Selector.Spec)({ bottom: 2 })
    expect(Either.isLeft(bad) && bad.left.message).toContain("expected one of { top: k }, { threshold: t }")
  })
})
