/**
 * The viewer's instance pages over a loaded run: the list (filtered, searched, sorted and paged), and
 * one instance with the dataset's text next to what each cell did with it.
 *
 * @example
 * const page = yield* Instances.list(loaded, { a: "@2", b: "@3" }, texts)
 */
import type { Domain } from "@cupid-lab/core"
import { Analysis, Examples, Slices } from "@cupid-lab/report"
import { ResultLine, type RunDir, type RunId } from "@cupid-lab/results"
import { Effect, Either, Struct } from "effect"

import { ViewError } from "./Errors.js"

import type { CellEntry, FiguresView, RunEntry } from "./Entries.js"

export const sortKeys = ["instance", "type", "length", "metric"] as const

export type SortKey = (typeof sortKeys)[number]

/** Cells are named by selectors: id, id prefix, name or `@k`. */
export interface InstanceQuery {
  readonly type?: string | undefined
  readonly cell?: string | undefined
  readonly failed?: boolean | undefined
  /** Two cells: only instances where they selected different sessions, or one failed. */
  readonly a?: string | undefined
  readonly b?: string | undefined
  /** Words that must all occur in the ids, the request, the gold preference, inferences, generations or errors. */
  readonly q?: string | undefined
  readonly sort?: SortKey | undefined
  readonly desc?: boolean | undefined
  readonly offset?: number | undefined
  readonly limit?: number | undefined
}

export interface Loaded {
  readonly stamp: string
  /** Computed when first asked for. */
  analysis?: Analysis.Analysis
  figures?: FiguresView
  texts?: Texts
  readonly run: RunDir.Run
  readonly identity: RunId.Identity | undefined
  readonly entry: RunEntry
  readonly cells: ReadonlyArray<CellEntry>
  readonly main: ResultLine.MetricDescription | undefined
  readonly mainReason: string
  /** Each instance's lines by cell id, in dataset order. */
  readonly byInstance: ReadonlyMap<string, ReadonlyMap<string, ResultLine.Row>>
}

export interface Texts {
  readonly instances: ReadonlyMap<string, Domain.Instance>
  readonly note: string | null
  /** Rows of the dataset skipped as invalid, with their reasons. */
  readonly skipped: ReadonlyArray<string>
}

/** An instance's first line, for what every line of it says alike. */
const first = (rows: ReadonlyMap<string, ResultLine.Row>): ResultLine.Row => rows.values().next().value!

/** A line's value of the run's main metric, as the reports' examples give it; null where it has none. */
const mainValue = (l: Loaded, row: ResultLine.Row | undefined): number | null => {
  if (row === undefined || l.main === undefined || row.status !== "ok") return null
  const v = Examples.instanceValue(l.main, row.scores)
  return Number.isFinite(v) ? v : null
}

const sameSelection = (x: ReadonlyArray<string> | null, y: ReadonlyArray<string> | null): boolean =>
  x === null || y === null ? x === y : x.length === y.length && y.every((s) => x.includes(s))

/** Two outcomes disagree when one failed and the other did not, or their selections differ as sets. */
export const disagree = (x: ResultLine.Row | undefined, y: ResultLine.Row | undefined): boolean => {
  if (x === undefined || y === undefined) return false
  if (x.status !== y.status) return true
  return x.status === "ok" && !sameSelection(x.selected, y.selected)
}

export const findCell = (l: Loaded, selector: string): Effect.Effect<CellEntry, ViewError> => {
  return Either.match(Analysis.findCell(l.run.summary.cells, selector), {
    onLeft: (message) => Effect.fail(new ViewError({ status: 404, message })),
    onRight: (c) => Effect.succeed(l.cells[l.run.summary.cells.indexOf(c)]!)
  })
}

export const outcome = (l: Loaded, row: ResultLine.Row | undefined, cell: string) =>
  row === undefined
    ? { cell, status: "failed" as const, selected: null, main: null }
    : { cell, status: row.status, selected: row.selected, main: mainValue(l, row) }

