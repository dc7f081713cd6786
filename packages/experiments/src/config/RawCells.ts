/**
 * A config's cells before their plugins are looked up, made one at a time, and the grid's size,
 * counted from the axes without making any cell.
 *
 * @example
 * size(config)                 // { cells: 8000, axes: [{ key: "retriever.k", alternatives: 20 }, ...], explicit: 0 }
 * for (const raw of rawCells(config)) ... // RawCell, or the ConfigError of an axis that cannot apply
 */
import type { Config, Spec, SpecTemplate, StageName, SweepAxis } from "./Config.js"
import { ConfigError } from "../Errors.js"
import { Stage, type Transform } from "@cupid-lab/core"
import { alternatives, childPath, countAlternatives, countObjectAlternatives, isRecord, located, objectAlternatives } from "./Tree.js"

/** A stage of a cell before its plugin is looked up: the spec as expanded, and where it was written. */
export interface RawStage {
  readonly spec: Spec | null
  readonly origin: string
  readonly origins: ReadonlyMap<string, string>
}

export interface RawCell {
  readonly name?: { readonly value: string; readonly origin: string }
  readonly stages: Readonly<Record<StageName, RawStage>>
  readonly transform?: { readonly value: Transform.Spec; readonly origin: string }
}

/** A spec template's alternatives: `use` may list plugins, and every list value inside lists values. */
const templateAlternatives = (template: SpecTemplate, origin: string): Array<{ spec: Spec; origins: ReadonlyArray<readonly [string, string]> }> => {
  const { use, ...options } = template
  const uses: Array<readonly [string, string]> = typeof use === "string" ? [[use, origin]] : use.map((u, i) => [u, `${origin}.use[${i}]`])
  return uses.flatMap(([name, at]) =>
    objectAlternatives(options, origin).map((alt) => ({
      spec: { ...(isRecord(alt.value) ? alt.value : {}), use: name },
      origins: at === origin ? alt.origins : [...alt.origins, ["use", at] as const]
    }))
  )
}

const setAt = (spec: Readonly<Record<string, unknown>>, path: ReadonlyArray<string>, value: unknown): Record<string, unknown> => {
  const [head, ...rest] = path
  if (head === undefined) return { ...spec }
  if (rest.length === 0) return { ...spec, [head]: value }
  const inner = spec[head]
  return { ...spec, [head]: setAt(isRecord(inner) ? inner : {}, rest, value) }
}

/** One axis applied to one cell: the cells it turns into, or why it cannot apply. */
type Step = (cell: RawCell) => ReadonlyArray<RawCell> | ConfigError

/** The axes of the sweep as steps; each axis's alternatives are made once, not once per cell. */
const steps = (config: Config): Array<Step> =>
  config.sweep.map((axis): Step => {
    const at = `sweep.${axis.key}`
    switch (axis._tag) {
      case "Transform":
        return (cell) => axis.transforms.map((t): RawCell => ({ ...cell, transform: t }))
      case "TransformPart":
        return (cell) =>
          axis.values.map((v): RawCell => ({
            ...cell,
            transform: { value: { ...cell.transform?.value, ...v.value }, origin: cell.transform?.origin ?? v.origin }
          }))
      case "Stage": {
        const options = axis.choices.flatMap((choice, i): Array<RawStage> =>
          choice === null
            ? [{ spec: null, origin: `${at}[${i}]`, origins: new Map<string, string>() }]
            : templateAlternatives(choice, `${at}[${i}]`).map((alt) => ({ spec: alt.spec, ...located(alt, `${at}[${i}]`) }))
        )
        return (cell) => options.map((o): RawCell => ({ ...cell, stages: { ...cell.stages, [axis.stage]: o } }))
      }
      case "Option": {
        const options = alternatives(axis.alternatives, at)
        const optionKey = axis.path.join(".")
        return (cell) => {
          const current = cell.stages[axis.stage]
          if (current.spec === null) {
            return new ConfigError({
              file: config.file,
              path: at,
              reason: `sets an option of the ${axis.stage}, but the cell it applies to has no ${axis.stage}; give one under pipeline.${axis.stage} or in an earlier sweep axis`
            })
          }
          const kept = [...current.origins].filter(([rel]) => rel !== optionKey && !rel.startsWith(`${optionKey}.`) && !rel.startsWith(`${optionKey}[`))
          return options.map((alt): RawCell => {
            const origins = new Map(kept)
            for (const [rel, where] of alt.origins) origins.set(childPath(optionKey, rel), where)
            const spec: Spec = { ...setAt(current.spec!, axis.path, alt.value), use: current.spec!.use }
            return { ...cell, stages: { ...cell.stages, [axis.stage]: { spec, origin: current.origin, origins } } }
          })
        }
      }
    }
  })

