/**
 * A judge swap: cells equal in everything but the models their scorers use (`sweep: {
 * models.evaluator: [gpt-4o, claude] }` binds a role only the scorers name) scored the same
 * responses with different judges. Per such group and per-instance metric: each judge's mean on the
 * instances every judge scored, and how well the judges agree on them (ICC(1) of the judges' values
 * per instance, the scorers' Agreement; Pearson's r for two judges).
 *
 * @example
 * Judges.swaps(summary) // [{ roles: ["evaluator"], cells: [<gpt-4o cell>, <claude cell>] }]
 * Judges.table(analysis) // undefined without a judge swap
 */
import { Hash } from "@cupid-lab/core"
import { Columns, type ResultLine } from "@cupid-lab/results"
import { Agreement } from "@cupid-lab/scorers"
import type { Analysis } from "./Analysis.js"
import * as Format from "./Format.js"
import type { Table } from "./Table.js"
import { left, num, right } from "./Tables.js"

type Cell = ResultLine.CellSummary

export interface Swap {
  /** The roles whose bindings differ across the group's cells: roles only the scorers name. */
  readonly roles: ReadonlyArray<string>
  readonly cells: ReadonlyArray<Cell>
}

const bindings = (c: Cell): Readonly<Record<string, string>> => {
  const m = c.params["models"]
  return m !== null && typeof m === "object" ? (m as Record<string, string>) : {}
}

/** Bound roles no stage of the cell calls (the cell's `models` lists those its stages call). */
const scoringRoles = (c: Cell): Array<string> => Object.keys(bindings(c)).filter((r) => c.models?.[r] === undefined)

/** Groups of two or more cells that differ only in the bindings of roles only their scorers name. */
export const swaps = (summary: Pick<ResultLine.Summary, "cells">): Array<Swap> => {
  const groups = new Map<string, Array<Cell>>()
  for (const c of summary.cells) {
    const scoring = new Set(scoringRoles(c))
    if (scoring.size === 0) continue
    const kept = Object.fromEntries(Object.entries(bindings(c)).filter(([r]) => !scoring.has(r)))
    const key = Hash.canonicalJson({ ...c.params, models: kept, scoring: [...scoring].sort() })
    groups.set(key, [...(groups.get(key) ?? []), c])
  }
  return [...groups.values()]
    .filter((cells) => cells.length > 1)
    .map((cells) => ({
      cells,
      roles: [...new Set(cells.flatMap(scoringRoles))]
        .filter((r) => new Set(cells.map((c) => bindings(c)[r])).size > 1)
        .sort()
    }))
}

/** Pearson's r of two equally long series (NaN when either does not vary). */
export const pearson = (x: ArrayLike<number>, y: ArrayLike<number>): number => {
  const n = x.length
  let mx = 0,
    my = 0
  for (let i = 0; i < n; i++) {
    mx += x[i]! / n
    my += y[i]! / n
  }
  let sxy = 0,
    sxx = 0,
    syy = 0
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my)
    sxx += (x[i]! - mx) ** 2
    syy += (y[i]! - my) ** 2
  }
  return sxx === 0 || syy === 0 ? NaN : sxy / Math.sqrt(sxx * syy)
}

export interface Agreed {
  readonly metric: string
  /** Instances every judge of the group scored. */
  readonly n: number
  /** Each judge's mean over those instances, in the group's order. */
  readonly means: ReadonlyArray<number>
  readonly icc: number
  /** Two judges only; NaN otherwise. */
  readonly r: number
}

/** Agreement of a group's judges on one per-instance metric, over the instances all of them scored. */
export const agreement = (idx: Columns.Index, swap: Swap, metric: ResultLine.MetricDescription): Agreed => {
  const series = swap.cells.map((c) => {
    const cols = Columns.sliceOf(idx, c.id, "all")(metric)
    return cols._tag === "Mean" ? Array.from(cols.values) : []
  })
  const count = Math.min(...series.map((s) => s.length))
  const rows = Array.from({ length: count }, (_, i) => series.map((s) => s[i]!)).filter((row) =>
    row.every(Number.isFinite)
  )
  const column = (j: number) => rows.map((row) => row[j]!)
  return {
    metric: metric.name,
    n: rows.length,
    means: swap.cells.map((_, j) => (rows.length === 0 ? NaN : column(j).reduce((a, b) => a + b, 0) / rows.length)),
    icc: Agreement.of(rows).icc,
    r: swap.cells.length === 2 ? pearson(column(0), column(1)) : NaN
  }
}

const judgeLabel = (swap: Swap, c: Cell): string =>
  swap.roles.map((r) => `${swap.roles.length > 1 ? `${r}=` : ""}${bindings(c)[r]}`).join(", ")

/** The judge-swap table: one row per group and per-instance inference or generation metric. */
export const table = (a: Pick<Analysis, "summary" | "index">): Table | undefined => {
  const metrics = a.summary.metrics.filter(
    (m) => (m.family === "inference" || m.family === "generation") && m.aggregate._tag === "Mean"
  )
  const rows = swaps(a.summary).flatMap((swap) =>
    metrics.map((m) => {
      const g = agreement(a.index, swap, m)
      return {
        kinds: [],
        cells: [
          { text: swap.cells.map((c) => c.name).join("\n") },
          { text: swap.roles.join(", ") },
          { text: m.name, code: true },
          num(String(g.n), g.n),
          {
            text: swap.cells.map((c, j) => `${judgeLabel(swap, c)}: ${Format.number(g.means[j])}`).join("\n")
          },
          num(Format.number(g.icc), g.icc),
          num(Format.number(g.r), g.r)
        ]
      }
    })
  )
  if (rows.length === 0) return undefined
  return {
    id: "judges",
    title: "Agreement between judges",
    notes: [
      "Cells that differ only in the models their scorers use scored the same responses with different judges. " +
        "N: instances every judge of the group scored (only those count). Means: each judge's mean over them. " +
        "ICC(1): one-way intraclass correlation of the judges' values per instance (1: the judges always agree; about 0: " +
        "they differ as much as instances do). r: Pearson's correlation, for two judges."
    ],
    columns: [
      left("cells"),
      left("judge role"),
      left("metric"),
      right("N"),
      left("mean per judge"),
      right("ICC(1)"),
      right("r")
    ],
    rows
  }
}
