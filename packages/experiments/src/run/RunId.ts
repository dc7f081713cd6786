/**
 * A run's identity: its config's hash, its data's fingerprint and history transform, and for a
 * shard its share. Its short id names the directory (`runs/<config name>/<run id>`, and `latest`);
 * `<dir>/run-id.json` records it, and a sweep refuses a directory that holds another run.
 *
 * @example
 * RunId.directory(config, RunId.of(config, opened)) // "runs/contextual/3f2a9c0d1e4b"
 */
import { Files, Hash, Transform } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import * as path from "node:path"
import { type Config, hash as configHash } from "../config/Config.js"
import { RunError } from "../Errors.js"
import * as Shard from "./Shard.js"

export const fileName = "run-id.json"
export const latestName = "latest"
/** A run id: what names a run's directory under `runs/<name>/`. */
export const idPattern = /^[0-9a-f]{12}$/

export const Identity = Schema.Struct({
  id: Schema.String,
  config: Schema.Struct({ name: Schema.String, hash: Schema.String }),
  data: Schema.Struct({
    source: Schema.String,
    fingerprint: Schema.String,
    /** `data.transform` in canonical form. */
    transform: Schema.optionalWith(Transform.Spec, { exact: true })
  }),
  /** The share of the pairs this directory holds (`sweep --shard`); absent for a whole run. */
  shard: Schema.optionalWith(Shard.Shard, { exact: true })
})
export type Identity = typeof Identity.Type

export const of = (config: Config, data: { readonly source: string; readonly fingerprint: string }, shard?: Shard.Shard): Identity => {
  const hash = configHash(config)
  const transform = config.data.transform === undefined ? undefined : Transform.normalize(config.data.transform)
  return {
    id: Hash.contentHash({ config: hash, data: data.fingerprint, transform: transform ?? null }).slice(0, 12),
    config: { name: config.name, hash },
    data: { source: data.source, fingerprint: data.fingerprint, ...(transform !== undefined ? { transform } : {}) },
    ...(shard !== undefined ? { shard } : {})
  }
}

/** The run directory: the one given (`--out`, `out:`), else `runs/<name>/<run id>` (`<run id>-shard-<i>-of-<N>` for a shard). */
export const directory = (config: Config, identity: Identity): string =>
  config.outGiven ? config.out : path.join(config.out, identity.shard === undefined ? identity.id : `${identity.id}-${Shard.suffix(identity.shard)}`)

const shardText = (s: Shard.Shard | undefined): string => (s === undefined ? "the whole run" : Shard.describe(s))

/** Whether two identities are the same run and the same share of it. */
export const same = (a: Identity, b: Identity): boolean => a.id === b.id && shardText(a.shard) === shardText(b.shard)

const transformText = (t: Transform.Spec | undefined): string => (t === undefined ? "none" : Hash.canonicalJson(t))

/** A run identity in words, for messages. */
export const describe = (i: Identity): string =>
  `run ${i.id}${i.shard === undefined ? "" : ` ${Shard.describe(i.shard)}`} (config ${i.config.name}, hash ${i.config.hash}; data ${i.data.source}, fingerprint ${i.data.fingerprint.slice(0, 16)}` +
  `${i.data.transform === undefined ? "" : `, transform ${transformText(i.data.transform)}`})`

/** What differs between two identities, in words ("the config and the data differ"). */
export const differences = (mine: Identity, theirs: Identity): string => {
  const transform = transformText(mine.data.transform) !== transformText(theirs.data.transform)
  const parts = [
    // data.transform is part of the config, so a changed transform changes the config's hash too
    mine.config.hash !== theirs.config.hash ? (transform ? "the config (its data.transform among others)" : "the config") : "",
    mine.data.fingerprint !== theirs.data.fingerprint ? "the data" : "",
    shardText(mine.shard) !== shardText(theirs.shard) ? `the share (${shardText(mine.shard)} against ${shardText(theirs.shard)})` : ""
  ].filter((x) => x !== "")
  return parts.length === 0 ? "the identity differs" : `${parts.join(" and ")} ${parts.length > 1 ? "differ" : "differs"}`
}

export const decode = Schema.decodeUnknownEither(Schema.parseJson(Identity))

/**
 * Check that `dir` is free for this run or already holds it: fails when it holds another run, or
 * results whose run is not recorded (unless `unrecorded: "allow"`: under the lock, once the log exists).
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
      return yield* new RunError({ path: file, reason: `is not a run identity (expected {"id", "config": {"name", "hash"}, "data": {"source", "fingerprint", "transform"?}, "shard"?}); delete the directory or give another --out` })
    }
    const theirs = recorded.right
    if (same(theirs, identity)) return
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

/** Point `<parent>/latest` at the run directory `<parent>/<id>`: a relative symlink, else (where none can be made) a file holding the id. */
export const linkLatest = (runDir: string): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    const link = path.join(path.dirname(runDir), latestName)
    const id = path.basename(runDir)
    const tmp = Files.temporaryName(link)
    const linked = yield* fileSystem.symlink(id, tmp).pipe(
      Effect.zipRight(fileSystem.rename(tmp, link)),
      Effect.as(true),
      Effect.catchAll(() => Effect.as(fileSystem.remove(tmp, { force: true }).pipe(Effect.ignore), false))
    )
    if (linked) return
    yield* Files.writeFileAtomic(link, `${id}\n`).pipe(
      Effect.mapError((e) => new RunError({ path: link, reason: `cannot point it at ${runDir} (neither as a symlink nor as a file holding the id): ${Files.describe(e)}` }))
    )
  })

/** The run directory a command was given, with `<parent>/latest` replaced by the run it points at; a config's directory is refused. */
export const resolve = (dir: string): Effect.Effect<string, RunError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fileSystem = yield* FileSystem.FileSystem
    if (path.basename(dir) === latestName) {
      const id = yield* fileSystem.readLink(dir).pipe(
        Effect.orElse(() => fileSystem.readFileString(dir)),
        Effect.map((text) => text.trim()),
        Effect.orElseSucceed(() => "")
      )
      return idPattern.test(id) ? path.join(path.dirname(dir), id) : dir
    }
    const has = (name: string) => fileSystem.exists(path.join(dir, name)).pipe(Effect.orElseSucceed(() => false))
    if ((yield* has("summary.json")) || !(yield* has(latestName))) return dir
    const ids = (yield* fileSystem.readDirectory(dir).pipe(Effect.orElseSucceed(() => []))).filter((n) => idPattern.test(n)).sort()
    return yield* new RunError({
      path: dir,
      reason: `holds the runs of one config by id (${ids.length === 0 ? "none yet" : ids.join(", ")}), not a run; give ${path.join(dir, latestName)} for the newest, or ${path.join(dir, "<run id>")}`
    })
  })
