/**
 * What the results viewer's server answers, as JSON: the shapes the browser code (viewer/app.ts)
 * renders. Types only (the browser bundle shares them); tables are the reports' own table model
 * (report/Table.ts), rendered by the page as report.md and report.html render it.
 *
 *   GET /api/runs                                  RunList
 *   GET /api/run?run=<id>                          RunDetail
 *   GET /api/verdict?run=<id>                      VerdictView (who leads per instance type, and the leaderboard: the reports' opening)
 *   GET /api/figures?run=<id>                      FiguresView (the report's charts as SVG)
 *   GET /api/pairwise?run=<id>                     PairwiseView (every cell against every other: the paired tests run here)
 *   GET /api/instances?run=<id>&type=&cell=&failed=1&a=<cell>&b=<cell>&q=&sort=&offset=&limit=
 *                                                  InstanceList
 *   GET /api/instance?run=<id>&id=<instance>       InstanceDetail
 *   GET /api/calls?run=<id>&id=<instance>          InstanceCalls (calls.jsonl: each cell's model calls)
 *   GET /api/compare?a=<run>&ca=<cell>&b=<run>&cb=<cell>
 *                                                  CompareView
 *
 * A failed request answers `{ "error": "..." }` with status 400 (bad query) or 404 (no such run,
 * cell or instance), or 500 (a run directory that cannot be read, with the reader's message).
 */

import type { Table } from "../render/Table.js"
import type { Call } from "../results/Calls.js"
export type { Call } from "../results/Calls.js"

export type { Table }


export interface HeadlineBest {
  readonly metric: string
  readonly heuristic: boolean
  /** The best non-oracle cell on the main metric over all instances (null when no cell has a value). */
  readonly cell: string | null
  readonly value: number | null
  readonly n: number
}

export interface RunEntry {
  /** The run's path below the viewer's root, `/`-separated: `contextual/3f2a9c0d1b4e`. */
  readonly id: string
  readonly config: string
  readonly configHash: string
  readonly data: string
  readonly fingerprint: string
  /** The history transform of the run's identity, when there is one. */
  readonly transform: string | null
  /** From run.json: when the sweep started (ISO 8601), and how long it took. */
  readonly started: string | null
  readonly durationMs: number | null
  readonly cells: number
  readonly instances: number
  /** Failed (cell, instance) pairs over all cells. */
  readonly failed: number
  /** True when `<config>/latest` points at this run. */
  readonly latest: boolean
  readonly main: HeadlineBest | null
  /** What of the run's records (run.json, run-id.json) could not be read, in words; empty when all could. */
  readonly problems: ReadonlyArray<string>
}

export interface RunList {
  /** Newest first. */
  readonly runs: ReadonlyArray<RunEntry>
  /**
   * Directories holding a summary.json that cannot be read, with the reader's message (naming the
   * file and field), and directories that cannot be listed or read (runs below them may be missing).
   */
  readonly unreadable: ReadonlyArray<{ readonly id: string; readonly reason: string }>
}

export interface MetricColumn {
  readonly name: string
  readonly family: string
  readonly direction: "higher" | "lower"
  readonly heuristic: boolean
  readonly headline: boolean
  readonly description: string
}

export interface CellEntry {
  readonly id: string
  /** 1-based position: `@k` on the command line. */
  readonly k: number
  readonly name: string
  readonly baseline: boolean
  /** The retriever reads gold labels (‡ in reports): never marked best. */
  readonly oracle: boolean
  readonly heuristicStages: ReadonlyArray<string>
  /** The cell's retriever plugin (`use`), e.g. `context-factor`. */
  readonly retriever: string | null
}

export interface RunDetail {
  readonly entry: RunEntry
  readonly cells: ReadonlyArray<CellEntry>
  /** Metrics of the run: the main metric first, then every headline metric, then the rest. */
  readonly metrics: ReadonlyArray<MetricColumn>
  readonly main: string | null
  readonly mainReason: string
  /** Cell x headline metric per instance type (all, consistent, contrastive, changing), best of each column marked: the reports' headline tables. */
  readonly tables: ReadonlyArray<Table>
}

/** The reports' opening (analysis/Verdict.ts, rendered as render/Leaderboard.ts renders it): who leads on the main metric per instance type, and the leaderboard. */
export interface VerdictView {
  /** The main metric ranked on; null when the run has none. */
  readonly metric: string | null
  /** The metric, how it aggregates, the baseline and what "significant" means. */
  readonly intro: string
  /** One plain sentence per instance type (all instances first). */
  readonly findings: ReadonlyArray<{ readonly slice: string; readonly sentence: string }>
  /** Every cell ranked on the main metric over all instances, gold-reading cells after them as ceilings; null without a main metric. */
  readonly leaderboard: Table | null
}

/**
 * One chart of the report, as report.html draws it: a static SVG rendered by Vega from the run's
 * data. The page shows it as an image (`data:image/svg+xml`), so nothing in it can run or load.
 */
export interface Figure {
  /** The report section it belongs to. */
  readonly section: "overview" | "recency" | "history" | "intervention" | "cost"
  readonly caption: string
  readonly svg: string
}

export interface FiguresView {
  readonly figures: ReadonlyArray<Figure>
}

export interface PairwiseView {
  /** How the tests ran: correction, test forms, N. Null when the run has fewer than two cells or no headline metric. */
  readonly note: string | null
  readonly slices: ReadonlyArray<{
    readonly slice: string
    /** Set when no difference of this instance type can reach significance at its n. */
    readonly tooSmall: string | null
    readonly table: Table
  }>
}

