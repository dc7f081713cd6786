/**
 * Turning a validated grid into runnable pipelines before any instance runs (a plugin that cannot
 * be built is a config error): the models by their provider plugins, then every stage of every
 * cell (a stage shared by several cells once), with facts about each plugin for reports.
 *
 * @example
 * const cells = yield* Build.cells(config, grid, env) // env: Models, ModelCache, Corpus, Plugins, Memo
 */
import {
  Corpus,
  type Errors as CoreErrors,
  Hash,
  Memo,
  ModelCache,
  Models,
  type Pipeline,
  Plugin,
  Retriever,
  Issues
} from "@cupid-lab/core"
import { Selector, Text } from "@cupid-lab/retrievers"
import type { ResultLine, RunInfo } from "@cupid-lab/results"

import type { FileSystem } from "@effect/platform"
import { Context, Effect, Either, Predicate, type Scope } from "effect"
import { type Config, keyVariable } from "./Config.js"
import { ConfigError } from "./Errors.js"
import * as Grid from "./Grid.js"

import { originOf } from "./Axes.js"
import * as Plugins from "./Plugins.js"

const fail = (config: Config, path: string, reason: string) => new ConfigError({ file: config.file, path, reason })

const messageOf = (defect: unknown) => (defect instanceof Error ? defect.message : String(defect))

export interface BuiltCell {
  readonly cell: Grid.Cell
  readonly pipeline: Pipeline.CellPipeline
  readonly fits: ReadonlyArray<RunInfo.Fit>
  readonly info: ResultLine.CellInfo
}

export const models = (
  config: Config,
  registry: Plugin.Registry,
  context: Plugin.ProviderContext = {}
): Effect.Effect<Record<string, Models.ModelBundle>, ConfigError, Scope.Scope> =>
  Effect.gen(function* () {
    const bundles: Record<string, Models.ModelBundle> = {}
    // Every model's key is a secret the other models' messages must not show either.
    const secretVariables = [...new Set(Object.values(config.models).flatMap((e) => keyVariable(e) ?? []))]
    for (const [name, entry] of Object.entries(config.models)) {
      const at = `models.${name}`
      const providers = registry.names("provider")
      const plugin = yield* Effect.catchAll(registry.provider(entry.provider), () =>
        fail(
          config,
          `${at}.provider`,
          `unknown provider "${entry.provider}"${suggestion(entry.provider, providers)}; valid choices: ${providers.join(", ") || "none"}`
        )
      )
      const decoded = plugin.decode(entry.options)
      if (Either.isLeft(decoded)) {
        return yield* ConfigError.all(
          config.file,
          Issues.clean(decoded.left.issues, "option", "option", {
            also: ["model", "provider"],
            present: ["model", "provider", ...Object.keys(entry.options)]
          }).map((i) => ({ path: [at, ...i.path.map(String)].join("."), reason: i.message }))
        )
      }
      bundles[name] = yield* decoded.right.make(entry.model, { ...context, secretVariables }).pipe(
        Effect.mapError((e) => fail(config, at, `cannot build the model: ${e.reason}`)),
        Effect.catchAllDefect((d) => fail(config, at, `cannot build the model: ${messageOf(d)}`))
      )
    }
    return bundles
  })

const findValue = (
  value: unknown,
  target: string,
  at: ReadonlyArray<string> = []
): ReadonlyArray<string> | undefined => {
  if (value === target) return at
  if (Predicate.isRecord(value)) {
    for (const [k, v] of Object.entries(value)) {
      const found = k === "use" ? undefined : findValue(v, target, [...at, k])
      if (found !== undefined) return found
    }
  }
  return undefined
}

export type Env = Models.Models | ModelCache.ModelCache | Corpus.Corpus | Plugin.Plugins | Memo.Memo

const buildStage = <S extends Plugin.PipelineStage>(
  config: Config,
  plan: Grid.StagePlan<S>,
  env: Context.Context<Env>
): Effect.Effect<Plugin.MadeOf[S], ConfigError, Scope.Scope | FileSystem.FileSystem> => {
  const cannot = (reason: string) =>
    fail(config, plan.origin, `cannot build ${plan.decoded.stage} "${plan.params.use}": ${reason}`)
  return plan.decoded.make.pipe(
    Effect.provide(env),
    Effect.catchTags({
      ModelNotConfigured: (e: CoreErrors.ModelNotConfigured) => {
        const path = findValue(plan.params, e.model) ?? []
        const reason = e.configured.includes(e.model)
          ? e.message
          : `unknown model "${e.model}"${suggestion(e.model, e.configured)}; valid choices: ${e.configured.join(", ") || "none (add it under models:)"}`
        return Effect.fail(fail(config, originOf(plan, path), reason))
      },
      PluginError: (e: CoreErrors.PluginError) => Effect.fail(cannot(e.reason))
    }),
    Effect.catchAllDefect((d) => cannot(messageOf(d)))
  )
}

