/**
 * Sweep configs: YAML files that name a dataset, models, a base pipeline, sweep axes, explicit
 * cells and scorers (see docs/config.md for every key).
 *
 * Loading decodes the whole file once, with Effect Schemas, into typed values: YAML syntax and
 * aliases (with line and column: see core's `Yaml`), `${ENV}` interpolation, secrets written into the file, unknown keys at every
 * level (all of them, each with a suggestion when a valid key is close), value types, stage specs,
 * sweep axes (their alternatives as spec templates, option values or history transforms) and
 * explicit cells. Every problem found is reported at once, each at its key path. Plugin names and
 * options are checked by {@link Grid.expand}, which needs the registry.
 *
 * @example
 * import { Config } from "@cupid-lab/experiments"
 * const config = yield* Config.load("configs/contextual.yaml")
 * config.pipeline.retriever // { use: "context-factor", strategy: "offline" }
 * config.sweep[0]           // { _tag: "Stage", key: "retriever", stage: "retriever", choices: [...], alternatives: [...] }
 */
import { Domain, Hash, Stage, Transform, Yaml } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Schema } from "effect"
import * as path from "node:path"
import YAML from "yaml"
import { ConfigError } from "../Errors.js"
import * as ResultLine from "../results/ResultLine.js"
import * as Issues from "@cupid-lab/core/Issues"
import { alternatives, isRecord } from "./Tree.js"
import { decodeSources, decodeSweep, Options, ScorerSpecSchema, sourceAxis, StageValueSchema } from "./Axes.js"
import { findSecrets, fromIssues, interpolate, keyVariable, type Problem } from "./Env.js"

export { interpolateString, keyVariable } from "./Env.js"

export type StageName = Stage.CellStage
export const stageNames: ReadonlyArray<StageName> = Stage.cellStages

/** A plugin reference: its name and raw options (decoded later by the plugin's own schema). */
export interface Spec {
  readonly use: string
  readonly [option: string]: unknown
}

/** A stage of a cell: a spec, or `null` for "no such stage". */
export type StageValue = Spec | null

/** A stage alternative of a sweep as written: `use` may list plugins, and list values inside list alternatives. */
export interface SpecTemplate {
  readonly use: string | ReadonlyArray<string>
  readonly [option: string]: unknown
}

export interface ModelEntry {
  readonly provider: string
  readonly model: string
  /** Every other key of the entry: the provider plugin's options. */
  readonly options: Readonly<Record<string, unknown>>
}

/** A value together with the key path it was written at, for messages. */
export interface Located<A> {
  readonly value: A
  readonly origin: string
}

export type TransformPart = typeof Transform.keys[number]

interface AxisBase {
  /** The key as written: `retriever`, `retriever.k`, `retriever.embedder.dims`, `transform`, `transform.pad`. */
  readonly key: string
  /** The alternatives as written (after `${ENV}` interpolation); the config hash covers these. */
  readonly alternatives: ReadonlyArray<unknown>
}

/** `retriever: [...]`: whole stage specs (null removes the stage). */
export interface StageAxis extends AxisBase {
  readonly _tag: "Stage"
  readonly stage: StageName
  readonly choices: ReadonlyArray<SpecTemplate | null>
}

/** `retriever.k: [...]`: values of one option (path inside the options) of the stage the cells already have. */
export interface OptionAxis extends AxisBase {
  readonly _tag: "Option"
  readonly stage: StageName
  readonly path: ReadonlyArray<string>
}

/** `transform: [...]`: whole history transforms, expanded and decoded. */
export interface TransformAxis extends AxisBase {
  readonly _tag: "Transform"
  readonly transforms: ReadonlyArray<Located<Transform.Spec>>
}

/** `transform.pad: [...]`: one part of the transform, each value decoded as a transform with that part only. */
export interface TransformPartAxis extends AxisBase {
  readonly _tag: "TransformPart"
  readonly part: TransformPart
  readonly values: ReadonlyArray<Located<Transform.Spec>>
}

export type SweepAxis = StageAxis | OptionAxis | TransformAxis | TransformPartAxis

export interface ExplicitCell {
  readonly name?: string
  readonly stages: Readonly<Partial<Record<StageName, StageValue>>>
  /** The cell's history transform, replacing `data.transform`. */
  readonly transform?: Transform.Spec
}

export { transformKey } from "./Axes.js"

