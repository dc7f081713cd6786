/**
 * The grid of a sweep: every cell the config asks for (the base pipeline times each `sweep` axis in
 * file order, then the explicit `cells`; equal cells are one), each stage's plugin decoded once into
 * a typed plan, with a stable id and a name showing what varies. A grid larger than `maxCells` is
 * refused with its size, counted from the axes, before any cell is made.
 *
 * @example
 * const grid = yield* Grid.expand(config, registry)
 * grid.cells.map((c) => `${c.id} ${c.name}`) // ["3f2a... all", "91c0... bm25(k=2)", ...]
 * grid.cells[1].stages.retriever?.decoded.make // builds bm25 with its decoded options
 * Grid.size(config) // { cells: 8000, axes: [{ key: "retriever.k", alternatives: 20 }, ...], explicit: 0 }
 */
import { Hash, type Plugin, Stage, Issues } from "@cupid-lab/core"
import { Transform } from "@cupid-lab/data"
import { Selector } from "@cupid-lab/retrievers"
import { Columns } from "@cupid-lab/results"

import { Array as Arr, Effect, Either, Schema } from "effect"
import { ConfigError } from "./Errors.js"
import { countAlternatives, type Origins, originOf, type Spec } from "./Axes.js"
import { rawCells, rawStage, type RawStage } from "./internal/rawCells.js"

import type { Config, Located, StageName } from "./Config.js"

/** One stage of a cell, ready to build: the plugin and its options decoded once. */
export interface StagePlan<S extends Plugin.PipelineStage> extends Origins {
  readonly plugin: Plugin.Of<S>
  /** `decoded.make` builds the stage. */
  readonly decoded: Plugin.Decoded<S>
  /** `{ use, ...options }` with defaults filled in, encoded. */
  readonly params: Spec
  /** Retrievers only: the selector that replaces the plugin's own cut (`select:`). */
  readonly select?: Selector.Spec
}

/** A cell's stages; undefined where the cell has none. */
export type Stages = { readonly [S in StageName]: StagePlan<S> | undefined }

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
  /** Model roles bound to `models:` entries, by role; null when the cell binds none. */
  readonly models: Readonly<Record<string, string>> | null
}

/** What a cell's results are keyed and reported by: its stages' parameters, plus `transform` and `models` when it has them. */
export const identityParams = (cell: Cell): Readonly<Record<string, unknown>> => ({
  ...cell.params,
  ...(cell.transform === null ? {} : { transform: cell.transform }),
  ...(cell.models === null ? {} : { models: cell.models })
})

export interface Grid {
  readonly cells: ReadonlyArray<Cell>
  readonly scorers: ReadonlyArray<StagePlan<"scorer">>
  readonly baseline: Cell
}

export { rawCells } from "./internal/rawCells.js"

export interface Size {
  /** Equal cells, merged later, are counted each time. */
  readonly cells: number
  readonly axes: ReadonlyArray<{ readonly key: string; readonly alternatives: number }>
  /** The explicit `cells`. */
  readonly explicit: number
  /** The `models.<role>` axes, which multiply the swept and explicit cells alike. */
  readonly models: ReadonlyArray<{ readonly key: string; readonly alternatives: number }>
}

/** The grid's size, computed from the axes without expanding them. */
export const size = (config: Config): Size => {
  const count = (axis: Config["sweep"][number]) => ({
    key: axis.key,
    alternatives: axis._tag === "Models" ? axis.entries.length : countAlternatives(axis.alternatives)
  })
  const axes = config.sweep.filter((a) => a._tag !== "Models").map(count)
  const models = config.sweep.filter((a) => a._tag === "Models").map(count)
  const product = (list: ReadonlyArray<{ readonly alternatives: number }>) =>
    list.reduce((n, a) => n * a.alternatives, 1)
  const swept = axes.length > 0 || config.cells.length === 0 ? product(axes) : 0
  return { cells: (swept + config.cells.length) * product(models), axes, explicit: config.cells.length, models }
}

const axisText = (a: { readonly key: string; readonly alternatives: number }) =>
  `sweep.${a.key} ${a.alternatives.toLocaleString("en-US")}`

/** `2,560,000 cells (sweep.retriever.k 40 x sweep.retriever.b 40 x ...)`; model axes multiply the rest. */
export const describeSize = (s: Size): string => {
  const parts = [s.axes.map(axisText).join(" x "), s.explicit > 0 ? `${s.explicit} explicit` : ""]
  const how = parts.filter((p) => p !== "").join(" + ")
  const models = s.models.map(axisText).join(" x ")
  const grouped = /[+x] /.test(how) ? `(${how})` : how
  const all = models === "" ? how : how === "" ? models : `${grouped} x ${models}`
  return `${s.cells.toLocaleString("en-US")} cells${all === "" ? "" : ` (${all})`}`
}

