/**
 * A sweep's spending limit (`budget: { usd }`, `--budget-usd`) in list-price dollars at the cost
 * scorer's prices: {@link preflight} refuses a dry-run estimate over it, and the {@link Tracker}
 * admits a pair only while it cannot carry the spend past it. A rerun has a budget of its own.
 *
 * @example
 * const tracker = yield* Budget.preflight(config, options) // undefined without a budget
 */
import { type Batch, Errors, type Usage } from "@cupid-lab/core"
import { Cost } from "@cupid-lab/scorers"
import type { RunInfo } from "@cupid-lab/results"

import type { FileSystem } from "@effect/platform"
import { Effect, Option, Schema } from "effect"
import type { Config } from "./Config.js"
import { BudgetError } from "./Errors.js"
import { type DryRun, dryRun, type Options, type SweepError } from "./Prepare.js"

/** The price table a config's calls are charged at: the cost scorer's defaults, then every `cost` scorer's `prices`. */
export const prices = (config: Config): Readonly<Record<string, Cost.Price>> => {
  const table: Record<string, Cost.Price> = { ...Cost.defaultPrices }
  for (const s of config.scorers) {
    if (s.use !== Cost.name) continue
    const decoded = Schema.decodeUnknownOption(Cost.Options)({ prices: s["prices"] ?? {} })
    if (Option.isSome(decoded)) Object.assign(table, decoded.value.prices)
  }
  return table
}

export const estimate = (
  byModel: DryRun["byModel"],
  table: Readonly<Record<string, Cost.Price>>
): { readonly micro: number; readonly unpriced: ReadonlyArray<string> } => {
  let micro = 0
  const unpriced: Array<string> = []
  for (const [model, m] of Object.entries(byModel)) {
    // A service of the user's (an `http` stage) is no model: the budget has nothing to price there.
    if (model.startsWith("http/")) continue
    const price = table[model]
    if (price === undefined) unpriced.push(model)
    else micro += Cost.microUsd(m.promptTokens, m.completionTokens, price, m.rate)
  }
  return { micro, unpriced }
}

export const dollars = (micro: number): string => {
  const usd = micro / 1e6
  if (usd >= 1 || usd === 0) return `$${usd.toFixed(2)}`
  const text = usd.toFixed(6).replace(/0+$/, "")
  return `$${text.length - text.indexOf(".") - 1 < 2 ? usd.toFixed(2) : text}`
}

/**
 * What one sweep spends against its budget. A pair is admitted while spent + (pairs in flight + 1)
 * × max(the estimate per pair, the dearest pair so far) ≤ budget; `spent` counts calls sent, not
 * answers from the cache. Once `admit` says false it always does: the sweep stops taking pairs.
 */
export const tracker = (o: {
  readonly budgetMicro: number
  readonly estimateMicro: number
  readonly pairsToRun: number
  readonly prices: Readonly<Record<string, Cost.Price>>
}) => {
  const perPairMicro = o.pairsToRun > 0 ? o.estimateMicro / o.pairsToRun : 0
  let spent = 0,
    direct = 0,
    committed = 0,
    dearest = 0,
    inFlight = 0,
    stopped = false
  return {
    admit: (): boolean => {
      if (!stopped && spent + (inFlight + 1) * Math.max(perPairMicro, dearest) > o.budgetMicro) stopped = true
      if (stopped) return false
      inFlight++
      return true
    },
    /** A pair admitted earlier has ended with these calls. */
    record: (usage: ReadonlyArray<Usage.UsageEntry>) => {
      let micro = 0
      for (const u of usage) {
        const price = o.prices[`${u.provider}/${u.model}`]
        if (u.cached || price === undefined || u.kind === "service") continue
        const m = Cost.microUsd(u.promptTokens, u.completionTokens, price, u.batchRate)
        micro += m
        // A batched call was charged when its wave was admitted.
        if (u.batchRate === undefined) direct += m
      }
      inFlight--
      spent += micro
      dearest = Math.max(dearest, micro)
    },
    /**
     * Asked before a wave of batched calls is submitted: refused when what the calls sent one by
     * one have spent, plus the waves admitted, plus this wave at its most (every call using its
     * token limit) would pass the budget.
     */
    admitWave: (
      endpoint: Batch.Endpoint,
      requests: ReadonlyArray<Batch.Request>
    ): Effect.Effect<void, Errors.ModelError> => {
      const price = o.prices[`${endpoint.provider}/${endpoint.model}`]
      let micro = 0
      for (const r of requests)
        micro += price === undefined ? 0 : Cost.microUsd(r.promptTokens, r.completionTokens, price, endpoint.rate)
      if (direct + committed + micro > o.budgetMicro) {
        stopped = true
        return Effect.fail(
          new Errors.ModelError({
            provider: endpoint.provider,
            model: endpoint.model,
            reason:
              `the budget refused a wave of ${requests.length} batched calls before submitting it: at most ${dollars(micro)}, ` +
              `with ${dollars(direct + committed)} already spent or submitted, passes the budget of ${dollars(o.budgetMicro)}; ${raise}`,
            retryable: false
          })
        )
      }
      committed += micro
      return Effect.void
    },
    stopped: () => stopped,
    spend: (): Spend => ({ usd: o.budgetMicro / 1e6, estimatedUsd: o.estimateMicro / 1e6, spentUsd: spent / 1e6 })
  }
}

const raise = "raise it with budget.usd in the config or --budget-usd on the command line"

export const preflight = (
  config: Config,
  options: Options
): Effect.Effect<Tracker | undefined, SweepError | BudgetError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    if (config.budget === undefined) return undefined
    const budgetMicro = Math.round(config.budget.usd * 1e6)
    const table = prices(config)
    const d = yield* dryRun(config, options)
    const e = estimate(d.byModel, table)
    if (e.unpriced.length > 0) {
      return yield* new BudgetError({
        message:
          `${config.file}: budget: no price for ${e.unpriced.join(", ")}, so the sweep's spend cannot be kept under the budget; ` +
          `add one with the cost scorer's prices option (scorers: [{ use: cost, prices: { "${e.unpriced[0]}": { prompt: <USD per million>, completion: <USD per million> } } }])`
      })
    }
    if (e.micro > budgetMicro) {
      return yield* new BudgetError({
        message:
          `${config.file}: the ${d.pairs.toRun} pairs to run would cost about ${dollars(e.micro)} (dry-run estimate of ${d.calls.toSend} calls at list prices), ` +
          `more than the budget of ${dollars(budgetMicro)}; ${raise} (e.g. --budget-usd ${Math.ceil(e.micro / 1e4) / 100}), or run fewer pairs (--limit, --types)`
      })
    }
    options.log?.(
      `budget ${dollars(budgetMicro)}: the ${d.pairs.toRun} pairs to run are estimated at ${dollars(e.micro)}`
    )
    return tracker({ budgetMicro, estimateMicro: e.micro, pairsToRun: d.pairs.toRun, prices: table })
  })

export type Tracker = ReturnType<typeof tracker>

export type Spend = typeof RunInfo.BudgetSpend.Type

export const stoppedMessage = (s: Spend, pairs: { readonly done: number; readonly total: number }): string =>
  `the budget stopped the run: ${dollars(s.spentUsd * 1e6)} spent of ${dollars(s.usd * 1e6)}, and the next pair could have passed it; ` +
  `${pairs.done} of ${pairs.total} pairs are done and written. Rerun with a larger budget to resume (${raise})`
