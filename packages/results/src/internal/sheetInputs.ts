/**
 * What a coding sheet reads besides the result lines: the run's dataset (for the request, the gold
 * preference and the sessions' factors), whether the run transformed its histories, and where the
 * local viewer shows an instance.
 */
import type { Domain } from "@cupid-lab/core"
import { Dataset } from "@cupid-lab/data"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Stream } from "effect"
import * as path from "node:path"
import type { SampleOptions } from "../ErrorSheet.js"
import { SheetError } from "../Errors.js"
import type * as RunDir from "../RunDir.js"
import * as RunId from "../RunId.js"

export const viewerLink = (url: string, runId: string, instance: string): string =>
  `${url.endsWith("/") ? url : `${url}/`}#/instance?${new URLSearchParams({ run: runId, id: instance }).toString()}`

/** The viewer's id of a run (its path below the root), and the root that makes it one. */
export const viewerPlace = (dir: string, root: string) => {
  const absolute = path.resolve(dir)
  const relative = path.relative(path.resolve(root), absolute)
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)
    ? { root, id: relative.split(path.sep).join("/"), note: undefined }
    : {
        root: path.dirname(absolute),
        id: path.basename(absolute),
        note: `the run is not under ${root}: the links assume \`cupid-lab view --root ${path.dirname(absolute)}\``
      }
}

/** Whether run-id.json records a `data.transform` (a run without a readable one is taken as untransformed). */
export const transformedRun = (dir: string) =>
  Effect.gen(function* () {
    const fileSystem = yield* FileSystem.FileSystem
    const text = yield* fileSystem.readFileString(path.join(dir, RunId.fileName)).pipe(Effect.option)
    const identity = Option.flatMap(text, (t) => Either.getRight(RunId.decode(t)))
    return Option.isSome(identity) && identity.value.data.transform !== undefined
  })

/** The dataset's instances with these ids, from the source the run recorded (or `options.data`), checked against its fingerprint. */
export const textsOf = (run: RunDir.Run, ids: ReadonlySet<string>, options: SampleOptions) =>
  Effect.gen(function* () {
    const source = options.data ?? run.info?.dataset?.resolved ?? run.summary.dataset.source
    const open = options.openDataset ?? ((s: string) => Dataset.open(s, { onInvalid: "skip" }))
    const found = new Map<string, Domain.Instance>()
    if (ids.size === 0) return found
    const cannot = (why: string) =>
      new SheetError({
        path: run.dir,
        reason: `the run's dataset (${source}) ${why}; the sheet needs its requests and gold preferences (give --data <source> if it opens from elsewhere)`
      })
    const opened = yield* Effect.mapError(open(source), (e) =>
      cannot(`cannot be read: ${e instanceof Error ? e.message : String(e)}`)
    )
    if (opened.fingerprint !== run.summary.dataset.hash)
      return yield* cannot(
        `has changed since the run (fingerprint ${opened.fingerprint.slice(0, 12)}, the run's ${run.summary.dataset.hash.slice(0, 12)})`
      )
    yield* Stream.runForEach(opened.instances, (i) =>
      Effect.sync(() => void (ids.has(i.id) && found.set(i.id, i)))
    ).pipe(Effect.mapError((e) => cannot(`cannot be read: ${e.message}`)))
    const missing = [...ids].filter((id) => !found.has(id))
    if (missing.length > 0) return yield* cannot(`lacks instances the run scored: ${missing.slice(0, 5).join(", ")}`)
    return found
  })
