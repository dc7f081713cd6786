/**
 * The report as a list of blocks, built once from an analysis: {@link Markdown} and {@link Html} each
 * render them, so report.md and report.html say the same things in the same words; report.html adds
 * the charts and the run record.
 *
 * @example
 * const doc = Document.report(analysis, examples, run.info, yield* Figures.report(analysis))
 * Markdown.render(doc) // report.md
 */
import type { ResultLine, RunDir } from "@cupid-lab/results"

import type { Analysis } from "./Analysis.js"
import type { Binned } from "./Bins.js"
import type { Examples } from "./Examples.js"
import * as Verdict from "./Verdict.js"

import * as ByAxis from "./ByAxis.js"
import type { ReportFigures } from "./Figures.js"
import * as Leaderboard from "./Leaderboard.js"
import * as Notes from "./Notes.js"
import * as PublishedQa from "./PublishedQa.js"
import * as Judges from "./Judges.js"
import * as Repeats from "./Repeats.js"
import type { Table } from "./Table.js"
import * as RunSections from "./RunSections.js"
import * as RunTables from "./RunTables.js"
import * as Slices from "./Slices.js"
import * as Tables from "./Tables.js"

/**
 * A piece of text: a string is escaped for each format; `code` is shown as code; `raw` is already
 * Markdown (escaped as text in HTML); `line` is escaped by Table.mdLine, which keeps brackets that make no link.
 */
export type Inline = string | { readonly code: string } | { readonly raw: string } | { readonly line: string }
export type Text = ReadonlyArray<Inline>

/** A heading and what it heads; report.html folds it away when `fold`. */
export interface Section {
  readonly _tag: "section"
  readonly title: Text
  readonly id?: string
  readonly fold?: boolean
  readonly blocks: ReadonlyArray<Block>
}

export type Block =
  | Section
  | { readonly _tag: "heading"; readonly level: 1 | 3; readonly text: Text; readonly id?: string }
  | { readonly _tag: "paragraph"; readonly text: Text }
  /** Lines with hard breaks. */
  | { readonly _tag: "lines"; readonly lines: ReadonlyArray<Text> }
  | { readonly _tag: "quote"; readonly text: Text }
  | {
      readonly _tag: "list"
      readonly items: ReadonlyArray<{ readonly text: Text; readonly items?: ReadonlyArray<Text> }>
    }
  | { readonly _tag: "table"; readonly table: Table }
  /** Rendered markup (a figure): report.html only. */
  | { readonly _tag: "html"; readonly html: string }
  | { readonly _tag: "only"; readonly format: "markdown" | "html"; readonly blocks: ReadonlyArray<Block> }

export interface Document {
  readonly title: string
  readonly blocks: ReadonlyArray<Block>
}

export const section = (title: Text | string, blocks: ReadonlyArray<Block>, id?: string): Section => ({
  _tag: "section",
  title: typeof title === "string" ? [title] : title,
  blocks,
  ...(id === undefined ? {} : { id })
})

export const h3 = (...text: Text): Block => ({ _tag: "heading", level: 3, text })

export const p = (...text: Text): Block => ({ _tag: "paragraph", text })

export const quote = (...text: Text): Block => ({ _tag: "quote", text })

export const table = (t: Table): Block => ({ _tag: "table", table: t })

/** A table under its notes. */
const noted = (t: Table): Array<Block> => [p(t.notes.join(" ")), table(t)]

export const list = (items: ReadonlyArray<Text>): Block => ({ _tag: "list", items: items.map((text) => ({ text })) })

const figure = (html: string | undefined): Array<Block> =>
  html === undefined || html === "" ? [] : [{ _tag: "html", html }]

const only = (format: "markdown" | "html", blocks: ReadonlyArray<Block>): Block => ({ _tag: "only", format, blocks })

/** The heading of a section over one slice or over every instance type (each with its own heading). */
const bySlice = (title: string, chosen: ReadonlyArray<Slices.Slice>): string =>
  `${title}${chosen.length === 1 ? `, ${Notes.sliceTitle(chosen[0]!)}` : ", by instance type"}`

const sliceTables = (chosen: ReadonlyArray<Slices.Slice>, of: (s: Slices.Slice) => Table): Array<Block> =>
  chosen.flatMap((s) => [...(chosen.length > 1 ? [h3(Notes.sliceTitle(s))] : []), table(of(s))])

const everyMetric =
  "every metric of every cell and instance type, with its 95% CI and N, is in report.html (Appendix) and summary.json."

export const viewer = { code: "npx nx run experiments:view" }

