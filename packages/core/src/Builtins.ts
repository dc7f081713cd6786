/**
 * The plugins this package ships, as one list the experiments runner registers.
 */
import type * as Plugin from "./Plugin.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = []
