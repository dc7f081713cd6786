/**
 * The reports' "By sweep axis" section ({@link AxisEffects}): a table per axis and the best setting
 * per instance type.
 *
 * @example
 * Markdown.lines(ByAxis.blocks(analysis)[0]) // ["## By sweep axis", "", ...]; no blocks when the grid crosses fewer than two axes
 */
import type { Analysis } from "./Analysis.js"
import * as AxisEffects from "./AxisEffects.js"
import * as Format from "./Format.js"
import * as Notes from "./Notes.js"
import { type Block, h3, p, quote, section, table } from "./Document.js"
import type { Cell, Table } from "./Table.js"
import { adjustedLabel, left, num, right } from "./Tables.js"

const adjusted = (c: AxisEffects.Effects["correction"]): string => adjustedLabel(c) || "p"

const interval = Format.signedInterval

/** `+0.050 [+0.010, +0.090]` with `p=… BH=… n=…` as detail; `–` without paired instances. */
const difference = (
  fx: AxisEffects.Effects,
  t: AxisEffects.Test,
  prefix: string,
  significant: boolean
): { text: string; detail: string; significant: boolean } => {
  const c = t.comparison
  if (c.n === 0) return { text: `${prefix}–`, detail: "n=0", significant: false }
  const tested = Number.isFinite(c.p) ? `p=${Format.p(c.p)} ${adjusted(fx.correction)}=${Format.p(t.pAdjusted)} ` : ""
  return {
    text: `${prefix}${Format.signed(c.delta)} ${interval(c.ci95[0], c.ci95[1])}`,
    detail: `${tested}n=${c.n}`,
    significant
  }
}

/** One axis: each value's marginal value per slice, and its paired difference from the reference value. */
export const marginals = (fx: AxisEffects.Effects, axis: number): Table => {
  const a = fx.axes[axis]!
  return {
    id: `axis-${a.key}`,
    title: `${Notes.metricLabel(fx.metric)} by ${a.key}`,
    notes: [],
    columns: [left(a.key), ...fx.slices.map((s) => right(s))],
    rows: a.levels.map((label, l) => ({
      kinds: l === a.reference ? ["baseline"] : [],
      cells: [
        { text: l === a.reference ? `${label} (reference)` : label },
        ...fx.slices.map((slice): Cell => {
          const m = fx.marginals.find((x) => x.axis === axis && x.level === l && x.slice === slice)!
          const value = `${Format.withCi(m.estimate)} n=${m.estimate.n}`
          if (m.test === undefined) return num(value, m.estimate.mean)
          const d = difference(fx, m.test, "Δ ", AxisEffects.differs(m.test))
          return {
            ...num(`${value}\n${d.text}`, m.estimate.mean),
            detail: d.detail,
            ...(d.significant ? { significant: true } : {})
          }
        })
      ]
    }))
  }
}

/** Per slice, the best cell of the crossed grid, and per axis its value against the runner-up value. */
export const best = (fx: AxisEffects.Effects): Table => ({
  id: "axis-best",
  title: `Best setting per instance type on ${fx.metric.name}`,
  notes: [],
  columns: [
    left("instances"),
    left("best cell"),
    right("value [95% CI]"),
    right("N"),
    ...fx.axes.map((a) => left(`${a.key}: best vs runner-up`))
  ],
  rows: fx.best.map((b) => ({
    kinds: [],
    cells: [
      { text: b.slice },
      { text: b.cell.name },
      num(Format.withCi(b.estimate), b.estimate.mean),
      num(String(b.estimate.n), b.estimate.n),
      ...b.choices.map((c): Cell => {
        const labels = fx.axes[c.axis]!.levels
        if (c.runnerUp === undefined) return { text: `${labels[c.level]} (no rival)` }
        const d = difference(fx, c.runnerUp.test, "", AxisEffects.better(c.runnerUp.test, fx.metric))
        return {
          text: `${labels[c.level]} vs ${labels[c.runnerUp.level]}: ${d.text}`,
          detail: d.detail,
          ...(d.significant ? { significant: true } : {})
        }
      })
    ]
  }))
})

const intro = (fx: AxisEffects.Effects): string => {
  const axes = fx.axes.map((a) => `${a.key} (${a.levels.length} values)`).join(" x ")
  const outside =
    fx.outside.length === 0
      ? ""
      : ` ${fx.outside.length} cells outside that crossing (explicit cells, other stages) are left out, as are cells that read gold labels.`
  const derived =
    fx.source === "derived"
      ? " The run did not record its sweep keys, so the axes are the parameters that vary across its cells."
      : ""
  return (
    `The grid crosses ${axes}: ${fx.cells.length} cells.${outside}${derived} ` +
    `Each value's entry is ${fx.metric.name} per instance averaged over the cells at that value (one per setting of the other axes; counts pooled for a pooled metric), over the instances where all of them have a value, with its 95% bootstrap CI and n; ` +
    `Δ is the paired difference from the axis's reference value (the baseline's value when the baseline is in the grid, else the first) [paired bootstrap 95% CI], clustered by persona where a persona has several instances. ` +
    `The best setting is the cell with the best value; each axis's runner-up is its best other value with the other axes held, and the difference is best minus runner-up. ` +
    `These ${fx.tests} tests are exploratory, corrected as a family of their own (${adjusted(fx.correction) === "p" ? "no correction" : adjusted(fx.correction)}); * adjusted p < 0.05 (for the best setting: and better).`
  )
}

/** The section, or a note of why the grid has none (nothing when it crosses fewer than two axes). */
export const blocks = (a: Pick<Analysis, "axes">): Array<Block> => {
  const fx = a.axes
  if (fx._tag === "Skipped") return fx.reason === undefined ? [] : [quote({ line: fx.reason })]
  return [
    section(
      "By sweep axis",
      [
        p({ line: intro(fx) }),
        ...fx.axes.flatMap((axis, i) => [h3(axis.key), table(marginals(fx, i))]),
        h3("Best setting per instance type"),
        table(best(fx))
      ],
      "axes"
    )
  ]
}
