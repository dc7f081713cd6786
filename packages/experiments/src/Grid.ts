/**
 * The grid of a sweep: every cell the config asks for, with each stage's plugin looked up and its
 * options decoded (so bad names and options fail here, before any work), normalized parameters,
 * a stable id and a readable name.
 *
 * Expansion: the base pipeline, then each `sweep` axis in file order multiplies the cells so far
 * by its alternatives (inside an alternative, every list value is a set of alternatives too;
 * `[[a, b]]` is the literal list `[a, b]`); then the explicit `cells` follow, each merged over the
 * base pipeline. Cells whose normalized parameters coincide are one cell.
 *
 * @example
 * import { Grid } from "@cupid-lab/experiments"
 * const grid = yield* Grid.expand(config, registry)
 * grid.cells.map((c) => `${c.id} ${c.name}`) // ["3f2a... all", "91c0... bm25(k=2)", ...]
 */
import { Hash, Plugin, Transform } from "@cupid-lab/core"
import { Selector } from "@cupid-lab/retrievers"
import { Effect, Either, ParseResult, Schema } from "effect"
import type { Config, Spec, StageName } from "./Config.js"
import { stageNames, transformKey } from "./Config.js"
import { ConfigError } from "./Errors.js"
import * as Issues from "./internal/Issues.js"
import { formatPath, isRecord, show } from "./internal/Tree.js"

/** One stage of a cell, ready to build. */
export interface StagePlan {
  readonly plugin: Plugin.AnyPlugin
  /** Decoded options, as the plugin's `make` takes them. */
  readonly options: unknown
  /** `{ use, ...options }` with defaults filled in, in encoded (JSON) form. */
  readonly params: Spec
  /** Where in the config the stage was written, for messages (`sweep.retriever[2]`). */
  readonly origin: string
  /** Maps an option path (`k`, `embedder.dims`) to where it was written, when not under `origin`. */
  readonly origins: ReadonlyMap<string, string>
  /** Retrievers only: the selector that replaces the plugin's own cut (`select:` in the spec). */
  readonly select?: Selector.Spec
}

export interface Cell {
  /** Position in the grid (results and reports follow it). */
  readonly index: number
  readonly id: string
  readonly name: string
  /** Normalized parameters: every stage, `null` when the cell has none. */
  readonly params: Readonly<Record<StageName, Spec | null>>
  readonly stages: Readonly<Partial<Record<StageName, StagePlan>>>
  /** The history transform the cell applies to every instance (normalized); null for none. */
  readonly transform: Transform.Spec | null
}

/**
 * What a cell's results are keyed and reported by: its stages' parameters, plus `transform` when
 * the cell transforms histories (absent otherwise, so cells without one keep their parameters).
 */
export const identityParams = (cell: Cell): Readonly<Record<string, unknown>> =>
  cell.transform === null ? cell.params : { ...cell.params, transform: cell.transform }

export interface Grid {
  readonly cells: ReadonlyArray<Cell>
  /** Shared by every cell. */
  readonly scorers: ReadonlyArray<StagePlan>
  readonly baseline: Cell
}

interface RawStage {
  readonly spec: unknown
  readonly origin: string
  readonly origins: ReadonlyMap<string, string>
}

interface RawCell {
  readonly name?: { readonly value: string; readonly origin: string }
  readonly stages: Readonly<Record<StageName, RawStage>>
  readonly transform?: {
    readonly value: unknown
    readonly origin: string
    /** Where each part was written, when set by a `transform.<part>` axis. */
    readonly parts?: Readonly<Record<string, string>>
  }
}

interface Alt {
  readonly value: unknown
  /** Relative path inside the value -> where that part was written. */
  readonly origins: ReadonlyArray<readonly [string, string]>
}

const childPath = (key: string, rel: string): string => (rel === "" ? key : rel.startsWith("[") ? `${key}${rel}` : `${key}.${rel}`)

