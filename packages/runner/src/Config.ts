/**
 * Sweep configs: YAML files that name a dataset, models, a base pipeline, sweep axes, explicit cells
 * and scorers (docs/config.md has every key). Loading decodes the whole file once and reports every
 * problem at its key path; plugin names and options are checked by {@link Grid.expand}.
 *
 * @example
 * const config = yield* Config.load("configs/contextual.yaml")
 * config.pipeline.retriever // { use: "context-factor", strategy: "offline" }
 * config.sweep[0]           // { _tag: "Stage", key: "retriever", stage: "retriever", choices: [...], alternatives: [...] }
 */
import { Domain, Files, Hash, Stage, Yaml, Issues } from "@cupid-lab/core"
import { Transform } from "@cupid-lab/data"
import { ResultLine, RunDir } from "@cupid-lab/results"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Option, Predicate, Record as Rec, Schema, Struct } from "effect"
import * as path from "node:path"
import { ConfigError } from "./Errors.js"

import * as Axes from "./Axes.js"

const { isRecord } = Predicate

export type StageName = Stage.CellStage

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

/**
 * A sweep axis: its key (`retriever`, `retriever.k`, `transform`, `transform.pad`) and alternatives as
 * written (the config hash covers these), decoded by what the key varies: a whole stage (null removes
 * it), one option of the cells' stage, or the history transform (`whole`, or one part of it).
 */
export type SweepAxis = { readonly key: string; readonly alternatives: ReadonlyArray<unknown> } & (
  | { readonly _tag: "Stage"; readonly stage: StageName; readonly choices: ReadonlyArray<Axes.SpecTemplate | null> }
  | { readonly _tag: "Option"; readonly stage: StageName; readonly path: ReadonlyArray<string> }
  | { readonly _tag: "Transform"; readonly whole: boolean; readonly transforms: ReadonlyArray<Located<Transform.Spec>> }
  | { readonly _tag: "Models"; readonly role: string; readonly entries: ReadonlyArray<Located<string>> }
)

export interface Config extends Omit<typeof FileSchema.Type, "name" | "models" | "sweep" | "out"> {
  /** The file as the user named it, for messages. */
  readonly file: string
  /** Absolute directory of the file: `plugins:` paths are relative to it. */
  readonly dir: string
  readonly name: string
  readonly models: Readonly<Record<string, ModelEntry>>
  readonly sweep: ReadonlyArray<SweepAxis>
  /** `sweep: { data.source: [...] }`: one run per source, side by side in benchmarks.md; empty when not swept. */
  readonly sources: ReadonlyArray<string>
  /** The run directory when {@link outGiven} (config `out:` or `--out`), else the parent of `<run id>/` directories. */
  readonly out: string
  readonly outGiven: boolean
}

const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonEmptyString = Schema.String.pipe(Schema.minLength(1, { message: () => "expected a non-empty string" }))

const stageFields = Stage.byCellStage(() => Schema.optionalWith(Axes.StageValueSchema, { default: () => null }))

/**
 * An explicit cell: its stages replace the pipeline's, its transform `data.transform`, and `models`
 * binds model roles to `models:` entries (`{ subject: o3-mini }`).
 */
const CellSchema = Schema.Struct({
  name: Schema.optionalWith(NonEmptyString, { exact: true }),
  ...Stage.byCellStage(() => Schema.optionalWith(Axes.StageValueSchema, { exact: true })),
  transform: Schema.optionalWith(Transform.Spec, { exact: true }),
  models: Schema.optionalWith(Schema.Record({ key: Schema.String, value: NonEmptyString }), { exact: true })
})

const ModelEntrySchema = Schema.Struct(
  {
    provider: Schema.propertySignature(Schema.String).annotations({
      missingMessage: () => `missing "provider" (the name of a provider plugin)`
    }),
    model: Schema.propertySignature(Schema.String).annotations({
      missingMessage: () => `missing "model" (the provider's model id)`
    })
  },
  Axes.Options
)

/** A run's name is one folder of `runs/`: a name that could lead elsewhere (`../x`, `a/b`) is refused. */
const isFolderName = (name: string): boolean =>
  name !== "" && name !== "." && name !== ".." && name.length <= 128 && !/[/\\\u0000-\u001f\u007f]/.test(name)

const folderNameHelp = "a run's name is one folder name under runs/ (no / or \\, not . or .., at most 128 characters)"

const RunName = Schema.String.pipe(
  Schema.filter((name) => isFolderName(name) || `${JSON.stringify(name)} is not one folder name: ${folderNameHelp}`)
)

/** A mapping whose keys are all optional: when absent, the mapping of their defaults. */
const withDefaults = <A, I>(struct: Schema.Schema<A, I, never>) =>
  Schema.optionalWith(struct, { default: () => Schema.decodeUnknownSync(struct)({}) })

