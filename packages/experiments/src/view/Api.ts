/**
 * What the viewer's server answers, as JSON, one type per route of docs/viewer.md (`GET /api/runs`:
 * {@link RunList}, ...). Types only: the browser code (viewer/) shares them. A failed request answers
 * `{ "error": "..." }` with status 400 (bad query), 404 (no such run, cell or instance) or 500 (a run
 * directory that cannot be read).
 */
import type { Domain, Scorer } from "@cupid-lab/core"
import type { Finding } from "../analysis/Verdict.js"
import type { Table } from "../render/Table.js"
import type { Call, Line } from "../results/Calls.js"
import type { CellSummary, InstanceMeta, MetricDescription, MetricEstimate, Row } from "../results/ResultLine.js"

export type { Call, Table }

/** The best non-oracle cell on the main metric over all instances; `cell` null when no cell has a value. */
export interface HeadlineBest extends Pick<MetricDescription, "heuristic">, Pick<MetricEstimate, "n"> {
  readonly metric: string
  readonly cell: string | null
  readonly value: number | null
}

export interface RunEntry {
  /** The run's path below the viewer's root, `/`-separated: `contextual/3f2a9c0d1b4e`. */
  readonly id: string
  readonly config: string
  readonly configHash: string
  readonly data: string
  readonly fingerprint: string
  readonly transform: string | null
  readonly started: string | null
  readonly cells: number
  readonly instances: number
  readonly failed: number
  /** `<config>/latest` points at this run. */
  readonly latest: boolean
  readonly main: HeadlineBest | null
  /** What of run.json and run-id.json could not be read, in words. */
  readonly problems: ReadonlyArray<string>
}

export interface RunList {
  /** Newest first. */
  readonly runs: ReadonlyArray<RunEntry>
  /** Unreadable summaries and directories that cannot be listed, with why. */
  readonly unreadable: ReadonlyArray<{ readonly id: string; readonly reason: string }>
}

export type MetricColumn = Pick<MetricDescription, "name" | "heuristic" | "headline" | "description">

export interface CellEntry extends Pick<CellSummary, "id" | "name"> {
  readonly baseline: boolean
  /** The retriever reads gold labels (‡ in reports): never marked best. */
  readonly oracle: boolean
  /** The retriever plugin (`use`). */
  readonly retriever: string | null
}

export interface RunDetail {
  readonly entry: RunEntry
  readonly cells: ReadonlyArray<CellEntry>
  /** The main metric first, then the headline metrics, then the rest. */
  readonly metrics: ReadonlyArray<MetricColumn>
  readonly main: string | null
  readonly mainReason: string
  /** The reports' headline tables: cell x headline metric per instance type. */
  readonly tables: ReadonlyArray<Table>
}

/** The reports' opening: who leads on the main metric per instance type, and the leaderboard. */
export interface VerdictView {
  readonly metric: string | null
  readonly intro: string
  readonly findings: ReadonlyArray<Pick<Finding, "slice" | "sentence">>
  readonly leaderboard: Table | null
}

/** One chart of the report as a static SVG, shown as an image so nothing in it can run. */
export interface Figure {
  readonly section: "overview" | "recency" | "history" | "intervention" | "cost"
  readonly caption: string
  readonly svg: string
}

export interface FiguresView {
  readonly figures: ReadonlyArray<Figure>
}

export interface PairwiseView {
  /** How the tests ran; null with fewer than two cells or no headline metric. */
  readonly note: string | null
  readonly slices: ReadonlyArray<{ readonly slice: string; readonly tooSmall: string | null; readonly table: Table }>
}

export type SortKey = "instance" | "type" | "length" | "metric"

export interface CellOutcome extends Pick<Row, "status" | "selected"> {
  readonly cell: string
  /** The run's main metric for this pair; null when missing. */
  readonly main: number | null
}

export interface InstanceItem extends Pick<Row, "type">, Pick<InstanceMeta, "sessions" | "historyTokens" | "relevant" | "stale"> {
  readonly id: string
  /** The outcome of each cell the query names (`cell`, `a`, `b`), else of every cell. */
  readonly outcomes: ReadonlyArray<CellOutcome>
}

export interface InstanceList {
  readonly total: number
  /** Instances that pass the filters, before offset and limit. */
  readonly matched: number
  readonly offset: number
  readonly items: ReadonlyArray<InstanceItem>
  readonly description: string
  /** The ids of the cells the query's selectors named. */
  readonly resolved: { readonly cell: string | null; readonly a: string | null; readonly b: string | null }
  /** Set when full-text search could not read the dataset and searched the results only. */
  readonly notice: string | null
}

/** `factor`, `preference` and `turns` are null (or empty) when the dataset could not be read. */
export interface SessionRow {
  readonly id: string
  /** 1-based chronological position. */
  readonly position: number
  readonly label: Domain.GoldSession["label"] | null
  readonly factor: string | null
  readonly preference: string | null
  readonly turns: ReadonlyArray<Domain.Message>
  readonly selectedBy: ReadonlyArray<string>
}

/** A ratio's value with its counts. */
export interface ScoreValue extends Partial<Scorer.Count> {
  readonly metric: string
  readonly heuristic: boolean
  readonly headline: boolean
  readonly value: number | null
}

export interface CellResult extends Pick<Row, "status" | "selected" | "error"> {
  readonly cell: string
  readonly inference: string | null
  readonly generation: string | null
  /** The retriever's ranking, best first; null when the line has none. */
  readonly ranking: ReadonlyArray<{ readonly session: string; readonly score: number | null; readonly rank: number }> | null
  /** The main metric first, then the headline metrics, then the rest by name. */
  readonly scores: ReadonlyArray<ScoreValue>
  readonly ratings: ReadonlyArray<Scorer.ItemRating>
  readonly usage: Pick<Row["usage"], "calls" | "promptTokens" | "completionTokens">
}

export interface InstanceDetail extends Pick<Row, "type"> {
  readonly run: string
  readonly id: string
  readonly request: string | null
  readonly gold: Pick<Domain.Gold, "factor" | "preference" | "checklist"> | null
  /** Why the dataset's text is missing or may differ from what the cells saw. */
  readonly datasetNote: string | null
  readonly sessions: ReadonlyArray<SessionRow>
  /** Sessions a cell selected that the history above does not hold (a history transform's). */
  readonly otherSelected: ReadonlyArray<{ readonly session: string; readonly cells: ReadonlyArray<string> }>
  readonly cells: ReadonlyArray<CellEntry>
  readonly main: string | null
  readonly results: ReadonlyArray<CellResult>
}

/** Each cell's model calls on one instance: the latest attempt, and how many were recorded. */
export interface InstanceCalls {
  readonly run: string
  readonly id: string
  /** Lines of calls.jsonl about this instance that could not be read. */
  readonly unreadable: number
  readonly cells: ReadonlyArray<Pick<Line, "cell" | "ranAt" | "calls"> & { readonly attempts: number }>
}

export interface CompareView {
  readonly a: { readonly run: string; readonly cell: CellEntry }
  readonly b: { readonly run: string; readonly cell: CellEntry }
  /** `compare --cell-a/--cell-b`'s tables: per metric, the paired difference, its CI, p and Holm-adjusted p. */
  readonly tables: ReadonlyArray<Table>
  readonly warnings: ReadonlyArray<string>
  /** Instances both sides ran. */
  readonly shared: number
  /** Instances where the selections differ or one failed. */
  readonly disagreements: ReadonlyArray<{ readonly instance: string; readonly type: string; readonly a: CellOutcome; readonly b: CellOutcome }>
}
