// Turning decoded rows into an opened source: the skip-or-fail policy for invalid rows, duplicate
// instance ids, the type filter and the limit, re-applied on every run of the instance stream.
import { Effect, Either, Stream } from "effect"
import { Domain, Errors } from "@cupid-lab/core"

import type { Benchmark, LoadOptions, Opened, SkippedRow } from "../Dataset.js"
import type { DecodedRow } from "./rowDecoder.js"

export const make = (
  source: string,
  benchmark: Benchmark,
  resolved: string,
  fingerprint: string,
  rows: () => Stream.Stream<DecodedRow, Errors.DatasetError>,
  options: LoadOptions,
  size: Effect.Effect<number | undefined> = Effect.succeed(undefined)
): Opened => {
  const skipped: Array<SkippedRow> = []
  const skip = options.onInvalid === "skip"
  const types = options.types
  const instances = Stream.suspend(() => {
    skipped.length = 0
    const seen = new Map<string, number | string>()
    const check = (r: DecodedRow): Effect.Effect<ReadonlyArray<Domain.Instance>, Errors.DatasetError> => {
      const problems: Array<{ readonly field?: string; readonly reason: string; readonly id?: string }> = []
      const kept: Array<Domain.Instance> = []
      if (Either.isLeft(r.result)) problems.push(r.result.left)
      else {
        for (const one of r.result.right) {
          if (Either.isLeft(one)) {
            problems.push(one.left)
            continue
          }
          const instance = one.right
          const first = seen.get(instance.id)
          if (first === undefined) {
            seen.set(instance.id, r.row)
            kept.push(instance)
          } else {
            problems.push({ id: instance.id, reason: `duplicate instance id "${instance.id}" (first at row ${first})` })
          }
        }
      }
      if (problems.length > 0 && !skip) {
        const { field, reason } = problems[0]!
        const row = r.key === undefined ? r.row : `${r.row} (${r.key})`
        return Effect.fail(
          new Errors.DatasetError(
            field === undefined ? { source: resolved, row, reason } : { source: resolved, row, field, reason }
          )
        )
      }
      for (const { field, reason, id } of problems) {
        const why = field === undefined ? reason : `${field}: ${reason}`
        skipped.push(id === undefined ? { row: String(r.row), reason: why } : { row: String(r.row), id, reason: why })
      }
      return Effect.succeed(kept)
    }
    const all = rows().pipe(
      Stream.mapEffect(check),
      Stream.flattenIterables,
      Stream.filter((i) => types === undefined || types.includes(i.type))
    )
    return options.limit === undefined ? all : Stream.take(all, options.limit)
  })
  const limit = options.limit
  const bounded = Effect.map(size, (n) => (n === undefined || limit === undefined ? n : Math.min(n, limit)))
  // A first pass for the sweep: the ids seen are kept (for duplicates), the rows are not.
  const validate = Stream.runFold(instances, 0, (n) => n + 1)
  return { source, benchmark, resolved, fingerprint, instances, skipped: () => [...skipped], size: bounded, validate }
}