/** A value in an expandable position: a list lists alternatives; a mapping expands its values. */
const alternatives = (value: unknown, origin: string): Array<Alt> =>
  Array.isArray(value)
    ? value.flatMap((el, i) => (isRecord(el) ? objectAlternatives(el, `${origin}[${i}]`) : [{ value: el, origins: [["", `${origin}[${i}]`]] }]))
    : isRecord(value)
    ? objectAlternatives(value, origin)
    : [{ value, origins: [["", origin]] }]

const objectAlternatives = (obj: Readonly<Record<string, unknown>>, origin: string): Array<Alt> => {
  let acc: Array<Alt> = [{ value: {}, origins: [["", origin]] }]
  for (const [key, v] of Object.entries(obj)) {
    const options = alternatives(v, `${origin}.${key}`)
    acc = acc.flatMap((a) =>
      options.map((o) => ({
        value: { ...(a.value as object), [key]: o.value },
        origins: [...a.origins, ...o.origins.map(([rel, at]) => [childPath(key, rel), at] as const)]
      }))
    )
  }
  return acc
}

const shorthand = (value: unknown): unknown => (typeof value === "string" ? { use: value } : value)

const setAt = (spec: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown): Record<string, unknown> => {
  const [head, ...rest] = path
  if (rest.length === 0) return { ...spec, [head!]: value }
  const inner = spec[head!]
  return { ...spec, [head!]: setAt(isRecord(inner) ? inner : {}, rest, value) }
}

/** Expand the config into raw cells (stages not yet decoded). */
export const expandRaw = (config: Config): Effect.Effect<ReadonlyArray<RawCell>, ConfigError> =>
  Effect.try({
    try: () => {
      const fail = (at: string, reason: string) => new ConfigError({ file: config.file, path: at, reason })
      const stageFrom = (value: unknown, origin: string): RawStage => ({ spec: shorthand(value), origin, origins: new Map() })
      const base = {} as Record<StageName, RawStage>
      for (const s of stageNames) base[s] = stageFrom(config.pipeline[s], `pipeline.${s}`)

      const baseTransform = config.data.transform === undefined ? {} : { transform: { value: config.data.transform, origin: "data.transform" } }
      let cells: Array<RawCell> = config.sweep.length > 0 || config.cells.length === 0 ? [{ stages: base, ...baseTransform }] : []
      for (const axis of config.sweep) {
        const [stage, ...optionPath] = axis.key.split(".") as [StageName, ...Array<string>]
        const options = alternatives(axis.alternatives, `sweep.${axis.key}`)
        if ((stage as string) === transformKey) {
          cells = cells.flatMap((cell) =>
            options.map((alt): RawCell => {
              const origin = alt.origins.find(([rel]) => rel === "")![1]
              if (optionPath.length === 0) return { ...cell, transform: { value: alt.value, origin } }
              const part = optionPath[0]!
              const current = isRecord(cell.transform?.value) ? cell.transform.value : {}
              const parts = { ...cell.transform?.parts, [part]: origin }
              return { ...cell, transform: { value: { ...current, [part]: alt.value }, origin: cell.transform?.origin ?? origin, parts } }
            })
          )
          continue
        }
        cells = cells.flatMap((cell) =>
          options.map((alt): RawCell => {
            if (optionPath.length === 0) {
              const origin = alt.origins.find(([rel]) => rel === "")![1]
              const origins = new Map(alt.origins.filter(([rel]) => rel !== ""))
              return { ...cell, stages: { ...cell.stages, [stage]: { spec: shorthand(alt.value), origin, origins } } }
            }
            const current = cell.stages[stage]
            if (!isRecord(current.spec)) {
              throw fail(`sweep.${axis.key}`, `sets an option of the ${stage}, but the cell it applies to has no ${stage}; give one under pipeline.${stage} or in an earlier sweep axis`)
            }
            const optionKey = optionPath.join(".")
            const origins = new Map([...current.origins].filter(([rel]) => rel !== optionKey && !rel.startsWith(`${optionKey}.`) && !rel.startsWith(`${optionKey}[`)))
            for (const [rel, at] of alt.origins) origins.set(childPath(optionKey, rel), at)
            return { ...cell, stages: { ...cell.stages, [stage]: { spec: setAt(current.spec, optionPath, alt.value), origin: current.origin, origins } } }
          })
        )
      }
      config.cells.forEach((explicit, i) => {
        const stages = { ...base }
        for (const s of stageNames) {
          if (s in explicit.stages) stages[s] = stageFrom(explicit.stages[s], `cells[${i}].${s}`)
        }
        const transform = explicit.transform === undefined ? baseTransform : { transform: { value: explicit.transform, origin: `cells[${i}].transform` } }
        cells.push({ ...(explicit.name === undefined ? {} : { name: { value: explicit.name, origin: `cells[${i}].name` } }), stages, ...transform })
      })
      return cells
    },
    catch: (e) => e as ConfigError
  })

