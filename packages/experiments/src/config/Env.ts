/**
 * What a config takes from the environment: `${VAR}` values, and the rule that keeps secrets out of
 * config files (a key whose name says credential is refused, naming the variable to use instead).
 *
 * @example
 * Env.interpolate({ out: "${HOME}/runs" }, [], process.env, unset) // { out: "/home/me/runs" }
 */
import type { ModelEntry } from "./Config.js"
import type * as Issues from "@cupid-lab/core/Issues"
import { formatPath, isRecord, type PathSegment } from "./Tree.js"

/** A problem at a key path, before it becomes part of a ConfigError. */
export interface Problem {
  readonly path: string
  readonly reason: string
}

/** Schema issues as problems at their key paths (under `prefix`). */
export const fromIssues = (issues: ReadonlyArray<Issues.Issue>, prefix: ReadonlyArray<PathSegment> = []): Array<Problem> =>
  issues.map((i) => ({ path: formatPath([...prefix, ...i.path]), reason: i.message }))

/** Where the providers read their keys from when the entry does not say (`apiKeyEnv`). */
const defaultKeyEnv: Readonly<Record<string, string>> = { openai: "OPENAI_API_KEY", cohere: "CO_API_KEY" }

/** Key names that hold credentials: compared without case, `_` or `-`. */
const looksSecret = (key: string): boolean => {
  const k = key.toLowerCase().replace(/[_-]/g, "")
  return ["token", "accesstoken", "authtoken", "bearertoken", "passwd"].includes(k) ||
    k.endsWith("apikey") || k.endsWith("secret") || k.endsWith("password")
}

export const findSecrets = (root: Readonly<Record<string, unknown>>): Array<Problem> => {
  const found: Array<Problem> = []
  const walk = (value: unknown, at: Array<PathSegment>): void => {
    if (Array.isArray(value)) value.forEach((v, i) => walk(v, [...at, i]))
    else if (isRecord(value)) {
      for (const [key, v] of Object.entries(value)) {
        if (looksSecret(key)) found.push({ path: formatPath([...at, key]), reason: `secrets do not belong in config files; ${secretAdvice(root, at)}` })
        else walk(v, [...at, key])
      }
    }
  }
  walk(root, [])
  return found
}

/** The environment variable a model entry's provider reads its key from; undefined for a provider that takes none. */
export const keyVariable = (entry: ModelEntry): string | undefined => {
  const named = entry.options["apiKeyEnv"]
  return typeof named === "string" ? named : defaultKeyEnv[entry.provider]
}

const secretAdvice = (root: Readonly<Record<string, unknown>>, at: ReadonlyArray<PathSegment>): string => {
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

/** Every string with `${VAR}`, `${VAR:-default}` (default also when VAR is empty) and `$$` replaced; unset variables go to `unset`. */
export const interpolate = (
  value: unknown,
  at: Array<PathSegment>,
  env: Readonly<Record<string, string | undefined>>,
  unset: Array<Problem>
): unknown => {
  if (typeof value === "string") {
    return value.replace(envPattern, (match, name: string | undefined, fallback: string | undefined) => {
      if (match === "$$") return "$"
      const found = env[name!]
      if (fallback !== undefined) return found === undefined || found === "" ? fallback : found
      if (found !== undefined) return found
      unset.push({ path: formatPath(at), reason: `environment variable ${name} is not set (write \${${name}:-default} to give a default)` })
      return ""
    })
  }
  if (Array.isArray(value)) return value.map((v, i) => interpolate(v, [...at, i], env, unset))
  if (isRecord(value)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = interpolate(v, [...at, k], env, unset)
    return out
  }
  return value
}
