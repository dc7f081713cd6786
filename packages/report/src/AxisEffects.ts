/**
 * A grid that crosses two or more axes read by axis: each value's marginal effect on the main metric
 * (averaged over the other axes' settings, against the axis's reference value) and the best setting
 * per instance type against its runner-up on each axis. Its tests form an exploratory family of
 * their own; docs/reports.md says how the axes and the crossed grid are found.
 *
 * @example
 * const fx = AxisEffects.of(summary, index, main, plan)
 * if (fx._tag === "Effects") fx.marginals.filter((m) => m.test !== undefined && m.test.pAdjusted < 0.05)
 */
import { Hash } from "@cupid-lab/core"
import { Selector } from "@cupid-lab/retrievers"
import { Paired, type Statistics } from "@cupid-lab/scorers"
import { Columns, type ResultLine } from "@cupid-lab/results"

import { Array as Arr, Either, Predicate, Schema } from "effect"

import * as Families from "./Families.js"
import * as Pairwise from "./Pairwise.js"
import * as Slices from "./Slices.js"

export interface Axis {
  /** The sweep key (`retriever.select`). */
  readonly key: string
  /** Readable values in grid order. */
  readonly levels: ReadonlyArray<string>
  /** The value the others are compared with: the baseline's when it is in the grid, else the first. */
  readonly reference: number
}

export interface Test {
  /** metric(b) - metric(a): the value against the reference, the best against the runner-up. */
  readonly comparison: Paired.Comparison
  readonly pAdjusted: number
}

export interface Marginal {
  readonly axis: number
  readonly level: number
  readonly slice: Slices.Slice
  /** Per instance, the mean over the cells at this value (pooled counts for a pooled metric). */
  readonly estimate: Statistics.Estimate
  /** Against the axis's reference value (undefined for the reference itself). */
  readonly test: Test | undefined
}

export interface Choice {
  readonly axis: number
  readonly level: number
  /** The best other value with the other axes held, and the best cell tested against it. */
  readonly runnerUp: { readonly level: number; readonly cell: ResultLine.CellSummary; readonly test: Test } | undefined
}

export interface Best {
  readonly slice: Slices.Slice
  readonly cell: ResultLine.CellSummary
  readonly estimate: ResultLine.MetricEstimate
  readonly choices: ReadonlyArray<Choice>
}

export interface Effects {
  readonly _tag: "Effects"
  readonly metric: ResultLine.MetricDescription
  readonly axes: ReadonlyArray<Axis>
  /** The slices some cell has a value of the metric on (see {@link Slices.valued}). */
  readonly slices: ReadonlyArray<Slices.Slice>
  /** The run's sweep keys, or derived from the cells' parameters. */
  readonly source: "recorded" | "derived"
  /** The crossed grid's cells, in run order. */
  readonly cells: ReadonlyArray<ResultLine.CellSummary>
  /** Cells reading no gold labels outside the crossed grid. */
  readonly outside: ReadonlyArray<ResultLine.CellSummary>
  readonly marginals: ReadonlyArray<Marginal>
  readonly best: ReadonlyArray<Best>
  readonly correction: Statistics.Correction
  /** Tests with a p-value. */
  readonly tests: number
}

/** No axis section; `reason` is set when the run swept axes yet fewer than two can be read. */
export interface Skipped {
  readonly _tag: "Skipped"
  readonly reason: string | undefined
}

export type AxisEffects = Effects | Skipped

const { isRecord } = Predicate
const canon = (v: unknown): string => (v === undefined ? "\u0000absent" : Hash.canonicalJson(v))

/** Where a sweep key's value sits in a cell's parameters (a ranker's `k` is recorded as `select: { top: k }`). */
export const pathOf = (key: string): ReadonlyArray<string> => {
  const parts = key.split(".")
  return parts.length === 2 && parts[0] === "retriever" && parts[1] === "k" ? ["retriever", "select"] : parts
}

