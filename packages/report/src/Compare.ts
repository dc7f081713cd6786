/**
 * Comparing two runs cell by cell: cells are matched by id (same normalized parameters), then by
 * name; each pair is compared on the instances both scored ok, with the reports' statistics
 * (paired bootstrap CI, paired permutation p, Holm over every comparison). compare.md and
 * compare.html are one {@link document}: per compared metric, a table of matched cells by slice.
 * Two runs that differ in what makes numbers comparable (LikeForLike: data, metric definitions,
 * scorers' settings and models) are refused by {@link write} unless `allowMismatch`, and then the
 * document opens with the table of differences.
 *
 * @example
 * const files = yield* Compare.write("runs/a", "runs/b", "runs/a-vs-b") // files.markdown, files.html
 */
import { Files } from "@cupid-lab/core"
import { Errors, ResultLine, Columns, RunDir, RunId } from "@cupid-lab/results"
import { Paired } from "@cupid-lab/scorers"
import type { FileSystem } from "@effect/platform"
import { Effect, Either } from "effect"
import * as path from "node:path"

import * as Analysis from "./Analysis.js"
import * as Families from "./Families.js"

import * as Document from "./Document.js"
import { MismatchError } from "./Errors.js"
import * as Format from "./Format.js"
import * as Html from "./Html.js"
import * as LikeForLike from "./LikeForLike.js"
import * as Markdown from "./Markdown.js"
import * as Notes from "./Notes.js"
import * as Slices from "./Slices.js"
import * as Table from "./Table.js"
import * as Tables from "./Tables.js"

export interface Match {
  readonly a: ResultLine.CellSummary
  readonly b: ResultLine.CellSummary
  /** How the cells were paired: same id, same name, or named on the command line (`--cell-a`, `--cell-b`). */
  readonly by: "id" | "name" | "chosen"
}

export interface Row {
  readonly match: Match
  readonly metric: ResultLine.MetricDescription
  readonly slice: Slices.Slice
  /** The metric of each cell over the shared instances. */
  readonly a: { readonly n: number; readonly value: number }
  readonly b: { readonly n: number; readonly value: number }
  readonly comparison: Paired.Comparison
  /** Holm-adjusted over every test of the comparison. */
  readonly pAdjusted: number
}

export interface Comparison {
  readonly a: RunDir.Run
  readonly b: RunDir.Run
  readonly matches: ReadonlyArray<Match>
  readonly onlyA: ReadonlyArray<ResultLine.CellSummary>
  readonly onlyB: ReadonlyArray<ResultLine.CellSummary>
  readonly metrics: ReadonlyArray<ResultLine.MetricDescription>
  /** All instances, then the instance types either run has (Slices.of). */
  readonly slices: ReadonlyArray<Slices.Slice>
  readonly rows: ReadonlyArray<Row>
  readonly tests: number
  readonly permutations: Paired.Family["permutations"]
  readonly seed: number
  readonly resamples: number
  /** Metrics left out of the comparison, and why. */
  readonly warnings: ReadonlyArray<string>
  /** What differs in what makes numbers comparable (LikeForLike), above every number. */
  readonly differences: ReadonlyArray<LikeForLike.Difference>
  /** The comparison was written although the runs differ (`--allow-mismatch`). */
  readonly allowMismatch: boolean
}

export interface Options {
  readonly permutations?: number
  /** Compare these two cells instead of matching cells (see Analysis.findCell for how a cell is named). */
  readonly cells?: { readonly a: string; readonly b: string }
  /** Compare runs that differ in what makes numbers comparable (LikeForLike) instead of refusing them. */
  readonly allowMismatch?: boolean
}

