/**
 * What the run page shows of the reports' analysis: the verdict and leaderboard, the charts as SVG,
 * and every cell against every other.
 *
 * @example
 * const v = Opening.verdict(analysis)        // Api.VerdictView
 * const f = yield* Opening.figures(analysis) // Api.FiguresView
 */
import { Effect } from "effect"
import type { Analysis } from "../analysis/Analysis.js"
import * as Verdict from "../analysis/Verdict.js"
import * as Charts from "../render/Charts.js"
import * as Figures from "../render/Figures.js"
import * as Leaderboard from "../render/Leaderboard.js"
import * as Notes from "../render/Notes.js"
import * as Tables from "../render/Tables.js"
import type * as Api from "./Api.js"

/** With every cell on the leaderboard: the page has room for all. */
export const verdict = (a: Analysis): Api.VerdictView => {
  const v = Verdict.verdict(a)
  return {
    metric: v.metric?.name ?? null,
    intro: Leaderboard.intro(a, v),
    findings: v.findings.map((f) => ({ slice: f.slice, sentence: f.sentence })),
    leaderboard: v.metric === undefined ? null : Leaderboard.table(a, v)
  }
}

/** In report.html's order. */
export const figures = Effect.fn("Opening.figures")(function*(a: Analysis) {
  const p = Figures.planned(a)
  const all: Array<{ readonly section: Api.Figure["section"]; readonly planned: Figures.Planned | undefined }> = [
    ...p.overview.map((planned) => ({ section: "overview" as const, planned })),
    { section: "recency", planned: p.recency },
    { section: "history", planned: p.history },
    ...p.interventions.map((planned) => ({ section: "intervention" as const, planned })),
    { section: "cost", planned: p.cost }
  ]
  const out = yield* Effect.forEach(all, ({ section, planned }) =>
    planned === undefined
      ? Effect.succeed([])
      : Effect.map(Charts.svg(planned.chart), (svg): Array<Api.Figure> => [{ section, caption: planned.caption, svg }]))
  return { figures: out.flat() } satisfies Api.FiguresView
})

/** Every cell against every other, as the reports test them. */
export const pairwise = (a: Analysis): Api.PairwiseView => {
  const p = a.pairwise
  if (p === undefined) return { note: null, slices: [] }
  return {
    note: Notes.pairwiseNote(p),
    slices: p.slices.map((s) => ({
      slice: s.slice,
      tooSmall: s.tooSmall === undefined ? null : Notes.tooSmallNote(s.slice, s.tooSmall.n, s.tooSmall.needed, p.tests),
      table: Tables.pairwise(a, p, s)
    }))
  }
}