const get = (v: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((x, p) => (isRecord(x) ? x[p] : undefined), v)

const without = (v: unknown, path: ReadonlyArray<string>): unknown => {
  const [head, ...rest] = path
  if (head === undefined || !isRecord(v) || !(head in v)) return v
  const { [head]: inner, ...others } = v
  return rest.length === 0 ? others : { ...others, [head]: without(inner, rest) }
}

const under = (path: ReadonlyArray<string>, prefix: ReadonlyArray<string>) =>
  path.length > prefix.length && prefix.every((p, i) => path[i] === p)

/** Axes from the cells' parameters: each varying stage, or the varying options of a stage whose plugin never changes. */
export const derive = (cells: ReadonlyArray<ResultLine.CellSummary>): Array<string> => {
  const distinct = (xs: ReadonlyArray<unknown>) => new Set(xs.map(canon)).size
  return [...new Set(cells.flatMap((c) => Object.keys(c.params)))].flatMap((k) => {
    const values = cells.map((c) => c.params[k])
    if (distinct(values) < 2) return []
    if (!values.every(isRecord) || distinct(values.map((v) => v["use"])) !== 1) return [k]
    const options = [...new Set(values.flatMap((v) => Object.keys(v)))].filter((o) => o !== "use")
    return options.filter((o) => distinct(values.map((v) => v[o])) > 1).map((o) => `${k}.${o}`)
  })
}

/** Readable labels: `plugin(option=value)` with only the options that differ among values of the same plugin; selectors as `top=2`. */
export const labels = (values: ReadonlyArray<unknown>): Array<string> => {
  const byUse = new Map<string, Array<Readonly<Record<string, unknown>>>>()
  for (const v of values)
    if (isRecord(v) && typeof v["use"] === "string") byUse.set(v["use"], [...(byUse.get(v["use"]) ?? []), v])
  const raw = values.map((v) => {
    if (v === null || v === undefined) return "none"
    if (!isRecord(v)) return Columns.labelValue(v)
    if (typeof v["use"] === "string") {
      const same = byUse.get(v["use"])!
      const keys = Object.keys(v)
        .filter((k) => k !== "use" && new Set(same.map((x) => canon(x[k]))).size > 1)
        .sort()
      return keys.length === 0
        ? v["use"]
        : `${v["use"]}(${keys.map((k) => `${k}=${Columns.labelValue(v[k])}`).join(",")})`
    }
    const select = Schema.decodeUnknownEither(Selector.Spec)(v)
    if (Either.isRight(select)) return Selector.label(select.right)
    return Object.keys(v)
      .sort()
      .map((k) => `${k}=${Columns.labelValue(v[k])}`)
      .join(",")
  })
  return raw.map((l, i) => (raw.indexOf(l) === i ? l : `${l} (${raw.slice(0, i).filter((x) => x === l).length + 1})`))
}

/**
 * The largest group of cells with the same other parameters (so explicit cells with another inferrer
 * stay out), reduced to a complete crossing by dropping the rarest value until every combination has
 * its cell. A cell's value on an axis leaves out the parts other axes set (`retriever` without its
 * `select` when `retriever.select` is an axis too).
 */
const crossing = (cells: ReadonlyArray<ResultLine.CellSummary>, keys: ReadonlyArray<string>) => {
  const paths = keys.map(pathOf)
  const valueOf = (c: ResultLine.CellSummary, i: number) =>
    paths.reduce(
      (v, p, j) => (j !== i && under(p, paths[i]!) ? without(v, p.slice(paths[i]!.length)) : v),
      get(c.params, paths[i]!)
    )
  const swept = cells.flatMap((cell) => {
    const values = keys.map((_, i) => valueOf(cell, i))
    // a cell without an option axis's value was not made by the sweep
    return values.some((v, i) => v === undefined && paths[i]!.length > 1) ? [] : [{ cell, values }]
  })
  // the groups' cells, and so the grid's, stay in run order
  const groups = Object.values(
    Arr.groupBy(swept, (m) => canon(paths.reduce<unknown>((v, p) => without(v, p), m.cell.params)))
  )
  let members = groups.reduce<Array<(typeof swept)[number]>>((a, b) => (b.length > a.length ? b : a), [])
  const levelsOf = () =>
    keys.map((_, i) => {
      const counts = new Map<string, { value: unknown; n: number }>()
      for (const m of members) {
        const k = canon(m.values[i])
        counts.set(k, { value: m.values[i], n: (counts.get(k)?.n ?? 0) + 1 })
      }
      return counts
    })
  for (;;) {
    const levels = levelsOf()
    if (members.length === levels.reduce((n, l) => n * l.size, 1)) break
    // drop the rarest value (the last axis's, the last in order, on a tie)
    let drop: { axis: number; key: string; n: number } | undefined
    levels.forEach((l, axis) =>
      l.forEach(({ n }, key) => void (drop === undefined || n <= drop.n ? (drop = { axis, key, n }) : undefined))
    )
    members = members.filter((m) => canon(m.values[drop!.axis]) !== drop!.key)
  }
  const levels = levelsOf()
  const keyed = levels.map((l) => [...l.keys()])
  return {
    cells: members.map((m) => m.cell),
    /** Per cell, its level per axis. */
    at: members.map((m) => m.values.map((v, i) => keyed[i]!.indexOf(canon(v)))),
    /** Per axis, its values in grid order. */
    values: levels.map((l) => [...l.values()].map((x) => x.value))
  }
}

/** Per instance of the slice, the metric pooled over the cells: the mean of their values, or summed counts. */
const pooled = (
  idx: Columns.Index,
  cells: ReadonlyArray<ResultLine.CellSummary>,
  slice: Slices.Slice,
  metric: ResultLine.MetricDescription
): Paired.Columns => {
  const cols = cells.map((c) => Columns.sliceOf(idx, c.id, slice)(metric))
  const sum = (of: (c: Paired.Columns) => ArrayLike<number>, scale = 1) => {
    const xs = cols.map(of)
    return Float64Array.from(xs[0]!, (_, i) => xs.reduce((total, x) => total + x[i]!, 0) / scale)
  }
  const f1 = (c: Paired.Columns) => c as Paired.F1
  switch (cols[0]!._tag) {
    case "Mean":
      return Paired.mean(sum((c) => (c as Paired.Mean).values, cols.length))
    case "Ratio":
      return Paired.ratio(
        sum((c) => (c as Paired.Ratio).num),
        sum((c) => (c as Paired.Ratio).den)
      )
    case "F1":
      return Paired.f1(
        { num: sum((c) => f1(c).precision.num), den: sum((c) => f1(c).precision.den) },
        { num: sum((c) => f1(c).recall.num), den: sum((c) => f1(c).recall.den) }
      )
  }
}

/** The run read by axis on its main metric, or why not. */
export const of = (
  summary: ResultLine.Summary,
  idx: Columns.Index,
  main: ResultLine.MetricDescription | undefined,
  plan: Families.Plan,
  permutations?: number
): AxisEffects => {
  const candidates = summary.cells.filter((c) => !c.usesGold && !c.oracleRetrieval)
  const recorded = summary.axes
  const keys = recorded ?? derive(candidates)
  if (main === undefined || keys.length < 2) return { _tag: "Skipped", reason: undefined }
  const x = crossing(candidates, keys)
  const kept = keys.flatMap((_, i) => (x.values[i]!.length >= 2 ? [i] : []))
  if (kept.length < 2) {
    const varied = kept.map((i) => keys[i]).join(", ") || "none"
    return {
      _tag: "Skipped",
      reason: `The sweep's axes (${keys.join(", ")}) leave fewer than two with two or more values once crossed (varied: ${varied}), so the grid is not read by axis.`
    }
  }
  const baselineAt = x.cells.findIndex((c) => c.id === summary.baseline)
  const axes: Array<Axis> = kept.map((i) => ({
    key: keys[i]!,
    levels: labels(x.values[i]!),
    reference: baselineAt >= 0 ? x.at[baselineAt]![i]! : 0
  }))
  const levelOf = (cell: number, axis: number) => x.at[cell]![kept[axis]!]!
  const stats = Families.resampling(summary, undefined)
  const slices = Slices.valued(summary.cells, Slices.of(summary), main.name)
  const clusters = new Map(slices.map((slice) => [slice, Families.personas(idx, slice)] as const))
  // Every test goes into one family; a record keeps its test's position until the family has run.
  const tests: Array<Paired.Test> = []
  const planned = slices.flatMap((slice) =>
    axes.flatMap((axis, a) => {
      const setting = axis.levels.map((_, l) =>
        pooled(
          idx,
          x.cells.filter((_, c) => levelOf(c, a) === l),
          slice,
          main
        )
      )
      return setting.map((columns, l) => ({
        axis: a,
        level: l,
        slice,
        estimate: Paired.estimate(columns, stats),
        t:
          l === axis.reference
            ? undefined
            : tests.push({ a: setting[axis.reference]!, b: columns, clusters: clusters.get(slice)! }) - 1
      }))
    })
  )
  const valueOf = (i: number, slice: Slices.Slice) => Slices.estimate(x.cells[i]!, slice, main.name)?.mean
  const bestPlanned = slices.flatMap((slice) => {
    const best = Pairwise.bestIndex(
      x.cells.map((_, i) => valueOf(i, slice)),
      main
    )
    if (best < 0) return []
    const column = (i: number) => Columns.sliceOf(idx, x.cells[i]!.id, slice)(main)
    const choices = axes.map((_, a) => {
      const rivals = x.cells.flatMap((_, i) =>
        i !== best && axes.every((_, o) => o === a || levelOf(i, o) === levelOf(best, o)) ? [i] : []
      )
      const runnerUp =
        rivals[
          Pairwise.bestIndex(
            rivals.map((i) => valueOf(i, slice)),
            main
          )
        ]
      if (runnerUp === undefined) return { axis: a, level: levelOf(best, a), runnerUp: undefined }
      const t = tests.push({ a: column(runnerUp), b: column(best), clusters: clusters.get(slice)! }) - 1
      return {
        axis: a,
        level: levelOf(best, a),
        runnerUp: { level: levelOf(runnerUp, a), cell: x.cells[runnerUp]!, t }
      }
    })
    return [{ slice, cell: x.cells[best]!, estimate: Slices.estimate(x.cells[best]!, slice, main.name)!, choices }]
  })
  const family = Paired.family(tests, {
    ...Families.resampling(summary, permutations),
    correction: plan.correction.exploratory
  })
  const test = (t: number): Test => ({ comparison: family.comparisons[t]!, pAdjusted: family.adjusted[t]! })
  return {
    _tag: "Effects",
    metric: main,
    axes,
    slices,
    source: recorded === undefined ? "derived" : "recorded",
    cells: x.cells,
    outside: candidates.filter((c) => !x.cells.includes(c)),
    marginals: planned.map(({ t, ...m }) => ({ ...m, test: t === undefined ? undefined : test(t) })),
    best: bestPlanned.map((b) => ({
      ...b,
      choices: b.choices.map(({ runnerUp: r, ...c }) => ({
        ...c,
        runnerUp: r === undefined ? undefined : { level: r.level, cell: r.cell, test: test(r.t) }
      }))
    })),
    correction: family.correction,
    tests: family.tests
  }
}

/** True when the adjusted p is below the level (either direction). */
export const differs = (t: Test | undefined): boolean => t !== undefined && t.pAdjusted < Pairwise.level

/** True when the test finds its second side (b) better in the metric's direction after correction. */
export const better = (t: Test | undefined, metric: ResultLine.MetricDescription): boolean =>
  differs(t) && Pairwise.better(metric, t!.comparison.delta)
