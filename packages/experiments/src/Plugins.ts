/**
 * The plugin registry of a sweep: every package's built-in plugins plus the user modules a config
 * lists under `plugins:` (paths relative to the config file; the default export is one plugin or
 * an array of plugins). This is how a researcher adds a retriever without touching the packages.
 *
 * @example
 * // configs/mine.yaml: plugins: [./plugins/newest.ts]
 * import { Plugins } from "@cupid-lab/experiments"
 * const registry = yield* Plugins.registry(config)
 * registry.names("retriever") // ["all", "bm25", ..., "newest"]
 */
import { Builtins as CoreBuiltins, Plugin } from "@cupid-lab/core"
import { Builtins as ProviderBuiltins } from "@cupid-lab/providers"
import { Builtins as RetrieverBuiltins } from "@cupid-lab/retrievers"
import { Builtins as ScorerBuiltins } from "@cupid-lab/scorers"
import { Effect, Schema } from "effect"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { Config } from "./Config.js"
import { ConfigError } from "./Errors.js"

/** Every plugin the packages ship. */
export const builtins = (): ReadonlyArray<Plugin.AnyPlugin> => [
  ...CoreBuiltins.plugins,
  ...RetrieverBuiltins.plugins,
  ...ScorerBuiltins.plugins,
  ...ProviderBuiltins.plugins
]

const isPlugin = (value: unknown): value is Plugin.AnyPlugin => {
  if (value === null || typeof value !== "object") return false
  const p = value as Record<string, unknown>
  return (Plugin.stages as ReadonlyArray<unknown>).includes(p.stage) && typeof p.name === "string" &&
    Schema.isSchema(p.options) && typeof p.make === "function"
}

/** Import the modules a config lists under `plugins:`. */
export const loadUserPlugins = (config: Config): Effect.Effect<ReadonlyArray<Plugin.AnyPlugin>, ConfigError> =>
  Effect.forEach(config.plugins, (file, i) =>
    Effect.gen(function*() {
      const at = `plugins[${i}]`
      const fail = (reason: string) => new ConfigError({ file: config.file, path: at, reason })
      const resolved = path.resolve(config.dir, file)
      const mod = yield* Effect.tryPromise({
        try: () => import(pathToFileURL(resolved).href) as Promise<{ default?: unknown }>,
        catch: (e) => fail(`cannot import ${file} (${resolved}): ${e instanceof Error ? e.message : String(e)}`)
      })
      const exported = mod.default
      const list = Array.isArray(exported) ? exported : [exported]
      if (list.length === 0 || !list.every(isPlugin)) {
        return yield* fail(
          `${file}: the default export must be a plugin built with Plugin.retriever(...), Plugin.scorer(...) etc., or an array of them`
        )
      }
      return list
    })).pipe(Effect.map((lists) => lists.flat()))

/**
 * The registry for a config: `base` (the built-ins unless given) plus the config's plugin modules.
 * A user plugin may not reuse the name of another plugin of the same stage.
 */
export const registry = (
  config: Config,
  base: ReadonlyArray<Plugin.AnyPlugin> = builtins()
): Effect.Effect<Plugin.Registry, ConfigError> =>
  Effect.gen(function*() {
    const user = yield* loadUserPlugins(config)
    const seen = new Set(base.map((p) => `${p.stage}\0${p.name}`))
    for (const p of user) {
      const k = `${p.stage}\0${p.name}`
      if (seen.has(k)) {
        return yield* new ConfigError({
          file: config.file,
          path: "plugins",
          reason: `two ${p.stage} plugins are named "${p.name}"; rename the one in your module`
        })
      }
      seen.add(k)
    }
    return Plugin.makeRegistry([...base, ...user])
  })
