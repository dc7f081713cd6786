/**
 * Coding sheets for an error analysis in the manner of the CUPID paper's Table 2: a seeded sample of
 * one model's low-F1 inferences (`inference.f1`, per instance), each with the request, the gold and
 * the inferred preference, where the relevant sessions sit and a link to the instance in the local
 * viewer, and an empty `code` column for a person to fill with one of {@link codes}. Written as CSV
 * (RFC 4180, no comments), the codes as a second CSV, and an HTML page to read the sample by.
 * The same run, model, threshold, n and seed give the same rows and the same bytes; the first k rows
 * of a sample of n are the sample of k.
 *
 * @example
 * const sheet = yield* ErrorSheet.sample("runs/paper-ablations/latest", { model: "subject", n: 50, below: 0.2, seed: 1 })
 * const files = yield* ErrorSheet.write(sheet) // <run>/errors/<model>-below0.2-seed1.csv, .codes.csv, .html
 */
import { Files, Issues, Random } from "@cupid-lab/core"
import type { Dataset } from "@cupid-lab/data"
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as path from "node:path"
import { RunError, SheetError } from "./Errors.js"
import { field } from "./Exports.js"
import { page } from "./internal/errorPage.js"
import { textsOf, transformedRun, viewerLink, viewerPlace } from "./internal/sheetInputs.js"
import type { Row } from "./ResultLine.js"
import * as RunDir from "./RunDir.js"

/** An error category a coder may give; `source` says where its name comes from. */
export interface Code {
  readonly code: string
  readonly meaning: string
  readonly source: string
}

/**
 * The categories. Two names are the paper's as a secondary source quotes its Table 2; the third's
 * name is shown there only as its first word, "Vague"; `other` is the project's catch-all. The
 * meanings are the project's own words (docs/paper-ablations.md, "Error analysis").
 */
export const codes: ReadonlyArray<Code> = [
  {
    code: "incorrect-context",
    meaning:
      "built on the wrong prior sessions: another context factor's preference (often the similar, contrastive factor) or the current factor's earlier preference that has since changed",
    source: "paper (Table 2), name confirmed from a secondary source"
  },
  {
    code: "shallow-inference",
    meaning:
      "inferred from the current request alone or from common sense, missing the specific requirement the relevant sessions reveal",
    source: "paper (Table 2), name confirmed from a secondary source"
  },
  {
    code: "vague-inference",
    meaning:
      "about the right context and in the right direction, but too general to cover the gold checklist's specific items",
    source: "paper (Table 2) as far as its first word, 'Vague'; the full name is the project's"
  },
  {
    code: "other",
    meaning:
      "none of the above: e.g. a correct inference the scorer rated low, an unreadable or off-task answer; say which in the note",
    source: "the project's catch-all"
  }
]

export const codeNames: ReadonlyArray<string> = codes.map((c) => c.code)

/** A code as typed: case, spaces and underscores do not matter (`Shallow inference` is `shallow-inference`). */
export const normalizeCode = (raw: string): string =>
  raw
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, "-")

export interface Session {
  readonly position: number
  /** The session's context factor, when the run's dataset gives it for this history. */
  readonly factor: string | undefined
}

/** One row of a sheet. */
export interface SheetRow {
  readonly row: number
  readonly run: string
  readonly cell: string
  readonly cellName: string
  readonly model: string
  readonly instance: string
  readonly type: string
  readonly f1: number
  readonly request: string
  readonly factor: string
  readonly gold: string
  readonly checklist: ReadonlyArray<string>
  readonly inferred: string
  readonly relevant: ReadonlyArray<Session>
  readonly stale: ReadonlyArray<Session>
  readonly selected: ReadonlyArray<Session>
  readonly link: string
  readonly code: string
  readonly note: string
}

const sessionList = (sessions: ReadonlyArray<Session>): string =>
  sessions.map((s) => (s.factor === undefined ? `${s.position}` : `${s.position} (${s.factor})`)).join("; ")

/** The sheet's columns, in order: what the writer writes and the reader finds by title. */
export const columns: ReadonlyArray<{ readonly title: string; readonly value: (r: SheetRow) => string }> = [
  { title: "row", value: (r) => String(r.row) },
  { title: "run", value: (r) => r.run },
  { title: "cell", value: (r) => r.cell },
  { title: "cell_name", value: (r) => r.cellName },
  { title: "model", value: (r) => r.model },
  { title: "instance", value: (r) => r.instance },
  { title: "type", value: (r) => r.type },
  { title: "f1", value: (r) => r.f1.toFixed(3) },
  { title: "request", value: (r) => r.request },
  { title: "factor", value: (r) => r.factor },
  { title: "gold_preference", value: (r) => r.gold },
  { title: "inferred_preference", value: (r) => r.inferred },
  { title: "relevant_sessions", value: (r) => sessionList(r.relevant) },
  { title: "stale_sessions", value: (r) => sessionList(r.stale) },
  { title: "selected_sessions", value: (r) => sessionList(r.selected) },
  { title: "link", value: (r) => r.link },
  { title: "code", value: (r) => r.code },
  { title: "note", value: (r) => r.note }
]