/** Where an option (or option path) of a stage was written. */
export const originOf = (stage: { readonly origin: string; readonly origins: ReadonlyMap<string, string> }, path: ReadonlyArray<PropertyKey>): string => {
  const rel = formatPath(path)
  let best = "", bestAt = stage.origin
  for (const [key, at] of stage.origins) {
    const matches = rel === key || rel.startsWith(`${key}.`) || rel.startsWith(`${key}[`)
    if (matches && key.length > best.length) {
      best = key
      bestAt = at
    }
  }
  const rest = rel.slice(best.length)
  if (best === "") return rest === "" ? bestAt : rest.startsWith("[") ? `${bestAt}${rest}` : `${bestAt}.${rest}`
  return `${bestAt}${rest}`
}

/** Decode one stage: look the plugin up and decode its options, with config-located errors. */
export const planStage = (
  config: Config,
  registry: Plugin.Registry,
  stage: Exclude<Plugin.Stage, "provider">,
  raw: RawStage
): Effect.Effect<StagePlan, ConfigError> =>
  Effect.gen(function*() {
    const fail = (at: string, reason: string) => new ConfigError({ file: config.file, path: at, reason })
    const spec = raw.spec
    if (!isRecord(spec)) return yield* fail(raw.origin, `expected { use: <plugin name>, ...options } or null, got ${show(spec)}`)
    if (!("use" in spec)) return yield* fail(raw.origin, `missing "use" (the plugin name)`)
    const { use, ...allOptions } = spec
    if (typeof use !== "string") return yield* fail(originOf(raw, ["use"]), `expected a plugin name, got ${show(use)}`)
    const names = registry.names(stage)
    if (!names.includes(use)) {
      return yield* fail(
        originOf(raw, ["use"]),
        `unknown ${stage} "${use}"; valid choices: ${names.length === 0 ? "none (no plugin of this stage is registered)" : names.join(", ")}`
      )
    }
    const plugin = yield* Effect.orDie(registry.get(stage, use))
    let select: Selector.Spec | undefined
    let rawOptions: Record<string, unknown> = allOptions
    if (plugin.stage === "retriever") {
      const split = Selector.splitSpec(allOptions, plugin)
      if (Either.isLeft(split)) return yield* fail(originOf(raw, split.left.path), split.left.message)
      select = split.right.select
      rawOptions = split.right.rest
    } else if ("select" in allOptions) {
      return yield* fail(originOf(raw, ["select"]), "`select` (a selector) is only for retrievers")
    }
    const decoded = yield* Effect.either(
      Effect.mapError(Plugin.decodeOptions(plugin, rawOptions), (e) => Issues.clean(e.issues, "option"))
    )
    if (decoded._tag === "Left") {
      const issue = decoded.left[0]!
      return yield* fail(originOf(raw, issue.path), issue.message)
    }
    const options = decoded.right
    let encoded: unknown = options
    try {
      encoded = Schema.encodeUnknownSync(plugin.options)(options)
    } catch {
      // A schema that cannot encode its own output still has decoded options; keep those.
    }
    return {
      plugin,
      options,
      params: { use, ...(isRecord(encoded) ? encoded : {}), ...(select === undefined ? {} : { select: Schema.encodeSync(Selector.Spec)(select) }) },
      origin: raw.origin,
      origins: raw.origins,
      ...(select === undefined ? {} : { select })
    }
  })