export type SortKey = "instance" | "type" | "length" | "metric"

export interface CellOutcome {
  readonly cell: string
  readonly status: "ok" | "failed"
  readonly selected: ReadonlyArray<string> | null
  /** The run's main metric for this pair (a ratio as num/den), null when missing. */
  readonly main: number | null
}

export interface InstanceItem {
  readonly id: string
  readonly personaId: string
  readonly type: string
  readonly sessions: number
  readonly historyTokens: number
  readonly relevant: ReadonlyArray<string>
  readonly stale: ReadonlyArray<string>
  /** The outcome of each cell the query names (`cell`, `a`, `b`), else of every cell. */
  readonly outcomes: ReadonlyArray<CellOutcome>
  readonly failedCells: number
}

export interface InstanceList {
  /** Instances of the run. */
  readonly total: number
  /** Instances that pass the filters (before offset and limit). */
  readonly matched: number
  readonly offset: number
  readonly items: ReadonlyArray<InstanceItem>
  /** What the filters meant, in words ("cells bm25 and recency selected different sessions, or one failed"). */
  readonly description: string
  /** The ids of the cells the query's selectors (`cell`, `a`, `b`: id, id prefix, name or `@k`) named; null where not given. */
  readonly resolved: { readonly cell: string | null; readonly a: string | null; readonly b: string | null }
  /** Set when full-text search could not read the dataset and searched the results only. */
  readonly notice: string | null
}

export interface SessionRow {
  readonly id: string
  /** 1-based chronological position in the history. */
  readonly position: number
  /** Gold label for this instance: relevant, stale or other; null when the dataset could not be read. */
  readonly label: "relevant" | "stale" | "other" | null
  readonly factor: string | null
  readonly preference: string | null
  readonly turns: ReadonlyArray<{ readonly role: string; readonly content: string }>
  /** Ids of the cells that selected this session. */
  readonly selectedBy: ReadonlyArray<string>
}

export interface ScoreValue {
  readonly metric: string
  readonly heuristic: boolean
  /** A headline metric of the run (the run's main metric is one): shown on the cell's first line. */
  readonly headline: boolean
  readonly value: number | null
  /** A ratio's counts, when the metric pools them. */
  readonly num?: number
  readonly den?: number
}

export interface CellResult {
  readonly cell: string
  readonly status: "ok" | "failed"
  readonly selected: ReadonlyArray<string> | null
  readonly inference: string | null
  readonly generation: string | null
  /**
   * The retriever's ranking of the sessions, best first, as results.jsonl holds it (`rank` is the
   * 1-based position); null when the line has none (a failed pair, or a run without rankings).
   */
  readonly ranking: ReadonlyArray<{ readonly session: string; readonly score: number | null; readonly rank: number }> | null
  /** The main metric first, then the headline metrics, then the rest by name. */
  readonly scores: ReadonlyArray<ScoreValue>
  /** How the scorers rated each checklist item (preference match): gold items by how far the inferred preference covers them, inferred items by the gold preference; empty when no scorer rated items. */
  readonly ratings: ReadonlyArray<{ readonly side: "gold" | "inferred"; readonly item: string; readonly rating: number }>
  readonly usage: { readonly calls: number; readonly promptTokens: number; readonly completionTokens: number }
  readonly error: { readonly stage: string; readonly plugin: string; readonly tag: string; readonly message: string } | null
}

export interface InstanceDetail {
  readonly run: string
  readonly id: string
  readonly personaId: string
  readonly type: string
  readonly request: string | null
  readonly gold: { readonly factor: string; readonly preference: string; readonly checklist: ReadonlyArray<string> } | null
  /** Why the dataset's text is missing or may differ from what the cells saw; null when it is the run's data. */
  readonly datasetNote: string | null
  readonly sessions: ReadonlyArray<SessionRow>
  /** Sessions a cell selected that the history above does not hold (added by a history transform). */
  readonly otherSelected: ReadonlyArray<{ readonly session: string; readonly cells: ReadonlyArray<string> }>
  readonly cells: ReadonlyArray<CellEntry>
  /** The run's main metric (first in each result's scores); null when it has none. */
  readonly main: string | null
  readonly results: ReadonlyArray<CellResult>
}

/** The model calls of each cell on one instance: the latest attempt, and how many were recorded. */
export interface InstanceCalls {
  readonly run: string
  readonly id: string
  /** Lines of calls.jsonl about this instance that could not be read (an edited or damaged file). */
  readonly unreadable: number
  readonly cells: ReadonlyArray<{ readonly cell: string; readonly attempts: number; readonly ranAt: string; readonly calls: ReadonlyArray<Call> }>
}

export interface CompareSide {
  readonly run: string
  readonly cell: CellEntry
}

export interface CompareView {
  readonly a: CompareSide
  readonly b: CompareSide
  /**
   * The paired comparison of `compare --cell-a/--cell-b`: per tested metric, a table with A → B,
   * the difference over the instances both scored, its 95% CI, p, Holm-adjusted p and n.
   */
  readonly tables: ReadonlyArray<Table>
  /** Metrics that could not be compared, and why. */
  readonly warnings: ReadonlyArray<string>
  /** Instances both sides ran. */
  readonly shared: number
  /** Instances of the two sides where the selections differ or one failed. */
  readonly disagreements: ReadonlyArray<{
    readonly instance: string
    readonly type: string
    readonly a: CellOutcome
    readonly b: CellOutcome
  }>
}
