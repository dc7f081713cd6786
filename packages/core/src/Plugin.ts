/**
 * Plugins are plain values: a stage, a name, an options `Schema` (defaults live in the schema) and
 * `make(options)`, which builds the stage's service. The registry decodes options once, at the
 * boundary, so a plugin never sees `unknown`.
 *
 * @example
 * import { Plugin, Retriever } from "@cupid-lab/core"
 * import { Effect, Schema } from "effect"
 *
 * export const newest = Plugin.retriever({
 *   name: "newest",
 *   description: "The k most recent sessions.",
 *   options: Schema.Struct({ k: Schema.optionalWith(Schema.Int, { default: () => 2 }) }),
 *   make: ({ k }) => Effect.succeed({
 *     needsSummaries: false,
 *     retrieve: ({ query }) => Effect.succeed(Retriever.fromScores(query.sessions.map((s) => [s.id, s.index]), k))
 *   })
 * })
 */
import { Context, Effect, ParseResult, Schema, type Scope } from "effect"
import type { Corpus } from "./Corpus.js"
import { PluginError } from "./Errors.js"
import type * as Generator from "./Generator.js"
import type * as Inferrer from "./Inferrer.js"
import type { ModelCache } from "./ModelCache.js"
import type { ModelBundle, Models } from "./Models.js"
import type * as Retriever from "./Retriever.js"
import type * as Scorer from "./Scorer.js"
import type * as Summarizer from "./Summarizer.js"

/** What a plugin's `make` may use: configured models, the model cache, the dataset's visible text, other plugins. */
export type Env = Models | ModelCache | Corpus | Plugins | Scope.Scope

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type OptionsSchema<O> = Schema.Schema<O, any, never>

interface Base<S extends string, O> {
  readonly stage: S
  readonly name: string
  /** One line for `--help`, the config reference and reports. */
  readonly description: string
  readonly options: OptionsSchema<O>
}

export interface RetrieverPlugin<O = any> extends Base<"retriever", O> {
  readonly needsGold?: false
  /**
   * Set by rankers: plugins that score every session and leave the cut to the framework. Without a
   * `select` (or the shorthand `k: n`, meaning `select: { top: n }`) in the config, this cut applies.
   */
  readonly defaultSelect?: { readonly top: number }
  readonly make: (options: O) => Effect.Effect<Retriever.Service, PluginError, Env>
}

/** A retriever that reads gold labels. Only the oracle should be one; reports mark its cells. */
export interface GoldRetrieverPlugin<O = any> extends Base<"retriever", O> {
  readonly needsGold: true
  readonly make: (options: O) => Effect.Effect<Retriever.GoldService, PluginError, Env>
}

export interface SummarizerPlugin<O = any> extends Base<"summarizer", O> {
  readonly make: (options: O) => Effect.Effect<Summarizer.Service, PluginError, Env>
}

export interface InferrerPlugin<O = any> extends Base<"inferrer", O> {
  /** True when the inferrer is not a model (e.g. extractive): reports label its scores. */
  readonly heuristic?: boolean
  readonly make: (options: O) => Effect.Effect<Inferrer.Service, PluginError, Env>
}

export interface GeneratorPlugin<O = any> extends Base<"generator", O> {
  readonly heuristic?: boolean
  readonly make: (options: O) => Effect.Effect<Generator.Service, PluginError, Env>
}

export interface ScorerPlugin<O = any> extends Base<"scorer", O> {
  readonly make: (options: O) => Effect.Effect<Scorer.Service, PluginError, Env>
}

/** How the models a provider builds will be used. */
export interface ProviderContext {
  /**
   * No request will be sent (`--dry-run`): only the models' `info` is read. A provider should not
   * insist on what only a real call needs, such as an API key.
   */
  readonly dryRun?: boolean
}

/** Builds the model(s) one `models:` entry of a config describes. */
export interface ProviderPlugin<O = any> extends Base<"provider", O> {
  readonly make: (options: O, model: string, context?: ProviderContext) => Effect.Effect<ModelBundle, PluginError, Scope.Scope>
}

export type AnyRetrieverPlugin = RetrieverPlugin | GoldRetrieverPlugin
export type AnyPlugin =
  | AnyRetrieverPlugin
  | SummarizerPlugin
  | InferrerPlugin
  | GeneratorPlugin
  | ScorerPlugin
  | ProviderPlugin
export type Stage = AnyPlugin["stage"]
export const stages: ReadonlyArray<Stage> = ["retriever", "summarizer", "inferrer", "generator", "scorer", "provider"]

type PluginOf<S extends Stage> = Extract<AnyPlugin, { stage: S }>

