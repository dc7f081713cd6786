/**
 * The plugin registry of a sweep: every package's built-in plugins plus the modules a config lists
 * under `plugins:` (ES modules in TypeScript or JavaScript, relative to the config, loaded through
 * tsx in a namespace of their own), and which package provides each plugin, for the run's record.
 *
 * @example
 * const registry = yield* Plugins.registry(config) // config: plugins: [./plugins/newest.ts]
 * registry.names("retriever") // ["all", "bm25", ..., "newest"]
 * (yield* Plugins.sources(config))(bm25) // { package: "@cupid-lab/retrievers", version: "0.1.0" }
 */
import { Builtins as CoreBuiltins, Files, Plugin } from "@cupid-lab/core"
import { Builtins as ProviderBuiltins } from "@cupid-lab/providers"
import { Builtins as RetrieverBuiltins } from "@cupid-lab/retrievers"
import { Builtins as ScorerBuiltins } from "@cupid-lab/scorers"

import { FileSystem } from "@effect/platform"
import { Effect, Either, Predicate, Schema } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type { Config } from "./Config.js"
import { ConfigError } from "./Errors.js"

/** Every package's built-in plugins, by package. */
export const shipped: ReadonlyArray<readonly [string, ReadonlyArray<Plugin.AnyPlugin>]> = [
  ["@cupid-lab/core", CoreBuiltins.plugins],
  ["@cupid-lab/retrievers", RetrieverBuiltins.plugins],
  ["@cupid-lab/scorers", ScorerBuiltins.plugins],
  ["@cupid-lab/providers", ProviderBuiltins.plugins]
]

export const builtins = (): ReadonlyArray<Plugin.AnyPlugin> => shipped.flatMap(([, list]) => list)

/** The package that provides a plugin (for a module, its path as the config gives it) and its version. */
export interface Source {
  readonly package: string
  readonly version: string
}

const isPlugin = (value: unknown): value is Plugin.AnyPlugin =>
  Predicate.isRecord(value) &&
  Plugin.stages.some((s) => s === value.stage) &&
  typeof value.name === "string" &&
  typeof value.decode === "function"

/** The file extensions a plugin file may have (CommonJS cannot import the lab's ES modules). */
const extensions: ReadonlyArray<string> = [".ts", ".mts", ".js", ".mjs"]

type ScopedImport = (url: string) => Promise<unknown>

let scoped: Promise<ScopedImport> | undefined

/** Import the module at an absolute path; a second import of the same file returns the same module. */
const importFile = (file: string): Promise<unknown> =>
  (scoped ??= import("tsx/esm/api").then(({ register }) => {
    // tsconfig: false: the same transpilation whatever directory the lab is started from.
    const api = register({ namespace: "cupid-lab-plugins", tsconfig: false })
    return (url: string): Promise<unknown> => api.import(url, import.meta.url)
  })).then((load) => load(pathToFileURL(file).href))

const findsLab = (file: string): boolean =>
  Either.isRight(Either.try(() => createRequire(file).resolve("@cupid-lab/core")))

/** Why importing the file failed: the loader's message, or where plugin files must be when it cannot find the lab. */
const describeFailure = (file: string, error: unknown): string => {
  const code = error instanceof Error && "code" in error ? error.code : undefined
  if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && !findsLab(file)) {
    return (
      "it cannot find @cupid-lab/core: a plugin file finds @cupid-lab/core and effect from its own folder upward, " +
      "like any Node module, so it must be inside the cupid-lab checkout (e.g. configs/plugins/)"
    )
  }
  return error instanceof Error ? error.message : String(error)
}

/** Import the modules a config lists under `plugins:` (the module cache makes a second import free). */
interface Module {
  readonly file: string
  readonly resolved: string
  readonly plugins: ReadonlyArray<Plugin.AnyPlugin>
}