/** The instances of a loaded run that match `query`, sorted and paged. */
export const list = Effect.fn("Instances.list")(function* (
  l: Loaded,
  query: InstanceQuery,
  texts: () => Effect.Effect<Texts>
) {
  const types = Slices.of(l.run.summary).filter((s) => s !== "all")
  if (query.type !== undefined && query.type !== "" && query.type !== "all" && !types.includes(query.type)) {
    return yield* new ViewError({
      status: 400,
      message: `type must be one of ${types.join(", ")}; got "${query.type}"`
    })
  }
  if ((query.a === undefined) !== (query.b === undefined)) {
    return yield* new ViewError({ status: 400, message: "disagreement needs two cells: give both a and b" })
  }
  const named = (selector: string | undefined) =>
    selector === undefined || selector === "" ? Effect.succeed(undefined) : findCell(l, selector)
  const cell = yield* named(query.cell)
  const a = yield* named(query.a)
  const b = yield* named(query.b)
  const shown = [cell, a, b].filter((c) => c !== undefined)
  const shownIds = shown.length > 0 ? [...new Set(shown.map((c) => c.id))] : l.cells.map((c) => c.id)
  const terms = (query.q ?? "")
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== "")
  const t = terms.length > 0 ? yield* texts() : undefined
  const type = query.type === "" || query.type === "all" ? undefined : query.type
  const failed = (r: ResultLine.Row | undefined) => r?.status === "failed"
  const matched = [...l.byInstance].flatMap(([id, rows], index) => {
    const head = first(rows)
    if (type !== undefined && head.type !== type) return []
    if (cell !== undefined) {
      if (!rows.has(cell.id) || (query.failed === true && !failed(rows.get(cell.id)))) return []
    } else if (query.failed === true && ![...rows.values()].some(failed)) return []
    if (a !== undefined && b !== undefined && !disagree(rows.get(a.id), rows.get(b.id))) return []
    if (terms.length > 0) {
      const parts = [
        id,
        head.personaId,
        ...[...rows.values()].flatMap((r) => [
          r.inference?.preference ?? "",
          r.generation?.text ?? "",
          r.error?.message ?? ""
        ])
      ]
      const gold = t?.instances.get(id)
      if (gold !== undefined) parts.push(gold.query.request, gold.gold.preference, gold.gold.factor)
      const haystack = parts.join("\n").toLowerCase()
      if (!terms.every((w) => haystack.includes(w))) return []
    }
    return [{ id, rows, head, index }]
  })
  const metricCell = cell ?? a ?? l.cells.find((c) => c.baseline)
  const keys: Record<SortKey, (m: (typeof matched)[number]) => number | string> = {
    instance: (m) => m.index,
    type: (m) => m.head.type,
    length: (m) => m.head.meta.historyTokens,
    metric: (m) =>
      mainValue(l, metricCell === undefined ? undefined : m.rows.get(metricCell.id)) ?? Number.NEGATIVE_INFINITY
  }
  const key = keys[query.sort ?? "instance"]
  const sign = query.desc === true ? -1 : 1
  const sorted = matched
    .map((m) => ({ m, k: key(m) }))
    .sort((x, y) => {
      const c = typeof x.k === "number" && typeof y.k === "number" ? x.k - y.k : String(x.k).localeCompare(String(y.k))
      return c !== 0 ? sign * c : x.m.index - y.m.index
    })
  const offset = Math.max(0, query.offset ?? 0)
  const limit = Math.min(500, Math.max(1, query.limit ?? 100))
  const items = sorted.slice(offset, offset + limit).map(({ m }) => ({
    id: m.id,
    type: m.head.type,
    ...Struct.pick(m.head.meta, "sessions", "historyTokens", "relevant", "stale"),
    outcomes: shownIds.map((c) => outcome(l, m.rows.get(c), c))
  }))
  const description =
    [
      type === undefined ? "" : `${type} instances`,
      cell === undefined ? "" : `cell ${cell.name}${query.failed === true ? " failed" : ""}`,
      cell === undefined && query.failed === true ? "some cell failed" : "",
      a !== undefined && b !== undefined
        ? `cells ${a.name} and ${b.name} selected different sessions, or one failed`
        : "",
      terms.length > 0 ? `text contains ${terms.map((w) => JSON.stringify(w)).join(" and ")}` : ""
    ]
      .filter((x) => x !== "")
      .join("; ") || "every instance"
  const notice =
    t?.note !== undefined && t.note !== null && t.instances.size === 0
      ? `search read the results only: ${t.note}`
      : null
  const resolved = { cell: cell?.id ?? null, a: a?.id ?? null, b: b?.id ?? null }
  return { total: l.byInstance.size, matched: matched.length, offset, items, description, resolved, notice }
})