const suggestion = (word: string, valid: ReadonlyArray<string>): string => {
  const close = Issues.suggest(word, valid)
  return close === undefined ? "" : ` (did you mean "${close}"?)`
}

type Memos = { readonly [S in Plugin.PipelineStage]: Map<string, Plugin.MadeOf[S]> }

export const cells = (
  config: Config,
  grid: Grid.Grid,
  env: Context.Context<Env>
): Effect.Effect<ReadonlyArray<BuiltCell>, ConfigError, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const sourceOf = yield* Plugins.sources(config)
    const memos: Memos = {
      retriever: new Map(),
      summarizer: new Map(),
      inferrer: new Map(),
      generator: new Map(),
      scorer: new Map()
    }
    // Selectors' change detection analyses texts in the sweep's memo, like the plugins.
    const analyzer = Text.analyzer(Context.get(env, Memo.Memo))
    const models = Context.get(env, Models.Models)
    // A stage is built once per binding of the model roles its options name (an unbound stage once).
    const built = <S extends Plugin.PipelineStage>(
      plan: Grid.StagePlan<S>,
      params: unknown,
      cell: Grid.Cell | undefined
    ): Effect.Effect<Plugin.MadeOf[S], ConfigError, Scope.Scope | FileSystem.FileSystem> =>
      Effect.suspend(() => {
        const roles = rolesNamed(params, cell?.models ?? null)
        const key = Hash.canonicalJson(roles === null ? params : { params, models: roles })
        const memo: Map<string, Plugin.MadeOf[S]> = memos[plan.decoded.stage]
        const hit = memo.get(key)
        if (hit !== undefined) return Effect.succeed(hit)
        const scoped = roles === null ? env : Context.add(env, Models.Models, Models.bound(models, roles))
        return Effect.map(buildStage(config, plan, scoped), (made) => {
          memo.set(key, made)
          return made
        })
      })
    const fact = <S extends Plugin.PipelineStage>(
      plan: Grid.StagePlan<S>,
      readsGold: boolean
    ): ResultLine.PluginFact => {
      const source = sourceOf(plan.plugin)
      return {
        stage: plan.decoded.stage,
        name: plan.params.use,
        readsGold: readsGold || plan.plugin.needsGold === true,
        heuristic: plan.plugin.heuristic === true,
        package: source.package,
        version: source.version
      }
    }
    const scorersOf = (cell: Grid.Cell | undefined) =>
      Effect.forEach(grid.scorers, (plan) =>
        Effect.map(built(plan, plan.params, cell), (service) => ({ plugin: plan.params.use, service }))
      )
    const scorers: ReadonlyArray<Pipeline.Built<Plugin.MadeOf["scorer"]>> = yield* scorersOf(grid.cells[0])
    yield* unusedRoles(config, grid)
    // The report's main and primary metrics must be ones the scorers produce: checked now, not after the sweep.
    const metrics = scorers.flatMap((s) => s.service.metrics.map((m) => m.name))
    const named = [
      ...(config.report.main !== undefined ? [{ at: "report.main", name: config.report.main }] : []),
      ...(config.report.primary?.metrics ?? []).map((name, k) => ({ at: `report.primary.metrics[${k}]`, name }))
    ]
    for (const { at, name } of named) {
      if (metrics.includes(name)) continue
      const valid = metrics.length === 0 ? "none (the config has no scorer)" : metrics.join(", ")
      return yield* fail(
        config,
        at,
        `unknown metric "${name}"${suggestion(name, metrics)}; valid choices (the scorers' metrics): ${valid}`
      )
    }
    const out: Array<BuiltCell> = []
    for (const cell of grid.cells) {
      const s = cell.stages
      const pipeline: { -readonly [K in keyof Pipeline.CellPipeline]: Pipeline.CellPipeline[K] } = {
        scorers: yield* scorersOf(cell)
      }
      const plugins: Array<ResultLine.PluginFact> = []
      const fits: Array<RunInfo.Fit> = []
      if (s.retriever !== undefined) {
        const plan = s.retriever
        const use = plan.params.use
        // The plugin is built once whatever selector cells put on it (a fitted embedder is fitted once).
        const { select: _select, ...ranker } = plan.params
        const made = yield* built(plan, ranker, cell)
        if (!made.needsGold && made.service.fit !== undefined)
          fits.push({ cell: cell.name, plugin: use, ...made.service.fit })
        pipeline.retriever = {
          plugin: use,
          ...(plan.select === undefined ? made : selected(made, plan.select, analyzer))
        }
        plugins.push(fact(plan, made.needsGold))
        if (made.service.needsSummaries && s.summarizer === undefined) {
          return yield* fail(
            config,
            plan.origin,
            `retriever "${use}" ranks session summaries, but cell "${cell.name}" has no summarizer; add one (pipeline.summarizer, a sweep axis or the cell)`
          )
        }
      }
      const stage = <S extends "summarizer" | "inferrer" | "generator">(
        plan: Grid.StagePlan<S>,
        readsGold = (_: Plugin.MadeOf[S]) => false
      ) =>
        Effect.map(built(plan, plan.params, cell), (service) => {
          plugins.push(fact(plan, readsGold(service)))
          return { plugin: plan.params.use, service }
        })
      if (s.summarizer !== undefined) pipeline.summarizer = yield* stage(s.summarizer)
      if (s.inferrer !== undefined) pipeline.inferrer = yield* stage(s.inferrer)
      if (s.generator !== undefined) pipeline.generator = yield* stage(s.generator, (g) => g.usesGoldPreference)
      const used = stageModels(config, cell)
      const scorerParams = grid.scorers.map((p) => p.params)
      const info = {
        id: cell.id,
        name: cell.name,
        params: Grid.identityParams(cell),
        usesGold: plugins.some((f) => f.readsGold),
        oracleRetrieval: plugins.some((f) => f.stage === "retriever" && f.readsGold),
        heuristicStages: plugins.filter((f) => f.heuristic).map((f) => f.stage),
        plugins,
        ...(used === undefined ? {} : { models: used }),
        scoring: { scorers: scorerParams, models: modelsNamed(config, cell, scorerParams) ?? {} }
      }
      out.push({ cell, pipeline, fits, info })
    }
    return out
  })