/** A selector in a cell name: `top=2`, `recent=2,cut=0.6`; `own cut` where a cell has none. */
const selectLabel = (value: unknown): string => {
  if (value === undefined) return "own cut"
  const decoded = Schema.decodeUnknownEither(Selector.Spec)(value)
  return Either.isRight(decoded) ? Selector.label(decoded.right) : Columns.labelValue(value)
}

const transformPart = (t: Transform.Spec | null, key: (typeof Transform.keys)[number]): string => {
  const v = t?.[key]
  return v === undefined ? (key === "pad" ? "0" : "none") : Array.isArray(v) ? v.join("+") : String(v)
}

/**
 * Readable cell names, by what differs across the grid: each stage that differs as
 * `plugin(option=value,...)` with the options that differ among its cells, then the parts of the
 * history transform that differ (`bm25 @ pad=24,position=early`).
 */
export const names = (
  params: ReadonlyArray<Readonly<Record<StageName, Spec | null>>>,
  transforms: ReadonlyArray<Transform.Spec | null> = []
): Array<string> => {
  const differ = (values: ReadonlyArray<unknown>) => new Set(values.map((v) => Hash.canonicalJson(v ?? null))).size > 1
  const shown = Stage.cellStages.filter((s) => differ(params.map((p) => p[s])))
  // The options that differ among the cells of one plugin at one stage.
  const varying = new Map<string, Set<string>>()
  for (const s of shown) {
    for (const [use, specs] of Object.entries(
      Arr.groupBy(
        params.flatMap((p) => p[s] ?? []),
        (spec) => spec.use
      )
    )) {
      const keys = new Set(specs.flatMap((x) => Object.keys(x)))
      varying.set(`${s}\0${use}`, new Set([...keys].filter((k) => k !== "use" && differ(specs.map((x) => x[k])))))
    }
  }
  const generated = params.map((p) => {
    const parts: Array<string> = []
    for (const s of shown) {
      const spec = p[s]
      if (spec === null) continue
      const keys = Object.keys(spec).filter((k) => varying.get(`${s}\0${spec.use}`)?.has(k))
      const show = (k: string) => (k === "select" ? selectLabel(spec[k]) : `${k}=${Columns.labelValue(spec[k])}`)
      parts.push(keys.length === 0 ? spec.use : `${spec.use}(${keys.map(show).join(",")})`)
    }
    if (parts.length > 0) return parts.join(" + ")
    if (shown.length > 0) return shown.map((s) => `no ${s}`).join(" + ")
    return Stage.cellStages.map((s) => p[s]).find((x) => x !== null)?.use ?? "empty"
  })
  const varyingParts = Transform.keys.filter((k) => new Set(transforms.map((t) => transformPart(t, k))).size > 1)
  if (varyingParts.length === 0) return generated
  const stagesVary = new Set(generated).size > 1
  return generated.map((g, i) => {
    const label = varyingParts.map((k) => `${k}=${transformPart(transforms[i]!, k)}`).join(",")
    return stagesVary ? `${g} @ ${label}` : label
  })
}

/**
 * What a cell's model bindings add to its name: the entry of the one role that varies across the
 * grid (`gpt-4o`), `role=entry,...` when several vary, nothing when none does.
 */
const bindingLabels = (models: ReadonlyArray<Readonly<Record<string, string>> | null>): Array<string> => {
  const roles = [...new Set(models.flatMap((m) => Object.keys(m ?? {})))].sort()
  const varying = roles.filter((r) => new Set(models.map((m) => m?.[r] ?? "")).size > 1)
  return models.map((m) =>
    varying.length === 1 ? (m?.[varying[0]!] ?? "unbound") : varying.map((r) => `${r}=${m?.[r] ?? "unbound"}`).join(",")
  )
}

const tooLarge = (config: Config, s: Size) =>
  failAt(
    config,
    s.axes.length > 0 ? "sweep" : "cells",
    `the grid has ${describeSize(s)}, more than the limit of ${config.maxCells.toLocaleString("en-US")} (maxCells); ` +
      `sweep fewer alternatives, or raise the limit with \`maxCells: ${s.cells}\` in the config or \`--max-cells ${s.cells}\` on the command line`
  )

const failAt = (config: Config, path: string, reason: string) => new ConfigError({ file: config.file, path, reason })

