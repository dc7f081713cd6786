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
import { Files } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { RunError } from "../Errors.js"
import { ResultLine } from "../results/ResultLine.js"
import * as RunDir from "../results/RunDir.js"
import type { Rankings } from "./Instances.js"

/** What a line holds of a ranking: the rest of the line is not decoded. */
const Ranked = Schema.parseJson(ResultLine.pick("cell", "instance", "ranking"))

/** Each cell's ranking of `instance` in `file` (cell id to ranking, best first; null where the line has none). */
export const ofInstance = (file: string, instance: string): Effect.Effect<Rankings, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const out = new Map<string, ReadonlyArray<{ readonly sessionId: string; readonly score: number | null }> | null>()
    const decode = Schema.decodeUnknownEither(Ranked)
    const needle = Buffer.from(JSON.stringify(instance))
    yield* RunDir.scan(fileSystem, file, (lines) =>
      Effect.sync(() => {
        for (const raw of lines) {
          if (raw.indexOf(needle) === -1) continue
          const decoded = decode(raw.toString("utf8", 0, raw.length - 1))
          if (decoded._tag === "Left" || decoded.right.instance !== instance) continue
          out.set(decoded.right.cell, decoded.right.ranking)
        }
      })
    ).pipe(Effect.mapError((e) => new RunError({ path: file, reason: `cannot read the rankings: ${Files.describe(e)}` })))
    return out
  })
