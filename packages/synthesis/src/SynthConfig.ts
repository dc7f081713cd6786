/**
 * `synth.yaml`: what a synthesis generates and with which models. Decoded once, here, with Effect
 * Schema; every problem names the file and the key path. `${VAR}` and `${VAR:-default}` in values
 * are read from the environment (endpoints, model ids); keys that look like secrets are refused
 * (API keys come from the environment variable each provider reads).
 *
 * @example
 * import { SynthConfig } from "@cupid-lab/synthesis"
 * const config = yield* SynthConfig.load("configs/synth.yaml")
 * config.roles.user.model // "simulator"
 */
import { Issues, Yaml } from "@cupid-lab/core"
import { Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SynthConfigError } from "./Errors.js"

const PositiveInt = Schema.Int.pipe(Schema.positive({ message: () => "expected a whole number > 0" }))

/** One `models:` entry: a provider plugin, its model id, and the provider's options (baseURL, rpm, ...). */
const ModelEntry = Schema.Struct(
  { provider: Schema.String, model: Schema.String },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/** The roles that call models. */
export const roles = ["persona", "factors", "sessions", "checklist", "user", "assistant", "validator"] as const
export type Role = (typeof roles)[number]

const RoleSpec = Schema.Struct({
  model: Schema.String,
  temperature: Schema.optional(Schema.Number.pipe(Schema.between(0, 2))),
  maxTokens: Schema.optional(PositiveInt)
})
const RoleValue = Schema.Union(Schema.String, RoleSpec)

const defaultTemperature: Record<Role, number> = {
  persona: 0.7,
  factors: 0.7,
  sessions: 0.7,
  checklist: 0,
  user: 0.3,
  assistant: 0.7,
  validator: 0
}
const defaultMaxTokens: Record<Role, number> = {
  persona: 400,
  factors: 2000,
  sessions: 1200,
  checklist: 300,
  user: 300,
  assistant: 400,
  validator: 200
}

const Price = Schema.Struct({ prompt: Schema.NonNegative, completion: Schema.NonNegative })

const FileSchema = Schema.Struct({
  seed: Schema.optionalWith(Schema.Int, { default: () => 0 }),
  out: Schema.optionalWith(Schema.String, { default: () => "runs/synth" }),
  cacheDir: Schema.optionalWith(Schema.String, { default: () => ".cache/models" }),
  prompts: Schema.optional(Schema.String),
  models: Schema.Record({ key: Schema.String, value: ModelEntry }),
  roles: Schema.Struct({
    persona: RoleValue,
    factors: Schema.optional(RoleValue),
    sessions: Schema.optional(RoleValue),
    checklist: Schema.optional(RoleValue),
    user: RoleValue,
    assistant: RoleValue,
    validator: Schema.optional(RoleValue)
  }),
  personas: Schema.optionalWith(
    Schema.Struct({
      count: Schema.optionalWith(PositiveInt, { default: () => 252 }),
      seeds: Schema.optional(Schema.Array(Schema.NonEmptyString)),
      seedsFile: Schema.optional(Schema.String)
    }),
    { default: () => ({ count: 252 }) }
  ),
  factors: Schema.optionalWith(Schema.Struct({ count: Schema.optionalWith(PositiveInt, { default: () => 8 }) }), {
    default: () => ({ count: 8 })
  }),
  sessions: Schema.optionalWith(
    Schema.Struct({
      length: Schema.optionalWith(PositiveInt, { default: () => 13 }),
      original: Schema.optionalWith(PositiveInt, { default: () => 2 }),
      changed: Schema.optionalWith(PositiveInt, { default: () => 2 }),
      contrastive: Schema.optionalWith(PositiveInt, { default: () => 2 })
    }),
    { default: () => ({ length: 13, original: 2, changed: 2, contrastive: 2 }) }
  ),
  dialogue: Schema.optionalWith(
    Schema.Struct({
      maxTurns: Schema.optionalWith(PositiveInt, { default: () => 16 }),
      dryRunTurns: Schema.optionalWith(PositiveInt, { default: () => 3 })
    }),
    { default: () => ({ maxTurns: 16, dryRunTurns: 3 }) }
  ),
  concurrency: Schema.optionalWith(
    Schema.Struct({
      personas: Schema.optionalWith(PositiveInt, { default: () => 4 }),
      sessions: Schema.optionalWith(PositiveInt, { default: () => 4 })
    }),
    { default: () => ({ personas: 4, sessions: 4 }) }
  ),
  validation: Schema.optionalWith(
    Schema.Struct({ modelCheck: Schema.optionalWith(Schema.Boolean, { default: () => false }) }),
    {
      default: () => ({ modelCheck: false })
    }
  ),
  prices: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Price }), { default: () => ({}) }),
  output: Schema.optionalWith(
    Schema.Struct({
      jsonl: Schema.optionalWith(Schema.Boolean, { default: () => true }),
      parquet: Schema.optionalWith(Schema.Boolean, { default: () => true })
    }),
    { default: () => ({ jsonl: true, parquet: true }) }
  )
})

