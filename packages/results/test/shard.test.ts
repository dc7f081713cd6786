// Shard assignment and the --shard argument: N shards cover every instance (all its pairs) exactly
// once, the share of an instance depends only on its id and N, and bad arguments say what to give.
import { createHash } from "node:crypto"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as Shard from "../src/Shard.js"

const instances = Array.from({ length: 400 }, (_, i) => `persona-${i}:consistent`)

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

  it("gives an instance's pairs the shard of the first four bytes of sha256(instance id), modulo N, plus one", () => {
    // sha256("p1:changing") by node:crypto, read by hand: its first 8 hex digits as a big-endian uint32.
    const head = createHash("sha256").update("p1:changing").digest("hex").slice(0, 8)
    for (const n of [1, 2, 3, 7]) expect(Shard.owner(n, "p1:changing")).toBe((parseInt(head, 16) % n) + 1)
  })

  it("keeps every cell of an instance in one shard", () => {
    for (const i of instances) {
      const holders = [1, 2, 3].filter((index) => Shard.includes({ index, count: 3 }, i))
      expect(holders).toHaveLength(1)
    }
  })

  it("covers every instance exactly once across N shards, in shares of about 1/N", () => {
    for (const count of [1, 2, 3, 5]) {
      const shares = Array.from({ length: count }, (_, k) => ({ index: k + 1, count }))
      for (const i of instances) expect(shares.filter((s) => Shard.includes(s, i))).toHaveLength(1)
      for (const s of shares) {
        const mine = instances.filter((i) => Shard.includes(s, i)).length
        // 400 instances: each share within 25% of 400/N.
        expect(Math.abs(mine - instances.length / count)).toBeLessThan(0.25 * (instances.length / count))
      }
    }
  })

  it("runs every pair without a shard", () => {
    expect(Shard.includes(undefined, "i")).toBe(true)
  })
})
