/**
 * The prose the reports share, as plain text: labels for cells, slices and metrics, and the
 * paragraphs that say how the numbers were computed.
 *
 * @example
 * Notes.statistics(analysis) // ["N: ...", "Intervals: ...", ...]
 */
import { Stage } from "@cupid-lab/core"
import { Paired, Statistics } from "@cupid-lab/scorers"
import type { ResultLine } from "@cupid-lab/results"

import type { Analysis } from "./Analysis.js"
import type { Binned } from "./Bins.js"
import type { Pairwise, TooSmall } from "./Pairwise.js"
import * as Format from "./Format.js"
import * as Slices from "./Slices.js"

export const heuristicMark = "†"
export const oracleMark = "‡"

export const sliceTitle = Slices.title

/** `name ‡ (baseline)`: the marks every table uses. */
export const cellLabel = (c: ResultLine.CellSummary, baseline: string): string =>
  `${c.name}${c.usesGold ? ` ${oracleMark}` : ""}${c.id === baseline ? " (baseline)" : ""}`

export const metricLabel = (m: ResultLine.MetricDescription): string =>
  `${m.name}${m.heuristic ? ` ${heuristicMark}` : ""}`

export const aggregateNote = (m: ResultLine.MetricDescription): string => {
  const agg = m.aggregate
  switch (agg._tag) {
    case "Mean":
      return "mean over instances (macro)"
    case "Ratio":
      return "pooled over instances (micro: summed counts, then the ratio)"
    case "F1":
      return `micro F1 of pooled ${agg.precision} and ${agg.recall}`
  }
}

const short: Readonly<Record<string, string>> = { precision: "P", recall: "R", f1: "F1" }

/** Column titles for the paper-layout tables: inference's P, R and F1 (micro or not), else the name after its prefix. */
export const shortName = (name: string): string =>
  short[/^inference\.(precision|recall|f1)(?:_micro)?$/.exec(name)?.[1] ?? ""] ?? name.replace(/^[a-z]+\./, "")

/** Stage plugins of a cell: `retriever / summarizer / inferrer / generator` (`–` for none). */
export const stages = (c: ResultLine.CellSummary): string =>
  Stage.cellStages
    .map((s) => {
      const v = c.params[s]
      return v !== null && typeof v === "object" && typeof (v as { use?: unknown }).use === "string"
        ? (v as { use: string }).use
        : "–"
    })
    .join(" / ")

export const marks = (a: Analysis): Array<string> => {
  const out = [
    `${heuristicMark} the metric is computed by an offline heuristic, not the paper's LLM procedure.`,
    `${oracleMark} the cell reads gold labels (oracle): an upper bound, not a method.`
  ]
  const heuristicCells = a.cells.filter((c) => c.summary.heuristicStages.length > 0)
  if (heuristicCells.length > 0) {
    out.push(
      `${heuristicCells.length} of ${a.cells.length} cells have heuristic stages (no model); the Cells table lists them.`
    )
  }
  return out
}

/** How many permutations the tests used (see Paired.family). */
export const permutationsNote = (p: Paired.Family["permutations"]): string =>
  (p.normalTests > 0
    ? `for the ${p.normalTests} tests over at least ${Format.integer(p.largeSample ?? 0)} instances (of which at least ${Paired.largeSampleMinVarying} differ), the normal approximation of the permutation distribution (their intervals by the delta method); `
    : "") +
  (p.exactTests > 0
    ? `exact over all 2^n sign patterns for the ${p.exactTests} tests with n <= ${Paired.exactUpTo} (p = patterns at least as extreme / 2^n); otherwise `
    : "") +
  `${Format.integer(p.screening)} random permutations` +
  (p.refined > p.screening
    ? `; the ${p.refinedTests} tests that could still be significant after their family's correction (first-pass p times its multiplier, or its adjusted p, below ${Paired.refineBelow}) were run again with ${Format.integer(p.refined)}, enough to resolve the small p-values the correction needs`
    : "") +
  `; p = (extreme + 1) / (permutations + 1)`