export interface RoleSettings {
  readonly model: string
  readonly temperature: number
  readonly maxTokens: number
}

export interface ModelSpec {
  readonly provider: string
  readonly model: string
  /** The provider's own options (baseURL, apiKeyEnv, rpm, maxRetries, ...). */
  readonly options: Readonly<Record<string, unknown>>
}

export interface Config {
  readonly file: string
  readonly seed: number
  /** Resolved against the working directory. */
  readonly out: string
  readonly cacheDir: string
  /** A directory whose `<stage>.md` files replace the bundled prompts; absent: the bundled ones. */
  readonly prompts: string | undefined
  readonly models: Readonly<Record<string, ModelSpec>>
  readonly roles: Readonly<Record<Role, RoleSettings>>
  readonly personas: { readonly count: number; readonly seeds: ReadonlyArray<string> | undefined }
  readonly factors: { readonly count: number }
  readonly sessions: {
    readonly length: number
    readonly original: number
    readonly changed: number
    readonly contrastive: number
  }
  readonly dialogue: { readonly maxTurns: number; readonly dryRunTurns: number }
  readonly concurrency: { readonly personas: number; readonly sessions: number }
  readonly validation: { readonly modelCheck: boolean }
  readonly prices: Readonly<Record<string, { readonly prompt: number; readonly completion: number }>>
  readonly output: { readonly jsonl: boolean; readonly parquet: boolean }
}

interface Problem {
  readonly path: string
  readonly reason: string
}

const formatPath = (p: ReadonlyArray<PropertyKey>): string =>
  p.reduce<string>(
    (out, k) => (typeof k === "number" ? `${out}[${k}]` : out === "" ? String(k) : `${out}.${String(k)}`),
    ""
  )

const looksSecret = (key: string): boolean => {
  const k = key.toLowerCase().replace(/[_-]/g, "")
  return k.endsWith("apikey") || k.endsWith("secret") || k.endsWith("password") || k === "token"
}

const envPattern = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g

const interpolate = (
  value: unknown,
  at: ReadonlyArray<PropertyKey>,
  env: Readonly<Record<string, string | undefined>>,
  problems: Array<Problem>
): unknown => {
  if (typeof value === "string") {
    return value.replace(envPattern, (whole, name: string | undefined, fallback: string | undefined) => {
      if (whole === "$$") return "$"
      const v = env[name!]
      if (v !== undefined && v !== "") return v
      if (fallback !== undefined) return fallback
      problems.push({
        path: formatPath(at),
        reason: `the environment variable ${name} is not set (write \${${name}:-default} for a default)`
      })
      return ""
    })
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, [...at, i], env, problems))
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      if (looksSecret(k)) {
        problems.push({
          path: formatPath([...at, k]),
          reason:
            "secrets do not belong in config files; set the environment variable the provider reads (e.g. OPENAI_API_KEY)"
        })
      } else out[k] = interpolate(v, [...at, k], env, problems)
    }
    return out
  }
  return value
}

const fail = (file: string, problems: ReadonlyArray<Problem>): SynthConfigError => {
  const [first, ...rest] = problems
  return new SynthConfigError({
    file,
    path: first?.path ?? "",
    reason: (first?.reason ?? "invalid") + rest.map((p) => `\n${file}: ${p.path}: ${p.reason}`).join("")
  })
}