/** Match cells by id, then the remaining ones by name (first come, first matched). */
const matchCells = (a: ReadonlyArray<ResultLine.CellSummary>, b: ReadonlyArray<ResultLine.CellSummary>) => {
  const usedB = new Set<string>()
  const matches: Array<Match> = []
  const match = (cells: ReadonlyArray<ResultLine.CellSummary>, by: "id" | "name") =>
    cells.filter((ca) => {
      const cb = b.find((x) => x[by] === ca[by] && !usedB.has(x.id))
      if (cb !== undefined) {
        usedB.add(cb.id)
        matches.push({ a: ca, b: cb, by })
      }
      return cb === undefined
    })
  const onlyA = match(match(a, "id"), "name")
  const order = new Map(a.map((c, i) => [c.id, i]))
  matches.sort((x, y) => order.get(x.a.id)! - order.get(y.a.id)!)
  return { matches, onlyA, onlyB: b.filter((c) => !usedB.has(c.id)) }
}

/** The one pair named by `--cell-a` and `--cell-b`; every other cell is listed as unmatched. */
const chosen = (a: RunDir.Run, b: RunDir.Run, cells: { readonly a: string; readonly b: string }) => {
  const ca = Either.getOrElse(Analysis.findCell(a.summary.cells, cells.a), (why) => {
    throw new Errors.RunError({ path: a.dir, reason: `--cell-a: ${why}` })
  })
  const cb = Either.getOrElse(Analysis.findCell(b.summary.cells, cells.b), (why) => {
    throw new Errors.RunError({ path: b.dir, reason: `--cell-b: ${why}` })
  })
  return {
    matches: [{ a: ca, b: cb, by: "chosen" as const }],
    onlyA: a.summary.cells.filter((c) => c.id !== ca.id),
    onlyB: b.summary.cells.filter((c) => c.id !== cb.id)
  }
}

export const compare = (a: RunDir.Run, b: RunDir.Run, options: Options = {}): Comparison => {
  const { matches, onlyA, onlyB } =
    options.cells === undefined ? matchCells(a.summary.cells, b.summary.cells) : chosen(a, b, options.cells)
  const warnings: Array<string> = []
  const metrics = Analysis.comparedMetrics(a.summary, Analysis.mainMetric(a.summary).main).filter((m) => {
    const other = b.summary.metrics.find((x) => x.name === m.name)
    if (other === undefined) {
      warnings.push(`${m.name} is scored in the first run only; not compared.`)
      return false
    }
    if (JSON.stringify(m.aggregate) !== JSON.stringify(other.aggregate)) {
      warnings.push(`${m.name} aggregates differently in the two runs; not compared.`)
      return false
    }
    return true
  })
  const differences = LikeForLike.differences(
    a.summary,
    b.summary,
    matches.map((m) => ({ a: m.a, b: m.b, label: matchLabel(m) })),
    metrics
  )
  // Every matched pair of cells, metric and slice, over the instances both cells scored ok.
  const slices = [
    "all",
    ...Slices.sorted([...Slices.of(a.summary), ...Slices.of(b.summary)].filter((s) => s !== "all"))
  ]
  const tests = matches.flatMap((match) => {
    const of = slices.map((slice) => {
      const ids = Columns.sharedIds(a.index, match.a.id, b.index, match.b.id, slice)
      const ca = Columns.columnsOf(a.index, match.a.id, Columns.numbers(a.index, ids))
      const cb = Columns.columnsOf(b.index, match.b.id, Columns.numbers(b.index, ids))
      return { slice, ca, cb }
    })
    return metrics.flatMap((metric) =>
      of.map(({ ca, cb, slice }) => ({ match, metric, slice, a: ca(metric), b: cb(metric) }))
    )
  })
  // Large-sample forms only where both runs used them, from the larger of their thresholds.
  const largeSample =
    a.summary.largeSample === undefined || b.summary.largeSample === undefined
      ? undefined
      : Math.max(a.summary.largeSample, b.summary.largeSample)
  const { seed, resamples } = a.summary
  const fam = Paired.family(tests, Families.resampling({ seed, resamples, largeSample }, options.permutations))
  const rows = tests.map((t, i): Row => ({
    match: t.match,
    metric: t.metric,
    slice: t.slice,
    a: Paired.value(t.a),
    b: Paired.value(t.b),
    comparison: fam.comparisons[i]!,
    pAdjusted: fam.adjusted[i]!
  }))
  return {
    a,
    b,
    matches,
    onlyA,
    onlyB,
    metrics,
    slices,
    rows,
    tests: fam.tests,
    permutations: fam.permutations,
    seed,
    resamples,
    warnings,
    differences,
    allowMismatch: options.allowMismatch === true
  }
}

