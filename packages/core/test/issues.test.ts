import { describe, expect, it } from "vitest"
import * as Issues from "../src/Issues.js"

// bm25's options and its cut's keys, in no particular order.
const bm25Keys = ["b", "expand", "expandModel", "granularity", "join", "k1", "representation", "k", "select"]

describe("Issues: ranking what a misspelt key meant", () => {
  it("knows which keys are neighbours on a QWERTY keyboard", () => {
    for (const [a, b] of [
      ["q", "1"],
      ["q", "2"],
      ["a", "q"],
      ["a", "w"],
      ["1", "2"],
      ["k", "l"],
      ["m", "k"],
      ["M", "j"]
    ])
      expect(Issues.adjacentKeys(a!, b!), `${a} ${b}`).toBe(true)
    for (const [a, b] of [
      ["q", "3"],
      ["a", "e"],
      ["k", "1"],
      ["l", "1"],
      ["k", "k"],
      ["z", "q"]
    ])
      expect(Issues.adjacentKeys(a!, b!), `${a} ${b}`).toBe(false)
  })

  it("weighs a doubled letter and a neighbouring key as half an edit", () => {
    expect(Issues.typoCost("kk", "k")).toBe(0.5) // a doubled k
    expect(Issues.typoCost("kk", "k1")).toBe(1) // k for 1: far apart
    expect(Issues.typoCost("k2", "k1")).toBe(0.5) // 2 for 1: neighbours
    expect(Issues.typoCost("k2", "k")).toBe(1) // an extra 2
    expect(Issues.typoCost("selct", "select")).toBe(1) // a dropped e
    expect(Issues.typoCost("seleect", "select")).toBe(0.5) // a doubled e
    expect(Issues.typoCost("retreiver", "retriever")).toBe(1) // a swap
  })

  it("ranks by edit distance, then typo cost, then length difference, then the given order", () => {
    // kk: k and k1 are both 1 edit away; a doubled k (0.5) is likelier than k hit for 1 (1).
    expect(Issues.rank("kk", bm25Keys)).toEqual(["k", "k1"])
    // k2: both 1 edit away; 2 hit for its neighbour 1 (0.5) is likelier than an extra 2 (1).
    expect(Issues.rank("k2", bm25Keys)).toEqual(["k1", "k"])
    // kl: l for 1 and an extra l both cost 1; k1 has kl's length, k is one shorter.
    expect(Issues.rank("kl", bm25Keys)).toEqual(["k1", "k"])
    // b is 1 edit from bb; k, k1 are 2 edits from a 2-letter word, which is too far.
    expect(Issues.rank("bb", bm25Keys)).toEqual(["b"])
    expect(Issues.rank("selct", bm25Keys)).toEqual(["select"])
    expect(Issues.rank("expnad", bm25Keys)).toEqual(["expand"])
    expect(Issues.rank("jion", bm25Keys)).toEqual(["join"])
    expect(Issues.rank("zzz", bm25Keys)).toEqual([])
    expect(Issues.suggest("kk", bm25Keys)).toBe("k")
  })

  it("lists up to three close keys, likeliest first, never one already given, and every valid key", () => {
    expect(Issues.unknownKeys(["kk"], bm25Keys, "option")).toBe(
      `unknown option "kk" (did you mean "k" or "k1"?); valid options: b, expand, expandModel, granularity, join, k, k1, representation, select`
    )
    expect(Issues.unknownKeys(["k2"], ["k", "k1"], "option", "option", ["k1"])).toBe(
      `unknown option "k2" (did you mean "k"?); valid options: k, k1`
    )
    // All four are 1 edit from kk; kj (j next to k, same length) costs 0.5 with no length change; k and
    // kkk (a doubled k dropped or added) cost 0.5 a letter apart, in the given order; k1 costs 1.
    expect(Issues.unknownName("kk", ["k", "k1", "kj", "kkk"])).toBe(`"kk" (did you mean "kj", "k" or "kkk"?)`)
  })

  it("adds the accepted shorthands to the schema's keys at the root only", () => {
    const issues = [
      { path: ["kk"], message: 'is unexpected, expected: "b" | "k1"' },
      { path: ["nested", "kk"], message: 'is unexpected, expected: "k1"' }
    ]
    expect(
      Issues.clean(issues, "option", "option", { also: ["k", "select"], present: [] }).map((i) => i.message)
    ).toEqual([
      `unknown option "kk" (did you mean "k" or "k1"?); valid options: b, k, k1, select`,
      `unknown option "kk" (did you mean "k1"?); valid options: k1`
    ])
  })
})
