// Shard assignment and the --shard argument: N shards cover every pair exactly once, the share of a
// pair depends only on its ids and N, and bad arguments say what to give.
import { createHash } from "node:crypto"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as Shard from "../src/Shard.js"

const cells = Array.from({ length: 12 }, (_, i) => `cell${i}`)
const instances = Array.from({ length: 60 }, (_, i) => `persona-${i}:consistent`)

describe("Shard", () => {
  it("parses i/N from 1 to N", () => {
    expect(Shard.parse("2/3")).toEqual(Either.right({ index: 2, count: 3 }))
    expect(Shard.parse(" 1 / 1 ")).toEqual(Either.right({ index: 1, count: 1 }))
    expect(Shard.parse("3/3")).toEqual(Either.right({ index: 3, count: 3 }))
  })

  it("refuses 0, an index past N, N of 0 and other shapes, saying what to give", () => {
    expect(Shard.parse("0/3")).toEqual(
      Either.left(
        "--shard 0/3: shards are numbered from 1 to 3; for a 0-based index such as Kubernetes' JOB_COMPLETION_INDEX pass $((JOB_COMPLETION_INDEX + 1))/3"
      )
    )
    expect(Shard.parse("4/3")).toEqual(Either.left("--shard 4/3: there are only 3 shards, numbered from 1 to 3"))
    expect(Shard.parse("1/0")).toEqual(Either.left("--shard 1/0: N must be between 1 and 10000, got 0"))
    expect(Shard.parse("2-3")).toEqual(
      Either.left(`--shard expects i/N (shard i of N, numbered from 1), e.g. 1/3, got "2-3"`)
    )
    expect(Shard.parse("-1/3")).toEqual(
      Either.left(`--shard expects i/N (shard i of N, numbered from 1), e.g. 1/3, got "-1/3"`)
    )
  })

  it("gives a pair the shard of the first four bytes of sha256(cell NUL instance), modulo N, plus one", () => {
    // sha256("c\u0000i") by node:crypto, read by hand: its first 8 hex digits as a big-endian uint32.
    const head = createHash("sha256").update("c\u0000i").digest("hex").slice(0, 8)
    for (const n of [1, 2, 3, 7]) expect(Shard.owner(n, "c", "i")).toBe((parseInt(head, 16) % n) + 1)
  })

  it("covers every pair exactly once across N shards, in shares of about 1/N", () => {
    for (const count of [1, 2, 3, 5]) {
      const shares = Array.from({ length: count }, (_, k) => ({ index: k + 1, count }))
      let total = 0
      for (const c of cells) {
        for (const i of instances) {
          const holders = shares.filter((s) => Shard.includes(s, c, i))
          expect(holders.length).toBe(1)
          total++
        }
      }
      expect(total).toBe(cells.length * instances.length)
      for (const s of shares) {
        const mine = cells.flatMap((c) => instances.filter((i) => Shard.includes(s, c, i))).length
        // 720 pairs: each share within 25% of 720/N.
        expect(Math.abs(mine - total / count)).toBeLessThan(0.25 * (total / count))
      }
    }
  })

  it("runs every pair without a shard", () => {
    expect(Shard.includes(undefined, "c", "i")).toBe(true)
  })
})
