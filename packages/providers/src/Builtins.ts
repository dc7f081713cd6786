/**
 * The plugins this package ships, as one list the experiments runner registers.
 */
import type { Plugin } from "@cupid-lab/core"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = []
