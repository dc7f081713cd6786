/**
 * Facts about a run that are not statistics: usage per cell, models, failures grouped by cause, the
 * plugins the cells use (with the package that ships each), and the cost frontier.
 *
 * @example
 * Inventory.failureGroups(run.index, run.summary.cells)[0] // { stage, plugin, tag, count, cells, examples }
 */
import { Stage } from "@cupid-lab/core"
import type { ResultLine, Columns } from "@cupid-lab/results"
import { Array as Arr, Struct } from "effect"

/** A cell's usage (failed lines count too; scoring apart). */
export interface CostRow extends Columns.CellUsage {
  readonly cell: string
}

export interface ModelUse {
  readonly id: string
  readonly calls: number
  readonly promptTokens: number
  readonly completionTokens: number
}

export interface FailureGroup {
  readonly stage: string
  readonly plugin: string
  readonly tag: string
  readonly count: number
  /** Names of the cells affected, in grid order. */
  readonly cells: ReadonlyArray<string>
  /** The first three in file order. */
  readonly examples: ReadonlyArray<{ readonly cell: string; readonly instance: string; readonly message: string }>
}

export interface PluginUse {
  readonly stage: string
  readonly name: string
  /** Undefined for a plugin module listed by the config. */
  readonly package: string | undefined
  /** Cells using it, directly or inside a composite plugin. */
  readonly cells: number
}

export const costRows = (cells: ReadonlyArray<ResultLine.CellSummary>, idx: Columns.Index): Array<CostRow> =>
  cells.map((c) => ({
    cell: c.id,
    ...(idx.usage.get(c.id) ?? {
      pairs: 0,
      calls: 0,
      promptTokens: 0,
      completionTokens: 0,
      scoringCalls: 0,
      scoringTokens: 0
    })
  }))

export const modelUse = (idx: Columns.Index): Array<ModelUse> =>
  [...idx.models.keys()].sort().map((id) => ({ id, ...idx.models.get(id)! }))

export const failureGroups = (
  idx: Columns.Index,
  cells: ReadonlyArray<ResultLine.CellSummary>
): Array<FailureGroup> => {
  const order = new Map(cells.map((c, i) => [c.id, i]))
  const names = new Map(cells.map((c) => [c.id, c.name]))
  const errorOf = (r: Columns.Index["failures"][number]) =>
    r.error ?? { stage: "unknown", plugin: "unknown", tag: "unknown", message: "(no error recorded)" }
  const groups = Arr.groupBy(idx.failures, (r) => `${errorOf(r).stage}\0${errorOf(r).plugin}\0${errorOf(r).tag}`)
  return Object.values(groups)
    .map((rows) => ({
      ...Struct.pick(errorOf(rows[0]), "stage", "plugin", "tag"),
      count: rows.length,
      cells: [...new Set(rows.map((r) => r.cell))]
        .sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0))
        .map((id) => names.get(id) ?? id),
      examples: rows
        .slice(0, 3)
        .map((r) => ({ cell: names.get(r.cell) ?? r.cellName, instance: r.instance, message: errorOf(r).message }))
    }))
    .sort((a, b) => b.count - a.count || (a.stage + a.plugin + a.tag < b.stage + b.plugin + b.tag ? -1 : 1))
}

/** Every plugin the cells name, top-level stages and parts of composite plugins (`hybrid`, `rerank`). */
export const pluginUses = (cells: ReadonlyArray<ResultLine.CellSummary>): Array<PluginUse> => {
  const uses = new Map<string, { stage: string; name: string; package: string | undefined; cells: Set<string> }>()
  // The package of each plugin, as the run recorded it for the stages it built.
  const recorded = new Map(cells.flatMap((c) => c.plugins.map((p) => [`${p.stage}\0${p.name}`, p.package] as const)))
  const packageOf = (stage: string, name: string): string | undefined => recorded.get(`${stage}\0${name}`)
  // A `use` nested in a stage's options is a part of that plugin: another stage plugin (hybrid's
  // retrievers) or a component of its own (an embedder), shipped with the parent when unregistered.
  const walk = (
    value: unknown,
    stage: string,
    cell: string,
    parent: { readonly pkg: string | undefined } | undefined
  ): void => {
    if (Array.isArray(value)) return value.forEach((v) => walk(v, stage, cell, parent))
    if (value === null || typeof value !== "object") return
    const v = value as Record<string, unknown>
    let here = parent
    if (typeof v["use"] === "string") {
      const name = v["use"]
      const registered = packageOf(stage, name)
      const asStage = parent === undefined || registered !== undefined ? stage : `${stage} part`
      const pkg = parent === undefined || registered !== undefined ? registered : parent.pkg
      const key = `${asStage}\0${name}`
      const u = uses.get(key) ?? { stage: asStage, name, package: pkg, cells: new Set<string>() }
      u.cells.add(cell)
      uses.set(key, u)
      here = { pkg }
    }
    for (const [k, child] of Object.entries(v)) if (k !== "use") walk(child, stage, cell, here)
  }
  for (const c of cells) for (const [stage, spec] of Object.entries(c.params)) walk(spec, stage, c.id, undefined)
  const order = Stage.cellStages.flatMap((s) => [s, `${s} part`])
  return [...uses.values()]
    .sort((a, b) => order.indexOf(a.stage) - order.indexOf(b.stage) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((u) => ({ stage: u.stage, name: u.name, package: u.package, cells: u.cells.size }))
}

/** Cells on the cost frontier: no other (non-oracle) cell is at most as costly and at least as good, and better in one. */
export const paretoFront = (
  points: ReadonlyArray<{ readonly id: string; readonly cost: number; readonly value: number }>
): Set<string> => {
  const ok = points.filter((p) => Number.isFinite(p.cost) && Number.isFinite(p.value))
  const dominated = (p: (typeof ok)[number]) =>
    ok.some((q) => q !== p && q.cost <= p.cost && q.value >= p.value && (q.cost < p.cost || q.value > p.value))
  return new Set(ok.filter((p) => !dominated(p)).map((p) => p.id))
}