/** Every cell below `cell` through the steps from `i` on, in grid order (the first axis varies slowest). */
function* product(cell: RawCell, all: ReadonlyArray<Step>, i: number): Generator<RawCell | ConfigError> {
  const step = all[i]
  if (step === undefined) return yield cell
  const next = step(cell)
  if (next instanceof ConfigError) return yield next
  for (const c of next) yield* product(c, all, i + 1)
}

/** The config's raw cells, one at a time: the sweep's product, then the explicit cells. */
export function* rawCells(config: Config): Generator<RawCell | ConfigError> {
  const stageFrom = (spec: Spec | null, origin: string): RawStage => ({ spec, origin, origins: new Map() })
  const base = Stage.byCellStage((s) => stageFrom(config.pipeline[s], `pipeline.${s}`))
  const baseTransform = config.data.transform === undefined ? {} : { transform: { value: config.data.transform, origin: "data.transform" } }
  if (config.sweep.length > 0 || config.cells.length === 0) yield* product({ stages: base, ...baseTransform }, steps(config), 0)
  for (const [i, explicit] of config.cells.entries()) {
    const stages = Stage.byCellStage((s) => {
      const value = explicit.stages[s]
      return value === undefined ? base[s] : stageFrom(value, `cells[${i}].${s}`)
    })
    const transform = explicit.transform === undefined ? baseTransform : { transform: { value: explicit.transform, origin: `cells[${i}].transform` } }
    yield { ...(explicit.name === undefined ? {} : { name: { value: explicit.name, origin: `cells[${i}].name` } }), stages, ...transform }
  }
}

/** How many alternatives one sweep axis has, counted without making them. */
const axisSize = (axis: SweepAxis): number => {
  switch (axis._tag) {
    case "Transform":
      return axis.transforms.length
    case "TransformPart":
      return axis.values.length
    case "Stage":
      return axis.choices.reduce((n, c) => {
        if (c === null) return n + 1
        const { use, ...options } = c
        return n + (typeof use === "string" ? 1 : use.length) * countObjectAlternatives(options)
      }, 0)
    case "Option":
      return countAlternatives(axis.alternatives)
  }
}

export interface Size {
  /** Equal cells, merged later, are counted each time. */
  readonly cells: number
  readonly axes: ReadonlyArray<{ readonly key: string; readonly alternatives: number }>
  /** The explicit `cells`. */
  readonly explicit: number
}

/** The grid's size, computed from the axes without expanding them. */
export const size = (config: Config): Size => {
  const axes = config.sweep.map((axis) => ({ key: axis.key, alternatives: axisSize(axis) }))
  const swept = config.sweep.length > 0 || config.cells.length === 0 ? axes.reduce((n, a) => n * a.alternatives, 1) : 0
  return { cells: swept + config.cells.length, axes, explicit: config.cells.length }
}

/** `2,560,000 cells (sweep.retriever.k 40 x sweep.retriever.b 40 x ...)`. */
export const describeSize = (s: Size): string => {
  const parts = [s.axes.map((a) => `sweep.${a.key} ${a.alternatives.toLocaleString("en-US")}`).join(" x "), s.explicit > 0 ? `${s.explicit} explicit` : ""]
  const how = parts.filter((p) => p !== "").join(" + ")
  return `${s.cells.toLocaleString("en-US")} cells${how === "" ? "" : ` (${how})`}`
}

