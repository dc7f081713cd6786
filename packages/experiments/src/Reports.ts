/**
 * Writing the reports of a run directory (report.md) from what the sweep wrote there. The sweep
 * calls it when it ends, and `cli report --run <dir>` calls it to regenerate the reports, e.g.
 * after the report code changed; nothing is recomputed from models.
 *
 * @example
 * import { Reports } from "@cupid-lab/experiments"
 * const file = yield* Reports.write("runs/contextual") // "runs/contextual/report.md"
 */
import type { Dataset } from "@cupid-lab/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { RunError } from "./Errors.js"
import * as Analysis from "./report/Analysis.js"
import * as Examples from "./report/Examples.js"
import * as Markdown from "./report/Markdown.js"
import * as RunDir from "./report/RunDir.js"

export interface WriteOptions {
  /** How the examples section reads the run's dataset again; default core's `Dataset.open`. */
  readonly openDataset?: (source: string) => Effect.Effect<Dataset.Opened, unknown>
}

const writeAtomic = (file: string, text: string): void => {
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, text)
  fs.renameSync(tmp, file)
}

const asRunError = (where: string) => (e: unknown): RunError =>
  e instanceof RunError ? e : new RunError({ path: where, reason: e instanceof Error ? e.message : String(e) })

/** Render report.md for `runDir`; returns its path. */
export const write = (runDir: string, options: WriteOptions = {}): Effect.Effect<string, RunError> =>
  Effect.gen(function*() {
    const run = yield* Effect.try({ try: () => RunDir.read(runDir), catch: asRunError(runDir) })
    const analysis = yield* Effect.try({ try: () => Analysis.analyze(run), catch: asRunError(runDir) })
    const examples = yield* (options.openDataset === undefined ? Examples.load(run, analysis) : Examples.load(run, analysis, options.openDataset))
    const file = path.join(runDir, "report.md")
    yield* Effect.try({
      try: () => writeAtomic(file, Markdown.render(analysis, examples, run.info?.versions ?? {})),
      catch: asRunError(file)
    })
    return file
  })
