/**
 * The plugins this package ships, as one list the experiments runner registers. Importing this
 * list loads no SDK: each provider loads its library when a model is built.
 */
import type { Plugin } from "@cupid-lab/core"
import * as Cohere from "./Cohere.js"
import * as HttpSystem from "./HttpSystem.js"
import * as OpenAi from "./OpenAi.js"
import * as Transformers from "./Transformers.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  OpenAi.plugin,
  Cohere.plugin,
  Transformers.plugin,
  ...HttpSystem.plugins
]