export interface Config {
  /** The file as the user named it, for messages. */
  readonly file: string
  /** Absolute directory of the file: `plugins:` paths are relative to it. */
  readonly dir: string
  readonly name: string
  readonly description: string
  readonly data: {
    readonly source: string
    readonly types?: ReadonlyArray<Domain.InstanceType>
    readonly limit?: number
    readonly onInvalid: "fail" | "skip"
    /** The history transform every cell applies unless a sweep axis or the cell sets its own. */
    readonly transform?: Transform.Spec
  }
  readonly seed: number
  readonly models: Readonly<Record<string, ModelEntry>>
  readonly plugins: ReadonlyArray<string>
  readonly pipeline: Readonly<Record<StageName, StageValue>>
  readonly scorers: ReadonlyArray<Spec>
  readonly sweep: ReadonlyArray<SweepAxis>
  /** `sweep: { data.source: [...] }`: one run per source, side by side in benchmarks.md; empty when not swept. */
  readonly sources: ReadonlyArray<string>
  readonly cells: ReadonlyArray<ExplicitCell>
  readonly concurrency: number
  /** What calls.jsonl keeps of each model call: `full` (requests and answers) or `counts` (without them); not part of the run's identity. */
  readonly transcripts: "full" | "counts"
  /** The largest grid a sweep expands; a larger one is refused with its size before any work (not part of the run's identity). */
  readonly maxCells: number
  /** The most one invocation of the sweep may spend on model calls, in list-price USD (see run/Budget.ts); not part of the run's identity. */
  readonly budget?: { readonly usd: number }
  readonly cacheDir: string
  /** Where the authors' prompt files are read from (their hashes are pinned, so it is not part of the run's identity). */
  readonly referenceDir?: string
  /** Where runs go: the run directory itself when {@link outGiven}, else the parent of `<run id>/` directories (`runs/<name>`). */
  readonly out: string
  /** True when `out` was given (config `out:` or `--out`): then it is the run directory. */
  readonly outGiven: boolean
  /** How reports present the results (not part of the run's identity). */
  readonly report: {
    readonly baseline?: string
    /** The report's main metric by name (default: chosen from the scorers' declarations); checked against them before any work. */
    readonly main?: string
  } & ResultLine.Families
  readonly bootstrap: {
    readonly resamples: number
    /**
     * From this many instances on, intervals and paired tests take their large-sample (normal)
     * forms instead of resampling (see docs/metrics.md); `resamples` still applies below it.
     */
    readonly largeSample: number
  }
}

const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonEmptyString = Schema.String.pipe(Schema.minLength(1, { message: () => "expected a non-empty string" }))

const stageFields = Stage.byCellStage(() => Schema.optionalWith(StageValueSchema, { default: () => null }))

const CellSchema = Schema.Struct({
  name: Schema.optionalWith(NonEmptyString, { exact: true }),
  ...Stage.byCellStage(() => Schema.optionalWith(StageValueSchema, { exact: true })),
  transform: Schema.optionalWith(Transform.Spec, { exact: true })
})

const ModelEntrySchema = Schema.Struct(
  {
    provider: Schema.propertySignature(Schema.String).annotations({ missingMessage: () => `missing "provider" (the name of a provider plugin)` }),
    model: Schema.propertySignature(Schema.String).annotations({ missingMessage: () => `missing "model" (the provider's model id)` })
  },
  Options
)

/**
 * The default limit on a grid's cells: far above any config of this repository (a few hundred
 * cells), and a grid this size already makes 7.5 million pairs on CUPID's 756 instances.
 */
export const defaultMaxCells = 10_000

/** Instances from which statistics take their large-sample forms by default: above any CUPID slice (756 instances in all). */
export const defaultLargeSample = 2000

/** A run's name is one folder of `runs/`: a name that could lead elsewhere (`../x`, `a/b`) is refused. */
const isFolderName = (name: string): boolean =>
  name !== "" && name !== "." && name !== ".." && name.length <= 128 && !/[/\\\u0000-\u001f\u007f]/.test(name)

const folderNameHelp = "a run's name is one folder name under runs/ (no / or \\, not . or .., at most 128 characters)"

const RunName = Schema.String.pipe(Schema.filter((name) => isFolderName(name) || `${JSON.stringify(name)} is not one folder name: ${folderNameHelp}`))

