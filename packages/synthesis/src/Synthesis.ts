/**
 * Generating CUPID-style data with models: personas, context factors, sessions, checklists and
 * simulated dialogues, then the three instances of each persona, validated, written as JSONL and
 * parquet in the released row format (so `Dataset.open(<out>/instances.parquet)` and
 * `sweep` with `data.source` set to it read them).
 *
 * Every model call goes through the project's model plumbing: the configured providers (with their
 * rate limits and retries), the content-addressed model cache, usage accounting, list prices of
 * the `cost` scorer. A run is resumable at every stage: each finished unit (a persona, its factors,
 * a session, a checklist, a dialogue) is appended to `<out>/raw.jsonl` at once, and the calls of
 * an unfinished dialogue are in the model cache, so a killed run, rerun, repeats no answered call.
 * A unit that fails (model error, unparseable answer, a request that leaks its preference, a user
 * simulator that never ends) is recorded with its stage and persona, never cached, and retried on
 * the next run.
 *
 * @example
 * import { Synthesis, SynthConfig } from "@cupid-lab/synthesis"
 * const config = yield* SynthConfig.load("configs/synth.yaml")
 * const plan = yield* Synthesis.dryRun(config)        // calls, tokens, USD; nothing sent
 * const outcome = yield* Synthesis.run(config)
 * outcome.files.parquet // "<out>/instances.parquet"
 */
import { type LanguageModel, ModelCache, Models, type Plugin } from "@cupid-lab/core"
import { Builtins as ProviderBuiltins } from "@cupid-lab/providers"
import { Cost } from "@cupid-lab/scorers"

import type { FileSystem } from "@effect/platform"
import { Clock, Effect, type Scope } from "effect"
import { SynthConfigError, type SynthesisError, SynthesisRunError } from "./Errors.js"
import type * as Instances from "./Instances.js"
import { assemble as assembleFrom } from "./internal/Assemble.js"
import { type Engine, generatePersona } from "./internal/Engine.js"
import { sortFailures, writeOutputs } from "./internal/Outputs.js"
import * as RawStore from "./internal/RawStore.js"
import { buildModels, fingerprintOf, loadPrompts, usageOf } from "./internal/Setup.js"
import * as Progress from "./Progress.js"
import type * as Records from "./Records.js"
import type { Config, Role } from "./SynthConfig.js"
export interface Options {
  readonly progress?: Progress.Progress
  /** Notices (resume counts, cache warnings); default none. */
  readonly log?: (line: string) => void
  /** Provider plugins; default the providers package's built-ins. */
  readonly providers?: ReadonlyArray<Plugin.AnyPlugin>
}

export interface StageUsage {
  readonly calls: number
  /** Calls answered by the model cache (no request sent). */
  readonly cachedCalls: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** List-price dollars of the calls sent (cached calls cost nothing); NaN when a model has no price. */
  readonly usd: number
  /** Calls sent times their role's `maxTokens`: the most answer tokens they could cost. */
  readonly maxCompletionTokens: number
  /** `usd` with every sent call answering `maxTokens` tokens. */
  readonly maxUsd: number
}

export interface Excluded {
  readonly id: string
  readonly problems: ReadonlyArray<string>
}

export interface Outcome {
  readonly out: string
  readonly files: {
    readonly raw: string
    readonly jsonl: string | undefined
    readonly parquet: string | undefined
    readonly validation: string
    readonly failures: string
  }
  readonly personas: { readonly total: number; readonly complete: number; readonly incomplete: number }
  readonly instances: { readonly built: number; readonly valid: number; readonly excluded: number }
  readonly failures: ReadonlyArray<Records.Failure>
  readonly excluded: ReadonlyArray<Excluded>
  /** Per stage and in total. */
  readonly usage: Readonly<Record<string, StageUsage>>
}

export interface DryRun {
  readonly personas: number
  /** Calls a real run would make, by stage and in total (`total`); calls the cache already answers are counted as cached. */
  readonly usage: Readonly<Record<string, StageUsage>>
  readonly dialogueTurns: number
  /** Units that failed even on example answers (e.g. `maxTurns` below `dryRunTurns`). */
  readonly failures: ReadonlyArray<Records.Failure>
}