export interface SampleOptions {
  /** A `models:` entry or a model id the run's cells are bound to. */
  readonly model: string
  readonly n: number
  /** Only inferences whose F1 is below this. */
  readonly below: number
  readonly seed: number
  /** Where the viewer serves; default http://127.0.0.1:8377/. */
  readonly viewerUrl?: string
  /** The directory the viewer serves (`view --root`); default `runs`. A run outside it links as if served from its parent. */
  readonly viewerRoot?: string
  /** The dataset to read the texts from, instead of the source the run recorded (its fingerprint must be the run's). */
  readonly data?: string
  readonly openDataset?: (source: string) => Effect.Effect<Dataset.Opened, unknown, FileSystem.FileSystem>
}

export interface Sheet {
  readonly run: string
  readonly model: string
  readonly options: Pick<SampleOptions, "n" | "below" | "seed">
  readonly heuristic: boolean
  /** The model's lines, and of them the failed ones, those without an F1, those at or above the threshold. */
  readonly counts: {
    readonly cells: number
    readonly lines: number
    readonly failed: number
    readonly unscored: number
    readonly above: number
    readonly eligible: number
  }
  /** The root the links assume (`view --root`) and why, when it is not the one asked for. */
  readonly viewer: { readonly url: string; readonly root: string; readonly note: string | undefined }
  /** Why the sessions' factors are not shown, when they are not. */
  readonly sessionsNote: string | undefined
  readonly rows: ReadonlyArray<SheetRow>
}

const metric = "inference.f1"

const failSheet = (file: string, reason: string) => Effect.fail(new SheetError({ path: file, reason }))

/** The models a run's cells call, as `entry (provider/model)`. */
const modelsOf = (run: RunDir.Run): Array<string> => [
  ...new Set(
    run.summary.cells.flatMap((c) => Object.values(c.models ?? {}).map((m) => `${m.entry} (${m.provider}/${m.model})`))
  )
]

/** The cells bound to `model` (an entry or a model id), each with the model id it calls. */
const cellsOf = (run: RunDir.Run, model: string): Map<string, string> =>
  new Map(
    run.summary.cells.flatMap((c) => {
      const hit = Object.values(c.models ?? {}).find((m) => m.entry === model || m.model === model)
      return hit === undefined ? [] : [[c.id, hit.model] as const]
    })
  )

const positionOf = (id: string): number => Number(/^s(\d+)$/.exec(id)?.[1] ?? NaN)