const FileSchema = Schema.Struct({
  name: Schema.optionalWith(RunName, { exact: true }),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  data: Schema.optionalWith(
    Schema.Struct({
      source: Schema.optionalWith(Schema.String, { default: () => "sample" }),
      types: Schema.optionalWith(Schema.Array(Domain.CupidType), { exact: true }),
      limit: Schema.optionalWith(PositiveInt, { exact: true }),
      onInvalid: Schema.optionalWith(Schema.Literal("fail", "skip"), { default: () => "fail" as const }),
      transform: Schema.optionalWith(Transform.Spec, { exact: true })
    }),
    { default: () => ({ source: "sample", onInvalid: "fail" as const }) }
  ),
  seed: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  models: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ModelEntrySchema }), { default: () => ({}) }),
  plugins: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  pipeline: Schema.optionalWith(Schema.Struct(stageFields), {
    default: () => Stage.byCellStage(() => null)
  }),
  scorers: Schema.optionalWith(Schema.Array(ScorerSpecSchema), { default: () => [] }),
  // The shape of each axis depends on its key: decoded by `decodeSweep`.
  sweep: Schema.optionalWith(Options, { default: () => ({}) }),
  cells: Schema.optionalWith(Schema.Array(CellSchema), { default: () => [] }),
  concurrency: Schema.optionalWith(PositiveInt, { default: () => 4 }),
  transcripts: Schema.optionalWith(Schema.Literal("full", "counts"), { default: () => "full" as const }),
  maxCells: Schema.optionalWith(PositiveInt, { default: () => defaultMaxCells }),
  budget: Schema.optionalWith(Schema.Struct({ usd: Schema.Number.pipe(Schema.positive()) }), { exact: true }),
  cacheDir: Schema.optionalWith(Schema.String, { default: () => ".cache/models" }),
  /** A checkout of the CUPID authors' repository at the pinned commit, for `prompts: reference` (else CUPID_REFERENCE_DIR, else a download). */
  referenceDir: Schema.optionalWith(Schema.String, { exact: true }),
  out: Schema.optionalWith(Schema.String, { exact: true }),
  report: Schema.optionalWith(
    Schema.Struct({
      baseline: Schema.optionalWith(Schema.String, { exact: true }),
      main: Schema.optionalWith(Schema.String, { exact: true }),
      ...ResultLine.Families.fields
    }),
    { default: () => ({}) }
  ),
  bootstrap: Schema.optionalWith(Schema.Struct({
    resamples: Schema.optionalWith(PositiveInt, { default: () => 1000 }),
    largeSample: Schema.optionalWith(PositiveInt, { default: () => defaultLargeSample })
  }), {
    default: () => ({ resamples: 1000, largeSample: defaultLargeSample })
  })
})

export const topLevelKeys: ReadonlyArray<string> = Object.keys(FileSchema.fields).sort()

/** Parse and validate a config from its text. `env` supplies `${VAR}` values. */
export const parse = (
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Config, ConfigError> =>
  Effect.suspend(() => {
    // Syntax errors, and aliases that would make a value contain itself or expand the file past a limit, at their line.
    const read = Yaml.read(text)
    if (Either.isLeft(read)) {
      const { path: at, reason, line, column } = read.left
      return Effect.fail(new ConfigError({ file, path: "", reason: at === "" ? reason : `${at}: ${reason}`, line, column }))
    }
    const raw = read.right
    const fail = (reason: string) => Effect.fail(new ConfigError({ file, path: "", reason }))
    if (raw === null || raw === undefined) return fail("the file is empty; a config needs at least a pipeline")
    if (!isRecord(raw)) return fail(`expected a mapping of keys (${topLevelKeys.join(", ")}) at the top level`)
    return Either.match(decodeFile(raw, file, env), {
      onLeft: (problems) => Effect.fail(ConfigError.all(file, problems)),
      onRight: Effect.succeed
    })
  })

/** Read and parse a config file. */
export const load = (
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Config, ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(
    Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
      Effect.mapError((e) => new ConfigError({ file, path: "", reason: `cannot read the config: ${e.cause instanceof Error ? e.cause.message : e.message}` }))
    ),
    (text) => parse(text, file, env)
  )

/**
 * A `--config` argument: a path, or a bare name looked up in `configsDir` (`contextual` or
 * `contextual.yaml` -> `configs/contextual.yaml`).
 */
export const resolveFile = (arg: string, configsDir: string): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))
    if (yield* exists(arg)) return arg
    const candidates = [arg, `${arg}.yaml`, `${arg}.yml`].map((n) => path.join(configsDir, n))
    return (yield* Effect.findFirst(candidates, exists)).pipe(Option.getOrElse(() => arg))
  })

