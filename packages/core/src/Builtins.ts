/**
 * The plugins this package ships, as one list the experiments runner registers.
 */
import type * as Plugin from "./Plugin.js"
import * as ExtractiveInferrer from "./ExtractiveInferrer.js"
import * as LlmGenerator from "./LlmGenerator.js"
import * as LlmInferrer from "./LlmInferrer.js"
import * as LlmSummarizer from "./LlmSummarizer.js"
import * as QaGenerator from "./QaGenerator.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  LlmSummarizer.plugin,
  LlmInferrer.plugin,
  ExtractiveInferrer.plugin,
  LlmGenerator.plugin,
  QaGenerator.plugin
]