/** One instance of a loaded run; `rankings` reads each cell's ranking of it (the loaded lines do not keep them). */
export const detail = Effect.fn("Instances.detail")(function* (
  l: Loaded,
  id: string,
  instanceId: string,
  texts: Effect.Effect<Texts>,
  rankings: Effect.Effect<ReadonlyMap<string, ResultLine.ResultLine["ranking"]>, ViewError>
) {
  const rows = l.byInstance.get(instanceId)
  if (rows === undefined)
    return yield* new ViewError({ status: 404, message: `run ${id} has no instance "${instanceId}"` })
  const head = first(rows)
  const t = yield* texts
  const ranked = yield* rankings
  const data = t.instances.get(instanceId)
  const note =
    data === undefined && t.note === null
      ? `instance ${instanceId} is not in the run's dataset any more${t.skipped.length === 0 ? "" : `; ${t.skipped.length} rows of it were skipped as invalid (${t.skipped.slice(0, 3).join("; ")})`}`
      : t.note
  const selectedBy = new Map<string, Array<string>>()
  for (const c of l.cells) {
    for (const s of rows.get(c.id)?.selected ?? []) selectedBy.set(s, [...(selectedBy.get(s) ?? []), c.id])
  }
  const session = (
    id: string,
    index: number,
    g: Partial<Domain.GoldSession> | undefined,
    turns: ReadonlyArray<Domain.Message>
  ) => ({
    id,
    position: index + 1,
    label: g?.label ?? null,
    factor: g?.factor ?? null,
    preference: g?.preference ?? null,
    turns,
    selectedBy: selectedBy.get(id) ?? []
  })
  const sessions =
    data !== undefined
      ? data.query.sessions.map((s) =>
          session(
            s.id,
            s.index,
            data.gold.sessions.find((x) => x.id === s.id),
            s.dialogue
          )
        )
      : Array.from({ length: head.meta.sessions }, (_, i) => {
          const sid = `s${i + 1}`
          return session(
            sid,
            i,
            {
              label: head.meta.relevant.includes(sid) ? "relevant" : head.meta.stale.includes(sid) ? "stale" : "other"
            },
            []
          )
        })
  const known = new Set(sessions.map((s) => s.id))
  const otherSelected = [...selectedBy.entries()]
    .filter(([s]) => !known.has(s))
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([session, cells]) => ({ session, cells }))
  const metrics = new Map(l.run.summary.metrics.map((m) => [m.name, m]))
  const headline = (metric: string) => metric === l.main?.name || metrics.get(metric)?.headline === true
  // The main metric, then the headline ones, then the rest, each by name.
  const order = (metric: string) => (metric === l.main?.name ? 0 : headline(metric) ? 1 : 2)
  const score = ([metric, v]: readonly [string, ResultLine.ResultLine["scores"][string]]) => {
    const facts = { metric, heuristic: metrics.get(metric)?.heuristic ?? false, headline: headline(metric) }
    if (v !== null && typeof v === "object")
      return { ...facts, value: v.den > 0 ? v.num / v.den : null, num: v.num, den: v.den }
    return { ...facts, value: v !== null && Number.isFinite(v) ? v : null }
  }
  const results = l.cells.flatMap((c) => {
    const r = rows.get(c.id)
    return r === undefined
      ? []
      : [
          {
            cell: c.id,
            ...Struct.pick(r, "status", "selected", "error"),
            inference: r.inference?.preference ?? null,
            generation: r.generation?.text ?? null,
            ranking: ranked.get(c.id)?.map((x, i) => ({ session: x.sessionId, score: x.score, rank: i + 1 })) ?? null,
            scores: Object.entries(r.scores)
              .sort(([x], [y]) => order(x) - order(y) || x.localeCompare(y))
              .map(score),
            ratings: r.ratings ?? [],
            usage: Struct.pick(r.usage, "calls", "promptTokens", "completionTokens")
          }
        ]
  })
  return {
    run: id,
    id: instanceId,
    type: head.type,
    request: data?.query.request ?? null,
    gold: data === undefined ? null : Struct.pick(data.gold, "factor", "preference", "checklist"),
    datasetNote: note,
    sessions,
    otherSelected,
    cells: l.cells,
    main: l.main?.name ?? null,
    results
  }
})

/** The JSON of `GET /api/instances`. */
export type InstanceList = Effect.Effect.Success<ReturnType<typeof list>>

/** The JSON of `GET /api/instance`. */
export type InstanceDetail = Effect.Effect.Success<ReturnType<typeof detail>>

export type CellOutcome = ReturnType<typeof outcome>