/** `unknown retriever "lastest" (did you mean "latest"?); valid choices: first, latest` */
const unknownChoice = (what: string, name: string, valid: ReadonlyArray<string>, listed = valid.join(", ")): string => {
  const close = Issues.suggest(name, valid)
  return `unknown ${what} "${name}"${close === undefined ? "" : ` (did you mean "${close}"?)`}; valid choices: ${listed}`
}

const lookUp = <S extends Plugin.PipelineStage>(
  config: Config,
  registry: Plugin.Registry,
  stage: S,
  spec: Spec,
  raw: RawStage
) =>
  Effect.catchAll(registry.get(stage, spec.use), () => {
    const names = registry.names(stage)
    const listed = names.length === 0 ? "none (no plugin of this stage is registered)" : names.join(", ")
    return Effect.fail(failAt(config, originOf(raw, ["use"]), unknownChoice(stage, spec.use, names, listed)))
  })

/** A stage's cut taken apart from its plugin's options, and the keys it took (also valid beside the plugin's own). */
type Cut = Either.Either<
  {
    readonly select: Selector.Spec | undefined
    readonly rest: Record<string, unknown>
    readonly also: ReadonlyArray<string>
  },
  Selector.SpecProblem
>

const isRetriever = (plugin: Plugin.Of<Plugin.PipelineStage>): plugin is Plugin.Of<"retriever"> =>
  plugin.stage === "retriever"

/** Plan a stage: its plugin looked up, its cut taken apart, the rest decoded; problems are reported where written. */
const planStage = <S extends Plugin.PipelineStage>(
  config: Config,
  registry: Plugin.Registry,
  stage: S,
  spec: Spec,
  raw: RawStage
): Effect.Effect<StagePlan<S>, ConfigError> =>
  Effect.gen(function* () {
    const plugin = yield* lookUp(config, registry, stage, spec, raw)
    const { use, ...options } = spec
    // Only retrievers have a cut: `select`, or for rankers `k`.
    const split: Cut = isRetriever(plugin)
      ? Either.map(Selector.splitSpec(options, plugin), ({ select, rest }) => ({
          select,
          rest,
          also: Selector.cutKeys(plugin)
        }))
      : "select" in options
        ? Either.left({ path: ["select"], message: "`select` (a selector) is only for retrievers" })
        : Either.right({ select: undefined, rest: options, also: [] })
    if (Either.isLeft(split)) return yield* failAt(config, originOf(raw, split.left.path), split.left.message)
    const { select, rest, also } = split.right
    const decoded = plugin.decode(rest)
    if (Either.isLeft(decoded)) {
      const issues = Issues.clean(decoded.left.issues, "option", "option", { also, present: Object.keys(options) })
      return yield* ConfigError.all(
        config.file,
        issues.map((i) => ({ path: originOf(raw, i.path), reason: i.message }))
      )
    }
    return {
      plugin,
      decoded: decoded.right,
      params: {
        use,
        ...decoded.right.params,
        ...(select === undefined ? {} : { select: Schema.encodeSync(Selector.Spec)(select) })
      },
      origin: raw.origin,
      origins: raw.origins,
      ...(select === undefined ? {} : { select })
    }
  })

/** A stage written once and shared by many cells (one inferrer under twenty retrievers) is decoded once. */
const memoized = <S extends StageName>(
  plan: (spec: Spec, raw: RawStage) => Effect.Effect<StagePlan<S>, ConfigError>
) => {
  const memo = new Map<string, StagePlan<S>>()
  return (raw: RawStage): Effect.Effect<StagePlan<S> | undefined, ConfigError> => {
    if (raw.spec === null) return Effect.succeed(undefined)
    const key = Hash.canonicalJson(raw.spec)
    const hit = memo.get(key)
    return hit !== undefined
      ? Effect.succeed({ ...hit, origin: raw.origin, origins: raw.origins })
      : Effect.tap(plan(raw.spec, raw), (p) => Effect.sync(() => memo.set(key, p)))
  }
}

/** Hands control to the event loop (a fiber's own yield may stay in the microtask queue), so a signal can interrupt. */
const letEventLoopRun = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

