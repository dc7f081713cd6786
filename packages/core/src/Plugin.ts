/**
 * Plugins are plain values: a stage, a name, an options `Schema` (defaults live in the schema) and
 * `make(options)`, which builds the stage's service. The helpers (`Plugin.retriever`, ...) add
 * `decode`, which decodes raw options once, at the boundary, into a {@link Decoded} plan whose
 * `make` is closed over the typed options: the registry and the runner hold plugins of every
 * options type without knowing it, and a plugin never sees `unknown`.
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
 *
 * const plan = newest.decode({ k: 3 }) // Either.right({ plugin: "newest", params: { k: 3 }, make })
 */
import type { FileSystem } from "@effect/platform"
import { Context, Effect, Either, ParseResult, Schema, type Scope } from "effect"
import type * as Batch from "./Batch.js"
import type { Corpus } from "./Corpus.js"
import { type ModelNotConfigured, PluginError } from "./Errors.js"
import type * as Generator from "./Generator.js"
import type * as Inferrer from "./Inferrer.js"
import type { ModelCache } from "./ModelCache.js"
import type { ModelBundle, Models } from "./Models.js"
import type * as Retriever from "./Retriever.js"
import type * as Scorer from "./Scorer.js"
import * as StageTable from "./Stage.js"
import type * as Summarizer from "./Summarizer.js"

/**
 * What a plugin's `make` may use: configured models, the model cache, the dataset's visible text,
 * other plugins, and the platform's file system (to read or cache files while it is built).
 */
export type Env = Models | ModelCache | Corpus | Plugins | FileSystem.FileSystem | Scope.Scope

/** What building a stage can fail with: the plugin's own error, or a model name no `models:` entry gives. */
export type MakeError = PluginError | ModelNotConfigured

/** A plugin's options: decodes the config's form `I` into the options `O` that `make` takes. */
export type OptionsSchema<O, I = O> = Schema.Schema<O, I, never>

/** The stages of a cell's pipeline, and the scorers (see the {@link StageTable stage table}). */
export type PipelineStage = StageTable.Name
/** What a plugin provides: a pipeline stage, or the models of a `models:` entry. */
export type Stage = PipelineStage | "provider"
export const stages: ReadonlyArray<Stage> = [...StageTable.names, "provider"]

/** A built retriever says whether it reads gold, so that the pipeline hands gold to it alone. */
export type BuiltRetriever =
  | { readonly needsGold: false; readonly service: Retriever.Service }
  | { readonly needsGold: true; readonly service: Retriever.GoldService }

/** What the decoded plan of each stage builds. */
export interface MadeOf {
  readonly retriever: BuiltRetriever
  readonly summarizer: Summarizer.Service
  readonly inferrer: Inferrer.Service
  readonly generator: Generator.Service
  readonly scorer: Scorer.Service
}

/** The service of each stage, as {@link build} returns it (a retriever's without its gold flag). */
export interface ServiceOf {
  readonly retriever: Retriever.Service | Retriever.GoldService
  readonly summarizer: Summarizer.Service
  readonly inferrer: Inferrer.Service
  readonly generator: Generator.Service
  readonly scorer: Scorer.Service
}

/** A plugin with its options decoded: ready to build, whatever type its options have. */
export interface Decoded<S extends PipelineStage> {
  readonly stage: S
  readonly plugin: string
  /** The options with defaults filled in, in their encoded (config, JSON) form. */
  readonly params: Readonly<Record<string, unknown>>
  /** Builds the stage's service from the decoded options. */
  readonly make: Effect.Effect<MadeOf[S], MakeError, Env>
}

