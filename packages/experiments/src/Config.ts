/**
 * Sweep configs: YAML files that name a dataset, models, a base pipeline, sweep axes, explicit
 * cells and scorers (see docs/config.md for every key).
 *
 * Loading checks everything that can be checked without the plugin registry: YAML syntax (with
 * line and column), unknown keys, value types, `${ENV}` interpolation, secrets written into the
 * file, and the shape of stage specs and sweep axes. Plugin names and options are checked by
 * {@link Grid.expand}, which needs the registry.
 *
 * @example
 * import { Config } from "@cupid-lab/experiments"
 * const config = yield* Config.load("configs/contextual.yaml")
 * config.pipeline.retriever // { use: "context-factor", strategy: "offline" }
 */
import { Domain, Hash, Transform } from "@cupid-lab/core"
import { Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import YAML from "yaml"
import { ConfigError } from "./Errors.js"
import * as Issues from "./internal/Issues.js"
import { formatPath, isRecord, type PathSegment, show } from "./internal/Tree.js"

export type StageName = "retriever" | "summarizer" | "inferrer" | "generator"
export const stageNames: ReadonlyArray<StageName> = ["retriever", "summarizer", "inferrer", "generator"]

/** A plugin reference: its name and raw (not yet decoded) options. */
export interface Spec {
  readonly use: string
  readonly [option: string]: unknown
}

/** A stage of a cell: a spec, or `null` for "no such stage". */
export type StageValue = Spec | null

export interface ModelEntry {
  readonly provider: string
  readonly model: string
  /** Every other key of the entry: the provider plugin's options. */
  readonly options: Readonly<Record<string, unknown>>
}

export interface SweepAxis {
  /** `retriever`, or a dotted option path such as `retriever.k` or `retriever.embedder.dims`. */
  readonly key: string
  /** Raw alternatives, expanded by the grid (lists inside them expand too). */
  readonly alternatives: ReadonlyArray<unknown>
}

export interface ExplicitCell {
  readonly name?: string
  readonly stages: Readonly<Partial<Record<StageName, StageValue>>>
  /** The cell's history transform, replacing `data.transform` (raw, decoded by the grid). */
  readonly transform?: unknown
}

/** The sweep axis (and explicit-cell key) that sets the history transform: `transform` or `transform.<part>`. */
export const transformKey = "transform"

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
  readonly cells: ReadonlyArray<ExplicitCell>
  readonly concurrency: number
  readonly cacheDir: string
  readonly out: string
  readonly report: { readonly baseline?: string }
  readonly bootstrap: { readonly resamples: number }
}

const PositiveInt = Schema.Int.pipe(Schema.positive())
const Loose = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const FileSchema = Schema.Struct({
  name: Schema.optional(Schema.String),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  data: Schema.optionalWith(
    Schema.Struct({
      source: Schema.optionalWith(Schema.String, { default: () => "sample" }),
      types: Schema.optionalWith(Schema.Array(Domain.InstanceType), { exact: true }),
      limit: Schema.optionalWith(PositiveInt, { exact: true }),
      onInvalid: Schema.optionalWith(Schema.Literal("fail", "skip"), { default: () => "fail" as const }),
      transform: Schema.optionalWith(Transform.Spec, { exact: true })
    }),
    { default: () => ({ source: "sample", onInvalid: "fail" as const }) }
  ),
  seed: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  models: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Loose }), { default: () => ({}) }),
  plugins: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  pipeline: Schema.optionalWith(
    Schema.Struct({
      retriever: Schema.optional(Schema.Unknown),
      summarizer: Schema.optional(Schema.Unknown),
      inferrer: Schema.optional(Schema.Unknown),
      generator: Schema.optional(Schema.Unknown)
    }),
    { default: () => ({}) }
  ),
  scorers: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [] }),
  sweep: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), { default: () => ({}) }),
  cells: Schema.optionalWith(Schema.Array(Loose), { default: () => [] }),
  concurrency: Schema.optionalWith(PositiveInt, { default: () => 4 }),
  cacheDir: Schema.optionalWith(Schema.String, { default: () => ".cache/models" }),
  out: Schema.optional(Schema.String),
  report: Schema.optionalWith(Schema.Struct({ baseline: Schema.optionalWith(Schema.String, { exact: true }) }), { default: () => ({}) }),
  bootstrap: Schema.optionalWith(Schema.Struct({ resamples: Schema.optionalWith(PositiveInt, { default: () => 1000 }) }), {
    default: () => ({ resamples: 1000 })
  })
})

export const topLevelKeys: ReadonlyArray<string> = Object.keys(FileSchema.fields).sort()

/** Where the providers read their keys from when the entry does not say (`apiKeyEnv`). */
const defaultKeyEnv: Readonly<Record<string, string>> = { openai: "OPENAI_API_KEY", cohere: "CO_API_KEY" }

/** Key names that hold credentials: compared without case, `_` or `-`. */
const looksSecret = (key: string): boolean => {
  const k = key.toLowerCase().replace(/[_-]/g, "")
  return ["token", "accesstoken", "authtoken", "bearertoken", "passwd"].includes(k) ||
    k.endsWith("apikey") || k.endsWith("secret") || k.endsWith("password")
}

