// Setting a synthesis up: the usage tally, the fingerprint of what fixes its outputs, the models
// of its roles and its prompts.
import { Hash, Plugin, type PromptTemplate, type Usage, type Models } from "@cupid-lab/core"
import { Cost } from "@cupid-lab/scorers"

import { Effect, Either } from "effect"
import { SynthConfigError } from "../Errors.js"
import * as Stages from "../Stages.js"
import type { StageUsage } from "../Synthesis.js"
import type { Config } from "../SynthConfig.js"
import { seeds as bundledSeeds } from "./Seeds.js"

export interface Tally {
  readonly byStage: Map<
    string,
    {
      calls: number
      cachedCalls: number
      promptTokens: number
      completionTokens: number
      micro: number
      maxCompletion: number
      maxMicro: number
    }
  >
}

export const addUsage = (
  tally: Tally,
  prices: Readonly<Record<string, Cost.Price>>,
  entries: ReadonlyArray<Usage.UsageEntry>,
  maxTokens: number
) => {
  for (const e of entries) {
    for (const key of [e.stage, "total"]) {
      const t = tally.byStage.get(key) ?? {
        calls: 0,
        cachedCalls: 0,
        promptTokens: 0,
        completionTokens: 0,
        micro: 0,
        maxCompletion: 0,
        maxMicro: 0
      }
      t.calls++
      if (e.cached) t.cachedCalls++
      t.promptTokens += e.promptTokens
      t.completionTokens += e.completionTokens
      const price = prices[`${e.provider}/${e.model}`]
      if (!e.cached) {
        t.micro += price === undefined ? NaN : Cost.microUsd(e.promptTokens, e.completionTokens, price)
        t.maxCompletion += maxTokens
        t.maxMicro += price === undefined ? NaN : Cost.microUsd(e.promptTokens, maxTokens, price)
      }
      tally.byStage.set(key, t)
    }
  }
}

export const usageOf = (tally: Tally): Record<string, StageUsage> => {
  const out: Record<string, StageUsage> = {}
  for (const stage of ["persona", "factors", "sessions", "checklists", "assistant", "user", "validator", "total"]) {
    const t = tally.byStage.get(stage)
    if (t !== undefined)
      out[stage] = {
        calls: t.calls,
        cachedCalls: t.cachedCalls,
        promptTokens: t.promptTokens,
        completionTokens: t.completionTokens,
        usd: t.micro / 1e6,
        maxCompletionTokens: t.maxCompletion,
        maxUsd: t.maxMicro / 1e6
      }
  }
  return out
}

/** Provider options that change how calls are sent, not what they answer: left out of the fingerprint. */
const transportOptions = new Set([
  "concurrency",
  "rpm",
  "timeoutMs",
  "maxRetries",
  "retryBaseMs",
  "retryMaxMs",
  "baseURL",
  "apiKeyEnv",
  "batchSize"
])

export const fingerprintOf = (config: Config, prompts: ReadonlyArray<PromptTemplate.Template>): string =>
  Hash.sha256Hex(
    Hash.canonicalJson({
      seed: config.seed,
      seeds: config.personas.seeds ?? bundledSeeds,
      factors: config.factors,
      sessions: config.sessions,
      maxTurns: config.dialogue.maxTurns,
      roles: config.roles,
      modelCheck: config.validation.modelCheck,
      models: Object.fromEntries(
        Object.entries(config.models).map(([name, m]) => [
          name,
          {
            provider: m.provider,
            model: m.model,
            options: Object.fromEntries(Object.entries(m.options).filter(([k]) => !transportOptions.has(k)))
          }
        ])
      ),
      prompts: prompts.map((p) => p.text)
    })
  ).slice(0, 16)

export const buildModels = (config: Config, providers: ReadonlyArray<Plugin.AnyPlugin>, dryRun: boolean) =>
  Effect.gen(function* () {
    const registry = Plugin.makeRegistry(providers)
    const bundles: Record<string, Models.ModelBundle> = {}
    const used = new Set(Object.values(config.roles).map((r) => r.model))
    // Every model's key variable: no model's messages may show another's key either (providers add their own).
    const secretVariables = [
      ...new Set(
        Object.values(config.models).flatMap((m) =>
          typeof m.options["apiKeyEnv"] === "string" ? [m.options["apiKeyEnv"]] : []
        )
      )
    ]
    for (const [name, spec] of Object.entries(config.models)) {
      if (!used.has(name)) continue
      const at = `models.${name}`
      const fail = (p: string, reason: string) => new SynthConfigError({ file: config.file, path: p, reason })
      const plugin = yield* registry
        .provider(spec.provider)
        .pipe(Effect.mapError((e) => fail(`${at}.provider`, e.reason)))
      const decoded = plugin.decode(spec.options)
      if (Either.isLeft(decoded)) {
        const issue = decoded.left.issues[0]
        return yield* fail([at, ...(issue?.path ?? []).map(String)].join("."), issue?.message ?? "invalid options")
      }
      bundles[name] = yield* decoded.right.make(spec.model, { dryRun, secretVariables }).pipe(
        Effect.mapError((e) => fail(at, `cannot build the model: ${e.reason}`)),
        Effect.catchAllDefect((d) => fail(at, `cannot build the model: ${d instanceof Error ? d.message : String(d)}`))
      )
    }
    return bundles
  })

export type Prompts = Readonly<
  Record<"persona" | "factors" | "session" | "checklist" | "user" | "assistant" | "hintCheck", PromptTemplate.Template>
>

export const loadPrompts = (config: Config) =>
  Effect.gen(function* () {
    const load = (s: Pick<Stages.Stage<unknown, never>, "name" | "file" | "required" | "optional">) =>
      Stages.loadPrompt(s, config.prompts, config.file)
    const p: Prompts = {
      persona: yield* load(Stages.persona),
      factors: yield* load(Stages.factors),
      session: yield* load(Stages.session),
      checklist: yield* load(Stages.checklist),
      user: yield* load(Stages.user),
      assistant: yield* load(Stages.assistant),
      hintCheck: yield* load(Stages.hintCheck)
    }
    return p
  })
