/**
 * The error analysis's table (the CUPID paper's Table 2): from coded sheets ({@link ErrorSheet}, read back by {@link read}),
 * the share of each code per model over the coded rows, with a Wilson 95% interval, the number
 * coded and the rows not coded yet (counted and listed, never dropped). A row coded twice (the same
 * run, cell and instance in two places) fails: merge the coders' sheets first.
 *
 * @example
 * const rows = yield* ErrorTable.read("coded.csv") // an unknown code fails, naming the file, the row and the codes
 * const table = yield* ErrorTable.tabulate([rows])  // or a SheetError naming the duplicate
 * console.log(ErrorTable.markdown(table))
 */
import { Statistics } from "@cupid-lab/scorers"
import { Effect } from "effect"
import { Files, Issues } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { codeNames, columns, normalizeCode } from "./ErrorSheet.js"
import { SheetError } from "./Errors.js"
import * as Csv from "./internal/csv.js"

/** A row of a coded sheet: where it is, whose it is, and its code (`undefined`: not coded yet). */
export interface CodedRow {
  readonly file: string
  readonly row: number
  readonly line: number
  readonly run: string
  readonly cell: string
  readonly model: string
  readonly instance: string
  readonly code: string | undefined
}

const fail = (file: string, reason: string) => Effect.fail(new SheetError({ path: file, reason }))

/** `"shalow" (did you mean "shallow-inference"?)`: close to a code, or to its first word. */
const unknownCode = (raw: string): string => {
  const word = normalizeCode(raw)
  const heads = codeNames.map((c) => c.split("-")[0]!)
  const close = [
    ...new Set([...Issues.rank(word, codeNames), ...Issues.rank(word, heads).map((h) => codeNames[heads.indexOf(h)]!)])
  ]
  return close.length === 0
    ? `"${raw.trim()}"`
    : `"${raw.trim()}" (did you mean ${close.map((c) => `"${c}"`).join(" or ")}?)`
}

const needed = ["run", "cell", "model", "instance", "code"] as const

/** Read a coded sheet; a missing column, a malformed record or an unknown code fails naming the file and the row. */
export const read = Effect.fn("ErrorTable.read")(function* (
  file: string
): Effect.fn.Return<ReadonlyArray<CodedRow>, SheetError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  const text = yield* fileSystem
    .readFileString(file)
    .pipe(Effect.mapError((e) => new SheetError({ path: file, reason: `cannot read: ${Files.describe(e)}` })))
  const parsed = Csv.parse(text)
  if (parsed._tag === "Unclosed") return yield* fail(file, `line ${parsed.line}: a quoted field is never closed`)
  const [header, ...records] = parsed.records.filter((r) => r.fields.some((f) => f.trim() !== ""))
  if (header === undefined) return yield* fail(file, "is empty; expected a sheet written by `cupid-lab errors sample`")
  const titles = header.fields.map((f) => Csv.unguard(f).trim())
  const missing = needed.filter((n) => !titles.includes(n))
  if (missing.length > 0)
    return yield* fail(
      file,
      `the header lacks the column${missing.length === 1 ? "" : "s"} ${missing.join(", ")}; a sheet written by \`cupid-lab errors sample\` has ${columns.map((c) => c.title).join(", ")}`
    )
  const at = (name: (typeof needed)[number]) => titles.indexOf(name)
  const out: Array<CodedRow> = []
  for (const [i, r] of records.entries()) {
    const where = `row ${i + 1} (line ${r.line})`
    if (r.fields.length !== titles.length)
      return yield* fail(file, `${where}: ${r.fields.length} fields, the header has ${titles.length}`)
    const get = (name: (typeof needed)[number]) => Csv.unguard(r.fields[at(name)]!)
    const raw = get("code")
    const code = normalizeCode(raw)
    if (code !== "" && !codeNames.includes(code))
      return yield* fail(
        file,
        `${where}: unknown code ${unknownCode(raw)}; allowed codes: ${codeNames.join(", ")} (or leave it empty: not coded yet)`
      )
    out.push({
      file,
      row: i + 1,
      line: r.line,
      run: get("run"),
      cell: get("cell"),
      model: get("model"),
      instance: get("instance"),
      code: code === "" ? undefined : code
    })
  }
  return out
})

const z95 = Statistics.normalQuantile(0.975)

/**
 * The Wilson score interval of `k` successes in `n` trials: centre (p + z²/2n) / (1 + z²/n), half
 * width z √(p(1-p)/n + z²/4n²) / (1 + z²/n); `[NaN, NaN]` when n is 0. Unlike p ± z√(p(1-p)/n) it
 * stays inside [0, 1] and does not collapse to a point at 0 or n successes.
 */
export const wilson = (k: number, n: number, z: number = z95): readonly [number, number] => {
  if (n <= 0) return [NaN, NaN]
  const p = k / n
  const z2 = z * z
  const denominator = 1 + z2 / n
  const centre = (p + z2 / (2 * n)) / denominator
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator
  return [Math.max(0, centre - half), Math.min(1, centre + half)]
}

export interface Share {
  readonly code: string
  readonly count: number
  /** count / coded; NaN when nothing is coded. */
  readonly share: number
  readonly ci95: readonly [number, number]
}