const decodeFile = (
  raw: Readonly<Record<string, unknown>>,
  file: string,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<Config, Array<Problem>> => {
  // Secrets are refused before interpolation, so a `${VAR}` holding a key is not one.
  const secrets = findSecrets(raw)
  if (secrets.length > 0) return Either.left(secrets)
  const unset: Array<Problem> = []
  const resolved = interpolate(raw, [], env, unset)
  if (unset.length > 0) return Either.left(unset)

  const decoded = Issues.decode(FileSchema, resolved, "key", "top-level key")
  const sweepRaw = isRecord(resolved) ? resolved.sweep : undefined
  // `data.source` is swept by running the grid once per source (see `sources`), not as a grid axis.
  const { [sourceAxis]: sourcesRaw, ...axes } = isRecord(sweepRaw) ? sweepRaw : {}
  const sweep = isRecord(sweepRaw) ? decodeSweep(axes) : Either.right([])
  const sources = decodeSources(sourcesRaw)
  if (Either.isLeft(decoded) || Either.isLeft(sweep) || Either.isLeft(sources)) {
    const problems = [...(Either.isLeft(decoded) ? fromIssues(decoded.left) : []), ...(Either.isLeft(sweep) ? sweep.left : []), ...(Either.isLeft(sources) ? sources.left : [])]
    return Either.left(problems)
  }
  const c = decoded.right
  const name = c.name ?? path.basename(file).replace(/\.ya?ml$/, "")
  if (!isFolderName(name)) return Either.left([{ path: "name", reason: `the file's name gives the run the name ${JSON.stringify(name)}, which is not one folder name: ${folderNameHelp}; set name:` }])
  const models: Record<string, ModelEntry> = {}
  for (const [modelName, { provider, model, ...options }] of Object.entries(c.models)) models[modelName] = { provider, model, options }
  const cells = c.cells.map(({ name: cellName, transform, ...stages }): ExplicitCell => ({
    ...(cellName === undefined ? {} : { name: cellName }),
    stages,
    ...(transform === undefined ? {} : { transform })
  }))
  return Either.right({
    file,
    dir: path.dirname(path.resolve(file)),
    name,
    description: c.description,
    data: c.data,
    seed: c.seed,
    models,
    plugins: c.plugins,
    pipeline: c.pipeline,
    scorers: c.scorers,
    sweep: sweep.right,
    sources: sources.right,
    cells,
    concurrency: c.concurrency,
    transcripts: c.transcripts,
    maxCells: c.maxCells,
    ...(c.budget !== undefined ? { budget: c.budget } : {}),
    cacheDir: c.cacheDir,
    ...(c.referenceDir !== undefined ? { referenceDir: c.referenceDir } : {}),
    out: c.out ?? path.join("runs", name),
    outGiven: c.out !== undefined,
    report: c.report,
    bootstrap: c.bootstrap
  })
}

export interface Overrides {
  readonly data?: string
  readonly out?: string
  readonly limit?: number
  readonly concurrency?: number
  readonly types?: ReadonlyArray<Domain.InstanceType>
  readonly maxCells?: number
  readonly budgetUsd?: number
}

/** Apply command-line overrides (`--data`, `--out`, `--limit`, `--concurrency`, `--types`, `--max-cells`, `--budget-usd`). */
export const withOverrides = (config: Config, o: Overrides): Config => ({
  ...config,
  data: {
    ...config.data,
    ...(o.data !== undefined ? { source: o.data } : {}),
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
    ...(o.types !== undefined ? { types: o.types } : {})
  },
  ...(o.data !== undefined ? { sources: [] } : {}),
  ...(o.out !== undefined ? { out: o.out, outGiven: true } : {}),
  ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
  ...(o.maxCells !== undefined ? { maxCells: o.maxCells } : {}),
  ...(o.budgetUsd !== undefined ? { budget: { usd: o.budgetUsd } } : {})
})

/**
 * Hash of everything in a config that can change results (not `out`, `concurrency`, `transcripts`, `maxCells`, `budget`,
 * `cacheDir`, `referenceDir`, `description` or `report`, whose baseline and main metric only change
 * how the reports present the results), after interpolation and overrides. Sweep axes are hashed
 * as written (key and alternatives), so the hash is the same as before axes were decoded.
 */
export const hash = (config: Config): string =>
  Hash.contentHash({
    name: config.name,
    data: config.data,
    seed: config.seed,
    models: config.models,
    plugins: config.plugins,
    pipeline: config.pipeline,
    scorers: config.scorers,
    sweep: config.sweep.map((axis) => ({ key: axis.key, alternatives: axis.alternatives })),
    cells: config.cells,
    bootstrap: config.bootstrap
  })
