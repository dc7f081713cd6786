/**
 * Turning a validated grid into runnable pipelines: the configured models are built by their
 * provider plugins, then every stage of every cell by its plugin (a stage shared by several cells,
 * such as one inferrer under twenty retrievers, is built once). All of it happens before any
 * instance runs, so a plugin that cannot be built, or a model name that is not configured, stops
 * the sweep with a config error instead of failing each pair.
 *
 * @example
 * import { Build } from "@cupid-lab/experiments"
 * const bundles = yield* Build.models(config, registry)
 * const cells = yield* Build.cells(config, grid, env) // env: Models, ModelCache, Corpus, Plugins
 */
import {
  Corpus,
  type Errors as CoreErrors,
  type Generator,
  Hash,
  type Inferrer,
  ModelCache,
  Models,
  type Pipeline,
  Plugin,
  type Retriever,
  type Scorer,
  type Summarizer
} from "@cupid-lab/core"
import { Context, Effect, type Scope } from "effect"
import type { Config, StageName } from "./Config.js"
import { ConfigError } from "./Errors.js"
import { Selector } from "@cupid-lab/retrievers"
import * as Grid from "./Grid.js"
import { originOf } from "./Grid.js"
import * as Issues from "./internal/Issues.js"
import { isRecord } from "./internal/Tree.js"
import type { PluginFact } from "./ResultLine.js"
import * as Results from "./Results.js"

export interface BuiltCell {
  readonly cell: Grid.Cell
  readonly pipeline: Pipeline.CellPipeline
  /** The cell reads gold: an oracle retriever or an oracle-preference generator. */
  readonly usesGold: boolean
  /** Stages whose plugin declares itself heuristic. */
  readonly heuristicStages: ReadonlyArray<string>
  /** What the cell's plugins fitted on training data (recorded in run.json). */
  readonly fits: ReadonlyArray<CellFit>
  /** What every result line of the cell carries: id, name and normalized parameters. */
  readonly identity: Results.CellIdentity
  /** What the run records of each plugin of the cell (reports read gold and heuristic marks from these). */
  readonly plugins: ReadonlyArray<PluginFact>
}

export interface CellFit extends Retriever.Fit {
  readonly cell: string
  readonly plugin: string
}

/** Build every `models:` entry with its provider plugin (for a dry run: `{ dryRun: true }`, which needs no keys). */
export const models = (
  config: Config,
  registry: Plugin.Registry,
  context: Plugin.ProviderContext = {}
): Effect.Effect<Record<string, Models.ModelBundle>, ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const bundles: Record<string, Models.ModelBundle> = {}
    for (const [name, entry] of Object.entries(config.models)) {
      const at = `models.${name}`
      const fail = (path: string, reason: string) => new ConfigError({ file: config.file, path, reason })
      const providers = registry.names("provider")
      if (!providers.includes(entry.provider)) {
        return yield* fail(`${at}.provider`, `unknown provider "${entry.provider}"; valid choices: ${providers.join(", ") || "none"}`)
      }
      const plugin = yield* Effect.orDie(registry.get("provider", entry.provider))
      const options = yield* Plugin.decodeOptions(plugin, entry.options).pipe(
        Effect.mapError((e) => {
          const issue = Issues.clean(e.issues, "option")[0]!
          return fail([at, ...issue.path.map(String)].join("."), issue.message)
        })
      )
      bundles[name] = yield* plugin.make(options, entry.model, context).pipe(
        Effect.mapError((e) => fail(at, `cannot build the model: ${e.reason}`)),
        Effect.catchAllDefect((d) => fail(at, `cannot build the model: ${d instanceof Error ? d.message : String(d)}`))
      )
    }
    return bundles
  })

/** The option path (inside a stage's params) holding `value`, for pointing at a model name. */
const findValue = (value: unknown, target: string, at: ReadonlyArray<string> = []): ReadonlyArray<string> | undefined => {
  if (value === target) return at
  if (isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      const found = k === "use" ? undefined : findValue(v, target, [...at, k])
      if (found !== undefined) return found
    }
  }
  return undefined
}

const modelError = /^model "(.*)"$/

export type Env = Models.Models | ModelCache.ModelCache | Corpus.Corpus | Plugin.Plugins

/** Build one stage, turning any failure into a config error located where the stage was written. */
const buildStage = (
  config: Config,
  plan: Grid.StagePlan,
  stage: string,
  env: Context.Context<Env>
): Effect.Effect<unknown, ConfigError, Scope.Scope> => {
  const make = (plan.plugin as { make: (o: unknown) => Effect.Effect<unknown, CoreErrors.PluginError, Plugin.Env> }).make
  const fail = (path: string, reason: string) => new ConfigError({ file: config.file, path, reason })
  return Effect.suspend(() => make(plan.options)).pipe(
    Effect.provide(env),
    Effect.mapError((e) => {
      const m = modelError.exec(e.plugin)
      if (m !== null) {
        const name = m[1]!
        const path = findValue(plan.params, name) ?? []
        const configured = Object.keys(config.models).sort()
        const reason = configured.includes(name)
          ? `model "${name}": ${e.reason}`
          : `unknown model "${name}"; valid choices: ${configured.join(", ") || "none (add it under models:)"}`
        return fail(originOf(plan, path), reason)
      }
      return fail(plan.origin, `cannot build ${stage} "${plan.params.use}": ${e.reason}`)
    }),
    Effect.catchAllDefect((d) => fail(plan.origin, `cannot build ${stage} "${plan.params.use}": ${d instanceof Error ? d.message : String(d)}`))
  )
}