/** Every string an option holds, at any depth: where a stage names its models. */
const strings = (value: unknown): Array<string> =>
  typeof value === "string"
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(strings)
      : Predicate.isRecord(value)
        ? Object.values(value).flatMap(strings)
        : []

/** The entries the cell's stages name (directly or through a bound role), by the name they give; undefined for none. */
const stageModels = (config: Config, cell: Grid.Cell): ResultLine.CellInfo["models"] =>
  modelsNamed(config, cell, Object.values(cell.params))

/** The entries `options` name under the cell's bindings (its stages', or its scorers'). */
const modelsNamed = (
  config: Config,
  cell: Grid.Cell,
  options: ReadonlyArray<unknown>
): ResultLine.CellInfo["models"] => {
  const named = [...new Set(options.flatMap(strings))].sort()
  const used = named.flatMap((name) => {
    const entry = cell.models?.[name] ?? name
    const e = config.models[entry]
    return e === undefined ? [] : [[name, { entry, provider: e.provider, model: e.model }] as const]
  })
  return used.length === 0 ? undefined : Object.fromEntries(used)
}

/** The cell's bound roles that `params` names; null when it names none. */
const rolesNamed = (
  params: unknown,
  models: Readonly<Record<string, string>> | null
): Readonly<Record<string, string>> | null => {
  if (models === null) return null
  const named = new Set(strings(params))
  const roles = Object.entries(models).filter(([role]) => named.has(role))
  return roles.length === 0 ? null : Object.fromEntries(roles)
}

/** A bound role that no stage or scorer of any cell names is a slip (`models.subjcet`): refused where it was written. */
const unusedRoles = (config: Config, grid: Grid.Grid): Effect.Effect<void, ConfigError> => {
  const named = new Set([
    ...grid.scorers.flatMap((p) => strings(p.params)),
    ...grid.cells.flatMap((c) => Object.values(c.params).flatMap(strings))
  ])
  const written = [
    ...config.sweep.flatMap((a) => (a._tag === "Models" ? [{ role: a.role, at: `sweep.${a.key}` }] : [])),
    ...config.cells.flatMap((c, i) =>
      Object.keys(c.models ?? {}).map((role) => ({ role, at: `cells[${i}].models.${role}` }))
    )
  ]
  const unused = written.find((w) => !named.has(w.role))
  if (unused === undefined) return Effect.void
  return Effect.fail(
    fail(
      config,
      unused.at,
      `no stage or scorer names the model "${unused.role}"${suggestion(unused.role, [...named])}, so binding it changes nothing; a role is the name stages give as their model (model: ${unused.role})`
    )
  )
}

const selected = (
  made: Plugin.BuiltRetriever,
  select: Selector.Spec,
  analyzer: Text.Analyzer
): Plugin.BuiltRetriever => {
  const cut = (input: Retriever.RetrievalInput) => (r: Retriever.Retrieval) =>
    Selector.apply(select, r, input.query, analyzer)
  // A plain retriever stays plain: its cut is plain code too.
  if (made.needsGold) {
    const gold = made.service
    const now = gold.now
    return {
      needsGold: true,
      service:
        now === undefined
          ? {
              needsSummaries: gold.needsSummaries,
              retrieve: (input, g) => Effect.map(gold.retrieve(input, g), cut(input))
            }
          : Retriever.plainGold({ needsSummaries: gold.needsSummaries }, (input, g) => cut(input)(now(input, g)))
    }
  }
  const plain = made.service
  const now = plain.now
  return {
    needsGold: false,
    service:
      now === undefined
        ? { needsSummaries: plain.needsSummaries, retrieve: (input) => Effect.map(plain.retrieve(input), cut(input)) }
        : Retriever.plain({ needsSummaries: plain.needsSummaries }, (input) => cut(input)(now(input)))
  }
}