/** How the models a provider builds will be used. */
export interface ProviderContext {
  /**
   * No request will be sent (`--dry-run`): only the models' `info` is read. A provider should not
   * insist on what only a real call needs, such as an API key.
   */
  readonly dryRun?: boolean
  /**
   * Environment variables whose values are secrets (the key variable of every model the config
   * names): besides its own key, a provider hides them from its messages, so that a server echoing
   * another model's key (a shared proxy) does not put it into results.
   */
  readonly secretVariables?: ReadonlyArray<string>
  /**
   * The sweep's batch queue, when it runs batched models: a provider whose entry asks for batch
   * jobs (`batch: true`, or every model under `--batch`) sends its completions through it.
   */
  readonly batch?: Batch.Queue
  /** `--batch`: every model whose provider has batch jobs uses them, whatever its entry says. */
  readonly batchAll?: boolean
}

/** A provider with the options of one `models:` entry decoded. */
export interface DecodedProvider {
  readonly stage: "provider"
  readonly plugin: string
  readonly params: Readonly<Record<string, unknown>>
  readonly make: (model: string, context?: ProviderContext) => Effect.Effect<ModelBundle, PluginError, Scope.Scope>
}

export interface OptionIssue {
  /** Path inside the options object, e.g. ["embedder", "dims"]. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Options that do not decode: every issue, with its path inside the options. */
export interface OptionsError {
  readonly plugin: string
  readonly issues: ReadonlyArray<OptionIssue>
}

interface Described<S extends Stage> {
  readonly stage: S
  readonly name: string
  /** One line for `--help`, the config reference and reports. */
  readonly description: string
  /** The plugin reads gold labels (the oracle); reports mark its cells. */
  readonly needsGold?: boolean
  /** The plugin is not a model (e.g. extractive): reports label its scores. */
  readonly heuristic?: boolean
  /**
   * Rankers: plugins that score every session and leave the cut to the framework. Without a
   * `select` (or the shorthand `k: n`, meaning `select: { top: n }`) in the config, this cut applies.
   */
  readonly defaultSelect?: { readonly top: number }
}

/** A plugin of a pipeline stage as the registry holds it: its options type is known only to `decode`. */
export interface Of<S extends PipelineStage> extends Described<S> {
  readonly decode: (raw: unknown) => Either.Either<Decoded<S>, OptionsError>
}

/** A provider plugin as the registry holds it. */
export interface AnyProviderPlugin extends Described<"provider"> {
  readonly decode: (raw: unknown) => Either.Either<DecodedProvider, OptionsError>
}

export interface RetrieverPlugin<O, I = O> extends Of<"retriever"> {
  readonly options: OptionsSchema<O, I>
  readonly needsGold?: false
  readonly make: (options: O) => Effect.Effect<Retriever.Service, MakeError, Env>
}

/** A retriever that reads gold labels. Only the oracle should be one; reports mark its cells. */
export interface GoldRetrieverPlugin<O, I = O> extends Of<"retriever"> {
  readonly options: OptionsSchema<O, I>
  readonly needsGold: true
  readonly make: (options: O) => Effect.Effect<Retriever.GoldService, MakeError, Env>
}

export interface SummarizerPlugin<O, I = O> extends Of<"summarizer"> {
  readonly options: OptionsSchema<O, I>
  readonly make: (options: O) => Effect.Effect<Summarizer.Service, MakeError, Env>
}

export interface InferrerPlugin<O, I = O> extends Of<"inferrer"> {
  readonly options: OptionsSchema<O, I>
  readonly make: (options: O) => Effect.Effect<Inferrer.Service, MakeError, Env>
}

export interface GeneratorPlugin<O, I = O> extends Of<"generator"> {
  readonly options: OptionsSchema<O, I>
  readonly make: (options: O) => Effect.Effect<Generator.Service, MakeError, Env>
}

export interface ScorerPlugin<O, I = O> extends Of<"scorer"> {
  readonly options: OptionsSchema<O, I>
  readonly make: (options: O) => Effect.Effect<Scorer.Service, MakeError, Env>
}

/** Builds the model(s) one `models:` entry of a config describes. */
export interface ProviderPlugin<O, I = O> extends AnyProviderPlugin {
  readonly options: OptionsSchema<O, I>
  readonly make: (
    options: O,
    model: string,
    context?: ProviderContext
  ) => Effect.Effect<ModelBundle, PluginError, Scope.Scope>
}

export type AnyRetrieverPlugin = Of<"retriever">
export type AnyPlugin =
  Of<"retriever"> | Of<"summarizer"> | Of<"inferrer"> | Of<"generator"> | Of<"scorer"> | AnyProviderPlugin

/** Decode raw options with a plugin's schema; unknown keys are errors (a typo must not be ignored). */
export const decodeOptionsEither = <O, I>(
  plugin: { readonly name: string; readonly options: OptionsSchema<O, I> },
  raw: unknown
): Either.Either<O, OptionsError> =>
  Either.mapLeft(
    Schema.decodeUnknownEither(plugin.options, { onExcessProperty: "error", errors: "all" })(raw ?? {}),
    (e) => ({
      plugin: plugin.name,
      issues: ParseResult.ArrayFormatter.formatErrorSync(e).map((i) => ({ path: i.path, message: i.message }))
    })
  )

/** {@link decodeOptionsEither} as an Effect. */
export const decodeOptions = <O, I>(
  plugin: { readonly name: string; readonly options: OptionsSchema<O, I> },
  raw: unknown
): Effect.Effect<O, OptionsError> => decodeOptionsEither(plugin, raw)

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/** Options back in their config form; a schema that cannot encode its own output keeps the decoded form. */
const encodedParams = <O, I>(schema: OptionsSchema<O, I>, options: O): Readonly<Record<string, unknown>> => {
  const encoded: I | O = Either.getOrElse(Schema.encodeEither(schema)(options), () => options)
  return isRecord(encoded) ? encoded : {}
}

/** The one place an options type is known: decode, then close `make` over the typed options. */
const decoder =
  <S extends PipelineStage, O, I>(
    stage: S,
    plugin: { readonly name: string; readonly options: OptionsSchema<O, I> },
    make: (options: O) => Effect.Effect<MadeOf[S], MakeError, Env>
  ) =>
  (raw: unknown): Either.Either<Decoded<S>, OptionsError> =>
    Either.map(decodeOptionsEither(plugin, raw), (options) => ({
      stage,
      plugin: plugin.name,
      params: encodedParams(plugin.options, options),
      make: Effect.suspend(() => make(options))
    }))

type Definition<P> = Omit<P, "stage" | "decode">

/** Helpers that fix the stage, infer the options type and add `decode`. */
export const retriever = <O, I>(p: Definition<RetrieverPlugin<O, I>>): RetrieverPlugin<O, I> => ({
  ...p,
  stage: "retriever",
  decode: decoder("retriever", p, (o) => Effect.map(p.make(o), (service) => ({ needsGold: false, service })))
})
export const goldRetriever = <O, I>(
  p: Omit<Definition<GoldRetrieverPlugin<O, I>>, "needsGold">
): GoldRetrieverPlugin<O, I> => ({
  ...p,
  stage: "retriever",
  needsGold: true,
  decode: decoder("retriever", p, (o) => Effect.map(p.make(o), (service) => ({ needsGold: true, service })))
})
export const summarizer = <O, I>(p: Definition<SummarizerPlugin<O, I>>): SummarizerPlugin<O, I> => ({
  ...p,
  stage: "summarizer",
  decode: decoder("summarizer", p, p.make)
})
export const inferrer = <O, I>(p: Definition<InferrerPlugin<O, I>>): InferrerPlugin<O, I> => ({
  ...p,
  stage: "inferrer",
  decode: decoder("inferrer", p, p.make)
})
export const generator = <O, I>(p: Definition<GeneratorPlugin<O, I>>): GeneratorPlugin<O, I> => ({
  ...p,
  stage: "generator",
  decode: decoder("generator", p, p.make)
})
export const scorer = <O, I>(p: Definition<ScorerPlugin<O, I>>): ScorerPlugin<O, I> => ({
  ...p,
  stage: "scorer",
  decode: decoder("scorer", p, p.make)
})
export const provider = <O, I>(p: Definition<ProviderPlugin<O, I>>): ProviderPlugin<O, I> => ({
  ...p,
  stage: "provider",
  decode: (raw) =>
    Either.map(decodeOptionsEither(p, raw), (options) => ({
      stage: "provider",
      plugin: p.name,
      params: encodedParams(p.options, options),
      make: (model, context) => Effect.suspend(() => p.make(options, model, context))
    }))
})

export interface Registry {
  readonly get: <S extends PipelineStage>(stage: S, name: string) => Effect.Effect<Of<S>, PluginError>
  readonly provider: (name: string) => Effect.Effect<AnyProviderPlugin, PluginError>
  readonly names: (stage: Stage) => ReadonlyArray<string>
  readonly all: ReadonlyArray<AnyPlugin>
}

/** The plugin registry as a service, so composite plugins (hybrid, rerank) can build their parts. */
export class Plugins extends Context.Tag("@cupid-lab/core/Plugins")<Plugins, Registry>() {}

type Registered = Of<PipelineStage> | AnyProviderPlugin

const isOf =
  <S extends PipelineStage>(stage: S) =>
  (p: Registered): p is Of<S> =>
    p.stage === stage

/** A registry over a list of plugins. Two plugins of one stage with one name is a programming error. */
export const makeRegistry = (plugins: ReadonlyArray<AnyPlugin>): Registry => {
  const byStage = new Map<Stage, Map<string, Registered>>(stages.map((s) => [s, new Map()]))
  for (const p of plugins) {
    const named = byStage.get(p.stage)!
    if (named.has(p.name)) throw new Error(`two ${p.stage} plugins are named "${p.name}"`)
    named.set(p.name, p)
  }
  const names = (stage: Stage) => [...byStage.get(stage)!.keys()].sort()
  const unknown = (stage: Stage, name: string) =>
    new PluginError({
      plugin: name,
      reason: `no ${stage} plugin of this name; valid choices: ${names(stage).join(", ") || "none"}`
    })
  return {
    all: plugins,
    names,
    get: <S extends PipelineStage>(stage: S, name: string): Effect.Effect<Of<S>, PluginError> => {
      const p = byStage.get(stage)!.get(name)
      return p !== undefined && isOf(stage)(p) ? Effect.succeed(p) : Effect.fail(unknown(stage, name))
    },
    provider: (name) => {
      const p = byStage.get("provider")!.get(name)
      return p !== undefined && p.stage === "provider" ? Effect.succeed(p) : Effect.fail(unknown("provider", name))
    }
  }
}

/** How each stage's built value becomes the service {@link build} returns. */
const serviceOf: { readonly [S in PipelineStage]: (made: MadeOf[S]) => ServiceOf[S] } = {
  retriever: (built) => built.service,
  summarizer: (service) => service,
  inferrer: (service) => service,
  generator: (service) => service,
  scorer: (service) => service
}

/** Decode and build in one step, for composite plugins building their parts. */
export const build = <S extends PipelineStage>(
  stage: S,
  spec: { readonly use: string } & Readonly<Record<string, unknown>>
): Effect.Effect<ServiceOf[S], MakeError, Env> =>
  Effect.gen(function* () {
    const registry = yield* Plugins
    const plugin = yield* registry.get(stage, spec.use)
    const { use: _use, ...raw } = spec
    const decoded = plugin.decode(raw)
    if (Either.isLeft(decoded)) {
      return yield* new PluginError({
        plugin: spec.use,
        reason: decoded.left.issues.map((i) => `${i.path.join(".") || "(options)"}: ${i.message}`).join("; ")
      })
    }
    return serviceOf[stage](yield* decoded.right.make)
  })
