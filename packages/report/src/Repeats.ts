/**
 * The table of repeated judgments (the judge's `repeats: n`): per cell and metric, how far the
 * repeats spread, how well they agree and how much of the CI comes from the judge (scorers' Agreement).
 *
 * @example
 * const t = Repeats.table(analysis) // undefined when nothing was judged more than once
 */
import { Agreement } from "@cupid-lab/scorers"
import type { Analysis } from "./Analysis.js"
import * as Format from "./Format.js"
import type { Table } from "./Table.js"
import { cellRow, left, num, right } from "./Tables.js"

const note =
  "Instances scored by a judge asked more than once; only instances with two or more repeats count. " +
  "Spread: the mean over instances of the standard deviation of an instance's repeats. " +
  "ICC(1): one-way intraclass correlation of the repeats (1: the repeats always agree; about 0: " +
  "they differ as much as instances do). Judge share: the part of the variance of the cell's mean " +
  "that comes from the judge, (MSW x mean of 1/k) / s^2 of the instances' means, MSW the pooled " +
  "within-instance variance and k an instance's repeats, capped at 1; more repeats shrink it."

export const table = (a: Pick<Analysis, "cells" | "baseline" | "index">): Table | undefined => {
  const rows = a.cells.flatMap((c) => {
    const byMetric = a.index.repeats.get(c.summary.id)
    if (byMetric === undefined) return []
    return [...byMetric.keys()].sort().map((metric) => {
      const g = Agreement.of(byMetric.get(metric)!)
      const [lo, hi] = g.repeats
      return cellRow(a, c.summary, [
        { text: metric, code: true },
        num(String(g.items), g.items),
        num(lo === hi ? String(lo) : `${lo}-${hi}`, hi),
        num(Format.number(g.meanWithinSd), g.meanWithinSd),
        num(Format.number(g.icc), g.icc),
        num(Format.number(g.judgeShare), g.judgeShare)
      ])
    })
  })
  if (rows.length === 0) return undefined
  return {
    id: "repeats",
    title: "Repeated judgments",
    notes: [note],
    columns: [
      left("cell"),
      left("metric"),
      right("instances"),
      right("repeats"),
      right("spread (SD)"),
      right("ICC(1)"),
      right("judge share")
    ],
    rows
  }
}