/** Fisher-Yates with the project's seeded generator: the whole order, so every prefix is a sample. */
const shuffled = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...items]
  const next = Random.mulberry32(seed)
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** Draw the sheet of one model's low-F1 inferences in a run directory (the texts come from the run's dataset). */
export const sample = Effect.fn("ErrorSheet.sample")(function* (
  given: string,
  options: SampleOptions
): Effect.fn.Return<Sheet, RunError | SheetError, FileSystem.FileSystem> {
  const run = yield* RunDir.read(given)
  const dir = run.dir
  const described = run.summary.metrics.find((m) => m.name === metric)
  if (described === undefined)
    return yield* failSheet(
      dir,
      `the run has no per-instance inference F1 ("${metric}", written by the preference-match scorer); its metrics: ${run.summary.metrics.map((m) => m.name).join(", ") || "none"}`
    )
  const cells = cellsOf(run, options.model)
  if (cells.size === 0) {
    const models = modelsOf(run)
    const valid = [
      ...new Set(run.summary.cells.flatMap((c) => Object.values(c.models ?? {}).flatMap((m) => [m.entry, m.model])))
    ]
    return yield* failSheet(
      dir,
      models.length === 0
        ? `no cell of the run is bound to model "${options.model}": its cells call no model (cells: ${run.summary.cells.map((c) => c.name).join(", ")})`
        : `no cell of the run is bound to model ${Issues.unknownName(options.model, valid)}; its models (entry and model id): ${models.join(", ")}`
    )
  }
  const lines = run.index.table.filter((r) => cells.has(r.cell))
  const f1Of = (r: Row) => {
    const v = r.scores[metric]
    return typeof v === "number" && Number.isFinite(v) ? v : undefined
  }
  const ok = lines.filter((r) => r.status === "ok")
  const scored = ok.filter((r) => f1Of(r) !== undefined)
  const eligible = scored
    .filter((r) => f1Of(r)! < options.below)
    .sort((a, b) =>
      a.cell < b.cell ? -1 : a.cell > b.cell ? 1 : a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0
    )
  const drawn = shuffled(eligible, options.seed).slice(0, options.n)
  const texts = yield* textsOf(run, new Set(drawn.map((r) => r.instance)), options)
  const transformed =
    run.summary.cells.some((c) => c.params["transform"] !== undefined && c.params["transform"] !== null) ||
    (yield* transformedRun(dir))
  const place = viewerPlace(dir, options.viewerRoot ?? "runs")
  const url = options.viewerUrl ?? "http://127.0.0.1:8377/"
  const rows = drawn.map((r, i): SheetRow => {
    const instance = texts.get(r.instance)!
    const factors = new Map(transformed ? [] : instance.gold.sessions.map((s) => [s.id, s.factor] as const))
    const sessions = (ids: ReadonlyArray<string>) =>
      ids.map((id) => ({ position: positionOf(id), factor: factors.get(id) || undefined }))
    return {
      row: i + 1,
      run: given,
      cell: r.cell,
      cellName: r.cellName,
      model: cells.get(r.cell)!,
      instance: r.instance,
      type: r.type,
      f1: f1Of(r)!,
      request: instance.query.request,
      factor: instance.gold.factor,
      gold: instance.gold.preference,
      checklist: instance.gold.checklist,
      inferred: r.inference?.preference ?? "",
      relevant: sessions(r.meta.relevant),
      stale: sessions(r.meta.stale),
      selected: sessions(r.selected ?? []),
      link: viewerLink(url, place.id, r.instance),
      code: "",
      note: ""
    }
  })
  return {
    run: given,
    model: options.model,
    options: { n: options.n, below: options.below, seed: options.seed },
    heuristic: described.heuristic,
    counts: {
      cells: cells.size,
      lines: lines.length,
      failed: lines.length - ok.length,
      unscored: ok.length - scored.length,
      above: scored.length - eligible.length,
      eligible: eligible.length
    },
    viewer: { url, root: place.root, note: place.note },
    sessionsNote: transformed
      ? "the run transformed the histories: sessions are given by position only (the dataset's factors are those before the transform)"
      : undefined,
    rows
  }
})

/** The sheet's CSV: a header, then one record per row, CRLF-terminated. */
export const csv = (rows: ReadonlyArray<SheetRow>): string =>
  [columns.map((c) => c.title), ...rows.map((r) => columns.map((c) => c.value(r)))]
    .map((record) => `${record.map(field).join(",")}\r\n`)
    .join("")

/** The allowed codes as CSV: `code,meaning,source`. */
export const codesCsv = (): string =>
  [["code", "meaning", "source"], ...codes.map((c) => [c.code, c.meaning, c.source])]
    .map((record) => `${record.map(field).join(",")}\r\n`)
    .join("")

export const html = (sheet: Sheet): string => page(sheet, codes)

/** The files of a sheet written to `csvFile` (default `<run>/errors/<model>-below<b>-seed<s>.csv`). */
export const filesOf = (sheet: Sheet, csvFile?: string) => {
  const slug = sheet.model.replace(/[^A-Za-z0-9._-]+/g, "-")
  const file =
    csvFile ?? path.join(sheet.run, "errors", `${slug}-below${sheet.options.below}-seed${sheet.options.seed}.csv`)
  const base = file.toLowerCase().endsWith(".csv") ? file.slice(0, -4) : file
  return { csv: file, codes: `${base}.codes.csv`, html: `${base}.html` }
}

/**
 * Write the sheet, its codes and its page. A CSV already there with other bytes (a coded copy) is
 * never overwritten: that fails, naming it.
 */
export const write = Effect.fn("ErrorSheet.write")(function* (
  sheet: Sheet,
  csvFile?: string
): Effect.fn.Return<ReturnType<typeof filesOf>, SheetError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  const files = filesOf(sheet, csvFile)
  const text = csv(sheet.rows)
  if (yield* Files.exists(fileSystem, files.csv)) {
    const before = yield* fileSystem.readFileString(files.csv).pipe(Effect.orElseSucceed(() => undefined))
    if (before !== text)
      return yield* failSheet(
        files.csv,
        "exists with other content (a coded sheet?) and is never overwritten: move it or give another --out"
      )
  }
  const put = (file: string, data: string) =>
    Effect.zipRight(Files.makeDirectory(path.dirname(file)), Files.writeFileAtomic(file, data)).pipe(
      Effect.mapError((e) => new SheetError({ path: file, reason: `cannot write: ${Files.describe(e)}` }))
    )
  yield* put(files.csv, text)
  yield* put(files.codes, codesCsv())
  yield* put(files.html, html(sheet))
  return files
})
