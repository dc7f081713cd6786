/**
 * The dataset side of the viewer's instance pages: the text of a loaded run's instances, from the data
 * source the run recorded.
 */
import type { Dataset } from "@cupid-lab/data"
import type { Domain, Errors as CoreErrors } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Stream } from "effect"

import type { Loaded, Texts } from "../Instances.js"

export type OpenDataset = (
  source: string,
  options: Dataset.LoadOptions
) => Effect.Effect<Dataset.Opened, CoreErrors.DatasetError, FileSystem.FileSystem>

/** The dataset's instances of a run, read once, with a note when they cannot be read or may differ. */
export const textsOf = (l: Loaded, openDataset: OpenDataset, fileSystem: FileSystem.FileSystem): Effect.Effect<Texts> =>
  Effect.gen(function* () {
    if (l.texts !== undefined) return l.texts
    const source = l.run.info?.dataset?.resolved ?? l.run.summary.dataset.source
    const result = yield* Effect.either(
      Effect.gen(function* () {
        const opened = yield* openDataset(source, { onInvalid: "skip" }).pipe(
          Effect.provideService(FileSystem.FileSystem, fileSystem)
        )
        const map = new Map<string, Domain.Instance>()
        yield* Stream.runForEach(opened.instances, (instance) =>
          Effect.sync(() => void (l.byInstance.has(instance.id) && map.set(instance.id, instance)))
        )
        return {
          map,
          fingerprint: opened.fingerprint,
          skipped: opened.skipped().map((k) => `row ${k.row}${k.id === undefined ? "" : ` (${k.id})`}: ${k.reason}`)
        }
      })
    )
    const transform = l.identity?.data.transform
    const transformed = l.run.summary.cells.some(
      (c) => c.params["transform"] !== undefined && c.params["transform"] !== null
    )
    return (l.texts = Either.isLeft(result)
      ? {
          instances: new Map(),
          skipped: [],
          note: `the run's dataset (${source}) cannot be read: ${result.left.message}; sessions are shown by id only`
        }
      : {
          instances: result.right.map,
          skipped: result.right.skipped,
          note:
            result.right.fingerprint !== l.run.summary.dataset.hash
              ? `the dataset at ${source} has changed since the run (fingerprint ${result.right.fingerprint.slice(0, 12)}, the run's ${l.run.summary.dataset.hash.slice(0, 12)}): its text may not be what the cells saw`
              : transform !== undefined || transformed
                ? "the run transformed the histories (data.transform or a cell's transform): the history below is the dataset's, before the transform; the gold labels each cell was scored with are in its result"
                : null
        })
  })