type Fail = (path: ReadonlyArray<PathSegment>, reason: string) => ConfigError

/** Parse and validate a config from its text. `env` supplies `${VAR}` values. */
export const parse = (
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Config, ConfigError> =>
  Effect.suspend(() => {
    const fail: Fail = (p, reason) => new ConfigError({ file, path: formatPath(p), reason })
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true })
    const syntax = doc.errors[0]
    if (syntax !== undefined) {
      const pos = syntax.linePos?.[0]
      return Effect.fail(
        new ConfigError({
          file,
          path: "",
          reason: `YAML syntax error: ${syntax.message.split(" at line ")[0]}`,
          line: pos?.line ?? 1,
          column: pos?.col ?? 1
        })
      )
    }
    const raw: unknown = doc.toJS({ maxAliasCount: 1000 })
    if (raw === null || raw === undefined) return Effect.fail(fail([], "the file is empty; a config needs at least a pipeline"))
    if (!isRecord(raw)) return Effect.fail(fail([], `expected a mapping of keys (${topLevelKeys.join(", ")}) at the top level`))
    return Effect.try({
      try: () => build(raw, file, env, fail),
      catch: (e) => (e instanceof ConfigError ? e : fail([], String(e)))
    })
  })

/** Read and parse a config file. */
export const load = (
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Effect.Effect<Config, ConfigError> =>
  Effect.flatMap(
    Effect.try({
      try: () => fs.readFileSync(file, "utf8"),
      catch: (e) => new ConfigError({ file, path: "", reason: `cannot read the config: ${(e as Error).message}` })
    }),
    (text) => parse(text, file, env)
  )

/**
 * A `--config` argument: a path, or a bare name looked up in `configsDir` (`contextual` or
 * `contextual.yaml` -> `configs/contextual.yaml`).
 */
export const resolveFile = (arg: string, configsDir: string): string => {
  if (fs.existsSync(arg)) return arg
  const candidates = [arg, `${arg}.yaml`, `${arg}.yml`].map((n) => path.join(configsDir, n))
  return candidates.find((c) => fs.existsSync(c)) ?? arg
}

const build = (
  raw: Record<string, unknown>,
  file: string,
  env: Readonly<Record<string, string | undefined>>,
  fail: Fail
): Config => {
  rejectSecrets(raw, fail)
  const resolved = interpolate(raw, [], env, fail) as Record<string, unknown>
  const decoded = Issues.decode(FileSchema, resolved, "key")
  if (Either.isLeft(decoded)) {
    const issue = decoded.left[0]!
    if (issue.path.length === 0 && issue.message.startsWith("unknown key")) {
      throw fail([], issue.message.replace("unknown key", "unknown top-level key"))
    }
    throw fail(issue.path as Array<PathSegment>, issue.message)
  }
  const c = decoded.right
  const name = c.name ?? path.basename(file).replace(/\.ya?ml$/, "")

  const models: Record<string, ModelEntry> = {}
  for (const [modelName, entry] of Object.entries(c.models)) {
    const { provider, model, ...options } = entry
    if (typeof provider !== "string") throw fail(["models", modelName, "provider"], `expected the name of a provider plugin, got ${show(provider)}`)
    if (typeof model !== "string") throw fail(["models", modelName, "model"], `expected the provider's model id, got ${show(model)}`)
    models[modelName] = { provider, model, options }
  }

  const pipeline = {} as Record<StageName, StageValue>
  for (const stage of stageNames) pipeline[stage] = stageValue(c.pipeline[stage] ?? null, ["pipeline", stage], fail)

  const scorers = c.scorers.map((s, i) => {
    const spec = stageValue(s, ["scorers", i], fail)
    if (spec === null) throw fail(["scorers", i], "expected a scorer ({ use: <name>, ...options })")
    return spec
  })

  const sweep: Array<SweepAxis> = Object.entries(c.sweep).map(([key, alternatives]) => {
    const [stage, ...rest] = key.split(".")
    if (stage === transformKey) {
      if (rest.length > 1 || (rest.length === 1 && !(Transform.keys as ReadonlyArray<string>).includes(rest[0]!))) {
        throw fail(["sweep", key], `unknown transform axis; use transform or transform.<part> with part one of ${Transform.keys.join(", ")}`)
      }
    } else if (!(stageNames as ReadonlyArray<string>).includes(stage!) || key.split(".").some((s) => s === "")) {
      throw fail(["sweep", key], `unknown sweep axis; an axis is a stage (${stageNames.join(", ")}), a dotted option path such as retriever.k, or the history transform (transform, transform.pad, ...)`)
    }
    if (!Array.isArray(alternatives) || alternatives.length === 0) {
      throw fail(["sweep", key], `expected a non-empty list of alternatives, got ${show(alternatives)}`)
    }
    return { key, alternatives }
  })

  const cells = c.cells.map((cell, i): ExplicitCell => {
    const stages: Partial<Record<StageName, StageValue>> = {}
    let cellName: string | undefined
    let transform: unknown
    for (const [key, value] of Object.entries(cell)) {
      if (key === transformKey) {
        transform = value
      } else if (key === "name") {
        if (typeof value !== "string" || value === "") throw fail(["cells", i, "name"], `expected a non-empty string, got ${show(value)}`)
        cellName = value
      } else if ((stageNames as ReadonlyArray<string>).includes(key)) {
        stages[key as StageName] = stageValue(value, ["cells", i, key], fail)
      } else {
        throw fail(["cells", i], `unknown key "${key}"; valid keys: name, ${stageNames.join(", ")}, ${transformKey}`)
      }
    }
    return { ...(cellName === undefined ? {} : { name: cellName }), stages, ...(transform === undefined ? {} : { transform }) }
  })

  return {
    file,
    dir: path.dirname(path.resolve(file)),
    name,
    description: c.description,
    data: c.data,
    seed: c.seed,
    models,
    plugins: c.plugins,
    pipeline,
    scorers,
    sweep,
    cells,
    concurrency: c.concurrency,
    cacheDir: c.cacheDir,
    out: c.out ?? path.join("runs", name),
    report: c.report,
    bootstrap: c.bootstrap
  }
}

/** `null` (no stage), a bare plugin name (shorthand for `{ use: name }`), or `{ use, ...options }`. */
const stageValue = (value: unknown, at: ReadonlyArray<PathSegment>, fail: Fail): StageValue => {
  if (value === null) return null
  if (typeof value === "string") return { use: value }
  if (!isRecord(value)) throw fail(at, `expected { use: <plugin name>, ...options } or null, got ${show(value)}`)
  if (!("use" in value)) throw fail(at, `missing "use" (the plugin name)`)
  if (typeof value.use !== "string") throw fail([...at, "use"], `expected a plugin name, got ${show(value.use)}`)
  return value as Spec
}

const rejectSecrets = (root: Record<string, unknown>, fail: Fail): void => {
  const walk = (value: unknown, at: Array<PathSegment>): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...at, i]))
    else if (isRecord(value)) {
      for (const [key, v] of Object.entries(value)) {
        if (looksSecret(key)) throw fail([...at, key], `secrets do not belong in config files; ${secretAdvice(root, at)}`)
        walk(v, [...at, key])
      }
    }
  }
  walk(root, [])
}

