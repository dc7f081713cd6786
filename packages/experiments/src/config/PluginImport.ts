/**
 * Imports a plugin file a config lists, TypeScript or JavaScript, however the lab runs (compiled,
 * under tsx, in tests): through tsx's loader in a namespace of its own, registered on the first
 * plugin file. A plugin finds packages from its own folder upward, so it must be inside the checkout.
 *
 * @example
 * const module = await PluginImport.importFile("/home/me/cupid-lab/configs/plugins/newest.ts")
 * module.default // the plugin (or an array of plugins)
 */
import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"

/** The file extensions a plugin file may have (CommonJS cannot import the lab's ES modules). */
export const extensions: ReadonlyArray<string> = [".ts", ".mts", ".js", ".mjs"]

type ScopedImport = (url: string) => Promise<unknown>

let scoped: Promise<ScopedImport> | undefined

const loader = (): Promise<ScopedImport> =>
  (scoped ??= import("tsx/esm/api").then(({ register }) => {
    // tsconfig: false: the same transpilation whatever directory the lab is started from.
    const api = register({ namespace: "cupid-lab-plugins", tsconfig: false })
    return (url: string): Promise<unknown> => api.import(url, import.meta.url)
  }))

/** Import the module at an absolute path; a second import of the same file returns the same module. */
export const importFile = (file: string): Promise<unknown> => loader().then((load) => load(pathToFileURL(file).href))

const findsLab = (file: string): boolean => {
  try {
    createRequire(file).resolve("@cupid-lab/core")
    return true
  } catch {
    return false
  }
}

/** Why importing the file failed: the loader's message, or where plugin files must be when it cannot find the lab. */
export const describeFailure = (file: string, error: unknown): string => {
  const code = error instanceof Error && "code" in error ? error.code : undefined
  if ((code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") && !findsLab(file)) {
    return "it cannot find @cupid-lab/core: a plugin file finds @cupid-lab/core and effect from its own folder upward, " +
      "like any Node module, so it must be inside the cupid-lab checkout (e.g. configs/plugins/)"
  }
  return error instanceof Error ? error.message : String(error)
}