/** A value in a cell name: scalars as they are, a nested plugin spec by its plugin name, anything else as JSON. */
const labelValue = (v: unknown): string =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean"
    ? String(v)
    : isRecord(v) && typeof v["use"] === "string"
    ? v["use"]
    : Hash.canonicalJson(v)

/** A selector in a cell name: `top=2`, `recent=2,cut=0.6`; `no select` where a cell has none. */
const selectLabel = (value: unknown): string => {
  if (value === undefined) return "own cut"
  const decoded = Schema.decodeUnknownEither(Selector.Spec)(value)
  return Either.isRight(decoded) ? Selector.label(decoded.right) : labelValue(value)
}

/**
 * Readable names: a cell is named by the stages that differ across the grid, each as
 * `plugin(option=value,...)` listing only the options that differ among cells using that plugin.
 */
export const names = (params: ReadonlyArray<Readonly<Record<StageName, Spec | null>>>): Array<string> => {
  const canon = (v: unknown) => Hash.canonicalJson(v ?? null)
  const shown = stageNames.filter((s) => new Set(params.map((p) => canon(p[s]))).size > 1)
  const varying = new Map<string, Set<string>>()
  for (const s of shown) {
    const byUse = new Map<string, Array<Spec>>()
    for (const p of params) {
      const spec = p[s]
      if (spec !== null) byUse.set(spec.use, [...(byUse.get(spec.use) ?? []), spec])
    }
    for (const [use, specs] of byUse) {
      const keys = new Set(specs.flatMap((x) => Object.keys(x)).filter((k) => k !== "use"))
      varying.set(`${s}\0${use}`, new Set([...keys].filter((k) => new Set(specs.map((x) => canon(x[k]))).size > 1)))
    }
  }
  return params.map((p) => {
    const parts: Array<string> = []
    for (const s of shown) {
      const spec = p[s]
      if (spec === null) continue
      const keys = Object.keys(spec).filter((k) => varying.get(`${s}\0${spec.use}`)?.has(k))
      const show = (k: string) => k === "select" ? selectLabel(spec[k]) : `${k}=${labelValue(spec[k])}`
      parts.push(keys.length === 0 ? spec.use : `${spec.use}(${keys.map(show).join(",")})`)
    }
    if (parts.length > 0) return parts.join(" + ")
    if (shown.length > 0) return shown.map((s) => `no ${s}`).join(" + ")
    const first = stageNames.map((s) => p[s]).find((x) => x !== null)
    return first?.use ?? "empty"
  })
}

/** Decode a cell's transform; errors point at where it was written. Null when it changes nothing. */
const decodeTransform = (config: Config, raw: NonNullable<RawCell["transform"]>): Effect.Effect<Transform.Spec | null, ConfigError> => {
  const decoded = Schema.decodeUnknownEither(Transform.Spec, { onExcessProperty: "error" })(raw.value)
  if (Either.isLeft(decoded)) {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]!
    const [head, ...rest] = issue.path
    const partOrigin = typeof head === "string" ? raw.parts?.[head] : undefined
    const at = partOrigin !== undefined
      ? (rest.length === 0 ? partOrigin : `${partOrigin}${formatPath(rest).startsWith("[") ? "" : "."}${formatPath(rest)}`)
      : issue.path.length === 0 ? raw.origin : `${raw.origin}.${formatPath(issue.path)}`
    const reason = issue._tag === "Unexpected"
      ? `unknown transform key; valid keys: ${Transform.keys.join(", ")}`
      : `${issue.message} (a transform is { drop: contrastive | stale, pad: <sessions>, position: early | middle | late | <index> })`
    return Effect.fail(new ConfigError({ file: config.file, path: at, reason }))
  }
  return Effect.succeed(Transform.isIdentity(decoded.right) ? null : Transform.normalize(decoded.right))
}

