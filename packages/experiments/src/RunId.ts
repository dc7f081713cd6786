/**
 * What a run directory holds is one run: one config (its hash covers everything that changes
 * results: plugins, options, scorers, seed, the data source and filters, history transforms)
 * applied to one dataset (its content fingerprint). That pair is the run's identity, and its
 * short id names the directory.
 *
 * - By default a sweep writes to `runs/<config name>/<run id>/` and points `runs/<config
 *   name>/latest` at it (a symlink, replaced atomically), so changing the data or the config makes
 *   a new directory instead of mixing runs, and a copied config that keeps its `name:` cannot
 *   overwrite the original's run.
 * - `<dir>/run-id.json` records the identity, written when the sweep takes the directory.
 *   Resuming is for the same identity only: a sweep pointed (`--out`, or `out:` in the config) at a
 *   directory of another run is refused before any work, with both identities and what differs.
 *
 * @example
 * const identity = RunId.of(config, opened) // { id: "3f2a9c0d1e4b", config: {...}, data: {...} }
 * RunId.directory(config, identity)          // "runs/contextual/3f2a9c0d1e4b"
 */
import { Files, Hash } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import * as path from "node:path"
import type { Config } from "./Config.js"
import { hash as configHash } from "./Config.js"
import { RunError } from "./Errors.js"

export const fileName = "run-id.json"
export const latestName = "latest"

export const Identity = Schema.Struct({
  /** 12 hex digits of the hash of the config hash and the data fingerprint. */
  id: Schema.String,
  config: Schema.Struct({ name: Schema.String, hash: Schema.String }),
  data: Schema.Struct({ source: Schema.String, fingerprint: Schema.String })
})
export type Identity = typeof Identity.Type

export const of = (config: Config, data: { readonly source: string; readonly fingerprint: string }): Identity => {
  const hash = configHash(config)
  return {
    id: Hash.contentHash({ config: hash, data: data.fingerprint }).slice(0, 12),
    config: { name: config.name, hash },
    data: { source: data.source, fingerprint: data.fingerprint }
  }
}

/** The run directory: the one given (`--out`, `out:`), else `runs/<name>/<run id>`. */
export const directory = (config: Config, identity: Identity): string => (config.outGiven ? config.out : path.join(config.out, identity.id))

const describe = (i: Identity): string =>
  `run ${i.id} (config ${i.config.name}, hash ${i.config.hash}; data ${i.data.source}, fingerprint ${i.data.fingerprint.slice(0, 16)})`

const differences = (mine: Identity, theirs: Identity): string => {
  const parts = [
    mine.config.hash !== theirs.config.hash ? "the config" : "",
    mine.data.fingerprint !== theirs.data.fingerprint ? "the data" : ""
  ].filter((x) => x !== "")
  return parts.length === 0 ? "the identity differs" : `${parts.join(" and ")} ${parts.length > 1 ? "differ" : "differs"}`
}

const decode = Schema.decodeUnknownEither(Schema.parseJson(Identity))

/**
 * Check that `dir` is free for this run or already holds it. Fails, before anything is written,
 * when it holds another run, or (unless `unrecorded: "allow"`, for the check under the lock, once
 * the store has created its file) results whose run is not recorded.
 */
export const check = (
  dir: string,
  identity: Identity,
  options: { readonly unrecorded?: "refuse" | "allow" } = {}
): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const file = path.join(dir, fileName)
    const text = yield* fileSystem.readFileString(file).pipe(Effect.option)
    if (Option.isNone(text)) {
      if (options.unrecorded !== "allow" && (yield* fileSystem.exists(path.join(dir, "results.jsonl")).pipe(Effect.orElseSucceed(() => false)))) {
        return yield* new RunError({
          path: dir,
          reason: `holds results of a run whose identity is not recorded (no ${fileName}), so this sweep (${describe(identity)}) cannot tell whether resuming them is right; ` +
            `give another --out, or delete the directory to start over`
        })
      }
      return
    }
    const recorded = decode(text.value)
    if (Either.isLeft(recorded)) {
      return yield* new RunError({ path: file, reason: `is not a run identity (expected {"id", "config": {"name", "hash"}, "data": {"source", "fingerprint"}}); delete the directory or give another --out` })
    }
    const theirs = recorded.right
    if (theirs.id === identity.id) return
    return yield* new RunError({
      path: dir,
      reason: `holds another run: ${describe(theirs)}; this sweep is ${describe(identity)}; ${differences(identity, theirs)}. ` +
        `Resuming is for the same run only: give another --out (or leave --out and out: unset, for runs/<name>/<run id>), or delete the directory`
    })
  })

/** Record the identity in `dir` (the directory exists and is this run's: {@link check} passed). */
export const claim = (dir: string, identity: Identity): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Files.writeFileAtomic(path.join(dir, fileName), `${JSON.stringify(identity, null, 2)}\n`).pipe(
    Effect.mapError((e) => new RunError({ path: path.join(dir, fileName), reason: `cannot write: ${Files.describe(e)}` }))
  )

/** Point `<parent>/latest` at the run directory `<parent>/<id>` (a relative symlink, replaced atomically). */
export const linkLatest = (runDir: string): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const link = path.join(path.dirname(runDir), latestName)
    const tmp = Files.temporaryName(link)
    yield* fileSystem.symlink(path.basename(runDir), tmp).pipe(
      Effect.zipRight(fileSystem.rename(tmp, link)),
      Effect.mapError((e) => new RunError({ path: link, reason: `cannot point it at ${runDir}: ${Files.describe(e)}` })),
      Effect.tapError(() => fileSystem.remove(tmp, { force: true }).pipe(Effect.ignore))
    )
  })
