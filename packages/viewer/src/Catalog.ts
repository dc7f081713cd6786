/**
 * What the viewer knows of a `runs/` tree: the runs below it (directories holding summary.json), each
 * run's entry, tables, verdict, charts, pairwise tests and instances, and two cells side by side, as the
 * JSON the viewer's server answers (its types are these functions'). A run is read when first asked for
 * and kept until its files change.
 *
 * @example
 * const catalog = yield* Catalog.make("runs")
 * const { runs } = yield* catalog.list
 * const page = yield* catalog.instances(runs[0].id, { a: "@2", b: "@3" })
 */
import { Dataset } from "@cupid-lab/data"
import { Files as CoreFiles } from "@cupid-lab/core"
import {
  Analysis,
  Verdict,
  VerdictText,
  Compare,
  Leaderboard,
  LikeForLike,
  Notes,
  Slices,
  Tables
} from "@cupid-lab/report"
import { type Errors, Calls, ResultLine, RunDir, RunId } from "@cupid-lab/results"
import { FileSystem } from "@effect/platform"
import { Array as Arr, Effect, Either, Option } from "effect"
import * as path from "node:path"

import { ViewError } from "./Errors.js"

import * as Entries from "./Entries.js"
import * as Instances from "./Instances.js"
import { disagree, findCell, type InstanceQuery, type Loaded, outcome } from "./Instances.js"
import { type OpenDataset, textsOf } from "./internal/datasetTexts.js"

export type Catalog = Effect.Effect.Success<ReturnType<typeof make>>

/** The JSON of each `GET /api/...` route built here (docs/viewer.md). */
export type RunList = Effect.Effect.Success<Catalog["list"]>

export type RunDetail = Effect.Effect.Success<ReturnType<Catalog["detail"]>>

export type VerdictView = Effect.Effect.Success<ReturnType<Catalog["verdict"]>>

export type PairwiseView = Effect.Effect.Success<ReturnType<Catalog["pairwise"]>>

export type InstanceCalls = Effect.Effect.Success<ReturnType<Catalog["calls"]>>

export type CompareView = Effect.Effect.Success<ReturnType<Catalog["compare"]>>

export interface CatalogOptions {
  /** How a run's recorded data source is opened; default core's `Dataset.open`. */
  readonly openDataset?: OpenDataset
}

/** What a line holds of a ranking: the rest of the line is not decoded. */
const Ranked = ResultLine.ResultLine.pick("cell", "instance", "ranking")