/** Decode every stage of every cell and the scorers; fails on the first stage with problems, in config order. */
export const expand = (config: Config, registry: Plugin.Registry): Effect.Effect<Grid, ConfigError> =>
  Effect.gen(function* () {
    const sized = size(config)
    if (sized.cells > config.maxCells) return yield* tooLarge(config, sized)
    const scorers = yield* Effect.forEach(config.scorers, (spec, i) =>
      planStage(config, registry, "scorer", spec, rawStage(spec, `scorers[${i}]`))
    )
    const scorerParams = scorers.map((s) => s.params)
    const plan = {
      retriever: memoized((spec, raw) => planStage(config, registry, "retriever", spec, raw)),
      summarizer: memoized((spec, raw) => planStage(config, registry, "summarizer", spec, raw)),
      inferrer: memoized((spec, raw) => planStage(config, registry, "inferrer", spec, raw)),
      generator: memoized((spec, raw) => planStage(config, registry, "generator", spec, raw))
    }

    // Equal cells are one: the first keeps its place, and the first explicit name names it.
    const drafts = new Map<string, Omit<Cell, "index" | "name"> & { readonly name: Located<string> | undefined }>()
    let made = 0
    for (const raw of rawCells(config)) {
      if (raw instanceof ConfigError) return yield* raw
      if (++made % 256 === 0) yield* letEventLoopRun
      const stages: Stages = {
        retriever: yield* plan.retriever(raw.stages.retriever),
        summarizer: yield* plan.summarizer(raw.stages.summarizer),
        inferrer: yield* plan.inferrer(raw.stages.inferrer),
        generator: yield* plan.generator(raw.stages.generator)
      }
      const params = Stage.byCellStage((s) => stages[s]?.params ?? null)
      const t = raw.transform?.value
      const transform = t === undefined || Transform.isIdentity(t) ? null : Transform.normalize(t)
      const roles = Object.entries(raw.models).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      for (const [, entry] of roles) {
        if (config.models[entry.value] === undefined)
          return yield* failAt(
            config,
            entry.origin,
            unknownChoice("model entry", entry.value, Object.keys(config.models))
          )
      }
      const models = roles.length === 0 ? null : Object.fromEntries(roles.map(([role, e]) => [role, e.value]))
      const id = Hash.contentHash({
        params,
        scorers: scorerParams,
        ...(transform === null ? {} : { transform }),
        ...(models === null ? {} : { models })
      })
      const existing = drafts.get(id)
      if (existing === undefined) drafts.set(id, { id, name: raw.name, params, stages, transform, models })
      else if (existing.name === undefined) drafts.set(id, { ...existing, name: raw.name })
    }

    const list = [...drafts.values()]
    const labels = bindingLabels(list.map((d) => d.models))
    const explicitName = (i: number) => {
      const name = list[i]!.name?.value
      return name === undefined || labels[i] === "" ? name : `${name} [${labels[i]}]`
    }
    const explicit = new Map<string, string>()
    for (const [i, { name }] of list.entries()) {
      const full = explicitName(i)
      if (name === undefined || full === undefined) continue
      if (explicit.has(full))
        return yield* failAt(config, name.origin, `duplicate cell name "${full}" (also used at ${explicit.get(full)})`)
      explicit.set(full, name.origin)
    }
    const generated = names(
      list.map((d) => d.params),
      list.map((d) => d.transform)
    )
    const stagesVary = new Set(generated).size > 1
    const taken = new Set(explicit.keys())
    const cells = list.map((d, index): Cell => {
      let name = explicitName(index)
      if (name === undefined) {
        const label = labels[index]!
        const base = label === "" ? generated[index]! : stagesVary ? `${generated[index]!} [${label}]` : label
        name = base
        for (let n = 2; taken.has(name); n++) name = `${base} #${n}`
        taken.add(name)
      }
      const { params, stages, transform, models } = d
      return { index, id: d.id, name, params, stages, transform, models }
    })

    // A name written in the config also finds its cells under every model binding: the first is taken.
    const named = (ref: string) =>
      cells.find((c) => c.name === ref || c.id === ref) ?? cells.find((c) => list[c.index]!.name?.value === ref)
    const { baseline: wanted, reference = [] } = config.report
    const refs = [
      ...(wanted === undefined ? [] : [["report.baseline", wanted] as const]),
      ...reference.map((ref, k) => [`report.reference[${k}]`, ref] as const)
    ]
    for (const [at, ref] of refs) {
      if (named(ref) === undefined)
        return yield* failAt(
          config,
          at,
          unknownChoice(
            "cell",
            ref,
            cells.map((c) => c.name)
          )
        )
    }
    const baseline =
      (wanted === undefined ? undefined : named(wanted)) ??
      cells.find((c) => c.params.retriever?.use === "all") ??
      cells[0]
    if (baseline === undefined)
      return yield* failAt(config, "", "the config defines no cell: give a pipeline, a sweep or cells")
    return { cells, scorers, baseline }
  })
