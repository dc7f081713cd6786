/**
 * The grammar of a config's stages and sweep: a stage's value (a plugin name, `{ use, ...options }`
 * or null), the `sweep` mapping (each key says what the axis varies, which decides the shape of its
 * alternatives), how a written value expands into alternatives, and the key paths messages name.
 *
 * @example
 * Axes.decodeSweep({ "retriever.k": [2, 4] }) // Right([{ _tag: "Option", stage: "retriever", ... }])
 * Axes.alternatives({ use: "bm25", k: [2, 4] }, "pipeline.retriever").length // 2
 */
import { Stage, Issues } from "@cupid-lab/core"
import { Transform } from "@cupid-lab/data"
import { RunDir } from "@cupid-lab/results"

import { Array as Arr, Either, ParseResult, Predicate, Schema } from "effect"
import type { Located, SweepAxis } from "./Config.js"

const { isRecord } = Predicate

/** A problem at a key path, before it becomes part of a ConfigError. */
export interface Problem {
  readonly path: string
  readonly reason: string
}

/** Schema issues as problems at their key paths (under `prefix`). */
export const fromIssues = (
  issues: ReadonlyArray<Issues.Issue>,
  prefix: ReadonlyArray<PropertyKey> = []
): Array<Problem> => issues.map((i) => ({ path: RunDir.formatPath([...prefix, ...i.path]), reason: i.message }))

/** `a` -> `"a"`; values in messages are shown as JSON so strings are quoted and types are visible. */
const show = (value: unknown): string => (value === undefined ? "undefined" : JSON.stringify(value))

export const Options = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const SpecType = Schema.Struct({ use: Schema.String }, Options)
const SpecTemplateType = Schema.Struct({ use: Schema.Union(Schema.String, Schema.Array(Schema.String)) }, Options)

/** A plugin reference: its name and raw options (decoded later by the plugin's own schema). */
export type Spec = typeof SpecType.Type

/** A stage alternative of a sweep as written: `use` may list plugins, and list values inside list alternatives. */
export type SpecTemplate = typeof SpecTemplateType.Type

const specShape = "{ use: <plugin name>, ...options }"

/** A stage value: `null` (when `nullable`), a plugin name (`{ use: name }`) or `{ use, ...options }`. */
const stageSchema = <A, I>(
  to: Schema.Schema<A, I>,
  expected: string,
  options: { readonly nullable: boolean; readonly useIsList: boolean }
) =>
  // Not strict: `decode` hands `to` plain JSON values, which `to` then checks against its type.
  Schema.transformOrFail(Schema.Unknown, to, {
    strict: false,
    decode: (value, _, ast) => {
      const fail = (actual: unknown, message: string) => ParseResult.fail(new ParseResult.Type(ast, actual, message))
      if (value === null && options.nullable) return ParseResult.succeed(null)
      if (typeof value === "string") return ParseResult.succeed({ use: value })
      if (!isRecord(value)) return fail(value, `expected ${expected}, got ${show(value)}`)
      if (!("use" in value)) return fail(value, `missing "use" (the plugin name)`)
      const use = value.use
      const ok =
        typeof use === "string" ||
        (options.useIsList && Array.isArray(use) && use.length > 0 && use.every((u) => typeof u === "string"))
      if (!ok) {
        const want = options.useIsList ? "a plugin name or a list of plugin names" : "a plugin name"
        return ParseResult.fail(
          new ParseResult.Pointer("use", value, new ParseResult.Type(ast, use, `expected ${want}, got ${show(use)}`))
        )
      }
      return ParseResult.succeed(value)
    },
    encode: ParseResult.succeed
  })

export const StageValueSchema = stageSchema(Schema.NullOr(SpecType), `${specShape}, a plugin name or null`, {
  nullable: true,
  useIsList: false
})
export const ScorerSpecSchema = stageSchema(SpecType, `a scorer (${specShape} or a scorer name)`, {
  nullable: false,
  useIsList: false
})
const StageTemplateSchema = stageSchema(Schema.NullOr(SpecTemplateType), `${specShape}, a plugin name or null`, {
  nullable: true,
  useIsList: true
})

/** Where a value was written, and where each of its parts (`k`, `embedder.dims`) was when elsewhere. */
export interface Origins {
  readonly origin: string
  readonly origins: ReadonlyMap<string, string>
}

