/**
 * Who won, as values: per slice (all instances, then the benchmark's types), a leaderboard on the
 * main metric (cells that read gold labels apart, as ceilings) and a finding: who leads, by how much
 * against the baseline (its paired test) and the runner-up (significant when the every-pair tests
 * say so), and whether each lead holds; and the notes said once above the findings. The words are
 * {@link VerdictText}'s.
 *
 * @example
 * const v = Verdict.verdict(analysis)
 * v.findings[0].vsBaseline?.significant // true
 * VerdictText.sentence(v, v.findings[0]) // "All instances: bm25 leads on retrieval.f1 with 0.624 [0.501, 0.750] ..."
 */
import { Hash } from "@cupid-lab/core"
import type { ResultLine } from "@cupid-lab/results"

import type { Analysis, Delta } from "./Analysis.js"
import { level, type TooSmall } from "./Pairwise.js"
import * as Format from "./Format.js"
import * as Slices from "./Slices.js"
import * as LikeForLike from "./LikeForLike.js"

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

/** Why no difference against the baseline can be significant on a slice: its n, and the n that takes. */
export type Small = Pick<TooSmall, "n" | "needed" | "clustered">

export interface SliceTooSmall {
  readonly slice: Slices.Slice
  readonly tooSmall: Small
}

export interface Finding {
  readonly slice: Slices.Slice
  /** The cells that share the best shown value. */
  readonly leaders: ReadonlyArray<Standing>
  readonly runnerUp: Standing | undefined
  readonly vsBaseline: Lead | undefined
  readonly vsRunnerUp: Lead | undefined
  readonly tooSmall: Small | undefined
  /** The id of the leader's own baseline: the run's, or under a model axis its ablation with the leader's models. */
  readonly baseline: string
}

/** Why a slice has no value in any cell: its instances without one by reason, else how many were scored and failed. */
export type Absence =
  | { readonly _tag: "Reasons"; readonly without: ReadonlyMap<string, number> }
  | { readonly _tag: "Counts"; readonly scored: number; readonly failed: number }

/** What the verdict says once, above its findings. */
export type Note =
  /** n leaves out instances of all: of the `scored`, n `counted` those with a value, not those `without` one (reason -> count). */
  | {
      readonly _tag: "Unscored"
      readonly scored: number
      readonly counted: number
      readonly without: ReadonlyMap<string, number>
    }
  /** The slices the verdict has no finding and the leaderboard no column for. */
  | {
      readonly _tag: "WithoutValue"
      readonly slices: ReadonlyArray<{ readonly slice: Slices.Slice; readonly why: Absence }>
    }
  /** Every finding with a leader (two or more) is too small for one `needed`: said here, not in each. */
  | { readonly _tag: "TooSmall"; readonly slices: ReadonlyArray<SliceTooSmall> }
  /** The ranked cells' scorers differ (a judge swap). */
  | { readonly _tag: "NotScoredAlike"; readonly mismatches: ReadonlyArray<LikeForLike.Mismatch> }

export interface Verdict {
  readonly metric: ResultLine.MetricDescription | undefined
  /** One per slice where some cell has a value of the metric (see {@link Slices.of}), all instances first. */
  readonly boards: ReadonlyArray<Leaderboard>
  readonly findings: ReadonlyArray<Finding>
  /** In the order they are said: the instances n leaves out, the slices without a value, a caveat every finding shares, unlike scoring. */
  readonly notes: ReadonlyArray<Note>
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

const finding = (a: Input, m: ResultLine.MetricDescription, board: Leaderboard): Finding => {
  const ranked = board.contenders.filter((s) => finite(s) !== undefined)
  const top = ranked[0]
  const leaders = top === undefined ? [] : ranked.filter((s) => shown(valueOf(s)) === shown(valueOf(top)))
  const runnerUp = ranked[leaders.length]
  const leader = leaders[0]
  const baseline = leader?.vsBaseline?.against ?? a.baseline.id
  const base = [...board.contenders, ...board.ceilings].find((s) => s.cell.id === baseline)
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
  return {
    slice: board.slice,
    leaders,
    runnerUp,
    vsBaseline,
    vsRunnerUp,
    tooSmall: a.baselineTooSmall.get(board.slice),
    baseline
  }
}

const sum = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0)

/** The instances of slice `s` that n leaves out, by reason; undefined when there are none. */
const without = (a: Input, metric: string, s: Slices.Slice): ReadonlyMap<string, number> | undefined => {
  const w = a.unscored?.metric === metric ? a.unscored.without.get(s) : undefined
  return w !== undefined && sum(w.values()) > 0 ? w : undefined
}

const notes = (
  a: Input,
  m: ResultLine.MetricDescription,
  left: ReadonlyArray<Slices.Slice>,
  findings: ReadonlyArray<Finding>
): Array<Note> => {
  const all = without(a, m.name, "all")
  const absence = (s: Slices.Slice): Absence => {
    const w = without(a, m.name, s)
    if (w !== undefined) return { _tag: "Reasons", without: w }
    const most = (f: (x: ResultLine.SliceSummary) => number) =>
      Math.max(0, ...a.summary.cells.map((c) => f(Slices.get(c, s))))
    return { _tag: "Counts", scored: most((x) => x.n), failed: most((x) => x.failed) }
  }
  // Shared when two or more findings have a leader and each is too small for one `needed`.
  const led = findings.filter((f) => f.leaders.length > 0)
  const needed = new Set(led.map((f) => f.tooSmall?.needed))
  const shared = led.length >= 2 && needed.size === 1 && !needed.has(undefined)
  const mismatches = LikeForLike.withinRun(a.summary.cells)
  const out: Array<Note> = []
  if (all !== undefined) {
    const scored = a.unscored?.scored.get("all") ?? 0
    out.push({ _tag: "Unscored", scored, counted: scored - sum(all.values()), without: all })
  }
  if (left.length > 0) out.push({ _tag: "WithoutValue", slices: left.map((slice) => ({ slice, why: absence(slice) })) })
  if (shared) out.push({ _tag: "TooSmall", slices: led.map((f) => ({ slice: f.slice, tooSmall: f.tooSmall! })) })
  if (mismatches.length > 0) out.push({ _tag: "NotScoredAlike", mismatches })
  return out
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
  const findings = boards.map((b) => finding(a, m, b))
  const left = slices.filter((s) => !boards.some((b) => b.slice === s))
  return { metric: m, boards, findings, notes: notes(a, m, left, findings) }
}
