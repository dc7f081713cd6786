import { describe, expect, it } from "@effect/vitest"
import { cosine } from "../src/Embedder.js"
import { Random } from "@cupid-lab/core"
import { type Csr, orthonormalize, symmetricEigen, times, transposeTimes, truncated } from "../src/internal/Svd.js"
import * as TfidfSvd from "../src/TfidfSvd.js"

const csr = (dense: ReadonlyArray<ReadonlyArray<number>>): Csr => {
  const rowStart = [0],
    colIndex: Array<number> = [],
    values: Array<number> = []
  for (const row of dense) {
    row.forEach((v, c) => {
      if (v !== 0) {
        colIndex.push(c)
        values.push(v)
      }
    })
    rowStart.push(colIndex.length)
  }
  return {
    rows: dense.length,
    cols: dense[0]?.length ?? 0,
    rowStart: Int32Array.from(rowStart),
    colIndex: Int32Array.from(colIndex),
    values: Float64Array.from(values)
  }
}

describe("symmetricEigen", () => {
  it("diagonalizes [[2, 1], [1, 2]]: eigenvalues 3 and 1", () => {
    const { values, vectors } = symmetricEigen([
      [2, 1],
      [1, 2]
    ])
    expect(values[0]).toBeCloseTo(3, 10)
    expect(values[1]).toBeCloseTo(1, 10)
    expect(Math.abs(vectors[0]![0]!)).toBeCloseTo(Math.SQRT1_2, 10)
    expect(vectors[0]![0]! * vectors[0]![1]!).toBeGreaterThan(0)
    expect(vectors[1]![0]! * vectors[1]![1]!).toBeLessThan(0)
  })
})

describe("truncated SVD", () => {
  it("recovers the singular values and right vectors of [[3, 0, 0], [0, 4, 0]]", () => {
    const svd = truncated(
      csr([
        [3, 0, 0],
        [0, 4, 0]
      ]),
      { rank: 2, seed: 1 }
    )
    expect(svd.values[0]).toBeCloseTo(4, 8)
    expect(svd.values[1]).toBeCloseTo(3, 8)
    expect([...svd.right[0]!].map((x) => Math.round(x * 1e8) / 1e8 + 0)).toEqual([0, 1, 0])
    expect([...svd.right[1]!].map((x) => Math.round(x * 1e8) / 1e8 + 0)).toEqual([1, 0, 0])
  })

  it("stops at the rank of the matrix: [[1, 1], [1, 1]] has one singular value, 2", () => {
    const svd = truncated(
      csr([
        [1, 1],
        [1, 1]
      ]),
      { rank: 2, seed: 3 }
    )
    expect(svd.values.length).toBe(1)
    expect(svd.values[0]).toBeCloseTo(2, 8)
    expect(svd.right[0]![0]).toBeCloseTo(Math.SQRT1_2, 8)
  })

  it("handles an empty matrix", () => {
    expect(truncated(csr([]), { rank: 4, seed: 1 })).toEqual({ values: [], right: [] })
  })
})

describe("TfidfSvd.fit", () => {
  const model = TfidfSvd.fit(["apples and bananas", "bananas with apples", "car engines", "engines of cars"], {
    dims: 8,
    minDf: 1,
    maxTerms: 100
  })

  it("keeps as many dimensions as the data has (two topics), each with singular value sqrt 2", () => {
    // Rows are unit TF-IDF vectors; each topic has two identical rows (1, 1)/sqrt 2 over its terms.
    expect(model.dims).toBe(2)
    expect(model.singularValues[0]).toBeCloseTo(Math.SQRT2, 8)
    expect(model.singularValues[1]).toBeCloseTo(Math.SQRT2, 8)
  })

  it("folds new texts in: same-topic words land together, other-topic words orthogonal", () => {
    expect(cosine(model.embed("apple"), model.embed("banana"))).toBeCloseTo(1, 6)
    expect(cosine(model.embed("apple"), model.embed("engine"))).toBeCloseTo(0, 6)
    expect(cosine(model.embed("an apple"), model.embed("apples and bananas"))).toBeCloseTo(1, 6)
    expect([...model.embed("nothing known here")]).toEqual([0, 0])
  })

  it("applies minDf and maxTerms to the vocabulary", () => {
    const small = TfidfSvd.fit(["apple apple", "apple banana", "cherry"], { dims: 4, minDf: 2, maxTerms: 10 })
    expect([...small.vocabulary.keys()]).toEqual(["appl"])
    const capped = TfidfSvd.fit(["apple banana", "apple cherry", "apple"], { dims: 4, minDf: 1, maxTerms: 2 })
    expect([...capped.vocabulary.keys()]).toEqual(["appl", "banana"])
  })

  it("computes unit TF-IDF vectors with sublinear term frequency and smoothed idf", () => {
    // 3 documents; idf(appl) = ln(4/4) + 1 = 1 (in all three), idf(banana) = ln(4/2) + 1.
    // "apple apple apple banana": weights (1 + ln 3) * 1 and (1 + ln 1) * (1 + ln 2), then unit length.
    const m = TfidfSvd.fit(["apple banana", "apple cherry", "apple"], { dims: 4, minDf: 1, maxTerms: 10 })
    const a = 1 + Math.log(3),
      b = Math.log(2) + 1
    const norm = Math.hypot(a, b)
    const v = new Map(m.tfidf("apple apple apple banana").map(([c, w]) => [[...m.vocabulary.keys()][c], w]))
    expect(v.get("appl")).toBeCloseTo(a / norm, 10)
    expect(v.get("banana")).toBeCloseTo(b / norm, 10)
  })
})