const loadModules = (config: Config): Effect.Effect<ReadonlyArray<Module>, ConfigError, FileSystem.FileSystem> =>
  Effect.forEach(config.plugins, (file, i) =>
    Effect.gen(function* () {
      const fail = (reason: string) => new ConfigError({ file: config.file, path: `plugins[${i}]`, reason })
      const resolved = path.resolve(config.dir, file)
      if (!extensions.includes(path.extname(resolved))) {
        return yield* fail(`${file}: a plugin file must be an ES module ending in ${extensions.join(", ")}`)
      }
      const exists = yield* Effect.flatMap(FileSystem.FileSystem, (fs) => Files.exists(fs, resolved))
      if (!exists) return yield* fail(`cannot import ${file}: ${resolved} does not exist`)
      const mod: unknown = yield* Effect.tryPromise({
        try: () => importFile(resolved),
        catch: (e) => fail(`cannot import ${file} (${resolved}): ${describeFailure(resolved, e)}`)
      })
      const expected =
        "the default export must be a plugin built with Plugin.retriever(...), Plugin.scorer(...) etc., or an array of them"
      if (!Predicate.isRecord(mod) || mod.default === undefined) {
        const names = Predicate.isRecord(mod) ? Object.keys(mod) : []
        return yield* fail(
          `${file}: has no default export (${names.length === 0 ? "it exports nothing" : `it exports ${names.join(", ")}`}); ${expected}`
        )
      }
      const list: ReadonlyArray<unknown> = Array.isArray(mod.default) ? mod.default : [mod.default]
      const plugins = list.filter(isPlugin)
      if (list.length === 0 || plugins.length !== list.length) return yield* fail(`${file}: ${expected}`)
      return { file, resolved, plugins }
    })
  )

/** The registry for a config: `base` plus the config's plugin modules, which may not reuse a name of the same stage. */
export const registry = (
  config: Config,
  base: ReadonlyArray<Plugin.AnyPlugin> = builtins()
): Effect.Effect<Plugin.Registry, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const user = (yield* loadModules(config)).flatMap((m) => m.plugins)
    const same = (p: Plugin.AnyPlugin) => (q: Plugin.AnyPlugin) => p.stage === q.stage && p.name === q.name
    const clash = user.find((p, i) => base.some(same(p)) || user.slice(0, i).some(same(p)))
    if (clash !== undefined) {
      const reason = `two ${clash.stage} plugins are named "${clash.name}"; rename the one in your module`
      return yield* new ConfigError({ file: config.file, path: "plugins", reason })
    }
    return Plugin.makeRegistry([...base, ...user])
  })

const PackageJson = Schema.Struct({ name: Schema.optional(Schema.String), version: Schema.optional(Schema.String) })

const readPackageJson = (
  file: string
): Effect.Effect<typeof PackageJson.Type | undefined, never, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)).pipe(
    Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(PackageJson))),
    // No package.json, or not one: the caller falls back.
    Effect.orElseSucceed(() => undefined)
  )

const require = createRequire(import.meta.url)

/** The version in a package's package.json, found upward from its entry point. */
const packageVersion = (
  name: string,
  dir = path.dirname(require.resolve(name))
): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.flatMap(readPackageJson(path.join(dir, "package.json")), (found) =>
    found?.name === name
      ? Effect.succeed(found.version ?? "unknown")
      : path.dirname(dir) === dir
        ? Effect.succeed("unknown")
        : packageVersion(name, path.dirname(dir))
  )

let shippedSources: ReadonlyMap<object, Source> | undefined

/** Which package provides each plugin; a module's version is that of a package.json beside it, else `local`. */
export const sources = (
  config: Config
): Effect.Effect<(plugin: object) => Source, ConfigError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const modules = yield* loadModules(config)
    const versions = shippedSources === undefined ? yield* Effect.forEach(shipped, ([pkg]) => packageVersion(pkg)) : []
    const known = (shippedSources ??= new Map(
      shipped.flatMap(([pkg, list], i) => list.map((p) => [p, { package: pkg, version: versions[i]! }] as const))
    ))
    const own = new Map<object, Source>()
    for (const m of modules) {
      const source = {
        package: m.file,
        version: (yield* readPackageJson(path.join(path.dirname(m.resolved), "package.json")))?.version ?? "local"
      }
      for (const p of m.plugins) own.set(p, source)
    }
    // Plugins handed to the runner in code (tests, scripts) have no package.
    return (plugin: object) => own.get(plugin) ?? known.get(plugin) ?? { package: "(given in code)", version: "local" }
  })