const FileSchema = Schema.Struct({
  name: Schema.optionalWith(RunName, { exact: true }),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  data: withDefaults(
    Schema.Struct({
      source: Schema.optionalWith(Schema.String, { default: () => "sample" }),
      types: Schema.optionalWith(Schema.Array(Domain.CupidType), { exact: true }),
      limit: Schema.optionalWith(PositiveInt, { exact: true }),
      onInvalid: Schema.optionalWith(Schema.Literal("fail", "skip"), { default: () => "fail" as const }),
      transform: Schema.optionalWith(Transform.Spec, { exact: true })
    })
  ),
  seed: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  models: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ModelEntrySchema }), { default: () => ({}) }),
  plugins: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  pipeline: withDefaults(Schema.Struct(stageFields)),
  scorers: Schema.optionalWith(Schema.Array(Axes.ScorerSpecSchema), { default: () => [] }),
  // The shape of each axis depends on its key: decoded by `Axes.decodeSweep`.
  sweep: Schema.optionalWith(Axes.Options, { default: () => ({}) }),
  cells: Schema.optionalWith(Schema.Array(CellSchema), { default: () => [] }),
  concurrency: Schema.optionalWith(PositiveInt, { default: () => 4 }),
  transcripts: Schema.optionalWith(Schema.Literal("full", "counts"), { default: () => "full" as const }),
  // The largest grid a sweep expands.
  maxCells: Schema.optionalWith(PositiveInt, { default: () => 10_000 }),
  budget: Schema.optionalWith(Schema.Struct({ usd: Schema.Number.pipe(Schema.positive()) }), { exact: true }),
  cacheDir: Schema.optionalWith(Schema.String, { default: () => ".cache/models" }),
  /** A checkout of the CUPID authors' repository, for `prompts: reference`. */
  referenceDir: Schema.optionalWith(Schema.String, { exact: true }),
  out: Schema.optionalWith(Schema.String, { exact: true }),
  report: withDefaults(
    Schema.Struct({
      baseline: Schema.optionalWith(Schema.String, { exact: true }),
      main: Schema.optionalWith(Schema.String, { exact: true }),
      ...ResultLine.Families.fields
    })
  ),
  bootstrap: withDefaults(
    Schema.Struct({
      resamples: Schema.optionalWith(PositiveInt, { default: () => 1000 }),
      // Instances from which statistics take their large-sample forms.
      largeSample: Schema.optionalWith(PositiveInt, { default: () => 2000 })
    })
  )
})

/** Where the providers read their keys from when the entry does not say (`apiKeyEnv`). */
const defaultKeyEnv: Readonly<Record<string, string>> = { openai: "OPENAI_API_KEY", cohere: "CO_API_KEY" }

/** Key names that hold credentials: compared without case, `_` or `-`. */
const looksSecret = (key: string): boolean => {
  const k = key.toLowerCase().replace(/[_-]/g, "")
  return (
    ["token", "accesstoken", "authtoken", "bearertoken", "passwd"].includes(k) ||
    k.endsWith("apikey") ||
    k.endsWith("secret") ||
    k.endsWith("password")
  )
}

/** The environment variable a model entry's provider reads its key from; undefined for a provider that takes none. */
export const keyVariable = (entry: ModelEntry): string | undefined => {
  const named = entry.options["apiKeyEnv"]
  return typeof named === "string" ? named : defaultKeyEnv[entry.provider]
}

const secretAdvice = (root: Readonly<Record<string, unknown>>, at: ReadonlyArray<PropertyKey>): string => {
  // Inside `models.<name>` the provider is known, and so is the variable it reads.
  const entry = at[0] === "models" && at.length === 2 && isRecord(root.models) ? root.models[String(at[1])] : undefined
  if (!isRecord(entry)) return "set it in the environment variable the provider reads (e.g. OPENAI_API_KEY) instead"
  const { apiKeyEnv, provider } = entry
  const variable =
    typeof apiKeyEnv === "string"
      ? apiKeyEnv
      : typeof provider === "string"
        ? (defaultKeyEnv[provider] ?? `${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`)
        : "OPENAI_API_KEY"
  return `set the environment variable ${variable} instead`
}

const envPattern = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/**
 * The config with every `${VAR}`, `${VAR:-default}` (default also when VAR is empty) and `$$` replaced.
 * Keys named like secrets are refused first, so a `${VAR}` holding a key is not one.
 */