/** A persona's data from a raw file's records, when every record of it is there. */
export const assemble = (
  config: Config,
  store: { readonly get: (key: string) => Records.RawRecord | undefined },
  index: number
): Instances.PersonaData | undefined => assembleFrom(config, store, index)

const generate = (config: Config, options: Options, dryRun: boolean) =>
  Effect.gen(function* () {
    const startedAt = yield* Clock.currentTimeMillis
    const prompts = yield* loadPrompts(config)
    const fingerprint = fingerprintOf(config, Object.values(prompts))
    const store = yield* RawStore.open(config.out, fingerprint, !dryRun)
    if (store.dropped > 0) options.log?.(`${store.file}: dropped ${store.dropped} line(s) cut short by an earlier kill`)
    const bundles = yield* buildModels(config, options.providers ?? ProviderBuiltins.plugins, dryRun)
    const cache = yield* Effect.provide(
      ModelCache.ModelCache,
      ModelCache.layerFile(config.cacheDir, options.log === undefined ? {} : { onWarning: options.log })
    )
    const models = Models.make(bundles, cache, { dryRun })
    const lmFor = (role: Role) =>
      models
        .languageModel(config.roles[role].model)
        .pipe(
          Effect.mapError((e) => new SynthConfigError({ file: config.file, path: `roles.${role}`, reason: e.message }))
        )
    const lms: Record<Role, LanguageModel.Service> = {
      persona: yield* lmFor("persona"),
      factors: yield* lmFor("factors"),
      sessions: yield* lmFor("sessions"),
      checklist: yield* lmFor("checklist"),
      user: yield* lmFor("user"),
      assistant: yield* lmFor("assistant"),
      validator: yield* lmFor("validator")
    }
    const done = new Set<number>()
    for (let i = 0; i < config.personas.count; i++) if (assemble(config, store, i) !== undefined) done.add(i)
    if (done.size > 0 && !dryRun)
      options.log?.(`resuming in ${config.out}: ${done.size} of ${config.personas.count} personas are complete`)
    const progress = options.progress ?? Progress.silent
    const resumed = done.size
    let run = 0
    const tick = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => progress.update(snapshot(now))))
    const engine: Engine = {
      config,
      dryRun,
      store,
      prompts,
      lms,
      failures: [],
      tally: { byStage: new Map() },
      prices: { ...Cost.defaultPrices, ...config.prices },
      onCall: Effect.suspend(() => tick),
      turns: 0
    }
    const snapshot = (now: number): Progress.Snapshot => {
      const t = engine.tally.byStage.get("total")
      return {
        personasDone: resumed + run,
        personasTotal: config.personas.count,
        personasRun: run,
        personasToRun: config.personas.count - resumed,
        calls: t?.calls ?? 0,
        cachedCalls: t?.cachedCalls ?? 0,
        tokens: (t?.promptTokens ?? 0) + (t?.completionTokens ?? 0),
        usd: (t?.micro ?? 0) / 1e6,
        failures: engine.failures.length,
        elapsedMs: now - startedAt
      }
    }
    const todo = Array.from({ length: config.personas.count }, (_, i) => i).filter((i) => !done.has(i))
    yield* Effect.forEach(
      todo,
      (i) => generatePersona(engine, i).pipe(Effect.zipRight(Effect.sync(() => void run++)), Effect.zipRight(tick)),
      { concurrency: config.concurrency.personas, discard: true }
    )
    const now = yield* Clock.currentTimeMillis
    progress.done(snapshot(now))
    return { engine, store, usage: usageOf(engine.tally), failures: sortFailures(engine.failures) }
  })

/**
 * Run a synthesis to the end and write every output into `config.out`: `raw.jsonl`,
 * `instances.jsonl`, `instances.parquet`, `validation.json` (summary counts and every excluded
 * instance with its reasons) and `failures.json` (this run's failed units and its usage).
 */
