// The plain checks compiled from a record's schema (RunDir's lines, calls.jsonl's) decide exactly
// as the schema does: the same values accepted, with the same output in the same key order, and
// every other value left to the schema (which writes the error).
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Either, FastCheck, Schema } from "effect"
import * as Calls from "../src/Calls.js"
import { decoder } from "../src/internal/fastDecode.js"
import * as ResultLine from "../src/ResultLine.js"

/** Replace the value at a random path of `value` by `by` (or add a key there). */
const mutate = (value: unknown, path: ReadonlyArray<number>, by: unknown): unknown => {
  if (path.length === 0 || typeof value !== "object" || value === null) return by
  if (Array.isArray(value)) {
    if (value.length === 0) return [by]
    const i = path[0]! % value.length
    return value.map((v, j) => (j === i ? mutate(v, path.slice(1), by) : v))
  }
  const keys = Object.keys(value)
  const i = path[0]! % (keys.length + 1)
  if (i === keys.length) return { ...value, [`extra${path.length}`]: by }
  return { ...value, [keys[i]!]: mutate((value as Record<string, unknown>)[keys[i]!], path.slice(1), by) }
}

const json = FastCheck.jsonValue({ maxDepth: 2 })

const same = <A, I>(schema: Schema.Schema<A, I>, runs: number) => {
  const fast = decoder(schema, { errors: "all" })
  const slow = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore", errors: "all" })
  const valid = Arbitrary.make(schema).map((a) => Schema.encodeSync(schema)(a))
  const input = FastCheck.oneof(
    valid,
    FastCheck.tuple(valid, FastCheck.array(FastCheck.nat(), { maxLength: 6 }), json).map(([v, p, by]) =>
      mutate(v, p, by)
    )
  )
  FastCheck.assert(
    FastCheck.property(input, (u) => {
      // Through JSON, as the files are read.
      const parsed = JSON.parse(JSON.stringify(u) ?? "null") as unknown
      const a = fast(structuredClone(parsed)),
        b = slow(structuredClone(parsed))
      expect(Either.isRight(a)).toBe(Either.isRight(b))
      if (Either.isRight(a) && Either.isRight(b)) expect(JSON.stringify(a.right)).toBe(JSON.stringify(b.right))
    }),
    { numRuns: runs, seed: 7 }
  )
}

describe("decoding a run directory's lines", () => {
  it("a result line: the same values accepted, the same output, as the schema's own decoder", () =>
    same(ResultLine.Row, 600))
  it("a line of calls (unions of structs and records with named keys go to the schema)", () => same(Calls.Line, 300))
  it("a value the schema rejects gets the schema's error", () => {
    const decode = decoder(ResultLine.Row, { errors: "all" })
    const e = decode({ cell: 1 })
    expect(Either.isLeft(e) && e.left._tag).toBe("ParseError")
  })
})
