/**
 * Scoring a memory system that runs outside the framework (`cupid-lab score`): its predictions file
 * (Predictions.ts) replayed through an ordinary sweep, one explicit cell per system, so the run
 * directory, scorers, statistics, reports, viewer, exports, `compare` and `merge` are the sweep's.
 *
 * Three plugins replay a file: the retriever `predictions` gives the line's selection and ranking,
 * the inferrer `predictions` its `preference`, the generator `predictions` its `response`. None reads
 * gold: the retriever finds the line by the fingerprint of the query it is handed, and the
 * inferrer and generator, which are handed only the request and the evidence (the same for two
 * instances of a persona whose systems selected alike), answer for the instance their cell's
 * retriever found in this pair, which it leaves in a fiber-local reference (a pair's stages run one
 * after another on one fiber).
 *
 * @example
 * const resolved = yield* Predictions.read("mem0.jsonl", opened)
 * const config = yield* Replay.config({ resolved, source: "sample" })
 * const outcome = yield* Replay.score(config, resolved, { log })
 */
import { Errors, Plugin, Yaml } from "@cupid-lab/core"
import { Config, Plugins } from "@cupid-lab/runner"
import { FileSystem } from "@effect/platform"
import { Effect, Either, FiberRef, Predicate, Schema } from "effect"
import * as Predictions from "./Predictions.js"
import * as Sweeps from "./Sweeps.js"

export const pluginName = "predictions"

const Options = Schema.Struct({
  /** The predictions file as given, for people reading the cell's parameters. */
  file: Schema.String,
  system: Schema.String,
  /** The file's SHA-256: a changed file changes the cell's id and so the run's. */
  sha256: Schema.String
})
type Options = typeof Options.Type

/** The fingerprint of the instance the current pair's `predictions` retriever found. */
const current = FiberRef.unsafeMake<string | undefined>(undefined)

const systemOf = (resolved: Predictions.Resolved, { system, sha256 }: Options) => {
  const found = resolved.systems.find((s) => s.name === system)
  if (sha256 !== resolved.sha256)
    return Effect.fail(
      new Errors.PluginError({ plugin: pluginName, reason: `replays ${resolved.file}, whose SHA-256 is not ${sha256}` })
    )
  return found === undefined
    ? Effect.fail(
        new Errors.PluginError({
          plugin: pluginName,
          reason: `no system "${system}" in ${resolved.file}; its systems: ${resolved.systems.map((s) => s.name).join(", ")}`
        })
      )
    : Effect.succeed(found)
}

/** The prediction the current pair's retriever found for `system`, or why there is none. */
const found = (resolved: Predictions.Resolved, system: Predictions.System, stage: string) =>
  Effect.flatMap(FiberRef.get(current), (key) => {
    const prediction = key === undefined ? undefined : system.predictions.get(key)
    return prediction === undefined
      ? Effect.fail(
          new Errors.StageError({
            stage,
            plugin: pluginName,
            reason: `replays the line the cell's "${pluginName}" retriever found, and this cell has none (the ${stage} stage of ${resolved.file} needs it)`
          })
        )
      : Effect.succeed(prediction)
  })

/** The replaying plugins of one predictions file (registered beside the built-ins for the score run). */
export const plugins = (resolved: Predictions.Resolved): ReadonlyArray<Plugin.AnyPlugin> => [
  Plugin.retriever({
    name: pluginName,
    description: `The selection and ranking an external system wrote in ${resolved.file}.`,
    options: Options,
    make: (options) =>
      Effect.map(systemOf(resolved, options), (system) => ({
        needsSummaries: false,
        retrieve: ({ query }) => {
          const key = Predictions.fingerprint(query)
          const prediction = system.predictions.get(key)
          return prediction === undefined
            ? Effect.fail(
                new Errors.StageError({
                  stage: "retrieve",
                  plugin: pluginName,
                  reason: `no prediction for this instance (system "${system.name}" in ${resolved.file})`
                })
              )
            : Effect.as(FiberRef.set(current, key), prediction.retrieval)
        }
      }))
  }),
  Plugin.inferrer({
    name: pluginName,
    description: `The preference an external system inferred, from ${resolved.file}.`,
    options: Options,
    make: (options) =>
      Effect.map(systemOf(resolved, options), (system) => ({
        infer: () =>
          Effect.map(found(resolved, system, "infer"), (p) => ({ preference: p.preference ?? "", analysis: "" }))
      }))
  }),
  Plugin.generator({
    name: pluginName,
    description: `The response an external system generated, from ${resolved.file}.`,
    options: Options,
    make: (options) =>
      Effect.map(systemOf(resolved, options), (system) => ({
        usesGoldPreference: false,
        generate: () => Effect.map(found(resolved, system, "generate"), (p) => ({ text: p.response ?? "" }))
      }))
  })
]