const inferenceSection = (a: Analysis, chosen: ReadonlyArray<Slices.Slice>): Array<Section> => {
  if (a.inference.length === 0) return []
  const heuristic = a.inference.filter((m) => m.heuristic)
  return [
    section(
      bySlice("Inference (preference match)", chosen),
      [
        p(Tables.inferenceNote(a)),
        ...(heuristic.length > 0
          ? [
              p(
                `${Notes.heuristicMark} `,
                heuristic.map((m) => m.name).join(", "),
                ": computed by an offline heuristic (lexical matching), not the paper's LLM judge."
              )
            ]
          : []),
        ...sliceTables(chosen, (s) => Tables.inference(a, s)),
        ...(a.cells.some((c) => c.oracle !== undefined) ? [p(Tables.oracleNote)] : [])
      ],
      "inference"
    )
  ]
}

const estimateTables = (a: Analysis, metrics: ReadonlyArray<ResultLine.MetricDescription>): Array<Block> =>
  metrics.flatMap((m) => [h3(Notes.metricLabel(m)), p(Tables.metricNote(m)), table(Tables.estimates(a, m))])

const generationSection = (a: Analysis): Array<Section> =>
  a.generation.length === 0
    ? []
    : [
        section(
          "Generation",
          [p({ raw: "Each entry: value [95% CI] n=N." }), ...estimateTables(a, a.generation)],
          "generation"
        )
      ]

/** A section holding one optional table under its notes: repeated judgments, a judge swap. */
const tableSection = (t: Table | undefined, title: string, id: string): Array<Section> =>
  t === undefined ? [] : [section(title, noted(t), id)]

/** The benchmark paper's values beside the run's; only the sentence naming the data they are for when none applies. */
const publishedSection = (a: Analysis): Array<Section> => {
  const t = PublishedQa.table(a.summary)
  if (t === undefined) return []
  return t.rows.length > 0
    ? tableSection(t, "Published values", "published")
    : [section("Published values", [p(t.notes.join(" "))], "published")]
}

const retrievalSection = (a: Analysis, chosen: ReadonlyArray<Slices.Slice>): Array<Section> =>
  a.retrieval.length === 0
    ? []
    : [
        section(
          bySlice("Retrieval", chosen),
          [
            p(`Means over instances; ${everyMetric}`),
            ...sliceTables(chosen, (s) => Tables.retrieval(a, s)),
            p(Tables.retrievalNote)
          ],
          "retrieval"
        )
      ]

const deltaSection = (
  a: Analysis,
  metrics: ReadonlyArray<ResultLine.MetricDescription>,
  title: string
): Array<Section> =>
  a.cells.length < 2 || metrics.length === 0
    ? []
    : [
        section(
          title,
          [
            p(
              "Baseline: ",
              a.baseline.name,
              {
                raw: ". Each entry: difference (cell - baseline) [paired bootstrap 95% CI] p=permutation p-value, the p adjusted within its family (Holm=, BH=, Bonferroni=), n=paired instances, (family); * adjusted p < 0.05. "
              },
              Notes.familiesNote(a)
            ),
            ...[...a.baselineTooSmall].map(([slice, small]) => quote(Notes.tooSmallNote(slice, small))),
            ...metrics.flatMap((m) => [h3(Notes.metricLabel(m)), table(Tables.deltas(a, m))])
          ],
          "differences"
        )
      ]

/** Every pair of cells; report.md shows all instances only (report.html and the viewer each instance type). */
const pairwiseSection = (a: Analysis): Array<Section> => {
  const pw = a.pairwise
  if (pw === undefined) return []
  return [
    section(
      "Every cell against every other",
      [
        p(Notes.pairwiseNote(pw)),
        only("markdown", [
          p(
            "All instances here; report.html and the results viewer (",
            viewer,
            ") give the table of each instance type."
          )
        ]),
        ...pw.slices.flatMap((s) => {
          const blocks = [
            h3(Notes.sliceTitle(s.slice)),
            ...(s.tooSmall === undefined ? [] : [quote(Notes.tooSmallNote(s.slice, s.tooSmall))]),
            table(Tables.pairwise(a, pw, s))
          ]
          return s.slice === "all" ? blocks : [only("html", blocks)]
        })
      ],
      "pairwise"
    )
  ]
}

const binnedSection = (
  a: Analysis,
  b: Binned | undefined,
  chart: string | undefined,
  title: string,
  id: string
): Array<Section> =>
  b === undefined
    ? []
    : [
        section(
          title,
          [
            p(Notes.binHeader(b), { raw: `; ${Notes.aggregateNote(b.metric)} within each bin.` }),
            ...figure(chart),
            table(Tables.binned(a, b))
          ],
          id
        )
      ]