const resolveEnv = (
  raw: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<Record<string, unknown>, Array<Axes.Problem>> => {
  const secrets: Array<Axes.Problem> = [],
    unset: Array<Axes.Problem> = []
  const entries = (value: Readonly<Record<string, unknown>>, at: ReadonlyArray<PropertyKey>) =>
    Rec.map(value, (v, key) => {
      if (!looksSecret(key)) return walk(v, [...at, key])
      secrets.push({
        path: RunDir.formatPath([...at, key]),
        reason: `secrets do not belong in config files; ${secretAdvice(raw, at)}`
      })
      return v
    })
  const walk = (value: unknown, at: ReadonlyArray<PropertyKey>): unknown => {
    if (Array.isArray(value)) return value.map((v, i) => walk(v, [...at, i]))
    if (isRecord(value)) return entries(value, at)
    if (typeof value !== "string") return value
    return value.replace(envPattern, (match, name: string | undefined, fallback: string | undefined) => {
      if (match === "$$") return "$"
      const found = env[name!]
      if (fallback !== undefined) return found === undefined || found === "" ? fallback : found
      if (found !== undefined) return found
      unset.push({
        path: RunDir.formatPath(at),
        reason: `environment variable ${name} is not set (write \${${name}:-default} to give a default)`
      })
      return ""
    })
  }
  const resolved = entries(raw, [])
  return secrets.length > 0 ? Either.left(secrets) : unset.length > 0 ? Either.left(unset) : Either.right(resolved)
}

/** Parse and validate a config from its text. `env` supplies `${VAR}` values. */
export const parse = (
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Config, ConfigError> =>
  Effect.suspend(() => {
    const read = Yaml.read(text)
    if (Either.isLeft(read)) {
      const { path: at, reason, line, column } = read.left
      return Effect.fail(
        new ConfigError({ file, path: "", reason: at === "" ? reason : `${at}: ${reason}`, line, column })
      )
    }
    const raw = read.right
    const fail = (reason: string) => Effect.fail(new ConfigError({ file, path: "", reason }))
    if (raw === null || raw === undefined) return fail("the file is empty; a config needs at least a pipeline")
    if (!isRecord(raw))
      return fail(`expected a mapping of keys (${Object.keys(FileSchema.fields).sort().join(", ")}) at the top level`)
    const problems = (found: ReadonlyArray<Axes.Problem>) => Effect.fail(ConfigError.all(file, found))
    const resolved = resolveEnv(raw, env)
    if (Either.isLeft(resolved)) return problems(resolved.left)
    const decoded = Issues.decode(FileSchema, resolved.right, "key", "top-level key")
    // `data.source` is swept by running the grid once per source (see `sources`), not as a grid axis.
    const { [Axes.sourceAxis]: sourcesRaw, ...axes } = isRecord(resolved.right.sweep) ? resolved.right.sweep : {}
    const sweep = Axes.decodeSweep(axes)
    const sources = Axes.decodeSources(sourcesRaw)
    if (Either.isLeft(decoded) || Either.isLeft(sweep) || Either.isLeft(sources)) {
      const parts: ReadonlyArray<Either.Either<unknown, Array<Axes.Problem>>> = [
        Either.mapLeft(decoded, Axes.fromIssues),
        sweep,
        sources
      ]
      return problems(parts.flatMap((part) => (Either.isLeft(part) ? part.left : [])))
    }
    const c = decoded.right
    const name = c.name ?? path.basename(file).replace(/\.ya?ml$/, "")
    if (!isFolderName(name)) {
      return problems([
        {
          path: "name",
          reason: `the file's name gives the run the name ${JSON.stringify(name)}, which is not one folder name: ${folderNameHelp}; set name:`
        }
      ])
    }
    return Effect.succeed({
      ...c,
      file,
      dir: path.dirname(path.resolve(file)),
      name,
      models: Rec.map(c.models, ({ provider, model, ...options }) => ({ provider, model, options })),
      sweep: sweep.right,
      sources: sources.right,
      out: c.out ?? path.join("runs", name),
      outGiven: c.out !== undefined
    })
  })

export const load = (
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Config, ConfigError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
    Effect.mapError(
      (e) =>
        new ConfigError({
          file,
          path: "",
          reason: `cannot read the config: ${e.cause instanceof Error ? e.cause.message : e.message}`
        })
    ),
    Effect.flatMap((text) => parse(text, file, env))
  )

/** A `--config` argument: a path, or a bare name looked up in `configsDir` (`contextual` -> `configs/contextual.yaml`). */
export const resolveFile = (arg: string, configsDir: string): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const exists = (file: string) => Files.exists(fs, file)
    if (yield* exists(arg)) return arg
    const candidates = [arg, `${arg}.yaml`, `${arg}.yml`].map((n) => path.join(configsDir, n))
    return (yield* Effect.findFirst(candidates, exists)).pipe(Option.getOrElse(() => arg))
  })

export interface Overrides {
  readonly data?: string
  readonly out?: string
  readonly limit?: number
  readonly concurrency?: number
  readonly types?: ReadonlyArray<Domain.CupidType>
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
 * Hash of everything in a config that can change results, after interpolation and overrides: not
 * `out`, `concurrency`, `transcripts`, `maxCells`, `budget`, `cacheDir`, `referenceDir`,
 * `description` or `report` (how reports present the results). Sweep axes are hashed as written.
 */
export const hash = (config: Config): string =>
  Hash.contentHash({
    ...Struct.pick(config, "name", "data", "seed", "models", "plugins", "pipeline", "scorers", "bootstrap"),
    sweep: config.sweep.map((axis) => ({ key: axis.key, alternatives: axis.alternatives })),
    // An explicit cell's stages are hashed apart from its name and transform, as run ids always were.
    cells: config.cells.map(({ name, transform, ...stages }) => ({
      ...(name === undefined ? {} : { name }),
      stages,
      ...(transform === undefined ? {} : { transform })
    }))
  })
