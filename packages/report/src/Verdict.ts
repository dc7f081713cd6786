/**
 * Who won: per instance type, a leaderboard on the main metric (cells that read gold labels apart,
 * as ceilings) and one plain sentence: who leads, by how much against the baseline (its paired test)
 * and the runner-up (significant when the every-pair tests say so), and whether each lead holds.
 *
 * @example
 * Verdict.verdict(analysis).findings[0].sentence // "All instances: bm25 leads on retrieval.f1 with 0.624 [0.501, 0.750] ..."
 */
import { Hash } from "@cupid-lab/core"
import type { ResultLine } from "@cupid-lab/results"

import type { Analysis, Delta } from "./Analysis.js"
import { level, type TooSmall } from "./Pairwise.js"
import * as Format from "./Format.js"
import * as Slices from "./Slices.js"
import * as LikeForLike from "./LikeForLike.js"
import * as Caveats from "./Caveats.js"

/** What the verdict reads of an analysis; without `unscored` it does not name the instances n leaves out. */
export type Input = Pick<Analysis, "summary" | "baseline" | "main" | "deltas" | "pairwise" | "baselineTooSmall"> &
  Partial<Pick<Analysis, "unscored">>

export interface Standing {
  readonly cell: ResultLine.CellSummary
  /** The mean is null when the cell has no value. */
  readonly estimate: ResultLine.MetricEstimate
  /** 1-based; undefined for a ceiling. */
  readonly rank: number | undefined
  /** Undefined for the baseline itself. */
  readonly vsBaseline: Delta | undefined
}

export interface Leaderboard {
  readonly slice: Slices.Slice
  /** Best first; cells without a value last. */
  readonly contenders: ReadonlyArray<Standing>
  /** Cells that read gold labels, in the same order, not ranked. */
  readonly ceilings: ReadonlyArray<Standing>
  /** Cells whose value is another cell's by construction (they differ only in stages after the one the metric measures): not ranked. */
  readonly shared: ReadonlyArray<ResultLine.CellSummary>
}

/** The stages after the one a metric family measures: a cell that changes only these has the baseline's value. */
const downstream: Readonly<Record<string, { readonly stage: string; readonly after: ReadonlyArray<string> }>> = {
  retrieval: { stage: "retriever", after: ["inferrer", "generator"] },
  inference: { stage: "inferrer", after: ["generator"] }
}

/**
 * The cells whose value of `m` is another cell's by construction: cells equal in every stage up to
 * the one `m` measures are one group, and all but one of each group are shared. The one kept is the
 * baseline, else the cell whose later stages are the baseline's (with a model axis: the same
 * ablation under each model), else the first.
 */
export const sharedCells = (
  m: ResultLine.MetricDescription,
  cells: ReadonlyArray<ResultLine.CellSummary>,
  baseline: ResultLine.CellSummary
): Array<ResultLine.CellSummary> => {
  const family = downstream[m.family]
  if (family === undefined) return []
  const { stage, after } = family
  const part = (params: ResultLine.CellSummary["params"], keep: (k: string) => boolean) =>
    Hash.canonicalJson(Object.fromEntries(Object.entries(params).filter(([k]) => keep(k))))
  const upstream = (c: ResultLine.CellSummary) => part(c.params, (k) => !after.includes(k))
  const later = (c: ResultLine.CellSummary) => part(c.params, (k) => after.includes(k))
  const groups = new Map<string, Array<ResultLine.CellSummary>>()
  // Only cells that have the measured stage: the others have no value to share.
  for (const c of cells.filter((c) => c.params[stage] !== undefined && c.params[stage] !== null))
    groups.set(upstream(c), [...(groups.get(upstream(c)) ?? []), c])
  return [...groups.values()].flatMap((group) => {
    const kept = group.find((c) => c.id === baseline.id) ?? group.find((c) => later(c) === later(baseline)) ?? group[0]!
    return group.filter((c) => c !== kept)
  })
}

/** How a lead compares with one other cell. */
export interface Lead {
  readonly other: Standing
  /** Positive when the leader is better. */
  readonly by: number
  /** The paired 95% CI, when there is a paired test. */
  readonly ci: readonly [number, number] | undefined
  /** The adjusted p, when there is one. */
  readonly p: number | undefined
  /** Undefined when it could not be tested. */
  readonly significant: boolean | undefined
  /** Primary comparisons: the smallest difference the test detects with 80% power. */
  readonly mde?: number
}

export interface Finding {
  readonly slice: Slices.Slice
  /** The cells that share the best shown value. */
  readonly leaders: ReadonlyArray<Standing>
  readonly runnerUp: Standing | undefined
  readonly vsBaseline: Lead | undefined
  readonly vsRunnerUp: Lead | undefined
  readonly tooSmall: Pick<TooSmall, "n" | "needed" | "clustered"> | undefined
  /** Without what {@link Verdict.notes} says once for every finding. */
  readonly sentence: string
}

