/**
 * The grid of a sweep: every cell the config asks for (the base pipeline times each `sweep` axis in
 * file order, then the explicit `cells`; equal cells are one), each stage's plugin looked up and its
 * options decoded once into a typed plan, with a stable id and a readable name. A grid larger than
 * `maxCells` is refused with its size before any cell is made.
 *
 * @example
 * const grid = yield* Grid.expand(config, registry)
 * grid.cells.map((c) => `${c.id} ${c.name}`) // ["3f2a... all", "91c0... bm25(k=2)", ...]
 * grid.cells[1].stages.retriever?.decoded.make // builds bm25 with its decoded options
 */
import { Hash, type Plugin, Stage, Transform } from "@cupid-lab/core"
import { Selector } from "@cupid-lab/retrievers"
import { Effect, Either, Schema } from "effect"
import type { Config, Spec, StageName } from "./Config.js"
import { ConfigError } from "../Errors.js"
import { names, withTransforms } from "./CellNames.js"
import * as Issues from "@cupid-lab/core/Issues"
import { describeSize, type RawStage, rawCells, type Size, size } from "./RawCells.js"
import { originOf } from "./Tree.js"

export { names } from "./CellNames.js"
export { describeSize, rawCells, size } from "./RawCells.js"

/** One stage of a cell, ready to build: the plugin and its options decoded once. */
export interface StagePlan<S extends Plugin.PipelineStage> {
  readonly plugin: Plugin.Of<S>
  /** `decoded.make` builds the stage. */
  readonly decoded: Plugin.Decoded<S>
  /** `{ use, ...options }` with defaults filled in, encoded. */
  readonly params: Spec
  /** Where in the config the stage was written (`sweep.retriever[2]`), and its options (`k`, `embedder.dims`) when elsewhere. */
  readonly origin: string
  readonly origins: ReadonlyMap<string, string>
  /** Retrievers only: the selector that replaces the plugin's own cut (`select:`). */
  readonly select?: Selector.Spec
}

export type Stages = { readonly [S in StageName]?: StagePlan<S> }

export interface Cell {
  /** Position in the grid: results and reports follow it. */
  readonly index: number
  readonly id: string
  readonly name: string
  /** Every stage, `null` when the cell has none. */
  readonly params: Readonly<Record<StageName, Spec | null>>
  readonly stages: Stages
  /** Normalized; null for none. */
  readonly transform: Transform.Spec | null
}

/** What a cell's results are keyed and reported by: its stages' parameters, plus `transform` when it has one. */
export const identityParams = (cell: Cell): Readonly<Record<string, unknown>> =>
  cell.transform === null ? cell.params : { ...cell.params, transform: cell.transform }

export interface Grid {
  readonly cells: ReadonlyArray<Cell>
  readonly scorers: ReadonlyArray<StagePlan<"scorer">>
  readonly baseline: Cell
}

const tooLarge = (config: Config, s: Size) =>
  new ConfigError({
    file: config.file,
    path: s.axes.length > 0 ? "sweep" : "cells",
    reason: `the grid has ${describeSize(s)}, more than the limit of ${config.maxCells.toLocaleString("en-US")} (maxCells); ` +
      `sweep fewer alternatives, or raise the limit with \`maxCells: ${s.cells}\` in the config or \`--max-cells ${s.cells}\` on the command line`
  })

/** Decode a looked-up plugin's options; every problem is reported, where it was written. */
const decodeWith = <S extends Plugin.PipelineStage>(
  config: Config,
  plugin: Plugin.Of<S>,
  options: Readonly<Record<string, unknown>>,
  raw: RawStage,
  accepted: Issues.Accepted = { also: [], present: Object.keys(options) }
): Effect.Effect<Plugin.Decoded<S>, ConfigError> =>
  Either.match(plugin.decode(options), {
    onLeft: (e) =>
      Effect.fail(ConfigError.all(config.file, Issues.clean(e.issues, "option", "option", accepted).map((i) => ({ path: originOf(raw, i.path), reason: i.message })))),
    onRight: Effect.succeed
  })

