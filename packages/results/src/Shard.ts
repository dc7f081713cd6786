/**
 * Splitting one sweep across machines: shard `i/N` runs every cell of the instances whose hash of
 * the instance id falls to it, so a rerun resumes the same pairs and N shards cover each pair once.
 * An instance's cells stay together: what its retrievers compute once per instance (the index of
 * its history, the analysis of its texts) is computed by one shard, not by every shard.
 *
 * @example
 * Shard.includes({ index: 2, count: 3 }, instanceId) // true for about a third of the instances
 */
import { Hash } from "@cupid-lab/core"
import { Either, Schema } from "effect"

export const Shard = Schema.Struct({
  /** 1-based: 1 .. count. */
  index: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  count: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))
})
export type Shard = typeof Shard.Type

/** The shard (1 .. count) of an instance's pairs: the first four bytes of sha256(instance id), modulo count, plus one. */
export const owner = (count: number, instance: string): number =>
  (Buffer.from(Hash.sha256Hex(instance).slice(0, 8), "hex").readUInt32BE(0) % count) + 1

export const includes = (shard: Shard | undefined, instance: string): boolean =>
  shard === undefined || owner(shard.count, instance) === shard.index

export const suffix = (shard: Shard): string => `shard-${shard.index}-of-${shard.count}`

export const describe = (shard: Shard): string => `shard ${shard.index} of ${shard.count}`

/** At most this many shards: more would leave most of them without a pair on CUPID-sized runs. */
export const maxCount = 10000

/** `i/N` as given to `sweep --shard`: i from 1 to N (a 0 index is refused with the 1-based form to use). */
export const parse = (text: string): Either.Either<Shard, string> => {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text)
  if (m === null) return Either.left(`--shard expects i/N (shard i of N, numbered from 1), e.g. 1/3, got "${text}"`)
  const index = Number(m[1]),
    count = Number(m[2])
  if (count < 1 || count > maxCount)
    return Either.left(`--shard ${text}: N must be between 1 and ${maxCount}, got ${count}`)
  if (index === 0) {
    return Either.left(
      `--shard ${text}: shards are numbered from 1 to ${count}; for a 0-based index such as Kubernetes' JOB_COMPLETION_INDEX pass $((JOB_COMPLETION_INDEX + 1))/${count}`
    )
  }
  if (index > count) return Either.left(`--shard ${text}: there are only ${count} shards, numbered from 1 to ${count}`)
  return Either.right({ index, count })
}