const runLine = (label: string, r: Comparison["a"]): string =>
  `${label}: ${r.dir} (config ${r.summary.config.name}, hash ${r.summary.config.hash}; data ${r.summary.dataset.source}, fingerprint ${r.summary.dataset.hash.slice(0, 16)}; ${r.summary.cells.length} cells)`

/** A matched pair's name (both names when they differ), marked when the cells read gold labels. */
export const matchLabel = (m: Match): string =>
  (m.a.name === m.b.name ? m.a.name : `${m.a.name} / ${m.b.name}`) + (m.a.usesGold ? ` ${Notes.oracleMark}` : "")

const method = (c: Comparison): Array<string> => [
  `Pairs: each cell of the first run is matched to the cell of the second with the same id (same normalized parameters), else with the same name. Values are computed on the instances both cells scored ok (N = their count), so they can differ from each run's own report.`,
  `Like for like: two runs are compared only when they read the same data (fingerprint) and score alike: the same metric definitions and, per matched pair, the same scorers with the same options, accounting mode, prompt packs and judge and matcher models (summary.json's cells[].scoring; a run that does not record it leaves them unknown). Otherwise compare refuses, unless --allow-mismatch, and the differences open this page.`,
  `Statistics: difference = second - first; paired bootstrap 95% CI (${c.resamples} resamples, seed ${c.seed}); two-sided paired permutation p (${Notes.permutationsNote(c.permutations)}; micro metrics swap the two cells' per-instance counts, macro metrics flip signs of per-instance differences). Holm's correction over all ${c.tests} tests of this comparison (${c.matches.length} matched cells x ${c.metrics.length} metrics x ${c.slices.length} slices); * Holm < 0.05.`
]

/**
 * A table per compared metric: one row per matched cell, one column per slice, each entry first →
 * second: difference [95% CI], p, Holm-adjusted p and n (the reports' table model, so compare.md and
 * compare.html render it as report.md and report.html do).
 */
export const metricTables = (c: Comparison): Array<Table.Table> => {
  const rows = new Map(c.rows.map((r) => [`${r.match.a.id}\0${r.metric.name}\0${r.slice}`, r]))
  const entry = (r: Row | undefined): Table.Cell =>
    Tables.deltaCell(r, r === undefined ? "" : `${Format.number(r.a.value)} → ${Format.number(r.b.value)}: `)
  return c.metrics.map((m) => ({
    id: `compare-${m.name}`,
    title: Notes.metricLabel(m),
    notes: [`${Notes.aggregateNote(m)}; entry: first → second: difference [95% CI] p Holm n.`],
    columns: [{ label: "cell", align: "left" }, ...c.slices.map((s): Table.Column => ({ label: s, align: "right" }))],
    rows: c.matches.map((match) => ({
      kinds: match.a.usesGold ? ["oracle"] : [],
      cells: [{ text: matchLabel(match) }, ...c.slices.map((s) => entry(rows.get(`${match.a.id}\0${m.name}\0${s}`)))]
    }))
  }))
}

const names = (cells: ReadonlyArray<ResultLine.CellSummary>): string =>
  cells.length === 0 ? "none" : cells.map((x) => x.name).join(", ")