/** One expanded alternative, and where it and each of its parts were written. */
export interface Alt extends Origins {
  readonly value: unknown
}

export const childPath = (key: string, rel: string): string =>
  rel === "" ? key : rel.startsWith("[") ? `${key}${rel}` : `${key}.${rel}`

/**
 * A value's alternatives: a list lists them (a list inside it is a literal value), a mapping is the
 * product of its values' alternatives, in key order.
 */
export const alternatives = (value: unknown, origin: string): Array<Alt> => {
  if (Array.isArray(value)) {
    return value.flatMap((el, i) =>
      isRecord(el)
        ? alternatives(el, `${origin}[${i}]`)
        : [{ value: el, origin: `${origin}[${i}]`, origins: new Map() }]
    )
  }
  if (!isRecord(value)) return [{ value, origin, origins: new Map() }]
  return Object.entries(value).reduce(
    (acc: Array<Alt & { readonly value: Readonly<Record<string, unknown>> }>, [key, v]) => {
      const options = alternatives(v, `${origin}.${key}`)
      return acc.flatMap((a) =>
        options.map((o) => ({
          value: { ...a.value, [key]: o.value },
          origin,
          origins: new Map([
            ...a.origins,
            [key, o.origin],
            ...[...o.origins].map(([rel, at]) => [childPath(key, rel), at] as const)
          ])
        }))
      )
    },
    [{ value: {}, origin, origins: new Map() }]
  )
}

/** How many alternatives {@link alternatives} gives (and so a sweep axis has), computed without making them. */
export const countAlternatives = (value: unknown): number =>
  Array.isArray(value)
    ? value.reduce((n: number, el) => n + (isRecord(el) ? countAlternatives(el) : 1), 0)
    : isRecord(value)
      ? Object.values(value).reduce((n: number, v) => n * countAlternatives(v), 1)
      : 1

/** Whether the part at `rel` is `key` or inside it. */
export const within = (rel: string, key: string): boolean =>
  rel === key || rel.startsWith(`${key}.`) || rel.startsWith(`${key}[`)

/** Where a part (at `path` inside a value) was written: where the closest enclosing part was written, else the value. */
export const originOf = (stage: Origins, path: ReadonlyArray<PropertyKey>): string => {
  const rel = RunDir.formatPath(path)
  const closest = ([key]: readonly [string, string]) => (within(rel, key) ? key.length : -1)
  const [key, at] = [...stage.origins].reduce((best, o) => (closest(o) > closest(best) ? o : best), ["", stage.origin])
  return key === "" ? childPath(at, rel) : `${at}${rel.slice(key.length)}`
}

const transformHint =
  "(a transform is { drop: contrastive | stale, pad: <sessions>, position: early | middle | late | <index> })"

const decodeTransform = (value: unknown, origin: Origins): Either.Either<Transform.Spec, Array<Problem>> =>
  Either.mapLeft(Issues.decode(Transform.Spec, value, "key"), (issues) =>
    issues.map((i) => ({
      path: originOf(origin, i.path),
      reason: i.message.startsWith("unknown key") ? i.message : `${i.message} ${transformHint}`
    }))
  )

const axisHelp = `an axis is a stage (${Stage.cellStages.join(", ")}), a dotted option path such as retriever.k, the history transform (transform, transform.pad, ...) or a model role (models.subject)`

/** `models.<role>`: the `models:` entries the role is bound to, one per alternative (checked against `models:` by the grid). */
const decodeModelsAxis = (
  key: string,
  role: string | undefined,
  value: unknown
): Either.Either<SweepAxis, Array<Problem>> => {
  const at = `sweep.${key}`
  if (role === undefined || role === "" || key.split(".").length !== 2)
    return Either.left([{ path: at, reason: "a model axis is models.<role>, e.g. models.subject: [gpt-4o, o3-mini]" }])
  if (!Array.isArray(value) || value.length === 0)
    return Either.left([{ path: at, reason: `expected a non-empty list of model entry names, got ${show(value)}` }])
  const written: ReadonlyArray<unknown> = value
  const bad = written.flatMap((v, i) =>
    typeof v === "string" && v !== ""
      ? written.indexOf(v) === i
        ? []
        : [{ path: `${at}[${i}]`, reason: `the entry ${show(v)} is listed twice` }]
      : [{ path: `${at}[${i}]`, reason: `expected the name of a models: entry, got ${show(v)}` }]
  )
  if (bad.length > 0) return Either.left(bad)
  const entries = written.map((v, i): Located<string> => ({ value: String(v), origin: `${at}[${i}]` }))
  return Either.right({ _tag: "Models", key, alternatives: written, role, entries })
}