/** Parse and validate a config from its text; `file` names it in errors and anchors relative paths. */
export const parse = (
  text: string,
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Either.Either<Config, SynthConfigError> => {
  const read = Yaml.read(text)
  if (Either.isLeft(read)) {
    const { path: at, reason, line, column } = read.left
    return Either.left(fail(file, [{ path: `line ${line}, column ${column}${at === "" ? "" : `, ${at}`}`, reason }]))
  }
  const raw = read.right
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return Either.left(fail(file, [{ path: "", reason: "expected a mapping with at least models: and roles:" }]))
  }
  const problems: Array<Problem> = []
  const resolved = interpolate(raw, [], env, problems)
  if (problems.length > 0) return Either.left(fail(file, problems))
  // Unknown keys are reported with the valid ones and a suggestion, as in sweep configs.
  const decoded = Issues.decode(FileSchema, resolved, "key", "top-level key")
  if (Either.isLeft(decoded))
    return Either.left(
      fail(
        file,
        decoded.left.map((i) => ({ path: formatPath(i.path), reason: i.message }))
      )
    )
  const c = decoded.right
  const dir = path.dirname(path.resolve(file))
  const rel = (p: string) => path.resolve(dir, p)
  const models: Record<string, ModelSpec> = {}
  for (const [name, { provider, model, ...options }] of Object.entries(c.models))
    models[name] = { provider, model, options }
  const checks: Array<Problem> = []
  const role = (r: Role, value: typeof RoleValue.Type | undefined, fallback: Role): RoleSettings => {
    // An unset role uses the model of the role it falls back to (persona); its own defaults stay.
    const v = value ?? c.roles.persona
    const spec = typeof v === "string" ? { model: v } : v
    if (!Object.hasOwn(models, spec.model)) {
      checks.push({
        path: `roles.${value === undefined ? fallback : r}${typeof v === "string" ? "" : ".model"}`,
        reason: `unknown model "${spec.model}"; valid choices: ${Object.keys(models).sort().join(", ") || "none (add it under models:)"}`
      })
    }
    return {
      model: spec.model,
      temperature: spec.temperature ?? defaultTemperature[r],
      maxTokens: spec.maxTokens ?? defaultMaxTokens[r]
    }
  }
  const roleSettings: Record<Role, RoleSettings> = {
    persona: role("persona", c.roles.persona, "persona"),
    factors: role("factors", c.roles.factors, "persona"),
    sessions: role("sessions", c.roles.sessions, "persona"),
    checklist: role("checklist", c.roles.checklist, "persona"),
    user: role("user", c.roles.user, "user"),
    assistant: role("assistant", c.roles.assistant, "assistant"),
    validator: role("validator", c.roles.validator, "persona")
  }
  const s = c.sessions
  const fixed = s.original + s.changed + s.contrastive
  if (s.length - 1 <= fixed) {
    checks.push({
      path: "sessions.length",
      reason: `expected more than ${fixed + 1} (the current factor's ${s.original + s.changed} sessions, the contrastive factor's ${s.contrastive}, at least one other, and the last session), found ${s.length}`
    })
  } else if (s.length - 1 - fixed < Math.max(s.changed, s.contrastive)) {
    checks.push({
      path: "sessions.length",
      reason: `too short: the instances drop ${Math.max(s.changed, s.contrastive)} sessions of other factors, and only ${s.length - 1 - fixed} exist`
    })
  }
  if (c.factors.count < 3)
    checks.push({
      path: "factors.count",
      reason: `expected at least 3 (a contrastive pair and one other factor), found ${c.factors.count}`
    })
  let seeds = c.personas.seeds
  if (c.personas.seedsFile !== undefined) {
    if (seeds !== undefined) checks.push({ path: "personas.seedsFile", reason: "give seeds or seedsFile, not both" })
    try {
      seeds = fs
        .readFileSync(rel(c.personas.seedsFile), "utf8")
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l !== "" && !l.startsWith("#"))
    } catch (e) {
      checks.push({
        path: "personas.seedsFile",
        reason: `cannot read ${rel(c.personas.seedsFile)} (${e instanceof Error ? e.message : String(e)})`
      })
    }
  }
  if (seeds !== undefined && seeds.length === 0)
    checks.push({ path: "personas.seeds", reason: "expected at least one seed description" })
  if (checks.length > 0) return Either.left(fail(file, checks))
  return Either.right({
    file,
    seed: c.seed,
    out: path.resolve(c.out),
    cacheDir: path.resolve(c.cacheDir),
    prompts: c.prompts === undefined ? undefined : rel(c.prompts),
    models,
    roles: roleSettings,
    personas: { count: c.personas.count, seeds },
    factors: c.factors,
    sessions: s,
    dialogue: c.dialogue,
    concurrency: c.concurrency,
    validation: c.validation,
    prices: c.prices,
    output: c.output
  })
}

/** Read and validate a config file. */
export const load = (
  file: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): Either.Either<Config, SynthConfigError> => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch (e) {
    return Either.left(
      new SynthConfigError({
        file,
        path: "",
        reason: `cannot read the config (${e instanceof Error ? e.message : String(e)})`
      })
    )
  }
  return parse(text, file, env)
}

/** The same config with a few values replaced (CLI flags, tests). */
export const withOverrides = (
  config: Config,
  o: { readonly out?: string; readonly personas?: number; readonly cacheDir?: string }
): Config => ({
  ...config,
  ...(o.out !== undefined ? { out: path.resolve(o.out) } : {}),
  ...(o.cacheDir !== undefined ? { cacheDir: path.resolve(o.cacheDir) } : {}),
  ...(o.personas !== undefined ? { personas: { ...config.personas, count: o.personas } } : {})
})
