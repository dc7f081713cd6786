/**
 * Like for like: what must be equal for two cells' numbers to be compared, read from what the runs
 * recorded (summary.json): the data's fingerprint, each metric's definition, and per cell the
 * scorers' settings (`cells[].scoring`): their options, accounting mode, prompt packs, and the judge
 * and matcher models they call. `compare` refuses two runs that differ in any of these unless told
 * otherwise (`--allow-mismatch`), and then lists the differences above every number. A run made
 * before cells recorded their scoring leaves those fields unknown: said so, never refused.
 *
 * @example
 * const found = LikeForLike.differences(runA.summary, runB.summary, [{ a: cellA, b: cellB, label: "bm25" }], metrics)
 * LikeForLike.refuses(found) // true when a field differs
 * LikeForLike.table(found) // the table compare.md opens with
 */
import { Hash } from "@cupid-lab/core"
import type { ResultLine } from "@cupid-lab/results"
import { Predicate } from "effect"
import type { Table } from "./Table.js"

export interface Difference {
  /** What differs: `data fingerprint`, `judge model (judge.model)`, `accounting mode (preference-match)`, ... */
  readonly field: string
  readonly first: string
  readonly second: string
  /** `differs` refuses the comparison; `unknown`: one run does not record the field. */
  readonly kind: "differs" | "unknown"
  /** The matched cells it concerns (their labels); empty for the runs as a whole. */
  readonly cells: ReadonlyArray<string>
}

/** Two cells compared side by side, with the label the comparison shows for them. */
export interface Pair {
  readonly a: ResultLine.CellSummary
  readonly b: ResultLine.CellSummary
  readonly label: string
}

type Scoring = NonNullable<ResultLine.CellSummary["scoring"]>

const shown = (v: unknown): string => (typeof v === "string" ? v : Hash.canonicalJson(v))

/** A leaf option's field name: models, accounting and prompt packs by name, the rest as settings. */
const fieldOf = (use: string, at: ReadonlyArray<string>, isModel: boolean): string => {
  const where = [use, ...at].join(".")
  const last = at[at.length - 1] ?? ""
  if (isModel) {
    const role = use.includes("judge")
      ? "judge"
      : at.includes("matcher")
        ? "matcher"
        : at.includes("decomposer")
          ? "decomposer"
          : "scorer"
    return `${role} model (${where})`
  }
  if (last === "accounting") return `accounting mode (${use})`
  if (last === "prompts" || last === "template") return `prompt pack (${where})`
  return `scorer setting (${where})`
}

/** Per scorer (`use`, then `use#2` for a second of its kind), its options as field -> value; a value naming a model is what it resolved to (provider/model). */
export const facts = (scoring: Scoring): Map<string, Map<string, string>> => {
  const out = new Map<string, Map<string, string>>()
  const seen = new Map<string, number>()
  for (const params of scoring.scorers) {
    const base = typeof params["use"] === "string" ? params["use"] : "scorer"
    const k = (seen.get(base) ?? 0) + 1
    seen.set(base, k)
    const use = k === 1 ? base : `${base}#${k}`
    const fields = new Map<string, string>()
    const walk = (value: unknown, at: ReadonlyArray<string>) => {
      const model =
        typeof value === "string" && Object.hasOwn(scoring.models, value) ? scoring.models[value] : undefined
      if (model !== undefined) fields.set(fieldOf(use, at, true), `${model.provider}/${model.model}`)
      else if (Predicate.isRecord(value)) for (const [key, v] of Object.entries(value)) walk(v, [...at, key])
      else fields.set(fieldOf(use, at, false), shown(value))
    }
    for (const [key, v] of Object.entries(params)) if (key !== "use") walk(v, [key])
    out.set(use, fields)
  }
  return out
}

const unrecorded = "not recorded (a run made before summary.json kept cells[].scoring)"

/**
 * [field, first, second] where the scorers both cells use differ (an option only one sets is "unset"
 * on the other). A scorer only one uses is no difference here: its metrics are scored in one run
 * only, and the comparison leaves them out and says so.
 */
const pairDifferences = (a: Scoring, b: Scoring): Array<[string, string, string]> => {
  const fa = facts(a),
    fb = facts(b)
  return [...fa.keys()].flatMap((use): Array<[string, string, string]> => {
    const x = fa.get(use)!,
      y = fb.get(use)
    if (y === undefined) return []
    return [...new Set([...x.keys(), ...y.keys()])]
      .filter((f) => x.get(f) !== y.get(f))
      .map((f) => [f, x.get(f) ?? "unset", y.get(f) ?? "unset"])
  })
}

/**
 * What differs between two runs in what makes their numbers comparable: the data (run-wide), the
 * definitions of the compared metrics (run-wide), and each matched pair's scoring. Differences shared
 * by several pairs are one row naming them.
 */