const decodeAxis = (key: string, value: unknown): Either.Either<SweepAxis, Array<Problem>> => {
  const at = `sweep.${key}`
  const problem = (reason: string) => Either.left([{ path: at, reason }])
  const [head = "", ...rest] = key.split(".")
  if (head === "models") return decodeModelsAxis(key, rest[0], value)
  const stage = Stage.cellStages.find((s) => s === head)
  const part = rest.length === 1 ? Transform.keys.find((k) => k === rest[0]) : undefined
  if (head === "transform" && rest.length > 0 && part === undefined) {
    const close = rest.length === 1 ? Issues.suggest(rest[0]!, Transform.keys) : undefined
    return problem(
      `unknown transform axis${close === undefined ? "" : ` (did you mean "transform.${close}"?)`}; use transform or transform.<part> with part one of ${Transform.keys.join(", ")}`
    )
  }
  if (head !== "transform" && (stage === undefined || rest.some((s) => s === ""))) {
    const close = stage === undefined ? Issues.suggest(head, [...Stage.cellStages, "transform", "models"]) : undefined
    return problem(
      `unknown sweep axis${close === undefined ? "" : ` (did you mean "${[close, ...rest].join(".")}"?)`}; ${axisHelp}`
    )
  }
  if (rest[0] === "use") return problem(`to vary the ${stage}'s plugin, list whole specs under sweep.${stage}`)
  if (!Array.isArray(value) || value.length === 0)
    return problem(`expected a non-empty list of alternatives, got ${show(value)}`)
  const written: ReadonlyArray<unknown> = value
  if (stage === undefined) {
    const [bad, values] = Arr.partitionMap(alternatives(value, at), (alt) => {
      const decoded =
        part === undefined
          ? decodeTransform(alt.value, alt)
          : decodeTransform(
              { [part]: alt.value },
              { origin: alt.origin, origins: new Map([[part, alt.origin], ...alt.origins]) }
            )
      return Either.map(decoded, (spec): Located<Transform.Spec> => ({ value: spec, origin: alt.origin }))
    })
    if (bad.length > 0) return Either.left(bad.flat())
    return Either.right({
      _tag: "Transform",
      key,
      alternatives: written,
      whole: part === undefined,
      transforms: values
    })
  }
  if (rest.length > 0) return Either.right({ _tag: "Option", key, alternatives: written, stage, path: rest })
  const [bad, choices] = Arr.partitionMap(written, (alt, i) =>
    Either.mapLeft(Issues.decode(StageTemplateSchema, alt, "key"), (issues) => fromIssues(issues, ["sweep", key, i]))
  )
  return bad.length > 0
    ? Either.left(bad.flat())
    : Either.right({ _tag: "Stage", key, alternatives: written, stage, choices })
}

export const decodeSweep = (
  sweep: Readonly<Record<string, unknown>>
): Either.Either<Array<SweepAxis>, Array<Problem>> => {
  const [problems, axes] = Arr.partitionMap(Object.entries(sweep), ([key, value]) => decodeAxis(key, value))
  return problems.length > 0 ? Either.left(problems.flat()) : Either.right(axes)
}

/** The sweep key whose alternatives are data sources: one run per source. */
export const sourceAxis = "data.source"

export const decodeSources = (raw: unknown): Either.Either<ReadonlyArray<string>, Array<Problem>> => {
  if (raw === undefined) return Either.right([])
  const where = `sweep.${sourceAxis}`
  if (
    !Array.isArray(raw) ||
    raw.length < 2 ||
    !raw.every((x): x is string => typeof x === "string" && x.trim() !== "")
  ) {
    return Either.left([
      {
        path: where,
        reason: `expected a list of two or more data sources (sample, a file, longmemeval:<file>, locomo:<file>, ...), got ${JSON.stringify(raw)}`
      }
    ])
  }
  const repeated = raw.find((x, i) => raw.indexOf(x) !== i)
  return repeated === undefined
    ? Either.right(raw)
    : Either.left([{ path: where, reason: `the source ${JSON.stringify(repeated)} is listed twice` }])
}
