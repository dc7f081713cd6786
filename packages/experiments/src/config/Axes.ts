/**
 * A stage's value in a config (a plugin name, `{ use, ...options }` or null) and the `sweep` mapping,
 * decoded: each key says what the axis varies, which decides the shape of its alternatives.
 *
 * @example
 * Axes.decodeSweep({ "retriever.k": [2, 4] }) // Right([{ _tag: "option", stage: "retriever", ... }])
 */
import { Stage, Transform } from "@cupid-lab/core"
import * as Issues from "@cupid-lab/core/Issues"
import { Array as Arr, Either, ParseResult, Schema } from "effect"
import type { Located, SweepAxis } from "./Config.js"
import { fromIssues, type Problem } from "./Env.js"
import { alternatives, formatPath, isRecord, located, originOf, show } from "./Tree.js"

const transformKey = "transform"

const stageNames = Stage.cellStages

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
      const ok = typeof use === "string" || (options.useIsList && Array.isArray(use) && use.length > 0 && use.every((u) => typeof u === "string"))
      if (!ok) {
        const want = options.useIsList ? "a plugin name or a list of plugin names" : "a plugin name"
        return ParseResult.fail(new ParseResult.Pointer("use", value, new ParseResult.Type(ast, use, `expected ${want}, got ${show(use)}`)))
      }
      return ParseResult.succeed(value)
    },
    encode: ParseResult.succeed
  })

export const StageValueSchema = stageSchema(Schema.NullOr(SpecType), `${specShape}, a plugin name or null`, { nullable: true, useIsList: false })
export const ScorerSpecSchema = stageSchema(SpecType, `a scorer (${specShape} or a scorer name)`, { nullable: false, useIsList: false })
const StageTemplateSchema = stageSchema(Schema.NullOr(SpecTemplateType), `${specShape}, a plugin name or null`, { nullable: true, useIsList: true })

const transformHint = "(a transform is { drop: contrastive | stale, pad: <sessions>, position: early | middle | late | <index> })"

const decodeTransform = (value: unknown, origin: { readonly origin: string; readonly origins: ReadonlyMap<string, string> }): Either.Either<Transform.Spec, Array<Problem>> =>
  Either.mapLeft(Issues.decode(Transform.Spec, value, "key"), (issues) =>
    issues.map((i) => ({
      path: originOf(origin, i.path),
      reason: i.message.startsWith("unknown key") ? i.message : `${i.message} ${transformHint}`
    })))

const axisHelp =
  `an axis is a stage (${stageNames.join(", ")}), a dotted option path such as retriever.k, or the history transform (transform, transform.pad, ...)`

export const decodeSweep = (sweep: Readonly<Record<string, unknown>>): Either.Either<Array<SweepAxis>, Array<Problem>> => {
  const axes: Array<SweepAxis> = [], problems: Array<Problem> = []
  for (const [key, value] of Object.entries(sweep)) {
    const at = formatPath(["sweep", key])
    const [head = "", ...rest] = key.split(".")
    const stage = stageNames.find((s) => s === head)
    if (head === transformKey) {
      const part = rest.length === 1 ? Transform.keys.find((k) => k === rest[0]) : undefined
      if (rest.length > 0 && part === undefined) {
        const close = rest.length === 1 ? Issues.suggest(rest[0]!, Transform.keys) : undefined
        problems.push({
          path: at,
          reason: `unknown transform axis${close === undefined ? "" : ` (did you mean "transform.${close}"?)`}; use transform or transform.<part> with part one of ${Transform.keys.join(", ")}`
        })
        continue
      }
    } else if (stage === undefined || rest.some((s) => s === "")) {
      const close = stage === undefined ? Issues.suggest(head, [...stageNames, transformKey]) : undefined
      const meant = close === undefined ? "" : ` (did you mean "${[close, ...rest].join(".")}"?)`
      problems.push({ path: at, reason: `unknown sweep axis${meant}; ${axisHelp}` })
      continue
    } else if (rest[0] === "use") {
      problems.push({ path: at, reason: `to vary the ${stage}'s plugin, list whole specs under sweep.${stage}` })
      continue
    }
    if (!Array.isArray(value) || value.length === 0) {
      problems.push({ path: at, reason: `expected a non-empty list of alternatives, got ${show(value)}` })
      continue
    }
    const alternativesAsWritten: ReadonlyArray<unknown> = value
    if (head === transformKey) {
      const [bad, values] = Arr.partitionMap(alternatives(value, at), (alt) => {
        const origin = located(alt, at)
        const decoded = rest.length === 0
          ? decodeTransform(alt.value, origin)
          : decodeTransform({ [rest[0]!]: alt.value }, { origin: origin.origin, origins: new Map([[rest[0]!, origin.origin], ...origin.origins]) })
        return Either.map(decoded, (spec): Located<Transform.Spec> => ({ value: spec, origin: origin.origin }))
      })
      if (bad.length > 0) {
        problems.push(...bad.flat())
        continue
      }
      const part = Transform.keys.find((k) => k === rest[0])
      axes.push(
        part === undefined
          ? { _tag: "Transform", key, alternatives: alternativesAsWritten, transforms: values }
          : { _tag: "TransformPart", key, alternatives: alternativesAsWritten, part, values }
      )
      continue
    }
    if (stage === undefined) continue
    if (rest.length > 0) {
      axes.push({ _tag: "Option", key, alternatives: alternativesAsWritten, stage, path: rest })
      continue
    }
    const [bad, choices] = Arr.partitionMap(value, (alt, i) =>
      Either.mapLeft(Issues.decode(StageTemplateSchema, alt, "key"), (issues) => fromIssues(issues, ["sweep", key, i])))
    problems.push(...bad.flat())
    axes.push({ _tag: "Stage", key, alternatives: alternativesAsWritten, stage, choices })
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(axes)
}

/** The sweep key whose alternatives are data sources: one run per source. */
export const sourceAxis = "data.source"

export const decodeSources = (raw: unknown): Either.Either<ReadonlyArray<string>, Array<Problem>> => {
  if (raw === undefined) return Either.right([])
  const where = `sweep.${sourceAxis}`
  if (!Array.isArray(raw) || raw.length < 2 || !raw.every((x): x is string => typeof x === "string" && x.trim() !== "")) {
    return Either.left([{ path: where, reason: `expected a list of two or more data sources (sample, a file, longmemeval:<file>, locomo:<file>, ...), got ${JSON.stringify(raw)}` }])
  }
  const repeated = raw.find((x, i) => raw.indexOf(x) !== i)
  return repeated === undefined ? Either.right(raw) : Either.left([{ path: where, reason: `the source ${JSON.stringify(repeated)} is listed twice` }])
}