/** Identity helpers that fix the stage and infer the options type. */
export const retriever = <O>(p: Omit<RetrieverPlugin<O>, "stage">): RetrieverPlugin<O> => ({ ...p, stage: "retriever" })
export const goldRetriever = <O>(p: Omit<GoldRetrieverPlugin<O>, "stage" | "needsGold">): GoldRetrieverPlugin<O> => ({
  ...p,
  stage: "retriever",
  needsGold: true
})
export const summarizer = <O>(p: Omit<SummarizerPlugin<O>, "stage">): SummarizerPlugin<O> => ({ ...p, stage: "summarizer" })
export const inferrer = <O>(p: Omit<InferrerPlugin<O>, "stage">): InferrerPlugin<O> => ({ ...p, stage: "inferrer" })
export const generator = <O>(p: Omit<GeneratorPlugin<O>, "stage">): GeneratorPlugin<O> => ({ ...p, stage: "generator" })
export const scorer = <O>(p: Omit<ScorerPlugin<O>, "stage">): ScorerPlugin<O> => ({ ...p, stage: "scorer" })
export const provider = <O>(p: Omit<ProviderPlugin<O>, "stage">): ProviderPlugin<O> => ({ ...p, stage: "provider" })

export interface Registry {
  readonly get: <S extends Stage>(stage: S, name: string) => Effect.Effect<PluginOf<S>, PluginError>
  readonly names: (stage: Stage) => ReadonlyArray<string>
  readonly all: ReadonlyArray<AnyPlugin>
}

/** The plugin registry as a service, so composite plugins (hybrid, rerank) can build their parts. */
export class Plugins extends Context.Tag("@cupid-lab/core/Plugins")<Plugins, Registry>() {}

/** A registry over a list of plugins. Two plugins of one stage with one name is a programming error. */
export const makeRegistry = (plugins: ReadonlyArray<AnyPlugin>): Registry => {
  const byStage = new Map<Stage, Map<string, AnyPlugin>>()
  for (const p of plugins) {
    const m = byStage.get(p.stage) ?? new Map<string, AnyPlugin>()
    if (m.has(p.name)) throw new Error(`two ${p.stage} plugins are named "${p.name}"`)
    m.set(p.name, p)
    byStage.set(p.stage, m)
  }
  const names = (stage: Stage) => [...(byStage.get(stage)?.keys() ?? [])].sort()
  return {
    all: plugins,
    names,
    get: <S extends Stage>(stage: S, name: string) => {
      const p = byStage.get(stage)?.get(name)
      return p === undefined
        ? Effect.fail(
            new PluginError({
              plugin: name,
              reason: `no ${stage} plugin of this name; valid choices: ${names(stage).join(", ") || "none"}`
            })
          )
        : Effect.succeed(p as PluginOf<S>)
    }
  }
}

export interface OptionIssue {
  /** Path inside the options object, e.g. ["embedder", "dims"]. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Decode raw options with a plugin's schema; unknown keys are errors (a typo must not be ignored). */
export const decodeOptions = <O>(
  plugin: { readonly name: string; readonly options: OptionsSchema<O> },
  raw: unknown
): Effect.Effect<O, { readonly plugin: string; readonly issues: ReadonlyArray<OptionIssue> }> =>
  Schema.decodeUnknown(plugin.options, { onExcessProperty: "error", errors: "all" })(raw ?? {}).pipe(
    Effect.mapError((e) => ({
      plugin: plugin.name,
      issues: ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({ path: i.path, message: i.message }))
    }))
  )

export interface ServiceOf {
  readonly retriever: Retriever.Service | Retriever.GoldService
  readonly summarizer: Summarizer.Service
  readonly inferrer: Inferrer.Service
  readonly generator: Generator.Service
  readonly scorer: Scorer.Service
}

/** Decode and build in one step, for composite plugins building their parts. */
export const build = <S extends Exclude<Stage, "provider">>(
  stage: S,
  spec: { readonly use: string } & Record<string, unknown>
): Effect.Effect<ServiceOf[S], PluginError, Env> =>
  Effect.gen(function*() {
    const registry = yield* Plugins
    const plugin = yield* registry.get(stage, spec.use)
    const { use: _use, ...raw } = spec
    const options = yield* decodeOptions(plugin, raw).pipe(
      Effect.mapError((e) =>
        new PluginError({
          plugin: spec.use,
          reason: e.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ")
        })
      )
    )
    const make = (plugin as { make: (o: unknown) => Effect.Effect<unknown, PluginError, Env> }).make
    return (yield* make(options)) as ServiceOf[S]
  })
