/**
 * The retrievers' rankings of one instance, read from a run's results.jsonl when an instance page
 * asks for them: the viewer keeps no ranking in memory (a large run's rankings are most of its
 * lines), and one page needs the rankings of one instance only. Lines that do not mention the
 * instance are skipped without decoding; of a pair written more than once (a failed pair retried),
 * the last line counts, as when the run is read.
 *
 * @example
 * const byCell = yield* Rankings.ofInstance("runs/contextual/3f2a9c0d1b4e/results.jsonl", "p1:consistent")
 * byCell.get(cellId) // [{ sessionId: "s4", score: 3.2 }, ...] best first, or null
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { RunError } from "../Errors.js"
import { ResultLine } from "../results/ResultLine.js"
import * as RunDir from "../results/RunDir.js"
import type { Rankings } from "./Instances.js"

/** What a line holds of a ranking: the rest of the line is not decoded. */
const Ranked = ResultLine.pick("cell", "instance", "ranking")

/** Each cell's ranking of `instance` in `file` (cell id to ranking, best first; null where the line has none). */
export const ofInstance = (file: string, instance: string): Effect.Effect<Rankings, RunError, FileSystem.FileSystem> =>
  Effect.map(RunDir.linesAbout(file, instance, Ranked, "rankings"), ({ lines }) => {
    // The run's own reading has already refused a file with lines that do not decode.
    const out: Map<string, ReadonlyArray<{ readonly sessionId: string; readonly score: number | null }> | null> = new Map()
    for (const l of lines) out.set(l.cell, l.ranking)
    return out
  })