export interface ModelRow {
  readonly model: string
  readonly coded: number
  /** Where the rows not coded yet are: `file row r`. */
  readonly uncoded: ReadonlyArray<string>
  readonly shares: ReadonlyArray<Share>
}

export interface Table {
  readonly sheets: ReadonlyArray<string>
  readonly models: ReadonlyArray<ModelRow>
}

/** One secondary source's quotation of the paper's Table 2: what the project holds of its figures. */
export const published = {
  source: "https://cognaptus.com/blog/2025-08-05-love-in-the-time-of-context-why-llms-still-dont-get-you",
  what: "a blog post on the paper (2025-08-05)",
  limits:
    "the stored copy of the post ends after the table's first two rows and names the third category only as far as \"Vague\"; it gives no sample sizes, so no interval; the paper's own table was not read",
  shares: [
    { model: "DeepSeek-R1", code: "incorrect-context", share: 0.86 },
    { model: "DeepSeek-R1", code: "shallow-inference", share: 0.1 },
    { model: "Llama 3.1 405B", code: "incorrect-context", share: 0.4 },
    { model: "Llama 3.1 405B", code: "shallow-inference", share: 0.5 }
  ]
} as const

/** The table of the coded rows of one or more sheets, models in the order they first appear. */
export const tabulate = Effect.fn("ErrorTable.tabulate")(function* (
  sheets: ReadonlyArray<ReadonlyArray<CodedRow>>
): Effect.fn.Return<Table, SheetError> {
  const seen = new Map<string, CodedRow>()
  const byModel = new Map<string, Array<CodedRow>>()
  for (const r of sheets.flat()) {
    const key = JSON.stringify([r.run, r.cell, r.instance])
    const before = seen.get(key)
    if (before !== undefined)
      return yield* new SheetError({
        path: r.file,
        reason: `row ${r.row} (line ${r.line}) codes instance ${r.instance} of cell ${r.cell} in run ${r.run} again (first: ${before.file} row ${before.row}); each inference is counted once, so merge the coders' sheets first`
      })
    seen.set(key, r)
    const list = byModel.get(r.model) ?? []
    list.push(r)
    byModel.set(r.model, list)
  }
  const models = [...byModel].map(([model, rows]): ModelRow => {
    const coded = rows.filter((r) => r.code !== undefined)
    return {
      model,
      coded: coded.length,
      uncoded: rows.filter((r) => r.code === undefined).map((r) => `${r.file} row ${r.row}`),
      shares: codeNames.map((code) => {
        const count = coded.filter((r) => r.code === code).length
        return {
          code,
          count,
          share: coded.length === 0 ? NaN : count / coded.length,
          ci95: wilson(count, coded.length)
        }
      })
    }
  })
  return { sheets: [...new Set(sheets.flat().map((r) => r.file))], models }
})

const percent = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–")

/** `62.0% [48.2%, 74.1%] (31)`, or `–` when nothing is coded. */
export const shareText = (s: Share): string =>
  Number.isFinite(s.share) ? `${percent(s.share)} [${percent(s.ci95[0])}, ${percent(s.ci95[1])}] (${s.count})` : "–"

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ")

/** The table as Markdown: one row per model, then the rows not coded yet, then what the project holds of the paper's figures. */
export const markdown = (table: Table): string => {
  const head = `| model | coded | not coded | ${codeNames.join(" | ")} |`
  const rule = `| --- | ---: | ---: | ${codeNames.map(() => "---:").join(" | ")} |`
  const rows = table.models.map(
    (m) => `| ${cell(m.model)} | ${m.coded} | ${m.uncoded.length} | ${m.shares.map((s) => shareText(s)).join(" | ")} |`
  )
  const uncoded = table.models.filter((m) => m.uncoded.length > 0)
  const listed = (m: ModelRow) =>
    `${m.uncoded.slice(0, 10).join(", ")}${m.uncoded.length > 10 ? `, and ${m.uncoded.length - 10} more` : ""}`
  return [
    "# Error analysis (the CUPID paper's Table 2)",
    "",
    `From ${table.sheets.map((s) => `\`${s}\``).join(", ")}. Each value is the share of the model's coded rows with that code, its 95% Wilson interval and the count; rows not coded yet are in no share.`,
    "",
    head,
    rule,
    ...rows,
    "",
    uncoded.length === 0
      ? "Every row is coded."
      : `Not coded yet (in no share): ${uncoded.map((m) => `${cell(m.model)}: ${m.uncoded.length} (${listed(m)})`).join("; ")}.`,
    "",
    "## Published shares",
    "",
    `The project holds no copy of the paper's Table 2. One secondary source quotes part of it: ${published.source} (${published.what}).`,
    "",
    "| model | code | share |",
    "| --- | --- | ---: |",
    ...published.shares.map((p) => `| ${p.model} | ${p.code} | ${percent(p.share)} |`),
    "",
    `Limits: ${published.limits}. The project holds no published share of \`vague-inference\` or \`other\`; the models there are the paper's and are not matched to the models above.`,
    ""
  ].join("\n")
}