describe("the blocked kernels of the SVD", () => {
  // Column by column, one dot product at a time: what the kernels must reproduce to the last bit.
  const dot = (a: Float64Array, b: Float64Array) => {
    let s = 0
    for (let t = 0; t < a.length; t++) s += a[t]! * b[t]!
    return s
  }
  const timesByColumn = (a: Csr, xs: ReadonlyArray<Float64Array>) =>
    xs.map((x) =>
      Float64Array.from({ length: a.rows }, (_, i) => {
        let sum = 0
        for (let p = a.rowStart[i]!; p < a.rowStart[i + 1]!; p++) sum += a.values[p]! * x[a.colIndex[p]!]!
        return sum
      })
    )
  const transposeByColumn = (a: Csr, ys: ReadonlyArray<Float64Array>) =>
    ys.map((y) => {
      const x = new Float64Array(a.cols)
      for (let i = 0; i < a.rows; i++)
        if (y[i] !== 0)
          for (let p = a.rowStart[i]!; p < a.rowStart[i + 1]!; p++) x[a.colIndex[p]!]! += a.values[p]! * y[i]!
      return x
    })
  const gramSchmidtByColumn = (columns: Array<Float64Array>) => {
    for (let pass = 0; pass < 2; pass++)
      columns.forEach((c, j) => {
        for (let i = 0; i < j; i++) {
          const r = dot(columns[i]!, c)
          if (r !== 0) for (let t = 0; t < c.length; t++) c[t]! -= r * columns[i]![t]!
        }
        const norm = Math.sqrt(dot(c, c))
        if (norm < 1e-10) c.fill(0)
        else for (let t = 0; t < c.length; t++) c[t]! /= norm
      })
    return columns
  }
  const random = Random.mulberry32(5)
  const matrix = (rows: number, cols: number, density: number) =>
    csr(
      Array.from({ length: rows }, () =>
        Array.from({ length: cols }, () => (random() < density ? random() * 4 - 2 : 0))
      )
    )
  const dense = (n: number, length: number) =>
    Array.from({ length: n }, () => Float64Array.from({ length }, () => random() - 0.5))
  const bits = (xs: ReadonlyArray<Float64Array>) => xs.map((x) => Buffer.from(x.buffer).toString("hex"))

  it("multiply by a block of columns exactly as column by column, empty rows and zero entries included", () => {
    for (const [rows, cols, width] of [
      [40, 70, 13],
      [9, 3, 5],
      [120, 30, 1]
    ] as const) {
      const a = matrix(rows, cols, 0.15)
      const xs = dense(width, cols)
      const ys = dense(width, rows)
      ys[0]!.fill(0, 0, rows >> 1)
      expect(bits(times(a, xs))).toEqual(bits(timesByColumn(a, xs)))
      expect(bits(transposeTimes(a, ys))).toEqual(bits(transposeByColumn(a, ys)))
    }
  })

  it("orthonormalize four columns at a time exactly as one after another, zero and repeated columns included", () => {
    for (const [n, length] of [
      [11, 50],
      [4, 9],
      [3, 20],
      [9, 9]
    ] as const) {
      const columns = dense(n, length)
      columns[1]!.fill(0)
      if (n > 5) columns[5] = Float64Array.from(columns[2]!)
      const copy = columns.map((c) => Float64Array.from(c))
      expect(bits(orthonormalize(columns))).toEqual(bits(gramSchmidtByColumn(copy)))
    }
  })
})