export const make = Effect.fn("Catalog.make")(function* (root: string, options: CatalogOptions = {}) {
  const openDataset = options.openDataset ?? Dataset.open
  const fileSystem = yield* FileSystem.FileSystem
  const absoluteRoot = path.resolve(root)
  const loaded = new Map<string, Loaded>()

  const readText = (file: string) => fileSystem.readFileString(file).pipe(Effect.option)
  const exists = (file: string) => CoreFiles.exists(fileSystem, file)
  const reading = <A>(effect: Effect.Effect<A, Errors.RunError, FileSystem.FileSystem>): Effect.Effect<A, ViewError> =>
    effect.pipe(
      Effect.provideService(FileSystem.FileSystem, fileSystem),
      Effect.mapError((e) => new ViewError({ status: 500, message: e.message }))
    )
  const failure = (id: string) => (e: unknown) =>
    new ViewError({ status: 500, message: `${id}: ${e instanceof Error ? e.message : String(e)}` })
  const latestIn = (dir: string) =>
    RunId.resolve(path.join(dir, RunId.latestName)).pipe(
      Effect.map((target) => path.resolve(target)),
      Effect.orElseSucceed(() => ""),
      Effect.provideService(FileSystem.FileSystem, fileSystem)
    )

  /** The runs below the root (at most 4 levels), and the directories that could not be listed, with why. */
  const scan = Effect.gen(function* () {
    const found: Array<Entries.Found> = []
    const unlisted: Array<{ readonly id: string; readonly reason: string }> = []
    const idOf = (dir: string) => path.relative(absoluteRoot, dir).split(path.sep).join("/") || "."
    const walk = (dir: string, depth: number, latest: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (yield* exists(path.join(dir, "summary.json"))) {
          found.push({ id: idOf(dir), dir, latest: path.resolve(dir) === latest })
          return
        }
        if (depth >= 4) return
        const listed = yield* Effect.either(fileSystem.readDirectory(dir))
        if (Either.isLeft(listed)) {
          unlisted.push({
            id: idOf(dir),
            reason: `cannot list the directory (${CoreFiles.describe(listed.left)}); runs below it are not shown`
          })
          return
        }
        const latestHere = listed.right.includes(RunId.latestName) ? yield* latestIn(dir) : ""
        for (const name of [...listed.right].sort()) {
          if (name === RunId.latestName) continue
          const child = path.join(dir, name)
          const info = yield* Effect.either(fileSystem.stat(child))
          if (Either.isLeft(info))
            unlisted.push({
              id: idOf(child),
              reason: `cannot be read (${CoreFiles.describe(info.left)}); runs below it are not shown`
            })
          else if (info.right.type === "Directory") yield* walk(child, depth + 1, latestHere)
        }
      })
    yield* walk(absoluteRoot, 0, "")
    return { found, unlisted }
  })

  const stampOf = (dir: string) =>
    Effect.gen(function* () {
      const parts: Array<string> = []
      for (const name of ["summary.json", "results.jsonl", "run.json"]) {
        const s = yield* fileSystem.stat(path.join(dir, name)).pipe(Effect.option)
        parts.push(
          s._tag === "Some"
            ? `${s.value.size}:${s.value.mtime._tag === "Some" ? s.value.mtime.value.getTime() : 0}`
            : "-"
        )
      }
      return parts.join("|")
    })

  /** run-id.json and run.json of a run, each optional; what cannot be read is said, not dropped. */
  const records = (dir: string) =>
    Effect.gen(function* () {
      const problems: Array<string> = []
      const lenient = <A>(
        text: Option.Option<string>,
        decode: (text: string) => Either.Either<A, unknown>,
        problem: (why: unknown) => string
      ) => {
        if (Option.isNone(text)) return undefined
        const decoded = decode(text.value)
        if (Either.isLeft(decoded)) problems.push(problem(decoded.left))
        return Either.getOrUndefined(decoded)
      }
      const infoFile = path.join(dir, "run.json")
      const identity = lenient(
        yield* readText(path.join(dir, RunId.fileName)),
        RunId.decode,
        () => `${RunId.fileName} is not a run identity; the run's transform is not shown`
      )
      const info = lenient(
        yield* readText(infoFile),
        (text) =>
          Either.flatMap(
            Either.try(() => JSON.parse(text) as unknown),
            (v) => RunDir.parseInfo(v, infoFile)
          ),
        (e) =>
          `run.json cannot be read (${e instanceof Error ? e.message : String(e)}); start time and duration are not shown`
      )
      return { identity, info, problems }
    })

  /** A run's entry from its summary and records, or why its summary cannot be read. */
  const entry = (found: Entries.Found): Effect.Effect<Either.Either<Entries.RunEntry, string>> =>
    Effect.gen(function* () {
      const summaryFile = path.join(found.dir, "summary.json")
      const text = yield* readText(summaryFile)
      if (text._tag === "None") return Either.left(`${summaryFile}: cannot be read`)
      const summary = Either.flatMap(
        Either.try({
          try: () => JSON.parse(text.value) as unknown,
          catch: () => new Error(`${summaryFile}: not valid JSON`)
        }),
        (v) => RunDir.parseSummary(v, summaryFile)
      )
      if (Either.isLeft(summary)) return Either.left(summary.left.message)
      return Either.right(Entries.entryOf(found, summary.right, yield* records(found.dir)))
    })

  const list = Effect.gen(function* () {
    const { found, unlisted } = yield* scan
    const entries = yield* Effect.forEach(found, (f) =>
      Effect.map(
        entry(f),
        Either.mapLeft((reason) => ({ id: f.id, reason }))
      )
    )
    const [failed, runs] = Arr.partitionMap(entries, (e) => e)
    // Newest first; runs without a record of when they ran last, by id.
    runs.sort((x, y) => (y.started ?? "").localeCompare(x.started ?? "") || x.id.localeCompare(y.id))
    return { runs, unreadable: [...unlisted, ...failed] }
  })

  /**
   * The run directory an id names: its path below the root (without walking the tree); else the
   * bare run id the sweep prints (`run 3f2a9c0d1e4b: ...`), when exactly one run's directory has
   * that name. Ids that leave the root are refused.
   */
  const locate = (id: string): Effect.Effect<Entries.Found, ViewError> =>
    Effect.gen(function* () {
      const dir = path.resolve(absoluteRoot, id)
      const inside = dir === absoluteRoot || dir.startsWith(`${absoluteRoot}${path.sep}`)
      if (id !== "" && !path.isAbsolute(id) && inside && (yield* exists(path.join(dir, "summary.json")))) {
        return { id, dir, latest: (yield* latestIn(path.dirname(dir))) === dir }
      }
      const bare = id !== "" && id !== "." && id !== ".." && !/[/\\]/.test(id)
      const named = bare ? (yield* scan).found.filter((f) => path.basename(f.dir) === id) : []
      if (named.length === 1) return named[0]!
      if (named.length > 1) {
        const ids = named.map((f) => f.id).join(", ")
        const message = `run "${id}" names ${named.length} runs under ${absoluteRoot}: ${ids}; name one by its path`
        return yield* new ViewError({ status: 400, message })
      }
      return yield* new ViewError({ status: 404, message: `no run "${id}" under ${absoluteRoot}` })
    })

  const load = (id: string): Effect.Effect<Loaded, ViewError> =>
    Effect.gen(function* () {
      const found = yield* locate(id)
      const stamp = yield* stampOf(found.dir)
      const hit = loaded.get(found.id)
      if (hit !== undefined && hit.stamp === stamp) return hit
      const read = yield* reading(RunDir.read(found.dir, { info: "caller" }))
      // The instance pages need whole lines (inference, generation, per-pair usage): the rows the
      // columns keep, by instance in file order (no second copy).
      const byInstance = new Map<string, Map<string, ResultLine.Row>>()
      for (const row of read.index.table) {
        let cells = byInstance.get(row.instance)
        if (cells === undefined) byInstance.set(row.instance, (cells = new Map()))
        cells.set(row.cell, row)
      }
      // run.json read leniently: a malformed record is a problem shown with the run, not a failed page.
      const r = yield* records(found.dir)
      const run: RunDir.Run = { ...read, info: r.info }
      const value: Loaded = {
        stamp,
        run,
        identity: r.identity,
        entry: Entries.entryOf(found, run.summary, r),
        cells: Entries.cellEntries(run.summary),
        ...Entries.safeMain(run.summary),
        byInstance
      }
      loaded.set(found.id, value)
      return value
    })

  /** `f` of a loaded run; what it throws is a failed page naming the run. */
  const computed = <A>(id: string, f: (l: Loaded) => A): Effect.Effect<A, ViewError> =>
    Effect.flatMap(load(id), (l) => Effect.try({ try: () => f(l), catch: failure(id) }))

  /** `f` of the reports' analysis of a run (its paired tests take seconds on a large run): computed once and kept with the run. */
  const analysed = <A>(id: string, f: (a: Analysis.Analysis, l: Loaded) => A): Effect.Effect<A, ViewError> =>
    computed(id, (l) => f((l.analysis ??= Analysis.analyze(l.run)), l))

  const detail = (id: string) =>
    computed(id, (l) => {
      const summary = l.run.summary
      const tables = Tables.tables({
        summary,
        baseline: Analysis.chooseBaseline(summary).cell,
        main: l.main,
        compared: Analysis.comparedMetrics(summary, l.main)
      })
      return {
        entry: l.entry,
        cells: l.cells,
        metrics: Entries.metricColumns(summary, l.main),
        main: l.main?.name ?? null,
        mainReason: l.mainReason,
        /** The run's instance types, in its benchmark's order (the instance filter's choices). */
        types: Slices.of(summary).filter((s) => s !== "all"),
        tables
      }
    })

  /** With every cell on the leaderboard: the page has room for all. */
  const verdict = (id: string) =>
    analysed(id, (a) => {
      const v = Verdict.verdict(a)
      return {
        metric: v.metric?.name ?? null,
        intro: Leaderboard.intro(a, v),
        notes: VerdictText.notes(v),
        findings: v.findings.map((f) => ({ slice: f.slice, sentence: VerdictText.sentence(v, f) })),
        leaderboard: v.metric === undefined ? null : Leaderboard.table(a, v)
      }
    })

  const figures = (id: string) =>
    Effect.flatMap(
      analysed(id, (a, l) => ({ a, l })),
      ({ a, l }) =>
        l.figures !== undefined
          ? Effect.succeed(l.figures)
          : Entries.figuresOf(a).pipe(
              Effect.catchAllDefect((e) => Effect.fail(failure(id)(e))),
              Effect.tap((f) => Effect.sync(() => void (l.figures = f)))
            )
    )

  /** Every cell against every other, as the reports test them. */
  const pairwise = (id: string) =>
    analysed(id, (a) => {
      const p = a.pairwise
      if (p === undefined) return { note: null, slices: [] }
      return {
        note: Notes.pairwiseNote(p),
        slices: p.slices.map((s) => ({
          slice: s.slice,
          tooSmall: s.tooSmall === undefined ? null : Notes.tooSmallNote(s.slice, s.tooSmall),
          table: Tables.pairwise(a, p, s)
        }))
      }
    })

  const instances = (id: string, query: InstanceQuery) =>
    Effect.flatMap(load(id), (l) => Instances.list(l, query, () => textsOf(l, openDataset, fileSystem)))

  const instance = (id: string, instanceId: string) =>
    Effect.flatMap(load(id), (l) => {
      // Rankings are read when a page asks for them: a large run's rankings are most of its lines.
      const rankings = reading(
        RunDir.linesAbout(path.join(l.run.dir, "results.jsonl"), instanceId, Ranked, "rankings")
      ).pipe(Effect.map(({ lines }) => new Map(lines.map((x) => [x.cell, x.ranking] as const))))
      return Instances.detail(l, l.entry.id, instanceId, textsOf(l, openDataset, fileSystem), rankings)
    })

  const calls = (id: string, instanceId: string) =>
    Effect.gen(function* () {
      const found = yield* locate(id)
      const { byCell, unreadable, unresolved } = yield* reading(
        Calls.ofInstance(path.join(found.dir, Calls.fileName), instanceId)
      )
      const cells = [...byCell.entries()].map(([cell, { attempts, line }]) => ({
        cell,
        attempts,
        ranAt: line.ranAt,
        calls: line.calls
      }))
      return { run: found.id, id: instanceId, unreadable, unresolved, cells }
    })

  const compare = (
    x: { readonly run: string; readonly cell: string },
    y: { readonly run: string; readonly cell: string }
  ) =>
    Effect.gen(function* () {
      const la = yield* load(x.run)
      const lb = yield* load(y.run)
      const ca = yield* findCell(la, x.cell)
      const cb = yield* findCell(lb, y.cell)
      const compared = yield* Effect.try({
        try: () => Compare.compare(la.run, lb.run, { cells: { a: ca.id, b: cb.id } }),
        catch: (e) => new ViewError({ status: 500, message: e instanceof Error ? e.message : String(e) })
      })
      const both = [...la.byInstance].flatMap(([instance, rows]) => {
        const ra = rows.get(ca.id)
        const rb = lb.byInstance.get(instance)?.get(cb.id)
        return ra === undefined || rb === undefined ? [] : [{ instance, ra, rb }]
      })
      const disagreements = both
        .filter(({ ra, rb }) => disagree(ra, rb))
        .map(({ instance, ra, rb }) => ({
          instance,
          type: ra.type,
          a: outcome(la, ra, ca.id),
          b: outcome(lb, rb, cb.id)
        }))
      return {
        a: { run: la.entry.id, cell: ca },
        b: { run: lb.entry.id, cell: cb },
        tables: Compare.metricTables(compared),
        warnings: [...LikeForLike.lines(compared.differences), ...compared.warnings],
        shared: both.length,
        disagreements
      }
    })

  return { root: absoluteRoot, list, detail, verdict, figures, pairwise, instances, instance, calls, compare }
})
