/**
 * The history-transform curves of a report: when a sweep varies `transform.pad` (history length) or
 * `transform.position` (where the relevant sessions sit), each metric is read against that axis,
 * one series per combination of everything else (stages and the other transform parts), with the
 * 95% CI and N of every point, per instance type. Read from the summary alone.
 */
import { Hash } from "@cupid-lab/core"
import type { ResultLine } from "@cupid-lab/results"
import { Array as Arr, Predicate } from "effect"

export type Axis = "pad" | "position"

export interface Curve {
  readonly axis: Axis
  readonly metric: ResultLine.MetricDescription
  /** The axis values, in order (pad ascending; early, middle, late, then indices). */
  readonly categories: ReadonlyArray<string>
  readonly series: ReadonlyArray<{
    readonly label: string
    /** Cell per category (undefined where the grid has no such cell). */
    readonly cells: ReadonlyArray<ResultLine.CellSummary | undefined>
  }>
}

const transformOf = (c: ResultLine.CellSummary): Readonly<Record<string, unknown>> => {
  const t = c.params["transform"]
  return Predicate.isRecord(t) ? t : {}
}

const axisValue = (c: ResultLine.CellSummary, axis: Axis): string => {
  const v = transformOf(c)[axis]
  return v === undefined ? (axis === "pad" ? "0" : "as recorded") : String(v)
}

const positionRank = (v: string): number => ["early", "middle", "late"].indexOf(v)

const order = (axis: Axis, values: ReadonlyArray<string>): Array<string> =>
  [...values].sort((a, b) => {
    if (axis === "pad") return Number(a) - Number(b)
    const ra = positionRank(a),
      rb = positionRank(b)
    if (ra >= 0 || rb >= 0) return (ra < 0 ? 3 : ra) - (rb < 0 ? 3 : rb) || (a < b ? -1 : 1)
    if (a === "as recorded" || b === "as recorded") return a === "as recorded" ? -1 : 1
    return Number(a) - Number(b)
  })

/** A cell's name without the axis part (`bm25 @ pad=24,position=early` -> `bm25 @ position=early`). */
const seriesLabel = (name: string, axis: Axis): string => {
  const [stages, transform] = name.includes(" @ ") ? (name.split(" @ ") as [string, string]) : [name, undefined]
  if (transform === undefined)
    return /^(drop|pad|position)=/.test(name)
      ? name
          .split(",")
          .filter((p) => !p.startsWith(`${axis}=`))
          .join(",") || "all cells"
      : name
  const rest = transform
    .split(",")
    .filter((p) => !p.startsWith(`${axis}=`))
    .join(",")
  return rest === "" ? stages : `${stages} @ ${rest}`
}

/** The curves of every swept transform axis, for the given metrics. */
export const curves = (
  summary: ResultLine.Summary,
  metrics: ReadonlyArray<ResultLine.MetricDescription>
): ReadonlyArray<Curve> =>
  (["pad", "position"] as const).flatMap((axis) => {
    const values = [...new Set(summary.cells.map((c) => axisValue(c, axis)))]
    if (values.length < 2) return []
    const categories = order(axis, values)
    // one series per combination of everything but this axis; the last cell of a category wins
    const groups = Arr.groupBy(summary.cells, (c) => {
      const { [axis]: _drop, ...rest } = transformOf(c)
      return Hash.canonicalJson({ ...c.params, transform: rest })
    })
    const series = Object.values(groups).map((cells) => ({
      label: seriesLabel(cells[0].name, axis),
      cells: categories.map((v) => cells.findLast((c) => axisValue(c, axis) === v))
    }))
    return metrics.map((metric): Curve => ({ axis, metric, categories, series }))
  })

export const axisTitle = (axis: Axis): string =>
  axis === "pad"
    ? "history length: sessions added by transform.pad"
    : "position of the relevant sessions (transform.position)"
