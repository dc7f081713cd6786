/**
 * The last step of a sweep and of a merge, shared by both: write summary.json, let the caller
 * publish the run (the command line writes the reports here), then write run.json, whose write
 * phase covers the summary and what was published. The runner knows nothing of reports: it hands
 * the finished run to `publish` and returns what `publish` returned.
 *
 * @example
 * const published = yield* Finish.write({ dir, summary, index }, (endedAt) => info(endedAt), publish)
 */
import { Errors, RunDir, RunInfo, Summary } from "@cupid-lab/results"
import type { FileSystem } from "@effect/platform"
import { Clock, Effect } from "effect"
import * as path from "node:path"

/** Writes a finished run's reports (or anything else of its own) into its directory. */
export type Publish<P> = (run: RunDir.Run) => Effect.Effect<P, Errors.RunError, FileSystem.FileSystem>

export const write = <P>(
  run: Omit<RunDir.Run, "info">,
  info: (endedAt: number) => RunInfo.RunInfo,
  publish: Publish<P> | undefined
): Effect.Effect<P | undefined, Errors.RunError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    yield* RunDir.write(path.join(run.dir, RunDir.summaryFileName), Summary.encode(run.summary))
    const published =
      publish === undefined ? undefined : yield* publish({ ...run, info: info(yield* Clock.currentTimeMillis) })
    yield* RunDir.write(path.join(run.dir, RunDir.infoFileName), RunInfo.encode(info(yield* Clock.currentTimeMillis)))
    return published
  }).pipe(Effect.withSpan("Finish.write"))
