/**
 * The plugins this package ships, as one list the experiments runner registers.
 */
import type * as Plugin from "./Plugin.js"
import * as ExtractiveInferrer from "./stages/ExtractiveInferrer.js"
import * as LlmGenerator from "./stages/LlmGenerator.js"
import * as LlmInferrer from "./stages/LlmInferrer.js"
import * as LlmSummarizer from "./stages/LlmSummarizer.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  LlmSummarizer.plugin,
  LlmInferrer.plugin,
  ExtractiveInferrer.plugin,
  LlmGenerator.plugin
]
