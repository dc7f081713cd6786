/**
 * The verdict's words: one plain sentence per finding (who leads, by how much against the baseline
 * and the runner-up, and whether each lead holds) and one per note said above them. Every report,
 * the console and the viewer say the verdict through these two functions; {@link Verdict} holds the
 * numbers.
 *
 * @example
 * const v = Verdict.verdict(analysis)
 * VerdictText.notes(v) // ["n counts the instances with a value of retrieval.recall_any@5: 1536 of the 1986 scored; not counted: ..."]
 * VerdictText.sentence(v, v.findings[0]) // "All instances: bm25 leads on retrieval.f1 with 0.624 [0.501, 0.750] ..."
 */
import * as Format from "./Format.js"
import * as Slices from "./Slices.js"
import type { Absence, Finding, Lead, Note, SliceTooSmall, Small, Standing, Verdict } from "./Verdict.js"

const shown = (x: number | null): string => Format.number(x)
const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`

const units = (t: Pick<Small, "clustered">) => (t.clustered === true ? "personas" : "instances")
const together = " (a persona's instances move together)"

/** Why no difference against the baseline can be significant on these slices (one `needed`). */
const tooSmall = (parts: ReadonlyArray<SliceTooSmall>): string => {
  const first = parts[0]!.tooSmall
  if (parts.length === 1)
    return `No difference against the baseline can be significant here after correction: the cells share n = ${first.n} ${units(first)}${first.clustered === true ? together : ""}, and that takes n = ${first.needed}.`
  const groups = new Map<string, Array<SliceTooSmall>>()
  for (const p of parts) {
    const key = `${p.tooSmall.n} ${units(p.tooSmall)}`
    groups.set(key, [...(groups.get(key) ?? []), p])
  }
  const typed = parts.filter((p) => p.slice !== "all")
  const where = (group: ReadonlyArray<SliceTooSmall>): string => {
    if (group.length === parts.length) return "every slice"
    if (group.length === 1 && group[0]!.slice === "all") return "all instances"
    if (typed.length > 1 && group.length === typed.length && group.every((p) => p.slice !== "all"))
      return "each instance type"
    return `${Slices.words(group.map((p) => p.slice))} instances`
  }
  const shares = [...groups].map(
    ([key, group]) => `n = ${key} on ${where(group)}${group[0]!.tooSmall.clustered === true ? together : ""}`
  )
  return `No difference against the baseline can be significant after correction on any slice: the cells share ${Slices.words(shares)}, and that takes n = ${first.needed}.`
}

const withoutEvidence = ["abstention", "adversarial", "unlabelled"]

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

/** `450 questions without evidence (adversarial 446, unlabelled 4)` (without the parenthesis unless `detailed`), `3 instances without a relevant session`. */
const reasons = (without: ReadonlyMap<string, number>, detailed: boolean): string => {
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

/** `1 question without evidence`, `3 scored, 1 failed`. */
const absence = (why: Absence): string =>
  why._tag === "Reasons"
    ? reasons(why.without, false)
    : `${why.scored} scored${why.failed > 0 ? `, ${why.failed} failed` : ""}`

const someOf = (names: ReadonlyArray<string>): string =>
  names.length <= 3 ? names.join(", ") : `${names.slice(0, 3).join(", ")} and ${names.length - 3} more`

const note = (metric: string, n: Note): string => {
  switch (n._tag) {
    case "Unscored":
      return `n counts the instances with a value of ${metric}: ${n.counted} of the ${n.scored} scored; not counted: ${reasons(n.without, true)}.`
    case "WithoutValue": {
      const items = n.slices.map(({ slice, why }) => `${slice} instances (${absence(why)})`)
      return `The ${Slices.words(items)} have no value of ${metric} in any cell: no sentence and no column for ${n.slices.length === 1 ? "them" : "those"}.`
    }
    case "TooSmall":
      return tooSmall(n.slices)
    case "NotScoredAlike": {
      const parts = n.mismatches.map(
        (x) => `${x.field} is ${x.values.map((v) => `${v.value} in ${someOf(v.cells)}`).join("; ")}`
      )
      return `The ranked cells are not scored alike: ${parts.join("; ")}. A lead on a metric those scorers compute may come from the scorer, not the method (with a judge swap, "Agreement between judges" compares the judges).`
    }
  }
}

/** What the verdict says once, above its findings: one sentence per note. */
export const notes = (v: Verdict): Array<string> => v.notes.map((n) => note(v.metric!.name, n))

/** `ahead of the baseline all (0.380) by 0.244 (paired 95% CI [0.125, 0.367], adjusted p = 0.117)`. */
const leadText = (l: Lead, role: string): string => {
  const stats = [
    ...(l.ci === undefined ? [] : [`paired 95% CI ${Format.interval(l.ci[0], l.ci[1])}`]),
    ...(l.p === undefined || !Number.isFinite(l.p) ? [] : [`adjusted p = ${Format.p(l.p)}`])
  ]
  const other = `${role} ${l.other.cell.name} (${shown(l.other.estimate.mean)})`
  const how =
    shown(l.by) === shown(0)
      ? `level with ${other}`
      : `${l.by > 0 ? "ahead of" : "behind"} ${other} by ${shown(Math.abs(l.by))}`
  return `${how}${stats.length === 0 ? "" : ` (${stats.join(", ")})`}`
}

/** Whether the leads hold, in one plain sentence; none when `said` (a note says for every finding that none can). */
const holds = (f: Finding, said: boolean): string => {
  if (f.tooSmall !== undefined) return said ? "" : tooSmall([{ slice: f.slice, tooSmall: f.tooSmall }])
  const leads = [f.vsBaseline, f.vsRunnerUp].filter((l): l is Lead => l !== undefined)
  const what = (l: Lead) => (l === f.vsBaseline ? "the lead over the baseline" : "the lead over the runner-up")
  const sig = leads.filter((l) => l.significant === true),
    not = leads.filter((l) => l.significant === false)
  const untested = leads.filter((l) => l.significant === undefined)
  const parts: Array<string> = []
  if (sig.length > 0 && not.length === 0)
    parts.push(
      leads.length - untested.length === 1
        ? `${capital(what(sig[0]!))} is significant after correction`
        : "Both leads are significant after correction"
    )
  else if (not.length > 0 && sig.length === 0)
    parts.push(
      not.length === 1
        ? `${capital(what(not[0]!))} is not significant after correction`
        : "Neither lead is significant after correction"
    )
  else if (sig.length > 0)
    parts.push(`${capital(what(sig[0]!))} is significant after correction; ${what(not[0]!)} is not`)
  if (untested.length > 0) parts.push(`${untested.map(what).join(" and ")} could not be tested`)
  // Said only when the observed lead is below it: then a larger true difference would likely have been detected.
  const mde =
    f.vsBaseline?.significant === false &&
    f.vsBaseline.mde !== undefined &&
    Math.abs(f.vsBaseline.by) < f.vsBaseline.mde
      ? f.vsBaseline.mde
      : undefined
  if (mde !== undefined)
    parts.push(
      `at this n the test detects a difference against the baseline of ${shown(mde)} or more with 80% power, so none larger is likely`
    )
  return parts.length === 0 ? "" : `${parts.join("; ")}.`
}

/** The plain sentence of one finding of `v`, without what {@link notes} says once for every finding. */
export const sentence = (v: Verdict, f: Finding): string => {
  const metric = v.metric!.name
  const head = capital(Slices.title(f.slice))
  const leader = f.leaders[0]
  if (leader === undefined) return `${head}: no cell that reads no gold labels has a value of ${metric}.`
  const isBase = (s: Standing | undefined) => s?.cell.id === f.baseline
  const value = shown(leader.estimate.mean)
  const compared = f.vsBaseline !== undefined || f.vsRunnerUp !== undefined
  const lead =
    f.leaders.length > 1
      ? `${Slices.words(f.leaders.map((s) => s.cell.name))} tie for the lead on ${metric} at ${value}${compared ? `; ${leader.cell.name} is` : ""}`
      : `${leader.cell.name}${isBase(leader) ? " (the baseline)" : ""} leads on ${metric} with ${value} ${Format.interval(leader.estimate.ci95[0], leader.estimate.ci95[1])} on n = ${leader.estimate.n} instances${compared ? "," : ""}`
  const parts: Array<string> = []
  if (f.vsBaseline !== undefined)
    parts.push(leadText(f.vsBaseline, isBase(f.runnerUp) ? "the baseline and runner-up" : "the baseline"))
  if (f.vsRunnerUp !== undefined) parts.push(leadText(f.vsRunnerUp, "the runner-up"))
  // A note says it for every finding.
  const said = v.notes.some((n) => n._tag === "TooSmall")
  const rest = holds(f, said)
  return `${head}: ${lead}${parts.length === 0 ? "" : ` ${parts.join(" and ")}`}.${rest === "" ? "" : ` ${rest}`}`
}
