/**
 * What a verdict says once, above its findings, rather than in each: which instances n leaves out
 * and why (questions without evidence), the slices no cell has a value on, and a caveat every
 * finding shares (no difference against the baseline can be significant on any slice).
 *
 * @example
 * Caveats.unscored(analysis.unscored, "retrieval.recall_any@5")
 * // ["n counts the instances with a value of retrieval.recall_any@5: 1536 of the 1986 scored; not counted: 450 questions without evidence (adversarial 446, unlabelled 4)."]
 */
import type { ResultLine } from "@cupid-lab/results"

import type { TooSmall } from "./Pairwise.js"
import * as Slices from "./Slices.js"

interface Part {
  readonly slice: Slices.Slice
  readonly leaders: ReadonlyArray<unknown>
  readonly tooSmall: Pick<TooSmall, "n" | "needed" | "clustered"> | undefined
}

const units = (t: Pick<TooSmall, "clustered">) => (t.clustered === true ? "personas" : "instances")
const together = " (a persona's instances move together)"

/** Why no difference against the baseline can be significant on these slices (all with `tooSmall`, one `needed`). */
export const tooSmall = (parts: ReadonlyArray<Part>): string => {
  const first = parts[0]!.tooSmall!
  if (parts.length === 1)
    return `No difference against the baseline can be significant here after correction: the cells share n = ${first.n} ${units(first)}${first.clustered === true ? together : ""}, and that takes n = ${first.needed}.`
  const groups = new Map<string, Array<Part>>()
  for (const p of parts) {
    const key = `${p.tooSmall!.n} ${units(p.tooSmall!)}`
    groups.set(key, [...(groups.get(key) ?? []), p])
  }
  const typed = parts.filter((p) => p.slice !== "all")
  const where = (group: ReadonlyArray<Part>): string => {
    if (group.length === parts.length) return "every slice"
    if (group.length === 1 && group[0]!.slice === "all") return "all instances"
    if (typed.length > 1 && group.length === typed.length && group.every((p) => p.slice !== "all"))
      return "each instance type"
    return `${Slices.words(group.map((p) => p.slice))} instances`
  }
  const shares = [...groups].map(
    ([key, group]) => `n = ${key} on ${where(group)}${group[0]!.tooSmall!.clustered === true ? together : ""}`
  )
  return `No difference against the baseline can be significant after correction on any slice: the cells share ${Slices.words(shares)}, and that takes n = ${first.needed}.`
}

/** The caveat every finding with a leader shares, when there are two or more and each is too small for one `needed`. */
export const sharedTooSmall = (parts: ReadonlyArray<Part>): string | undefined => {
  const led = parts.filter((p) => p.leaders.length > 0)
  const needed = new Set(led.map((p) => p.tooSmall?.needed))
  return led.length < 2 || needed.size !== 1 || needed.has(undefined) ? undefined : tooSmall(led)
}

const withoutEvidence = ["abstention", "adversarial", "unlabelled"]

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** `450 questions without evidence (adversarial 446, unlabelled 4)` (without the parenthesis unless `detailed`), `3 instances without a relevant session`. */
export const reasons = (without: ReadonlyMap<string, number>, detailed = true): string => {
  const evidence = withoutEvidence.flatMap((r) => (without.has(r) ? [[r, without.get(r)!] as const] : []))
  const total = evidence.reduce((n, [, k]) => n + k, 0)
  const relevant = without.get("no relevant session") ?? 0
  const other = without.get("other") ?? 0
  return Slices.words([
    ...(total > 0
      ? [
          `${count(total, "question", "questions")} without evidence${detailed ? ` (${evidence.map(([r, k]) => `${r} ${k}`).join(", ")})` : ""}`
        ]
      : []),
    ...(relevant > 0 ? [`${count(relevant, "instance", "instances")} without a relevant session`] : []),
    ...(other > 0 ? [`${count(other, "instance", "instances")} without a value in any cell`] : [])
  ])
}

const sum = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0)

/** What n leaves out of all instances, and why; nothing when every scored instance has a value. */
export const unscored = (u: Slices.Unscored | undefined, metric: string): Array<string> => {
  const without = u?.metric === metric ? u.without.get("all") : undefined
  const total = without === undefined ? 0 : sum(without.values())
  if (u === undefined || without === undefined || total === 0) return []
  const scored = u.scored.get("all") ?? 0
  return [
    `n counts the instances with a value of ${metric}: ${scored - total} of the ${scored} scored; not counted: ${reasons(without)}.`
  ]
}

/** The slices the verdict has no finding and the leaderboard no column for: no cell has a value there. */
export const withoutValue = (
  left: ReadonlyArray<Slices.Slice>,
  metric: string,
  cells: ReadonlyArray<ResultLine.CellSummary>,
  u: Slices.Unscored | undefined
): Array<string> => {
  if (left.length === 0) return []
  const detail = (s: Slices.Slice): string => {
    const without = u?.metric === metric ? u.without.get(s) : undefined
    if (without !== undefined && sum(without.values()) > 0) return reasons(without, false)
    const n = Math.max(0, ...cells.map((c) => Slices.get(c, s).n))
    const failed = Math.max(0, ...cells.map((c) => Slices.get(c, s).failed))
    return `${n} scored${failed > 0 ? `, ${failed} failed` : ""}`
  }
  const items = left.map((s) => `${s} instances (${detail(s)})`)
  return [
    `The ${Slices.words(items)} have no value of ${metric} in any cell: no sentence and no column for ${left.length === 1 ? "them" : "those"}.`
  ]
}
