/**
 * The provider batch jobs a run recorded (batches.jsonl), as the providers see them now, and
 * cancelling those still running. The models are built from the config the run was made with
 * (run.json names it, or the caller gives one), so their keys come from the same environment.
 *
 * @example
 * const rows = yield* BatchAdmin.list({ dir: "runs/paper-ablations/latest" }) // state, lines done, model
 * yield* BatchAdmin.cancel({ dir }) // cancels every batch not ended, and records it
 */
import { type Batch, Errors as CoreErrors, type Models } from "@cupid-lab/core"
import { Errors, RunDir } from "@cupid-lab/results"
import { FileSystem } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import * as path from "node:path"
import * as BatchJournal from "./BatchJournal.js"
import * as Build from "./Build.js"
import * as Config from "./Config.js"
import * as Plugins from "./Plugins.js"

export interface Row {
  readonly entry: BatchJournal.Entry
  /** The provider's view, or why it could not be had. */
  readonly status: Batch.Status | { readonly error: string }
}

export interface Target {
  readonly dir: string
  /** The config to build the models from (default: the one run.json names). */
  readonly config?: string
  readonly env?: Readonly<Record<string, string | undefined>>
}

const RunFile = Schema.parseJson(Schema.Struct({ config: Schema.Struct({ file: Schema.String }) }))

/** The config a run was made with: run.json's, unless one is given. */
const configOf = (target: Target) =>
  Effect.gen(function* () {
    if (target.config !== undefined) return target.config
    const fs = yield* FileSystem.FileSystem
    const file = path.join(target.dir, RunDir.infoFileName)
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError(
        () =>
          new Errors.RunError({
            path: file,
            reason: "cannot read it, so the run's config is not known; give it with --config"
          })
      )
    )
    const run = yield* Schema.decodeUnknown(RunFile)(text).pipe(
      Effect.mapError(
        () => new Errors.RunError({ path: file, reason: "has no config.file; give the config with --config" })
      )
    )
    return run.config.file
  })

/** Each recorded batch with the endpoint that reaches it, from the run's config. */
const resolve = (target: Target) =>
  Effect.gen(function* () {
    const entries = yield* BatchJournal.read(target.dir)
    if (entries.length === 0) return { entries, endpoints: [] as ReadonlyArray<Batch.Endpoint> }
    const config = yield* Config.load(yield* configOf(target), target.env ?? process.env)
    const registry = yield* Plugins.registry(config)
    const bundles: Record<string, Models.ModelBundle> = yield* Build.models(config, registry, { batchAll: true })
    const endpoints = Object.values(bundles).flatMap((b) => (b.batch === undefined ? [] : [b.batch]))
    return { entries, endpoints }
  })

const endpointOf = (endpoints: ReadonlyArray<Batch.Endpoint>, e: BatchJournal.Entry) =>
  endpoints.find((x) => x.at === e.at && x.provider === e.provider && x.model === e.model)

const unreachable = (e: BatchJournal.Entry) =>
  `no model of the config reaches ${e.provider}/${e.model} at ${e.at}; give the config the run was made with (--config)`

/** Every recorded batch with its state now; a file never made into a batch is found through the provider's list. */
export const list = (target: Target) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { entries, endpoints } = yield* resolve(target)
      return yield* Effect.forEach(entries, (entry): Effect.Effect<Row> => {
        const endpoint = endpointOf(endpoints, entry)
        if (endpoint === undefined) return Effect.succeed({ entry, status: { error: unreachable(entry) } })
        return Effect.gen(function* () {
          const id = entry.batch ?? (yield* endpoint.findByFile(entry.file))
          if (id === undefined)
            return { entry, status: { error: "uploaded, never made into a batch (nothing to pay)" } }
          return { entry: { ...entry, batch: id }, status: yield* endpoint.status(id) }
        }).pipe(Effect.catchAll((e: CoreErrors.ModelError) => Effect.succeed({ entry, status: { error: e.message } })))
      })
    })
  )

/** Cancel every recorded batch that has not ended, and record each cancellation. */
export const cancel = (target: Target) =>
  Effect.scoped(
    Effect.gen(function* () {
      const { endpoints } = yield* resolve(target)
      const rows = yield* list(target)
      const cancelled: Array<string> = []
      for (const row of rows) {
        const id = row.entry.batch
        if (id === undefined || "error" in row.status || row.status.terminal) continue
        const endpoint = endpointOf(endpoints, row.entry)!
        yield* endpoint.cancel(id)
        const time = new Date(yield* Clock.currentTimeMillis).toISOString()
        yield* BatchJournal.append(target.dir, { event: "cancelled", batch: id, time })
        cancelled.push(id)
      }
      return { rows, cancelled }
    })
  )

/** A row for people: batch, state, lines done, model, and when it was submitted. */
export const describe = (row: Row): string => {
  const s = row.status
  const id = row.entry.batch ?? `(file ${row.entry.file})`
  const what = `${row.entry.keys.length} calls to ${row.entry.provider}/${row.entry.model}, submitted ${row.entry.submittedAt ?? row.entry.uploadedAt}`
  if ("error" in s) return `${id}  ${s.error}  (${what})`
  return `${id}  ${s.state}  ${s.completed}/${s.total} done${s.failed > 0 ? `, ${s.failed} failed` : ""}  (${what})`
}