/** compare.md and compare.html (Markdown.render, Html.render); `chart` (Figures.compare) is shown in compare.html only. */
export const document = (c: Comparison, chart = ""): Document.Document => {
  const count = (by: Match["by"]) => c.matches.filter((m) => m.by === by).length
  const matched =
    count("chosen") > 0
      ? `${count("chosen")} chosen with --cell-a and --cell-b`
      : `${count("id")} by id, ${count("name")} by name`
  const like = LikeForLike.table(c.differences, c.allowMismatch)
  const unknown = LikeForLike.unknowns(c.differences).map((u) => Document.p(u))
  return {
    title: `Comparison: ${c.a.summary.config.name} vs ${c.b.summary.config.name}`,
    blocks: [
      // Before any number: what differs in what makes the numbers comparable, and what cannot be told.
      ...(like !== undefined
        ? [Document.section(like.title, [...like.notes.map((n) => Document.p(n)), Document.table(like), ...unknown])]
        : unknown.length > 0
          ? [Document.section("Like for like", unknown)]
          : []),
      Document.list([
        [runLine("First", c.a)],
        [runLine("Second", c.b)],
        [`Matched cells: ${c.matches.length} (${matched})`],
        [`Only in the first run: ${names(c.onlyA)}`],
        [`Only in the second run: ${names(c.onlyB)}`]
      ]),
      ...(c.warnings.length === 0 ? [] : [Document.section("Warnings", [Document.list(c.warnings.map((w) => [w]))])]),
      { _tag: "html", html: chart },
      ...(c.matches.length === 0 ? [] : metricTables(c)).map((t) =>
        Document.section(t.title, [...t.notes.map((n) => Document.p(n)), Document.table(t)])
      ),
      ...(c.metrics.length === 0 || c.matches.length === 0
        ? [Document.p("Nothing to compare: no matched cells or no metric scored in both runs.")]
        : []),
      Document.section(
        "How the numbers were computed",
        method(c).map((x) => Document.p(x))
      )
    ]
  }
}

/**
 * Default output directory, named after both runs, beside the second. A run in the default layout
 * (`runs/<name>/<run id>`) is called `<name>-<run id>`, and its place is beside `runs/<name>`.
 */
const defaultOut = (dirA: string, dirB: string): string => {
  const byId = (dir: string) => RunId.idPattern.test(path.basename(path.resolve(dir)))
  const label = (dir: string) =>
    (byId(dir) ? `${path.basename(path.dirname(path.resolve(dir)))}-` : "") + path.basename(path.resolve(dir))
  const home = byId(dirB) ? path.dirname(path.dirname(path.resolve(dirB))) : path.dirname(path.resolve(dirB))
  return path.join(home, `compare-${label(dirA)}-vs-${label(dirB)}`)
}

const toRunError =
  (where: string) =>
  (e: unknown): Errors.RunError =>
    e instanceof Errors.RunError
      ? e
      : new Errors.RunError({ path: where, reason: e instanceof Error ? e.message : String(e) })

/** Read both runs, compare them and write compare.md and compare.html into `out`. */
export const write = Effect.fn("Compare.write")(function* (
  dirA: string,
  dirB: string,
  out: string = defaultOut(dirA, dirB),
  options: Options = {}
): Effect.fn.Return<
  { readonly markdown: string; readonly html: string; readonly differences: ReadonlyArray<LikeForLike.Difference> },
  Errors.RunError | MismatchError,
  FileSystem.FileSystem
> {
  const a = yield* RunDir.read(dirA)
  const b = yield* RunDir.read(dirB)
  const c = yield* Effect.try({ try: () => compare(a, b, options), catch: toRunError(out) })
  if (LikeForLike.refuses(c.differences) && !c.allowMismatch)
    return yield* new MismatchError({ first: dirA, second: dirB, differences: LikeForLike.lines(c.differences) })
  const cannot = (file: string) => (e: unknown) =>
    new Errors.RunError({ path: file, reason: `cannot write the comparison: ${Files.describe(e)}` })
  yield* Files.makeDirectory(out).pipe(Effect.mapError(cannot(out)))
  const files = { markdown: path.join(out, "compare.md"), html: path.join(out, "compare.html") }
  yield* Files.writeFileAtomic(files.markdown, Markdown.render(document(c))).pipe(
    Effect.mapError(cannot(files.markdown))
  )
  // Loaded here, not above: the viewer imports this module and never draws a chart.
  const Figures = yield* Effect.promise(() => import("./Figures.js"))
  const chart = yield* Figures.compare(c)
  yield* Files.writeFileAtomic(files.html, Html.render(document(c, chart))).pipe(Effect.mapError(cannot(files.html)))
  return { ...files, differences: c.differences }
})
