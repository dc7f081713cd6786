import { Random } from "@cupid-lab/core"
import { describe, expect, it } from "vitest"
import { topK } from "../src/internal/TopK.js"

const sorted = <A>(items: ReadonlyArray<A>, k: number, compare: (a: A, b: A) => number) =>
  [...items].sort(compare).slice(0, Math.max(0, k))

describe("topK", () => {
  it("takes the k best in order", () => {
    expect(topK([5, 1, 4, 2, 3], 2, (a, b) => a - b)).toEqual([1, 2])
    expect(topK([5, 1, 4, 2, 3], 3, (a, b) => b - a)).toEqual([5, 4, 3])
    expect(topK([3, 1], 5, (a, b) => a - b)).toEqual([1, 3])
    expect(topK([3, 1], 0, (a, b) => a - b)).toEqual([])
    expect(topK([], 2, (a: number, b: number) => a - b)).toEqual([])
  })

  it("keeps equal items in input order, as a stable sort does", () => {
    const items = [
      { s: 1, id: "a" },
      { s: 2, id: "b" },
      { s: 1, id: "c" },
      { s: 2, id: "d" },
      { s: 1, id: "e" }
    ]
    expect(topK(items, 3, (x, y) => y.s - x.s).map((x) => x.id)).toEqual(["b", "d", "a"])
  })

  it("equals sort + slice on random scores with many ties, for every k", () => {
    const rng = Random.mulberry32(11)
    for (let trial = 0; trial < 200; trial++) {
      const n = Math.floor(rng() * 40)
      const items = Array.from({ length: n }, (_, i) => ({
        score: Math.floor(rng() * 5),
        term: `t${Math.floor(rng() * 8)}`,
        i
      }))
      const byScore = (a: (typeof items)[number], b: (typeof items)[number]) => b.score - a.score
      const byScoreThenTerm = (a: (typeof items)[number], b: (typeof items)[number]) =>
        b.score - a.score || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0)
      for (let k = 0; k <= n + 1; k++) {
        expect(topK(items, k, byScore)).toEqual(sorted(items, k, byScore))
        expect(topK(items, k, byScoreThenTerm)).toEqual(sorted(items, k, byScoreThenTerm))
      }
    }
  })
})
