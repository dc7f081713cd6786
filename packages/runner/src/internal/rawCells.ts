/**
 * Expanding a config into raw cells: each sweep axis as a step applied to every cell so far, and each
 * stage's spec with the place in the config file each of its values came from, for error messages.
 */
import { Stage } from "@cupid-lab/core"
import type { Transform } from "@cupid-lab/data"

import { Predicate } from "effect"
import { ConfigError } from "../Errors.js"
import { alternatives, childPath, type Origins, type Spec, type SpecTemplate, within } from "../Axes.js"

import type { Config, Located, StageName } from "../Config.js"

/** A stage of a cell before its plugin is looked up: the spec as expanded, and where it was written. */
export interface RawStage extends Origins {
  readonly spec: Spec | null
}

interface RawCell {
  readonly name?: Located<string>
  readonly stages: Readonly<Record<StageName, RawStage>>
  readonly transform?: Located<Transform.Spec>
  /** Model roles bound to `models:` entries (by a `models.<role>` axis or the cell's `models`). */
  readonly models: Readonly<Record<string, Located<string>>>
}

export const rawStage = (spec: Spec | null, origin: string): RawStage => ({ spec, origin, origins: new Map() })

/** A spec template's alternatives: `use` may list plugins, and every list value inside lists values. */
const templateAlternatives = (template: SpecTemplate, origin: string): Array<RawStage> => {
  const { use, ...options } = template
  const uses: Array<readonly [string, string]> =
    typeof use === "string" ? [[use, origin]] : use.map((u, i) => [u, `${origin}.use[${i}]`])
  return uses.flatMap(([name, at]) =>
    alternatives(options, origin).map((alt) => ({
      spec: { ...(Predicate.isRecord(alt.value) ? alt.value : {}), use: name },
      origin,
      origins: at === origin ? alt.origins : new Map([...alt.origins, ["use", at]])
    }))
  )
}

const setAt = (
  spec: Readonly<Record<string, unknown>>,
  [head = "", ...rest]: ReadonlyArray<string>,
  value: unknown
): Record<string, unknown> => {
  const inner = spec[head]
  return { ...spec, [head]: rest.length === 0 ? value : setAt(Predicate.isRecord(inner) ? inner : {}, rest, value) }
}

/** One axis applied to one cell: the cells it turns into, or why it cannot apply. */
type Step = (cell: RawCell) => ReadonlyArray<RawCell> | ConfigError

/** The axes of the sweep as steps; each axis's alternatives are made once, not once per cell. */
const steps = (config: Config): Array<Step> =>
  config.sweep.flatMap((axis): Array<Step> => (axis._tag === "Models" ? [] : [step(config, axis)]))

const step = (config: Config, axis: Exclude<Config["sweep"][number], { readonly _tag: "Models" }>): Step => {
  const at = `sweep.${axis.key}`
  switch (axis._tag) {
    case "Transform":
      return (cell) =>
        axis.transforms.map((t): RawCell => ({
          ...cell,
          transform: axis.whole
            ? t
            : { value: { ...cell.transform?.value, ...t.value }, origin: cell.transform?.origin ?? t.origin }
        }))
    case "Stage": {
      const options = axis.choices.flatMap((choice, i) =>
        choice === null ? [rawStage(null, `${at}[${i}]`)] : templateAlternatives(choice, `${at}[${i}]`)
      )
      return (cell) => options.map((o): RawCell => ({ ...cell, stages: { ...cell.stages, [axis.stage]: o } }))
    }
    case "Option": {
      const options = alternatives(axis.alternatives, at)
      const optionKey = axis.path.join(".")
      return (cell) => {
        const current = cell.stages[axis.stage]
        if (current.spec === null) {
          const reason = `sets an option of the ${axis.stage}, but the cell it applies to has no ${axis.stage}; `
          return new ConfigError({
            file: config.file,
            path: at,
            reason: `${reason}give one under pipeline.${axis.stage} or in an earlier sweep axis`
          })
        }
        const kept = [...current.origins].filter(([rel]) => !within(rel, optionKey))
        return options.map((alt): RawCell => {
          const parts = [...alt.origins].map(([rel, where]) => [childPath(optionKey, rel), where] as const)
          const origins = new Map([...kept, [optionKey, alt.origin], ...parts])
          const spec: Spec = { ...setAt(current.spec!, axis.path, alt.value), use: current.spec!.use }
          return { ...cell, stages: { ...cell.stages, [axis.stage]: { spec, origin: current.origin, origins } } }
        })
      }
    }
  }
}

type Bindings = RawCell["models"]

/** Every binding of the `models.<role>` axes, the first axis varying slowest. */
const bindings = (config: Config): Array<Bindings> =>
  config.sweep.reduce(
    (acc: Array<Bindings>, axis) =>
      axis._tag !== "Models" ? acc : acc.flatMap((b) => axis.entries.map((e) => ({ ...b, [axis.role]: e }))),
    [{}]
  )

/** Every cell below `cell` through the steps from `i` on, in grid order (the first axis varies slowest). */
function* product(cell: RawCell, all: ReadonlyArray<Step>, i: number): Generator<RawCell | ConfigError> {
  const step = all[i]
  if (step === undefined) return yield cell
  const next = step(cell)
  if (next instanceof ConfigError) return yield next
  for (const c of next) yield* product(c, all, i + 1)
}

/**
 * The config's cells before their plugins are looked up, one at a time: the sweep's product, then the
 * explicit cells, all of it once per binding of the model axes (which vary slowest).
 */
export function* rawCells(config: Config): Generator<RawCell | ConfigError> {
  for (const models of bindings(config)) yield* cellsWith(config, models)
}

function* cellsWith(config: Config, models: Bindings): Generator<RawCell | ConfigError> {
  const base = Stage.byCellStage((s) => rawStage(config.pipeline[s], `pipeline.${s}`))
  const baseTransform =
    config.data.transform === undefined ? {} : { transform: { value: config.data.transform, origin: "data.transform" } }
  if (config.sweep.some((axis) => axis._tag !== "Models") || config.cells.length === 0)
    yield* product({ stages: base, ...baseTransform, models }, steps(config), 0)
  for (const [i, explicit] of config.cells.entries()) {
    const stages = Stage.byCellStage((s) => {
      const value = explicit[s]
      return value === undefined ? base[s] : rawStage(value, `cells[${i}].${s}`)
    })
    const transform =
      explicit.transform === undefined
        ? baseTransform
        : { transform: { value: explicit.transform, origin: `cells[${i}].transform` } }
    const own = Object.entries(explicit.models ?? {}).map(
      ([role, entry]) => [role, { value: entry, origin: `cells[${i}].models.${role}` }] as const
    )
    yield {
      ...(explicit.name === undefined ? {} : { name: { value: explicit.name, origin: `cells[${i}].name` } }),
      stages,
      ...transform,
      models: { ...models, ...Object.fromEntries(own) }
    }
  }
}