const secretAdvice = (root: Record<string, unknown>, at: ReadonlyArray<PathSegment>): string => {
  // Inside `models.<name>` the provider is known, and so is the variable it reads.
  const entry = at[0] === "models" && at.length === 2 && isRecord(root.models) ? root.models[String(at[1])] : undefined
  if (isRecord(entry)) {
    const variable = typeof entry.apiKeyEnv === "string"
      ? entry.apiKeyEnv
      : typeof entry.provider === "string"
      ? defaultKeyEnv[entry.provider] ?? `${entry.provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`
      : "OPENAI_API_KEY"
    return `set the environment variable ${variable} instead`
  }
  return "set it in the environment variable the provider reads (e.g. OPENAI_API_KEY) instead"
}

const envPattern = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

/** `${VAR}`, `${VAR:-default}` (default also when VAR is empty), `$$` for a literal `$`. */
export const interpolateString = (
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  onMissing: (name: string) => never
): string =>
  text.replace(envPattern, (match, name: string | undefined, fallback: string | undefined) => {
    if (match === "$$") return "$"
    const value = env[name!]
    if (fallback !== undefined) return value === undefined || value === "" ? fallback : value
    if (value === undefined) return onMissing(name!)
    return value
  })

const interpolate = (
  value: unknown,
  at: Array<PathSegment>,
  env: Readonly<Record<string, string | undefined>>,
  fail: Fail
): unknown => {
  if (typeof value === "string") {
    return interpolateString(value, env, (name) => {
      throw fail(at, `environment variable ${name} is not set (write \${${name}:-default} to give a default)`)
    })
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, [...at, i], env, fail))
  if (isRecord(value)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, [...at, k], env, fail)
    return out
  }
  return value
}

export interface Overrides {
  readonly data?: string
  readonly out?: string
  readonly limit?: number
  readonly concurrency?: number
  readonly types?: ReadonlyArray<Domain.InstanceType>
}

/** Apply command-line overrides (`--data`, `--out`, `--limit`, `--concurrency`, `--types`). */
export const withOverrides = (config: Config, o: Overrides): Config => ({
  ...config,
  data: {
    ...config.data,
    ...(o.data !== undefined ? { source: o.data } : {}),
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
    ...(o.types !== undefined ? { types: o.types } : {})
  },
  ...(o.out !== undefined ? { out: o.out } : {}),
  ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {})
})

/**
 * Hash of everything in a config that can change results (not `out`, `concurrency`, `cacheDir` or
 * `description`), after interpolation and overrides.
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
    sweep: config.sweep,
    cells: config.cells,
    report: config.report,
    bootstrap: config.bootstrap
  })
