/**
 * Where a config's run lives: its identity (the config's hash, the data's fingerprint and history
 * transform, for a shard its share) and its directory (`runs/<config name>/<run id>`).
 *
 * @example
 * RunPlace.directory(config, RunPlace.identity(config, opened)) // "runs/contextual/3f2a9c0d1e4b"
 */
import { Hash } from "@cupid-lab/core"
import { Transform } from "@cupid-lab/data"
import { type RunId, Shard } from "@cupid-lab/results"
import * as path from "node:path"
import { type Config, hash as configHash } from "./Config.js"

export const identity = (
  config: Config,
  data: { readonly source: string; readonly fingerprint: string },
  shard?: Shard.Shard
): RunId.Identity => {
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
export const directory = (config: Config, identity: RunId.Identity): string =>
  config.outGiven
    ? config.out
    : path.join(
        config.out,
        identity.shard === undefined ? identity.id : `${identity.id}-${Shard.suffix(identity.shard)}`
      )