/** When cells differ in their transform, their names say how, by the parts that vary: `bm25 @ pad=24,position=early`. */
const withTransforms = (generated: ReadonlyArray<string>, transforms: ReadonlyArray<Transform.Spec | null>): Array<string> => {
  const part = (t: Transform.Spec | null, key: typeof Transform.keys[number]): string => {
    const v = t?.[key]
    return v === undefined ? (key === "pad" ? "0" : "none") : Array.isArray(v) ? v.join("+") : String(v)
  }
  const varying = Transform.keys.filter((k) => new Set(transforms.map((t) => part(t, k))).size > 1)
  if (varying.length === 0) return [...generated]
  const stagesVary = new Set(generated).size > 1
  return generated.map((g, i) => {
    const label = varying.map((k) => `${k}=${part(transforms[i]!, k)}`).join(",")
    return stagesVary ? `${g} @ ${label}` : label
  })
}

/** Decode every stage of every cell and the scorers; fails on the first problem, in config order. */
export const expand = (config: Config, registry: Plugin.Registry): Effect.Effect<Grid, ConfigError> =>
  Effect.gen(function*() {
    const fail = (at: string, reason: string) => new ConfigError({ file: config.file, path: at, reason })
    const raws = yield* expandRaw(config)
    const memo = new Map<string, StagePlan>()
    const plan = (stage: StageName, raw: RawStage) =>
      Effect.suspend(() => {
        const key = `${stage}\0${Hash.canonicalJson(raw.spec)}`
        const hit = memo.get(key)
        return hit !== undefined
          ? Effect.succeed({ ...hit, origin: raw.origin, origins: raw.origins })
          : Effect.tap(planStage(config, registry, stage, raw), (p) => Effect.sync(() => memo.set(key, p)))
      })

    const scorers: Array<StagePlan> = []
    for (const [i, spec] of config.scorers.entries()) {
      scorers.push(yield* planStage(config, registry, "scorer", { spec, origin: `scorers[${i}]`, origins: new Map() }))
    }
    const scorerParams = scorers.map((s) => s.params)

    interface Draft {
      id: string
      name?: { value: string; origin: string }
      params: Record<StageName, Spec | null>
      stages: Partial<Record<StageName, StagePlan>>
      transform: Transform.Spec | null
    }
    const drafts: Array<Draft> = []
    const byId = new Map<string, Draft>()
    for (const raw of raws) {
      const params = {} as Record<StageName, Spec | null>
      const stages: Partial<Record<StageName, StagePlan>> = {}
      for (const s of stageNames) {
        const r = raw.stages[s]
        if (r.spec === null || r.spec === undefined) {
          params[s] = null
          continue
        }
        const p = yield* plan(s, r)
        params[s] = p.params
        stages[s] = p
      }
      const transform = raw.transform === undefined ? null : yield* decodeTransform(config, raw.transform)
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

    const wanted = config.report.baseline
    let baseline: Cell | undefined
    if (wanted !== undefined) {
      baseline = cells.find((c) => c.name === wanted || c.id === wanted)
      if (baseline === undefined) {
        return yield* fail("report.baseline", `unknown cell "${wanted}"; valid choices: ${cells.map((c) => c.name).join(", ")}`)
      }
    }
    baseline ??= cells.find((c) => c.params.retriever?.use === "all") ?? cells[0]
    if (baseline === undefined) return yield* fail("", "the config defines no cell: give a pipeline, a sweep or cells")
    return { cells, scorers, baseline }
  })