export interface Verdict {
  readonly metric: ResultLine.MetricDescription | undefined
  /** One per slice where some cell has a value of the metric (see {@link Slices.of}), all instances first. */
  readonly boards: ReadonlyArray<Leaderboard>
  readonly findings: ReadonlyArray<Finding>
  /** Said once, above the findings: the instances n leaves out, the slices without a value, a caveat every finding shares. */
  readonly notes: ReadonlyArray<string>
}

const better =
  (m: ResultLine.MetricDescription) =>
  (x: number, y: number): number =>
    m.direction === "lower" ? x - y : y - x
const valueOf = (s: Pick<Standing, "estimate">): number | null => s.estimate.mean
const finite = (s: Pick<Standing, "estimate">): number | undefined =>
  Number.isFinite(s.estimate.mean) ? s.estimate.mean! : undefined
const shown = (x: number | null): string => Format.number(x)

export const leaderboard = (a: Input, m: ResultLine.MetricDescription, slice: Slices.Slice): Leaderboard => {
  const deltas = new Map(a.deltas.filter((d) => d.metric === m.name && d.slice === slice).map((d) => [d.cell, d]))
  const standing = (c: ResultLine.CellSummary): Omit<Standing, "rank"> => ({
    cell: c,
    estimate: Slices.estimate(c, slice, m.name) ?? { n: 0, mean: null, ci95: [null, null] },
    vsBaseline: deltas.get(c.id)
  })
  const order = better(m)
  const sorted = (cells: ReadonlyArray<ResultLine.CellSummary>) =>
    cells.map(standing).sort((x, y) => {
      const vx = finite(x),
        vy = finite(y)
      return vx === undefined ? (vy === undefined ? 0 : 1) : vy === undefined ? -1 : order(vx, vy)
    })
  const shared = sharedCells(m, a.summary.cells, a.baseline)
  const ranked = a.summary.cells.filter((c) => !shared.includes(c))
  return {
    slice,
    contenders: sorted(ranked.filter((c) => !c.usesGold)).map((s, i) => ({ ...s, rank: i + 1 })),
    ceilings: sorted(ranked.filter((c) => c.usesGold)).map((s) => ({ ...s, rank: undefined })),
    shared
  }
}

/** The leader's value minus the other's, positive when the leader is better. */
const gap = (m: ResultLine.MetricDescription, leader: Standing, other: Standing): number =>
  (m.direction === "lower" ? -1 : 1) * ((valueOf(leader) ?? NaN) - (valueOf(other) ?? NaN))

/**
 * A lead read from a paired test against the baseline (`d`: cell - baseline). `leaderIsCell`:
 * the leader is the test's cell and `other` the baseline; else the leader is the baseline.
 */
const fromDelta = (
  m: ResultLine.MetricDescription,
  d: Delta | undefined,
  other: Standing,
  leader: Standing,
  leaderIsCell: boolean
): Lead => {
  const sign = (m.direction === "lower" ? -1 : 1) * (leaderIsCell ? 1 : -1)
  const tested = d !== undefined && d.comparison.n > 0 && Number.isFinite(d.comparison.delta)
  const p = tested ? d.pAdjusted : undefined
  const [lo, hi] = tested ? d.comparison.ci95 : [NaN, NaN]
  return {
    other,
    by: tested ? sign * d.comparison.delta : gap(m, leader, other),
    ci: Number.isFinite(lo) && Number.isFinite(hi) ? (sign > 0 ? [lo, hi] : [-hi, -lo]) : undefined,
    p,
    significant: p === undefined || !Number.isFinite(p) ? undefined : p < level,
    ...(tested && Number.isFinite(d.mde) ? { mde: d.mde } : {})
  }
}

/** The leader against the runner-up: the difference of their values, significant when the every-pair tests say the leader beats it. */
const fromPairwise = (
  a: Input,
  m: ResultLine.MetricDescription,
  slice: Slices.Slice,
  leader: Standing,
  other: Standing
): Lead => {
  const beats = a.pairwise?.slices
    .find((x) => x.slice === slice)
    ?.beats.get(m.name)
    ?.get(leader.cell.id)
  const number = a.pairwise === undefined ? 0 : a.pairwise.cells.findIndex((c) => c.id === other.cell.id) + 1
  return { other, by: gap(m, leader, other), ci: undefined, p: undefined, significant: beats?.includes(number) }
}

const names = (xs: ReadonlyArray<Standing>): string =>
  xs.length <= 2
    ? xs.map((x) => x.cell.name).join(" and ")
    : `${xs
        .slice(0, -1)
        .map((x) => x.cell.name)
        .join(", ")} and ${xs[xs.length - 1]!.cell.name}`

const sliceName = (s: Slices.Slice) => capital(Slices.title(s))

/** `ahead of the baseline all (0.380) by 0.244 (paired 95% CI [0.125, 0.367], adjusted p = 0.117)`. */
const leadText = (l: Lead, role: string): string => {
  const stats = [
    ...(l.ci === undefined ? [] : [`paired 95% CI ${Format.interval(l.ci[0], l.ci[1])}`]),
    ...(l.p === undefined || !Number.isFinite(l.p) ? [] : [`adjusted p = ${Format.p(l.p)}`])
  ]
  const other = `${role} ${l.other.cell.name} (${shown(valueOf(l.other))})`
  const how =
    shown(l.by) === shown(0)
      ? `level with ${other}`
      : `${l.by > 0 ? "ahead of" : "behind"} ${other} by ${shown(Math.abs(l.by))}`
  return `${how}${stats.length === 0 ? "" : ` (${stats.join(", ")})`}`
}

