/**
 * Everything a sweep (or a dry run) does before the first pair runs: the plugin registry, the
 * grid, the data, the models and their cache, and every cell built, so a bad config fails early.
 *
 * @example
 * const p = yield* Prepare.prepare(config, {}, false) // p.grid, p.built, p.opened, ...
 */
import { type Corpus, Dataset, type Domain, Errors as CoreErrors, ModelCache, Models, type Plugin, ReferencePrompts, type Scorer } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import { Context, Effect, Stream } from "effect"
import * as path from "node:path"
import type { Config } from "../config/Config.js"
import type { ConfigError, RunError } from "../Errors.js"
import * as Grid from "../config/Grid.js"
import * as Plugins from "../config/Plugins.js"
import * as Build from "./Build.js"
import type * as Progress from "./Progress.js"
import type * as Shard from "./Shard.js"
import * as Transforms from "./Transforms.js"

export type OpenDataset = (source: string, options: Dataset.LoadOptions) => Effect.Effect<Dataset.Opened, CoreErrors.DatasetError, FileSystem.FileSystem>

export interface Options {
  /** The plugins besides the config's own modules; default every package's built-ins. */
  readonly plugins?: ReadonlyArray<Plugin.AnyPlugin>
  readonly openDataset?: OpenDataset
  readonly progress?: Progress.Progress
  /** Notices for the user (resume counts, orphaned lines, model-cache warnings). */
  readonly log?: (line: string) => void
  /** Write the reports at the end (default true). */
  readonly report?: boolean
  /** Keep the intact lines of a damaged results.jsonl (the corrupt ones move aside) instead of stopping. */
  readonly repair?: boolean
  /** Run only this share of the pairs (see Shard.ts), in a directory of its own. */
  readonly shard?: Shard.Shard
}

export type SweepError = ConfigError | RunError | CoreErrors.DatasetError

export interface Prepared {
  readonly grid: Grid.Grid
  readonly built: ReadonlyArray<Build.BuiltCell>
  readonly opened: Dataset.Opened
  /** Instances the data will yield, when known before reading it (progress only). */
  readonly instances: number | undefined
  readonly cache: ModelCache.Service
  readonly metrics: ReadonlyArray<Scorer.MetricInfo>
  /** Each instance's versions under the cells' transforms. */
  readonly transformed: (instance: Domain.Instance) => (transform: Grid.Cell["transform"]) => Transforms.Prepared
}

/** Everything before the first instance runs: registry, grid, data, models, built cells. */
export const prepare = (config: Config, options: Options, dryRun: boolean) =>
  Effect.gen(function*() {
    const registry = yield* Plugins.registry(config, options.plugins ?? Plugins.builtins())
    const grid = yield* Grid.expand(config, registry)
    const open = options.openDataset ?? Dataset.open
    const opened = yield* open(config.data.source, {
      onInvalid: config.data.onInvalid,
      ...(config.data.types !== undefined ? { types: config.data.types } : {}),
      ...(config.data.limit !== undefined ? { limit: config.data.limit } : {})
    })
    // The data is read once, by the pair loop; its size, when known without reading it, is for progress.
    const instances = opened.size === undefined ? undefined : yield* opened.size
    const pool = yield* Transforms.poolFor(config, grid, open)
    const transformed = Transforms.transformer(config.seed, pool)
    const bundles = yield* Build.models(config, registry, { dryRun })
    const cache = yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerFile(config.cacheDir, { onWarning: options.log }))
    const models = Models.make(bundles, cache, { dryRun })
    const corpus: Corpus.Service = { queries: Stream.map(opened.instances, (i) => i.query), fingerprint: opened.fingerprint }
    // The authors' prompt files: a dry run prices the sweep with stand-ins when they cannot be had.
    const reference = ReferencePrompts.fromEnvironment({
      ...(config.referenceDir !== undefined ? { dir: path.resolve(config.referenceDir) } : {}),
      cacheDir: path.join(path.dirname(path.resolve(config.cacheDir)), "reference"),
      placeholders: dryRun,
      onPlaceholder: (file) =>
        options.log?.(`warning: the authors' ${file} is not available (set CUPID_REFERENCE_DIR or referenceDir, docs/paper-ablations.md); this dry run prices its calls with a stand-in of the same size`)
    })
    const env = Context.add(Build.environment({ models, cache, corpus, registry }), ReferencePrompts.ReferencePrompts, reference)
    const built = yield* Build.cells(config, grid, env)
    const metrics: ReadonlyArray<Scorer.MetricInfo> = built[0]?.pipeline.scorers.flatMap((s) => s.service.metrics) ?? []
    return { grid, built, opened, instances, cache, metrics, transformed } satisfies Prepared
  })

/** The error of a dataset that yielded no instance. */
export const noInstances = (config: Config, opened: Dataset.Opened) => {
  const filters = [config.data.types !== undefined ? `types ${config.data.types.join(", ")}` : "", config.data.limit !== undefined ? `limit ${config.data.limit}` : ""].filter((x) => x !== "")
  return new CoreErrors.DatasetError({
    source: opened.resolved,
    reason: `no instances to run${filters.length > 0 ? ` after the filters (${filters.join(", ")})` : ""}${opened.skipped().length > 0 ? `; ${opened.skipped().length} rows were skipped as invalid` : ""}`
  })
}