/** Build the scorers and every cell's stages (each distinct stage once). */
export const cells = (
  config: Config,
  grid: Grid.Grid,
  env: Context.Context<Env>
): Effect.Effect<ReadonlyArray<BuiltCell>, ConfigError, Scope.Scope> =>
  Effect.gen(function*() {
    const memo = new Map<string, unknown>()
    const built = (stage: string, plan: Grid.StagePlan) =>
      Effect.suspend(() => {
        const k = `${stage}\0${Hash.canonicalJson(plan.params)}`
        return memo.has(k)
          ? Effect.succeed(memo.get(k))
          : Effect.tap(buildStage(config, plan, stage, env), (s) => Effect.sync(() => memo.set(k, s)))
      })
    const scorers: Array<Pipeline.Built<Scorer.Service>> = []
    for (const plan of grid.scorers) {
      scorers.push({ plugin: plan.params.use, service: (yield* built("scorer", plan)) as Scorer.Service })
    }
    const out: Array<BuiltCell> = []
    for (const cell of grid.cells) {
      const s = cell.stages
      const pipeline: { -readonly [K in keyof Pipeline.CellPipeline]: Pipeline.CellPipeline[K] } = { scorers }
      const heuristicStages: Array<string> = []
      const fits: Array<CellFit> = []
      let usesGold = false
      if (s.retriever !== undefined) {
        // The plugin is built once whatever selector cells put on it (a fitted embedder is fitted once).
        const { select: _select, ...ranker } = s.retriever.params
        const raw = yield* built("retriever", { ...s.retriever, params: { ...ranker, use: s.retriever.params.use } })
        const select = s.retriever.select
        const gold = (s.retriever.plugin as Plugin.AnyRetrieverPlugin).needsGold === true
        usesGold ||= gold
        if (gold) {
          const goldService = raw as Retriever.GoldService
          pipeline.retriever = {
            plugin: s.retriever.params.use,
            needsGold: true,
            service: select === undefined ? goldService : {
              needsSummaries: goldService.needsSummaries,
              retrieve: (input, g) => Effect.map(goldService.retrieve(input, g), (r) => Selector.apply(select, r, input.query))
            }
          }
        } else {
          const plain = raw as Retriever.Service
          if (plain.fit !== undefined) fits.push({ cell: cell.name, plugin: s.retriever.params.use, ...plain.fit })
          const service: Retriever.Service = select === undefined ? plain : {
            needsSummaries: plain.needsSummaries,
            retrieve: (input) => Effect.map(plain.retrieve(input), (r) => Selector.apply(select, r, input.query))
          }
          pipeline.retriever = { plugin: s.retriever.params.use, needsGold: false, service }
        }
        if (pipeline.retriever.service.needsSummaries && s.summarizer === undefined) {
          return yield* new ConfigError({
            file: config.file,
            path: s.retriever.origin,
            reason: `retriever "${s.retriever.params.use}" ranks session summaries, but cell "${cell.name}" has no summarizer; add one (pipeline.summarizer, a sweep axis or the cell)`
          })
        }
      }
      const stage = <K extends Exclude<StageName, "retriever">>(name: K) =>
        Effect.gen(function*() {
          const plan = s[name]
          if (plan === undefined) return undefined
          if ((plan.plugin as { heuristic?: boolean }).heuristic === true) heuristicStages.push(name)
          return { plugin: plan.params.use, service: yield* built(name, plan) }
        })
      const summarizer = yield* stage("summarizer")
      if (summarizer) pipeline.summarizer = summarizer as Pipeline.Built<Summarizer.Service>
      const inferrer = yield* stage("inferrer")
      if (inferrer) pipeline.inferrer = inferrer as Pipeline.Built<Inferrer.Service>
      const generator = yield* stage("generator")
      if (generator) {
        const g = generator as Pipeline.Built<Generator.Service>
        pipeline.generator = g
        usesGold ||= g.service.usesGoldPreference
      }
      const plugins: Array<PluginFact> = []
      for (const name of ["retriever", "summarizer", "inferrer", "generator"] as const) {
        const plan = s[name]
        if (plan === undefined) continue
        plugins.push({
          stage: name,
          name: plan.params.use,
          readsGold: name === "retriever" ? pipeline.retriever?.needsGold === true : name === "generator" ? pipeline.generator?.service.usesGoldPreference === true : false,
          heuristic: heuristicStages.includes(name),
          package: "",
          version: ""
        })
      }
      out.push({
        cell,
        pipeline,
        usesGold,
        heuristicStages,
        fits,
        identity: { id: cell.id, name: cell.name, params: Grid.identityParams(cell) },
        plugins
      })
    }
    return out
  })

/** The environment plugins are built in. */
export const environment = (services: {
  readonly models: Models.Service
  readonly cache: ModelCache.Service
  readonly corpus: Corpus.Service
  readonly registry: Plugin.Registry
}): Context.Context<Env> =>
  Context.make(Models.Models, services.models).pipe(
    Context.add(ModelCache.ModelCache, services.cache),
    Context.add(Corpus.Corpus, services.corpus),
    Context.add(Plugin.Plugins, services.registry)
  )