export const differences = (
  a: ResultLine.Summary,
  b: ResultLine.Summary,
  pairs: ReadonlyArray<Pair>,
  metrics: ReadonlyArray<ResultLine.MetricDescription>
): Array<Difference> => {
  const out: Array<Difference> = []
  if (a.dataset.hash !== b.dataset.hash)
    out.push({
      field: "data fingerprint",
      first: `${a.dataset.source}, ${a.dataset.hash.slice(0, 16)}`,
      second: `${b.dataset.source}, ${b.dataset.hash.slice(0, 16)}`,
      kind: "differs",
      cells: []
    })
  for (const m of metrics) {
    const other = b.metrics.find((x) => x.name === m.name)
    if (other === undefined || (other.description === m.description && other.heuristic === m.heuristic)) continue
    const text = (x: ResultLine.MetricDescription) => `${x.description}${x.heuristic ? " (heuristic)" : ""}`
    out.push({ field: `definition of ${m.name}`, first: text(m), second: text(other), kind: "differs", cells: [] })
  }
  const grouped = new Map<string, { row: Omit<Difference, "cells">; cells: Array<string> }>()
  const add = (row: Omit<Difference, "cells">, label: string) => {
    const key = Hash.canonicalJson(row)
    const hit = grouped.get(key)
    if (hit === undefined) grouped.set(key, { row, cells: [label] })
    else hit.cells.push(label)
  }
  for (const p of pairs) {
    if (p.a.scoring === undefined || p.b.scoring === undefined) {
      add(
        {
          field: "scorers' settings and models",
          first: p.a.scoring === undefined ? unrecorded : "recorded",
          second: p.b.scoring === undefined ? unrecorded : "recorded",
          kind: "unknown"
        },
        p.label
      )
      continue
    }
    for (const [field, first, second] of pairDifferences(p.a.scoring, p.b.scoring))
      add({ field, first, second, kind: "differs" }, p.label)
  }
  for (const { row, cells } of grouped.values())
    out.push({ ...row, cells: cells.length === pairs.length && pairs.length > 1 ? [] : cells })
  return out
}

/** Whether the differences forbid ranking the two runs' numbers side by side (unknowns do not). */
export const refuses = (found: ReadonlyArray<Difference>): boolean => found.some((d) => d.kind === "differs")

const where = (d: Difference): string => (d.cells.length === 0 ? "all" : d.cells.join(", "))

/** One line per difference, for an error or the console: `judge model (judge.model): first openai/a, second openai/b`. */
export const lines = (found: ReadonlyArray<Difference>): Array<string> =>
  found.map(
    (d) =>
      `${d.field}${d.kind === "unknown" ? " (unknown)" : ""}: first ${d.first}, second ${d.second}${d.cells.length === 0 ? "" : ` (${d.cells.length === 1 ? "cell" : "cells"} ${where(d)})`}`
  )

/** The table compare.md and compare.html open with: what differs; undefined when nothing does. */
export const table = (found: ReadonlyArray<Difference>, allowed: boolean): Table | undefined => {
  const differing = found.filter((d) => d.kind === "differs")
  return differing.length === 0
    ? undefined
    : {
        id: "compare-like-for-like",
        title: "What differs between the runs",
        notes: [
          `The runs differ in what makes numbers comparable${allowed ? " (compared anyway: --allow-mismatch)" : ""}: a difference below may come from these, not from the method.`,
          "Cells: the matched cells a row concerns (all: every matched cell, or the runs as a whole)."
        ],
        columns: [
          { label: "what differs", align: "left" },
          { label: "first run", align: "left" },
          { label: "second run", align: "left" },
          { label: "cells", align: "left" }
        ],
        rows: differing.map((d) => ({
          kinds: [],
          cells: [{ text: d.field }, { text: d.first }, { text: d.second }, { text: where(d) }]
        }))
      }
}

/** What cannot be checked because a run does not record it, one sentence each (beside the table). */
export const unknowns = (found: ReadonlyArray<Difference>): Array<string> =>
  found
    .filter((d) => d.kind === "unknown")
    .map(
      (d) =>
        `Unknown: ${d.field} (${d.cells.length === 0 ? "every matched cell" : d.cells.join(", ")}): first run ${d.first}; second run ${d.second}. They may differ; this comparison cannot tell.`
    )

/** A scorer setting the ranked cells of one run differ in: each value, with the cells that have it. */
export interface Mismatch {
  readonly field: string
  readonly values: ReadonlyArray<{ readonly value: string; readonly cells: ReadonlyArray<string> }>
}

/**
 * Within one run: where the ranked cells (those that read no gold) differ in their scorers (a judge
 * swap, `models.evaluator` as a sweep axis), said once above the verdict; none when they all score
 * alike or do not record it.
 */
export const withinRun = (cells: ReadonlyArray<ResultLine.CellSummary>): Array<Mismatch> => {
  const ranked = cells.filter((c) => !c.usesGold && c.scoring !== undefined)
  const of = ranked.map((c) => ({ name: c.name, facts: facts(c.scoring!) }))
  const uses = [...(of[0]?.facts.keys() ?? [])].filter((u) => of.every((c) => c.facts.has(u)))
  return uses.flatMap((use) => {
    const fields = [...new Set(of.flatMap((c) => [...c.facts.get(use)!.keys()]))]
    return fields.flatMap((field) => {
      const byValue = new Map<string, Array<string>>()
      for (const c of of) {
        const v = c.facts.get(use)!.get(field) ?? "unset"
        byValue.set(v, [...(byValue.get(v) ?? []), c.name])
      }
      return byValue.size < 2 ? [] : [{ field, values: [...byValue].map(([value, cells]) => ({ value, cells })) }]
    })
  })
}