/** Whether the leads hold, in one plain sentence; none when `said` (the notes say for every finding that none can). */
const holds = (f: Omit<Finding, "sentence">, said: boolean): string => {
  if (f.tooSmall !== undefined) return said ? "" : Caveats.tooSmall([f])
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

const capital = (s: string) => `${s.charAt(0).toUpperCase()}${s.slice(1)}`

/** The plain sentence of one slice. */
const sentence = (
  m: ResultLine.MetricDescription,
  f: Omit<Finding, "sentence">,
  baseline: string,
  said: boolean
): string => {
  const head = sliceName(f.slice)
  const leader = f.leaders[0]
  if (leader === undefined) return `${head}: no cell that reads no gold labels has a value of ${m.name}.`
  const isBase = (s: Standing | undefined) => s?.cell.id === baseline
  const lead =
    f.leaders.length > 1
      ? `${names(f.leaders)} tie for the lead on ${m.name} at ${shown(valueOf(leader))}${f.vsBaseline === undefined && f.vsRunnerUp === undefined ? "" : `; ${leader.cell.name} is`}`
      : `${leader.cell.name}${isBase(leader) ? " (the baseline)" : ""} leads on ${m.name} with ${shown(valueOf(leader))} ${Format.interval(leader.estimate.ci95[0], leader.estimate.ci95[1])} on n = ${leader.estimate.n} instances${f.vsBaseline === undefined && f.vsRunnerUp === undefined ? "" : ","}`
  const parts: Array<string> = []
  if (f.vsBaseline !== undefined)
    parts.push(leadText(f.vsBaseline, isBase(f.runnerUp) ? "the baseline and runner-up" : "the baseline"))
  if (f.vsRunnerUp !== undefined) parts.push(leadText(f.vsRunnerUp, "the runner-up"))
  const rest = holds(f, said)
  return `${head}: ${lead}${parts.length === 0 ? "" : ` ${parts.join(" and ")}`}.${rest === "" ? "" : ` ${rest}`}`
}

const finding = (
  a: Input,
  m: ResultLine.MetricDescription,
  board: Leaderboard
): Omit<Finding, "sentence"> & { readonly baseId: string } => {
  const ranked = board.contenders.filter((s) => finite(s) !== undefined)
  const top = ranked[0]
  const leaders = top === undefined ? [] : ranked.filter((s) => shown(valueOf(s)) === shown(valueOf(top)))
  const runnerUp = ranked[leaders.length]
  const leader = leaders[0]
  // The leader's own baseline: the baseline, or under a model axis its ablation with the leader's models.
  const baseId = leader?.vsBaseline?.against ?? a.baseline.id
  const base = [...board.contenders, ...board.ceilings].find((s) => s.cell.id === baseId)
  const baseLeads = leader !== undefined && leader.cell.id === base?.cell.id
  const vsBaseline =
    leader === undefined || base === undefined || baseLeads
      ? undefined
      : fromDelta(m, leader.vsBaseline, base, leader, true)
  // When the baseline leads, the runner-up's own paired test against it measures the lead.
  const vsRunnerUp =
    leader === undefined || runnerUp === undefined
      ? undefined
      : baseLeads
        ? fromDelta(m, runnerUp.vsBaseline, runnerUp, leader, false)
        : runnerUp.cell.id === base?.cell.id
          ? undefined
          : fromPairwise(a, m, board.slice, leader, runnerUp)
  const out = {
    slice: board.slice,
    leaders,
    runnerUp,
    vsBaseline,
    vsRunnerUp,
    tooSmall: a.baselineTooSmall.get(board.slice)
  }
  return { ...out, baseId }
}

/**
 * The verdict of a run: a leaderboard and a finding per slice where some cell has a value of the
 * main metric (none without one), and what is said once above them.
 */
export const verdict = (a: Input): Verdict => {
  const m = a.main
  if (m === undefined) return { metric: undefined, boards: [], findings: [], notes: [] }
  const slices = Slices.of(a.summary)
  const boards = Slices.valued(a.summary.cells, slices, m.name).map((s) => leaderboard(a, m, s))
  const parts = boards.map((b) => finding(a, m, b))
  const shared = Caveats.sharedTooSmall(parts)
  const findings = parts.map(({ baseId, ...f }) => ({ ...f, sentence: sentence(m, f, baseId, shared !== undefined) }))
  const left = slices.filter((s) => !boards.some((b) => b.slice === s))
  return {
    metric: m,
    boards,
    findings,
    notes: [
      ...Caveats.unscored(a.unscored, m.name),
      ...Caveats.withoutValue(left, m.name, a.summary.cells, a.unscored),
      ...(shared === undefined ? [] : [shared]),
      ...LikeForLike.withinRun(a.summary.cells)
    ]
  }
}