/** Look a plugin up by name; an unknown name lists the valid ones. */
const lookUp = <S extends Plugin.PipelineStage>(config: Config, registry: Plugin.Registry, stage: S, spec: Spec, raw: RawStage) =>
  Effect.catchAll(registry.get(stage, spec.use), () => {
    const names = registry.names(stage)
    const valid = names.length === 0 ? "none (no plugin of this stage is registered)" : names.join(", ")
    const close = Issues.suggest(spec.use, names)
    return Effect.fail(
      new ConfigError({
        file: config.file,
        path: originOf(raw, ["use"]),
        reason: `unknown ${stage} "${spec.use}"${close === undefined ? "" : ` (did you mean "${close}"?)`}; valid choices: ${valid}`
      })
    )
  })

/** Plan a retriever: its cut (`select`, or `k` for rankers) is taken apart from the plugin's options. */
const planRetriever = (config: Config, registry: Plugin.Registry, spec: Spec, raw: RawStage): Effect.Effect<StagePlan<"retriever">, ConfigError> =>
  Effect.gen(function*() {
    const plugin = yield* lookUp(config, registry, "retriever", spec, raw)
    const { use, ...options } = spec
    const split = Selector.splitSpec(options, plugin)
    if (Either.isLeft(split)) return yield* new ConfigError({ file: config.file, path: originOf(raw, split.left.path), reason: split.left.message })
    const { select, rest } = split.right
    const decoded = yield* decodeWith(config, plugin, rest, raw, { also: Selector.cutKeys(plugin), present: Object.keys(options) })
    return {
      plugin,
      decoded,
      params: { use, ...decoded.params, ...(select === undefined ? {} : { select: Schema.encodeSync(Selector.Spec)(select) }) },
      origin: raw.origin,
      origins: raw.origins,
      ...(select === undefined ? {} : { select })
    }
  })

/** Plan a stage other than the retriever (scorers too). */
const planStage = <S extends Exclude<Plugin.PipelineStage, "retriever">>(
  config: Config,
  registry: Plugin.Registry,
  stage: S,
  spec: Spec,
  raw: RawStage
): Effect.Effect<StagePlan<S>, ConfigError> =>
  Effect.gen(function*() {
    const plugin = yield* lookUp(config, registry, stage, spec, raw)
    const { use, ...options } = spec
    if ("select" in options) {
      return yield* new ConfigError({ file: config.file, path: originOf(raw, ["select"]), reason: "`select` (a selector) is only for retrievers" })
    }
    const decoded = yield* decodeWith(config, plugin, options, raw)
    return { plugin, decoded, params: { use, ...decoded.params }, origin: raw.origin, origins: raw.origins }
  })

/** Hands control to the event loop (a fiber's own yield may stay in the microtask queue), so a signal can interrupt. */
const letEventLoopRun = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

type Planners = { readonly [S in StageName]: (spec: Spec, raw: RawStage) => Effect.Effect<StagePlan<S>, ConfigError> }
type Memos = { readonly [S in StageName]: Map<string, StagePlan<S>> }