const interventionSection = (a: Analysis, charts: ReadonlyArray<string> | undefined): Array<Section> =>
  a.interventions.length === 0
    ? []
    : [
        section(
          "History transforms",
          [
            p(
              "Each metric against a swept transform axis, per instance type: the same instances with their histories rewritten (docs/data.md, History transforms); relevance never changes. value [95% CI] n=N."
            ),
            ...a.interventions.flatMap((curve, i) =>
              Slices.valued(a.summary.cells, Slices.of(a.summary), curve.metric.name).flatMap((slice, k) => [
                // report.md has always had two empty lines between these tables.
                ...(i > 0 || k > 0 ? [only("markdown", [{ _tag: "lines", lines: [] }])] : []),
                h3(`${curve.metric.name} against ${curve.axis}, ${slice}`),
                ...(k === 0 ? figure(charts?.[i]) : []),
                table(Tables.transform(curve, slice))
              ])
            )
          ],
          "transforms"
        )
      ]

const costSection = (a: Analysis, chart: string | undefined): Section =>
  section(
    "Cost",
    [p(Tables.costNote), ...figure(chart), table(Tables.cost(a)), ...(Tables.unpriced(a) ? [p(Notes.usdNote)] : [])],
    "cost"
  )

const failuresSection = (a: Analysis): Array<Section> => {
  const skipped = a.summary.dataset.skipped
  return [
    ...(a.failures.length === 0 ? [] : [section("Failures", noted(RunTables.failures(a)), "failures")]),
    ...(skipped.length === 0
      ? []
      : [
          section(
            "Skipped dataset rows",
            [
              p(`${skipped.length} rows of the dataset were skipped (onInvalid: skip) and are in no table.`),
              table(RunTables.skipped(a)),
              ...(skipped.length > 50 ? [p(`(${skipped.length - 50} more in summary.json)`)] : [])
            ],
            "skipped"
          )
        ])
  ]
}

/** The appendix's sections, folded in report.html. */
const appendix = (
  a: Analysis,
  v: Verdict.Verdict,
  examples: Examples,
  versions: Readonly<Record<string, string>>
): Array<Block> => {
  const perType = Slices.of(a.summary).filter((s) => s !== "all")
  const sections: Array<Section> = [
    ...(v.boards[0] !== undefined && v.boards[0].contenders.length > Leaderboard.openingLimit
      ? [section("Leaderboard: every cell", [table(Leaderboard.table(a, v))])]
      : []),
    section("Cells", [table(Tables.cells(a))], "cells"),
    ...(a.plugins.length > 0 ? [section("Plugins", [table(Tables.plugins(a, versions))], "plugins")] : []),
    ...inferenceSection(a, perType),
    ...retrievalSection(a, perType),
    ...deltaSection(
      a,
      a.compared.filter((m) => m.name !== a.main?.name),
      "Differences against the baseline: the other headline metrics"
    ),
    ...pairwiseSection(a),
    RunSections.examples(a, examples),
    section("Every metric", [
      p(
        a.summary.metrics.length === 0
          ? "No metrics: the config lists no scorers."
          : `Every metric the scorers declared: ${everyMetric}`
      ),
      only("html", estimateTables(a, a.summary.metrics))
    ])
  ]
  return [
    { _tag: "heading", level: 1, text: ["Appendix"], id: "appendix" },
    ...sections.map((s) => ({ ...s, fold: true }))
  ]
}

/** The report of a run; `info` (run.json) gives the Plugins table its versions and report.html its run record and charts' places. */
export const report = (a: Analysis, examples: Examples, info?: RunDir.RunInfo, figures?: ReportFigures): Document => {
  const v = Verdict.verdict(a)
  return {
    title: `${a.summary.config.name}: sweep report`,
    blocks: [
      RunSections.verdict(a, v),
      RunSections.run(a),
      ...publishedSection(a),
      ...figure(figures?.overview),
      ...deltaSection(a, a.main === undefined ? [] : [a.main], "Differences against the baseline"),
      ...ByAxis.blocks(a),
      ...inferenceSection(a, ["all"]),
      ...generationSection(a),
      ...tableSection(Repeats.table(a), "Repeated judgments", "repeats"),
      ...tableSection(Judges.table(a), "Agreement between judges", "judges"),
      ...retrievalSection(a, ["all"]),
      ...binnedSection(a, a.recency, figures?.recency, "Recency: relevant-session position", "recency"),
      ...binnedSection(a, a.history, figures?.history, "History length", "history"),
      ...interventionSection(a, figures?.interventions),
      costSection(a, figures?.cost),
      ...failuresSection(a),
      section(
        "How the numbers were computed",
        Notes.statistics(a).map((x) => p(x)),
        "statistics"
      ),
      only("html", [RunSections.record(info)]),
      ...appendix(a, v, examples, info?.versions ?? {})
    ]
  }
}
