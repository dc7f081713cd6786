import { describe, expect, it } from "@effect/vitest"
import * as Pooling from "../src/internal/Pooling.js"

// batch 2, 3 tokens, width 2; row 0 has one padding token (its values must not count)
const hidden = Float32Array.of(1, 2, 3, 4, 100, 100, 0, 0, 6, 8, 0, 0)
const mask = BigInt64Array.of(1n, 1n, 0n, 1n, 1n, 1n)

describe("pool", () => {
  it("mean over kept tokens, then unit length", () => {
    const [a, b] = Pooling.pool(hidden, [2, 3, 2], mask, "mean", true)
    // row 0: mean of (1,2),(3,4) = (2,3), length sqrt(13); row 1: (2, 8/3), length 10/3
    expect(Array.from(a!)).toEqual([Math.fround(2 / Math.sqrt(13)), Math.fround(3 / Math.sqrt(13))])
    expect(Array.from(b!)).toEqual([Math.fround(0.6), Math.fround(0.8)])
  })
  it("mean without normalizing", () => {
    const [a, b] = Pooling.pool(hidden, [2, 3, 2], mask, "mean", false)
    expect(Array.from(a!)).toEqual([2, 3])
    expect(Array.from(b!)).toEqual([2, Math.fround(8 / 3)])
  })
  it("cls takes the first token; a zero vector stays zero when normalized", () => {
    const [a, b] = Pooling.pool(hidden, [2, 3, 2], mask, "cls", true)
    expect(Array.from(a!)).toEqual([Math.fround(1 / Math.sqrt(5)), Math.fround(2 / Math.sqrt(5))])
    expect(Array.from(b!)).toEqual([0, 0])
  })
})

describe("relevance", () => {
  it("one logit per pair is the score; two give the positive-minus-negative margin", () => {
    expect(Pooling.relevance([0.5, -1], 2, 1)).toEqual([0.5, -1])
    expect(Pooling.relevance([0.25, 1, 1.5, -0.5], 2, 2)).toEqual([0.75, -2])
  })
  it("other shapes are reported", () => {
    expect(Pooling.relevance([1, 2, 3], 1, 3)).toBe("expected 1 or 2 logits per pair, got 3")
  })
})