/** How the numbers were computed, one paragraph per item. */
export const statistics = (a: Analysis): Array<string> => {
  const s = a.summary
  const resamples = s.resamples
  const nonBaseline = a.cells.length - 1
  const micro = a.compared.filter((m) => m.aggregate._tag !== "Mean").map((m) => m.name)
  return [
    `N: every value is computed over the instances of the slice whose pipeline succeeded (status ok) and for which the metric is defined; N is that count. Failed pairs are never scored as zeros; they are counted in the Cells table and listed under Failures.`,
    `Intervals: 95% percentile bootstrap over instances (${resamples} resamples, seed ${s.seed}), computed by the sweep (summary.json)` +
      (s.largeSample !== undefined
        ? `; over ${Format.integer(s.largeSample)} instances or more, the large-sample interval (estimate +- 1.96 delta-method standard errors), unless fewer than ${Statistics.largeSampleMinTail} instances lie on either side of the mean influence (then bootstrap).`
        : "."),
    `Differences: each non-baseline cell against the baseline ${a.baselineLabel}, over the instances scored ok in both cells (paired; N is their count). 95% CI: paired bootstrap of the difference (${resamples} resamples); p: two-sided paired permutation test (${permutationsNote(a.permutations)}).`,
    `Multiple comparisons: ${nonBaseline} cells x ${a.compared.length} metrics (${a.compared.map((m) => m.name).join(", ") || "none"}) x ${Slices.of(s).length} slices, in declared families, each corrected on its own. ${familiesNote(a)} A difference is marked * when its adjusted p is below 0.05.`,
    `Clustering: a persona's instances share their sessions, so on a slice where a persona has several instances (all instances, on CUPID) the paired bootstrap resamples personas with replacement and the permutation test swaps a persona's instances together (for a mean: flips the sign of the persona's summed differences); an exact p then enumerates 2^personas patterns. N still counts instances.`,
    `Power: each primary comparison shows its minimum detectable effect (MDE): the difference a two-sided test at the family's per-test level (${Format.p(a.families.primary.level)}: 0.05 / ${a.families.primary.tests} tests for ${Statistics.correctionTitle(a.families.primary.correction)}) detects with 80% power at this n, (z_{1-level/2} + z_0.8) x the standard error of the difference (paired normal approximation; delta method for pooled metrics; cluster-level where clustered).`,
    ...(a.uninformative.length > 0
      ? [
          `Uninformative metrics, left out of the headline tables and tests: ${a.uninformative.map((u) => `${u.metric} (${u.reason})`).join("; ")}.`
        ]
      : []),
    micro.length > 0
      ? `Micro metrics (${micro.join(", ")}) pool counts over instances, as the reference harness does: their paired bootstrap resamples instances and recomputes the pooled difference, and their permutation test swaps the two cells' counts per instance. Macro metrics are means of per-instance values (mean of differences, sign-flip permutations).`
      : `All compared metrics are means of per-instance values (macro): the permutation test flips the sign of per-instance differences.`,
    `The baseline is ${a.baseline.name}: ${a.baselineReason}.`
  ]
}

export const binHeader = (b: Binned): string =>
  b.by === "relevant position"
    ? `${b.metric.name} by mean position of the relevant sessions (1 = oldest)`
    : `${b.metric.name} by history length (equal-size bins of approximate tokens)`

export const usdNote =
  "usd: – (or a smaller n) where a model has no price in the cost scorer's table; add one with its `prices` option."

/** The families of the differences against the baseline: what is primary, the corrections, what is not tested. */
export const familiesNote = (a: Pick<Analysis, "plan" | "families" | "cells">): string => {
  const f = a.families,
    plan = a.plan
  const refs = a.cells.filter((c) => plan.reference.has(c.summary.id)).map((c) => c.summary.name)
  return (
    `Families: primary = ${plan.primaryMetrics.join(", ") || "none"} on ${plan.primarySlices.map((s) => sliceTitle(s)).join(", ")}, each cell against the baseline, ${f.primary.tests} tests, ${Statistics.correctionTitle(f.primary.correction)}; ` +
    `exploratory = every other difference, ${f.exploratory.tests} tests, ${Statistics.correctionTitle(f.exploratory.correction)}; ` +
    `not tested (interval only): cells that read gold labels${refs.length > 0 ? ` and the reference cells ${refs.join(", ")}` : ""}.`
  )
}

/** Why no difference of a slice can be significant, and the n that could be. */
export const tooSmallNote = (slice: string, { n, needed, tests, correction }: TooSmall): string =>
  `${sliceTitle(slice)}: no difference can reach significance here. The pairs share at most n = ${n} instances (or personas, where clustered), whose smallest exact two-sided p is 2/2^${n} = ${Format.p(2 / 2 ** n)}; ${correction === "none" ? "uncorrected, it stays" : `${Statistics.correctionTitle(correction)} over ${tests} tests multiplies it by ${tests},`} past 0.05. That takes at least ${needed} per slice (or fewer tests).`

/** How the every-pair tests were run. */
export const pairwiseNote = (p: Pairwise): string =>
  `Cells are numbered; the superscripts on a value name the cells it beats on that metric and slice: a paired test between every two cells over the instances both scored ok, ${p.tests} tests in all, Holm-corrected as one family, adjusted p below 0.05, direction taken from the metric. p-values: ${p.forms.exact} exact (pairs differing on at most ${Paired.exactUpTo} instances: every sign pattern of those), ${p.forms.normal} from the normal approximation of the same permutation test (pairs differing on more)${p.forms.monteCarlo > 0 ? `, ${p.forms.monteCarlo} Monte-Carlo permutations (where the approximation did not apply)` : ""}.`

/** The transcripts' totals in words (summary.modelCalls). */
export const modelCalls = (c: NonNullable<ResultLine.Summary["modelCalls"]>): string =>
  `Model calls recorded in calls.jsonl (${Format.integer(c.attempts)} pair attempts, earlier runs in this directory included): ` +
  `${Format.integer(c.calls)} calls, ${Format.integer(c.cached)} answered by the cache, ${Format.integer(c.requests)} HTTP requests sent ` +
  `(${Format.integer(c.retries)} of them retries), ${Format.integer(c.failed)} failed after their retries` +
  (c.batched === undefined
    ? ""
    : `; ${Format.integer(c.batched)} calls answered in provider batch jobs (the others, cache answers aside, were sent one by one)`) +
  (c.unreadable === undefined
    ? ""
    : `; ${Format.integer(c.unreadable)} lines of calls.jsonl could not be read and are not counted`)