export const run = Effect.fn("Synthesis.run")(
  function* (
    config: Config,
    options: Options = {}
  ): Effect.fn.Return<Outcome, SynthesisError, FileSystem.FileSystem | Scope.Scope> {
    const g = yield* generate(config, options, false)
    return yield* writeOutputs(config, g.store, g.failures, g.usage)
  },
  (effect) => Effect.scoped(effect)
)

/**
 * What a run would do, with nothing sent and nothing written: every stage runs on example answers
 * (the user simulator ends each dialogue after `dialogue.dryRunTurns` turns), calls already in the
 * model cache or units already in the raw file count as done. Prompt tokens are estimated with
 * core's `Tokens.count` on the real prompts; answer tokens with the example answers' length (a low
 * estimate) and, as an upper bound, `maxCompletionTokens` (every call using its role's `maxTokens`).
 */
export const dryRun = (
  config: Config,
  options: Options = {}
): Effect.Effect<DryRun, SynthesisError, FileSystem.FileSystem> =>
  Effect.scoped(
    Effect.map(generate(config, { ...options, progress: options.progress ?? Progress.silent }, true), (g) => ({
      personas: config.personas.count,
      usage: g.usage,
      dialogueTurns: g.engine.turns,
      failures: g.failures
    }))
  ).pipe(Effect.withSpan("Synthesis.dryRun"))

/** Rebuild and revalidate the instances from the raw file alone (no model is built or called). */
export const rebuild = Effect.fn("Synthesis.rebuild")(function* (
  config: Config
): Effect.fn.Return<Outcome, SynthesisError, FileSystem.FileSystem> {
  const prompts = yield* loadPrompts(config)
  const store = yield* RawStore.open(config.out, fingerprintOf(config, Object.values(prompts)), true)
  return yield* writeOutputs(config, store, [], {})
})

/**
 * The error of a run (or rebuild) in which no persona is complete, so that no instance was built:
 * it names the files that say why (`failures.json`, `validation.json`), which are written all the
 * same; undefined when some persona is complete.
 */
export const nothingBuilt = (outcome: Outcome): SynthesisRunError | undefined => {
  const { complete, total } = outcome.personas
  if (complete > 0 || total === 0) return undefined
  const first = outcome.failures[0]
  const why =
    first === undefined
      ? `no unit failed this run, and ${outcome.files.raw} holds no complete persona`
      : `${outcome.failures.length} units failed this run (the first: ${first.stage} of ${first.persona}${first.session === undefined ? "" : `, session ${first.session}`}: ${first.reason}); every failure is in ${outcome.files.failures}`
  return new SynthesisRunError({
    path: outcome.out,
    reason: `no persona is complete (0 of ${total}), so no instance was built: ${why}; the counts are in ${outcome.files.validation}. Rerun the same command to retry the failed units`
  })
}

/** The dry run as the lines the CLI prints. */
export const describeDryRun = (d: DryRun): string => {
  const rows = Object.entries(d.usage).map(
    ([stage, u]) =>
      `${stage.padEnd(11)} ${String(u.calls - u.cachedCalls).padStart(9)} ${String(u.cachedCalls).padStart(8)} ${String(u.promptTokens).padStart(12)} ${String(u.completionTokens).padStart(12)} ${String(u.maxCompletionTokens).padStart(12)}  ${Progress.usd(u.usd)} (at most ${Progress.usd(u.maxUsd)})`
  )
  return [
    `dry run: ${d.personas} personas, nothing sent`,
    `${"stage".padEnd(11)} ${"calls".padStart(9)} ${"cached".padStart(8)} ${"prompt tok".padStart(12)} ${"answer tok".padStart(12)} ${"max answer".padStart(12)}  usd`,
    ...rows,
    `dialogues assumed to end after the dry-run number of turns (${d.dialogueTurns} turns in all); tokens are estimates (answers: the example answers' length)`,
    ...(d.failures.length > 0
      ? [
          `warning: ${d.failures.length} units fail even on example answers, e.g. ${d.failures[0]!.stage} of ${d.failures[0]!.persona}: ${d.failures[0]!.reason}`
        ]
      : [])
  ].join("\n")
}
