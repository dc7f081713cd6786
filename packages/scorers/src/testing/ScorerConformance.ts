/**
 * The scorer contract as a check every scorer's tests run: namespaced, unique metric names; an
 * `F1` aggregate naming two `Ratio` metrics of the same scorer; every `Mean` metric returned as a
 * number and every `Ratio` metric as counts `{ num, den }` (finite, den >= 0), `F1` metrics not
 * returned (they are computed from the ratios), nothing undeclared; inputs left untouched (they
 * are deeply frozen, so a write fails); the same input scored twice gives the same values.
 *
 * @example
 * import { ScorerConformance } from "@cupid-lab/scorers/testing"
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

const sameNumber = (a: number, b: number) => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b))
const same = (a: Scorer.Value | undefined, b: Scorer.Value | undefined): boolean =>
  typeof a === "number" || typeof b === "number" || a === undefined || b === undefined
    ? typeof a === "number" && typeof b === "number" && sameNumber(a, b)
    : sameNumber(a.num, b.num) && sameNumber(a.den, b.den)
const show = (v: Scorer.Value | undefined): string => (typeof v === "object" ? `${v.num}/${v.den}` : String(v))

/** Problems found, as readable sentences; empty when the scorer conforms. */
export const check = Effect.fn("ScorerConformance.check")(function* (
  service: Scorer.Service,
  inputs: ReadonlyArray<Scorer.ScoreInput>
): Effect.fn.Return<ReadonlyArray<string>, Errors.StageError> {
  const problems: Array<string> = []
  const names = service.metrics.map((m) => m.name)
  const ratios = new Set(service.metrics.filter((m) => m.aggregate._tag === "Ratio").map((m) => m.name))
  for (const n of names)
    if (!namespaced.test(n))
      problems.push(`metric "${n}" is not namespaced (retrieval.*, inference.*, generation.*, cost.*)`)
  if (new Set(names).size !== names.length) problems.push(`duplicate metric names in ${names.join(", ")}`)
  for (const m of service.metrics) {
    const a = m.aggregate
    if (a._tag === "F1") {
      for (const part of [a.precision, a.recall])
        if (!ratios.has(part)) problems.push(`${m.name}: F1 of "${part}", which is not a Ratio metric of this scorer`)
    }
  }
  const expected = new Map(
    service.metrics.filter((m) => m.aggregate._tag !== "F1").map((m) => [m.name, m.aggregate._tag])
  )
  for (const [i, input] of inputs.entries()) {
    const frozen = deepFreeze(clone(input))
    const before = JSON.stringify(frozen)
    const first = yield* Effect.catchAllDefect(service.score(frozen), (d) => {
      problems.push(`input ${i}: scoring failed with a defect (did it write to its input?): ${String(d)}`)
      return Effect.succeed(undefined)
    })
    if (first === undefined) continue
    if (JSON.stringify(frozen) !== before) problems.push(`input ${i}: the input changed while scoring`)
    for (const [n, tag] of expected) {
      const v = first[n]
      if (v === undefined) problems.push(`input ${i}: declared metric "${n}" is missing`)
      else if (tag === "Mean" && typeof v !== "number") problems.push(`input ${i}: "${n}" is not a number`)
      else if (
        tag === "Ratio" &&
        (typeof v === "number" || !Number.isFinite(v.num) || !Number.isFinite(v.den) || v.den < 0)
      ) {
        problems.push(`input ${i}: "${n}" is not counts { num, den } (finite, den >= 0): ${show(v)}`)
      }
    }
    for (const n of Object.keys(first))
      if (!expected.has(n)) problems.push(`input ${i}: "${n}" is returned but not declared`)
    const second = yield* service.score(clone(input))
    for (const n of Object.keys(first)) {
      if (!same(first[n], second[n]))
        problems.push(`input ${i}: "${n}" differs between two runs (${show(first[n])} vs ${show(second[n])})`)
    }
  }
  return problems
})
