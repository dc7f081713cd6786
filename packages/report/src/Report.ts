/**
 * Writes a run's `report.md`, `report.html`, `report.tex`, `results.csv` and `results.parquet` from
 * its directory and its dataset (for examples); the sweep and `report --run <dir>` both call {@link write}.
 *
 * @example
 * import { Report } from "@cupid-lab/report"
 * const written = yield* Report.write("runs/contextual")
 * written.html // "runs/contextual/report.html"
 */
import { Files } from "@cupid-lab/core"
import { Errors, Exports, RunDir } from "@cupid-lab/results"
import type { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as path from "node:path"

import * as Document from "./Document.js"
import * as Figures from "./Figures.js"
import * as Analysis from "./Analysis.js"
import * as Examples from "./Examples.js"
import * as Html from "./Html.js"
import * as Markdown from "./Markdown.js"
import * as Paper from "./Paper.js"
import * as Verdict from "./Verdict.js"

export interface Options extends Analysis.Options {
  /** How to read the dataset for examples (default core's Dataset.open). */
  readonly openDataset?: Examples.OpenDataset
}

export interface Rendered {
  readonly markdown: string
  readonly html: string
  readonly latex: string
  readonly analysis: Analysis.Analysis
  readonly verdict: Verdict.Verdict
}

export interface Written {
  readonly markdown: string
  readonly html: string
  readonly latex: string
  readonly csv: string
  readonly parquet: string
  /** What the reports open with, for the sweep's console summary. */
  readonly opening: { readonly analysis: Analysis.Analysis; readonly verdict: Verdict.Verdict }
}

const toRunError =
  (dir: string) =>
  (e: unknown): Errors.RunError =>
    e instanceof Errors.RunError
      ? e
      : new Errors.RunError({
          path: dir,
          reason:
            Files.code(e) === undefined && e instanceof Error
              ? e.message
              : `cannot write the reports: ${Files.describe(e)}`
        })

/** Render the files of a run already read, without writing anything. */
export const render = (
  run: RunDir.Run,
  options: Options = {}
): Effect.Effect<Rendered, Errors.RunError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const analysis = yield* Effect.try({ try: () => Analysis.analyze(run, options), catch: toRunError(run.dir) })
    const examples = yield* Examples.load(run, analysis, options.openDataset)
    const doc = Document.report(analysis, examples, run.info, yield* Figures.report(analysis))
    return {
      analysis,
      verdict: Verdict.verdict(analysis),
      markdown: Markdown.render(doc),
      html: Html.render(doc),
      latex: Paper.latex(analysis)
    }
  })

/** A finished run's publisher for the runner (`Runner.sweep`, `Merge.merge`): writes its files, returns what the reports open with. */
export const publisher =
  (options: Options = {}) =>
  (run: RunDir.Run): Effect.Effect<Written["opening"], Errors.RunError, FileSystem.FileSystem> =>
    Effect.map(writeRun(run, options), (written) => written.opening)

/** Write report.md, report.html, report.tex, results.csv and results.parquet of a run already in memory into its directory. */
export const writeRun = (
  run: RunDir.Run,
  options: Options = {}
): Effect.Effect<Written, Errors.RunError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const dir = run.dir
    const files = {
      markdown: path.join(dir, "report.md"),
      html: path.join(dir, "report.html"),
      latex: path.join(dir, "report.tex"),
      csv: path.join(dir, "results.csv"),
      parquet: path.join(dir, "results.parquet")
    }
    const r = yield* render(run, options)
    yield* Effect.all(
      [
        RunDir.write(files.markdown, r.markdown),
        RunDir.write(files.html, r.html),
        RunDir.write(files.latex, r.latex),
        RunDir.write(files.csv, Exports.csv(run.index.table)),
        Exports.writeParquet(files.parquet, run.index.table).pipe(
          Effect.mapError(
            (e) => new Errors.RunError({ path: files.parquet, reason: `cannot write: ${Files.describe(e)}` })
          )
        )
      ],
      { discard: true }
    )
    return { ...files, opening: { analysis: r.analysis, verdict: r.verdict } }
  })

/** Read `dir` and (re)write report.md, report.html, report.tex, results.csv and results.parquet in it. */
export const write = (
  dir: string,
  options: Options = {}
): Effect.Effect<Written, Errors.RunError, FileSystem.FileSystem> =>
  Effect.flatMap(RunDir.read(dir), (run) => writeRun(run, options))
