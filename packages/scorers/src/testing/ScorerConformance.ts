/**
 * The scorer contract as a check every scorer's tests run: namespaced, unique metric names;
 * `f1Of` naming pooled metrics of the same scorer; every declared metric (and `:num` / `:den` of
 * pooled ones) returned as a number, nothing undeclared; inputs left untouched (they are deeply
 * frozen, so a write fails); the same input scored twice gives the same values.
 *
 * @example
 * import { ScorerConformance } from "@cupid-lab/scorers/testing/ScorerConformance"
 * expect(yield* ScorerConformance.check(service, [{ instance, trace }])).toEqual([])
 */
import type { Errors, Scorer } from "@cupid-lab/core"
import { Effect } from "effect"

const namespaced = /^(retrieval|inference|generation|cost)\.[A-Za-z0-9_@.]+$/

const deepFreeze = <A>(value: A): A => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value as object)) deepFreeze(v)
  }
  return value
}

const clone = <A>(value: A): A => structuredClone(value)

const same = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b))

/** Problems found, as readable sentences; empty when the scorer conforms. */
export const check = (
  service: Scorer.Service,
  inputs: ReadonlyArray<Scorer.ScoreInput>
): Effect.Effect<ReadonlyArray<string>, Errors.StageError> =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    const names = service.metrics.map((m) => m.name)
    const pooled = new Set(service.metrics.filter((m) => m.aggregate === "pooled").map((m) => m.name))
    for (const n of names) if (!namespaced.test(n)) problems.push(`metric "${n}" is not namespaced (retrieval.*, inference.*, generation.*, cost.*)`)
    if (new Set(names).size !== names.length) problems.push(`duplicate metric names in ${names.join(", ")}`)
    for (const m of service.metrics) {
      const a = m.aggregate
      if (typeof a === "object") {
        for (const part of a.f1Of) if (!pooled.has(part)) problems.push(`${m.name}: f1Of names "${part}", which is not a pooled metric of this scorer`)
      }
    }
    const expected = new Set([...names, ...[...pooled].flatMap((n) => [`${n}:num`, `${n}:den`])])
    for (const [i, input] of inputs.entries()) {
      const frozen = deepFreeze(clone(input))
      const before = JSON.stringify(frozen)
      const first = yield* Effect.catchAllDefect(service.score(frozen), (d) => {
        problems.push(`input ${i}: scoring failed with a defect (did it write to its input?): ${String(d)}`)
        return Effect.succeed(undefined)
      })
      if (first === undefined) continue
      if (JSON.stringify(frozen) !== before) problems.push(`input ${i}: the input changed while scoring`)
      for (const n of expected) {
        if (!(n in first)) problems.push(`input ${i}: declared metric "${n}" is missing`)
        else if (typeof first[n] !== "number") problems.push(`input ${i}: "${n}" is not a number`)
      }
      for (const n of Object.keys(first)) if (!expected.has(n)) problems.push(`input ${i}: "${n}" is returned but not declared`)
      const second = yield* service.score(clone(input))
      for (const n of Object.keys(first)) {
        if (!same(first[n]!, second[n]!)) problems.push(`input ${i}: "${n}" differs between two runs (${first[n]} vs ${second[n]})`)
      }
    }
    return problems
  })