/** Decode every stage of every cell and the scorers; fails on the first stage with problems, in config order. */
export const expand = (config: Config, registry: Plugin.Registry): Effect.Effect<Grid, ConfigError> =>
  Effect.gen(function*() {
    const fail = (at: string, reason: string) => new ConfigError({ file: config.file, path: at, reason })
    const sized = size(config)
    if (sized.cells > config.maxCells) return yield* tooLarge(config, sized)
    const planners: Planners = {
      retriever: (spec, raw) => planRetriever(config, registry, spec, raw),
      summarizer: (spec, raw) => planStage(config, registry, "summarizer", spec, raw),
      inferrer: (spec, raw) => planStage(config, registry, "inferrer", spec, raw),
      generator: (spec, raw) => planStage(config, registry, "generator", spec, raw)
    }
    // A stage written once and shared by many cells (one inferrer under twenty retrievers) is decoded once.
    const memos: Memos = { retriever: new Map(), summarizer: new Map(), inferrer: new Map(), generator: new Map() }
    const plan = <S extends StageName>(stage: S, raw: RawStage): Effect.Effect<StagePlan<S> | undefined, ConfigError> => {
      const spec = raw.spec
      if (spec === null) return Effect.succeed(undefined)
      const memo = memos[stage]
      const key = Hash.canonicalJson(spec)
      const hit = memo.get(key)
      return hit !== undefined
        ? Effect.succeed({ ...hit, origin: raw.origin, origins: raw.origins })
        : Effect.tap(planners[stage](spec, raw), (p) => Effect.sync(() => memo.set(key, p)))
    }

    const scorers: Array<StagePlan<"scorer">> = []
    for (const [i, spec] of config.scorers.entries()) {
      const raw: RawStage = { spec, origin: `scorers[${i}]`, origins: new Map() }
      scorers.push(yield* planStage(config, registry, "scorer", spec, raw))
    }
    const scorerParams = scorers.map((s) => s.params)

    interface Draft {
      id: string
      name?: { value: string; origin: string }
      params: Readonly<Record<StageName, Spec | null>>
      stages: Stages
      transform: Transform.Spec | null
    }
    const drafts: Array<Draft> = []
    const byId = new Map<string, Draft>()
    let made = 0
    for (const raw of rawCells(config)) {
      if (raw instanceof ConfigError) return yield* raw
      if (++made % 256 === 0) yield* letEventLoopRun
      const retriever = yield* plan("retriever", raw.stages.retriever)
      const summarizer = yield* plan("summarizer", raw.stages.summarizer)
      const inferrer = yield* plan("inferrer", raw.stages.inferrer)
      const generator = yield* plan("generator", raw.stages.generator)
      const stages: Stages = {
        ...(retriever === undefined ? {} : { retriever }),
        ...(summarizer === undefined ? {} : { summarizer }),
        ...(inferrer === undefined ? {} : { inferrer }),
        ...(generator === undefined ? {} : { generator })
      }
      const params = Stage.byCellStage((s) => stages[s]?.params ?? null)
      const t = raw.transform?.value
      const transform = t === undefined || Transform.isIdentity(t) ? null : Transform.normalize(t)
      const id = Hash.contentHash(transform === null ? { params, scorers: scorerParams } : { params, scorers: scorerParams, transform })
      const existing = byId.get(id)
      if (existing !== undefined) {
        if (existing.name === undefined && raw.name !== undefined) existing.name = raw.name
        continue
      }
      const draft: Draft = raw.name === undefined ? { id, params, stages, transform } : { id, name: raw.name, params, stages, transform }
      drafts.push(draft)
      byId.set(id, draft)
    }

    const explicit = new Map<string, string>()
    for (const d of drafts) {
      if (d.name === undefined) continue
      if (explicit.has(d.name.value)) return yield* fail(d.name.origin, `duplicate cell name "${d.name.value}" (also used at ${explicit.get(d.name.value)})`)
      explicit.set(d.name.value, d.name.origin)
    }
    const generated = withTransforms(names(drafts.map((d) => d.params)), drafts.map((d) => d.transform))
    const taken = new Set(explicit.keys())
    const cells: Array<Cell> = drafts.map((d, index) => {
      let name = d.name?.value
      if (name === undefined) {
        name = generated[index]!
        for (let n = 2; taken.has(name); n++) name = `${generated[index]!} #${n}`
        taken.add(name)
      }
      return { index, id: d.id, name, params: d.params, stages: d.stages, transform: d.transform }
    })

    const unknownCell = (at: string, wanted: string) => {
      const close = Issues.suggest(wanted, cells.map((c) => c.name))
      return fail(at, `unknown cell "${wanted}"${close === undefined ? "" : ` (did you mean "${close}"?)`}; valid choices: ${cells.map((c) => c.name).join(", ")}`)
    }
    const wanted = config.report.baseline
    let baseline: Cell | undefined
    if (wanted !== undefined) {
      baseline = cells.find((c) => c.name === wanted || c.id === wanted)
      if (baseline === undefined) return yield* unknownCell("report.baseline", wanted)
    }
    for (const [k, ref] of (config.report.reference ?? []).entries()) {
      if (!cells.some((c) => c.name === ref || c.id === ref)) return yield* unknownCell(`report.reference[${k}]`, ref)
    }
    baseline ??= cells.find((c) => c.params.retriever?.use === "all") ?? cells[0]
    if (baseline === undefined) return yield* fail("", "the config defines no cell: give a pipeline, a sweep or cells")
    return { cells, scorers, baseline }
  })
