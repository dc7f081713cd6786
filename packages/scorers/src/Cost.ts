/**
 * The `cost` scorer: tokens, model calls and dollars the pipeline stages of a cell spent on one
 * instance (scorers' own calls are not counted). Calls answered from the cache count in full:
 * the figures describe the method, not the state of the cache on the day it ran.
 *
 * Dollars come from a price table keyed `"provider/model"` in USD per million tokens. The
 * `prices` option is merged over {@link defaultPrices}; a call to a model with no price makes
 * `cost.usd` NaN (unknown), never 0. Local models are free only if you say so (`{ prompt: 0,
 * completion: 0 }`). A model whose calls go as batch jobs is charged its batch rate (half the list
 * price unless its entry says otherwise), cached calls included. Calls of an `http` stage to a
 * service of yours are not model calls and are not counted: what they cost is the service's.
 *
 * @example
 * // scorers: [{ use: cost, prices: { "openai/my-local-qwen": { prompt: 0, completion: 0 } } }]
 * import { Cost } from "@cupid-lab/scorers"
 * Cost.compute(trace.usage, Cost.defaultPrices)["cost.usd"]
 */
import { Plugin, Scorer, type Usage } from "@cupid-lab/core"
import { Effect, Schema } from "effect"

export const name = "cost"

export const Price = Schema.Struct({
  /** USD per million prompt (input) tokens. */
  prompt: Schema.NonNegative,
  /** USD per million completion (output) tokens. */
  completion: Schema.NonNegative
})
export type Price = typeof Price.Type

/**
 * List prices in USD per million tokens (standard tier, no batch or cached-input discounts), from
 * https://platform.openai.com/docs/pricing as published in March-May 2026 (gpt-4o 2.50 / 10.00,
 * gpt-4o-mini 0.15 / 0.60, gpt-4.1 2.00 / 8.00, gpt-4.1-mini 0.40 / 1.60, gpt-4.1-nano
 * 0.10 / 0.40, text-embedding-3-small 0.02, text-embedding-3-large 0.13). Check them before
 * quoting dollars; override or extend with the `prices` option.
 */
export const defaultPrices: Readonly<Record<string, Price>> = {
  "openai/gpt-4o": { prompt: 2.5, completion: 10 },
  "openai/gpt-4o-2024-11-20": { prompt: 2.5, completion: 10 },
  "openai/gpt-4o-2024-08-06": { prompt: 2.5, completion: 10 },
  "openai/gpt-4o-mini": { prompt: 0.15, completion: 0.6 },
  "openai/gpt-4o-mini-2024-07-18": { prompt: 0.15, completion: 0.6 },
  "openai/gpt-4.1": { prompt: 2, completion: 8 },
  "openai/gpt-4.1-mini": { prompt: 0.4, completion: 1.6 },
  "openai/gpt-4.1-nano": { prompt: 0.1, completion: 0.4 },
  "openai/text-embedding-3-small": { prompt: 0.02, completion: 0 },
  "openai/text-embedding-3-large": { prompt: 0.13, completion: 0 }
}

export const Options = Schema.Struct({
  prices: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Price }), { default: () => ({}) })
})
export type Options = typeof Options.Type

/** Usage attributed to this stage is the scorers' own and is left out. */
export const scoringStage = "score"

export const metrics: ReadonlyArray<Scorer.MetricInfo> = [
  ["prompt_tokens", "Prompt tokens sent by the pipeline stages (cached calls included)."],
  ["completion_tokens", "Completion tokens received by the pipeline stages (cached calls included)."],
  ["model_calls", "Model calls made by the pipeline stages, cached or not: a property of the method."],
  ["usd", "List-price dollars of those calls (NaN when a model has no price in the table)."]
].map(([metric, description]) =>
  Scorer.metric({ name: `cost.${metric}`, description: description!, family: "cost", direction: "lower" })
)

/**
 * A call's price in integer micro-dollars: tokens times USD per million tokens is micro-dollars,
 * times `rate` (a batched call's fraction of the list price, 1 otherwise), rounded per call, so
 * sums are exact and do not depend on the order calls completed in.
 */
export const microUsd = (promptTokens: number, completionTokens: number, price: Price, rate = 1): number =>
  Math.round((promptTokens * price.prompt + completionTokens * price.completion) * rate)

export const compute = (
  usage: ReadonlyArray<Usage.UsageEntry>,
  prices: Readonly<Record<string, Price>>
): Record<string, number> => {
  let promptTokens = 0,
    completionTokens = 0,
    calls = 0,
    micro = 0
  for (const e of usage) {
    // A service call is the system under test's own work (an `http` stage), not a model call: no price here.
    if (e.stage === scoringStage || e.kind === "service") continue
    calls++
    promptTokens += e.promptTokens
    completionTokens += e.completionTokens
    const price = prices[`${e.provider}/${e.model}`]
    micro += price === undefined ? NaN : microUsd(e.promptTokens, e.completionTokens, price, e.batchRate)
  }
  return {
    "cost.prompt_tokens": promptTokens,
    "cost.completion_tokens": completionTokens,
    "cost.model_calls": calls,
    "cost.usd": micro / 1e6
  }
}

export const plugin = Plugin.scorer({
  name,
  description: "Tokens, model calls and list-price dollars of the pipeline stages per instance.",
  options: Options,
  make: (options) => {
    const prices = { ...defaultPrices, ...options.prices }
    return Effect.succeed(Scorer.plain({ metrics }, ({ trace }) => compute(trace.usage, prices)))
  }
})
