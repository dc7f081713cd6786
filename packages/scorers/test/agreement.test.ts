import { describe, expect, it } from "vitest"
import * as Agreement from "../src/Agreement.js"

describe("Agreement.of", () => {
  it("gives hand-computed spread, ICC(1) and judge share with two repeats per item", () => {
    // Items [2,4], [6,6], [7,9]: means 3, 6, 8 (grand 17/3). SSW = 2 + 0 + 2 = 4 over 6 - 3 = 3 df,
    // MSW = 4/3; MSB = 2 * (64/9 + 1/9 + 49/9) / 2 = 38/3; ICC(1) = (38/3 - 4/3) / (38/3 + 4/3) = 17/21.
    // Item means vary with s^2 = 19/3; the judge's part is MSW / 2 = 2/3: share 2/19.
    const a = Agreement.of([
      [2, 4],
      [6, 6],
      [7, 9]
    ])
    expect(a.items).toBe(3)
    expect(a.repeats).toEqual([2, 2])
    expect(a.withinVariance).toBeCloseTo(4 / 3, 12)
    expect(a.icc).toBeCloseTo(17 / 21, 12)
    expect(a.judgeShare).toBeCloseTo(2 / 19, 12)
    expect(a.meanWithinSd).toBeCloseTo((2 * Math.SQRT2) / 3, 12)
  })

  it("handles unequal repeat counts with k0 and drops items with fewer than two finite values", () => {
    // [1,3] and [5,5,8]: means 2 and 6, grand 22/5. SSW = 2 + 6 = 8 over 5 - 2 = 3 df, MSW = 8/3;
    // MSB = 2 * 2.4^2 + 3 * 1.6^2 = 96/5; k0 = 5 - 13/5 = 12/5; ICC(1) = (96/5 - 8/3) / (96/5 + (7/5)(8/3)) = 31/43.
    // Judge part MSW * (1/2 + 1/3) / 2 = 10/9 against s^2 of the means (2, 6) = 8: share 5/36.
    const a = Agreement.of([[1, 3], [5, 5, 8], [NaN, 4], [7]])
    expect(a.items).toBe(2)
    expect(a.repeats).toEqual([2, 3])
    expect(a.icc).toBeCloseTo(31 / 43, 12)
    expect(a.judgeShare).toBeCloseTo(5 / 36, 12)
    expect(a.meanWithinSd).toBeCloseTo((Math.SQRT2 + Math.sqrt(3)) / 2, 12)
  })

  it("is 1 for repeats that always agree, caps the share at 1 and is NaN where undefined", () => {
    const same = Agreement.of([
      [3, 3],
      [5, 5],
      [9, 9]
    ])
    expect(same.icc).toBe(1)
    expect(same.judgeShare).toBe(0)
    expect(same.meanWithinSd).toBe(0)
    // Item means equal (4 and 4), repeats differ: all of the mean's variance is the judge's.
    const noise = Agreement.of([
      [3, 5],
      [5, 3]
    ])
    expect(noise.judgeShare).toBe(1)
    expect(noise.icc).toBeCloseTo(-1, 12)
    const flat = Agreement.of([
      [5, 5],
      [5, 5]
    ])
    expect(flat.icc).toBeNaN()
    expect(flat.judgeShare).toBeNaN()
    const none = Agreement.of([[1]])
    expect(none.items).toBe(0)
    expect(none.meanWithinSd).toBeNaN()
  })
})