/** The scorers without `--config`: retrieval at 2 and 4, and the offline preference match when lines give preferences. */
export const defaultScorers = (resolved: Predictions.Resolved): ReadonlyArray<Readonly<Record<string, unknown>>> => [
  { use: "retrieval", ks: [2, 4] },
  ...(resolved.preferences ? [{ use: "preference-match", matcher: "lexical" }] : [])
]

/** A run name from the file's name (one folder name, as configs require). */
const runName = (file: string): string =>
  `score-${Predictions.defaultSystem(file)
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .slice(0, 100)}`

export interface ConfigInput {
  readonly resolved: Predictions.Resolved
  readonly source: string
  /** A config whose scorers, models, seed, bootstrap, cache and report settings the run takes. */
  readonly configFile?: string
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** The keys of a `--config` the score run ignores: the predictions replace its cells. */
export const replacedKeys = ["pipeline", "sweep", "cells", "out", "name"] as const

/**
 * The score run's config, made in memory and checked like a file: the data source, one explicit
 * cell per system and the scorers (the config's, or {@link defaultScorers}).
 */
export const config = Effect.fn("Replay.config")(function* (input: ConfigInput) {
  const { resolved } = input
  const env = input.env ?? process.env
  let base: Record<string, unknown> = {}
  let file = resolved.file
  if (input.configFile !== undefined) {
    file = input.configFile
    // Load it first: its own problems are reported as a sweep reports them.
    yield* Config.load(file, env)
    const text = yield* Effect.orDie(Effect.flatMap(FileSystem.FileSystem, (fs) => fs.readFileString(file)))
    const raw = Either.getOrElse(Yaml.read(text), () => ({}))
    base = Predicate.isRecord(raw) ? { ...raw } : {}
    for (const key of replacedKeys) delete base[key]
  }
  const data = Predicate.isRecord(base.data) ? base.data : {}
  const report = Predicate.isRecord(base.report) ? base.report : {}
  const { baseline: _baseline, reference: _reference, ...keptReport } = report
  const stage = (system: string) => ({ use: pluginName, file: resolved.file, system, sha256: resolved.sha256 })
  const raw = {
    ...base,
    name: runName(resolved.file),
    description: `The predictions of ${resolved.file}, scored (cupid-lab score).`,
    data: { ...(data.onInvalid === undefined ? {} : { onInvalid: data.onInvalid }), source: input.source },
    scorers: input.configFile !== undefined && Array.isArray(base.scorers) ? base.scorers : defaultScorers(resolved),
    cells: resolved.systems.map((s) => ({
      name: s.name,
      retriever: stage(s.name),
      ...(resolved.preferences ? { inferrer: stage(s.name) } : {}),
      ...(resolved.responses ? { generator: stage(s.name) } : {})
    })),
    report: keptReport
  }
  return yield* Config.parse(JSON.stringify(raw), file, env)
})

/** The sweep of a score run: the built-ins (or `options.plugins`) and the file's replaying plugins. */
export const score = (config: Config.Config, resolved: Predictions.Resolved, options: Sweeps.Options = {}) =>
  Sweeps.sweep(config, { ...options, plugins: [...(options.plugins ?? Plugins.builtins()), ...plugins(resolved)] })
