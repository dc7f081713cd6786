/**
 * report.md's "Published values" on a LongMemEval or LoCoMo run: each value the benchmark's paper
 * publishes for the run's data ({@link Published.benchmarkValues}) beside each cell whose
 * generator calls the paper's reader model, with the difference, and where the run's setup is not
 * the paper's: the data (the published file by name and size, or a later release of it), the
 * generator's options, the judge. A run on data the paper publishes nothing for gets one sentence
 * naming the data the values are for.
 *
 * @example
 * const t = PublishedQa.table(summary) // undefined on CUPID runs and on benchmarks without values
 */
import { QaGenerator } from "@cupid-lab/core"
import { Option, Schema } from "effect"
import * as path from "node:path"
import type { ResultLine } from "@cupid-lab/results"
import * as Format from "./Format.js"
import * as Published from "./Published.js"
import * as Slices from "./Slices.js"
import type * as Table from "./Table.js"
import { left, num, right } from "./Tables.js"

type Cell = ResultLine.CellSummary
type ModelUse = (typeof ResultLine.ModelUse)["Type"]

/** The benchmark a run's data source names (`longmemeval:<file>`), the name of the file or folder it reads and its options (`turns=8`). */
export const dataOf = (
  source: string
):
  | { readonly benchmark: string; readonly name: string; readonly options: Readonly<Record<string, string>> }
  | undefined => {
  const m = /^([a-z]+):(.*)$/.exec(source)
  if (m === null || !(Published.benchmarks as ReadonlyArray<string>).includes(m[1]!)) return undefined
  const [file, ...options] = m[2]!.split(",")
  const pairs = options.map((o) => {
    const [k, v = ""] = o.trim().split("=")
    // Topics in any order are the same topics.
    return [k!, k === "topics" ? v.split("+").sort().join("+") : v] as const
  })
  return { benchmark: m[1]!, name: path.basename(file!.replace(/\/+$/, "")), options: Object.fromEntries(pairs) }
}

const sameOptions = (x: Readonly<Record<string, string>>, y: Readonly<Record<string, string>>): boolean =>
  Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([k, v]) => y[k] === v)

/** How the run's data relates to the data a value was published on; undefined when it is other data. */
export const dataMatch = (
  summary: Pick<ResultLine.Summary, "dataset">,
  data: Published.Data
): "the published data" | "a later release of the published file" | undefined => {
  const d = dataOf(summary.dataset.source)
  if (d === undefined || d.benchmark !== data.benchmark || !sameOptions(d.options, data.options ?? {})) return undefined
  if (data.instances !== undefined && summary.dataset.instances !== data.instances) return undefined
  return data.names.length === 0 || data.names.includes(d.name)
    ? "the published data"
    : (data.later ?? []).includes(d.name)
      ? "a later release of the published file"
      : undefined
}

/** A `qa` generator's options as it runs them, its defaults filled in (`reading: con` under `prompt: longmemeval`). */
const withDefaults = (options: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> => {
  if (options["use"] !== QaGenerator.name) return options
  const { use: _use, ...rest } = options
  return Option.match(Schema.decodeUnknownOption(QaGenerator.Options)(rest), {
    onNone: () => options,
    onSome: (decoded) => ({ ...options, ...decoded })
  })
}

/** The options of a cell's generator, and the model it calls (its `model` option, through the cell's `models`). */
const generatorOf = (c: Cell): { readonly options: Readonly<Record<string, unknown>>; readonly model?: ModelUse } => {
  const g = c.params["generator"]
  const options = withDefaults(g !== null && typeof g === "object" ? (g as Readonly<Record<string, unknown>>) : {})
  const model = typeof options["model"] === "string" ? c.models?.[options["model"]] : undefined
  return model === undefined ? { options } : { options, model }
}

/** What in a cell's setup is not the paper's, in words; empty when nothing the project can see differs. */
const differences = (summary: ResultLine.Summary, c: Cell, v: Published.BenchmarkValue): Array<string> => {
  const { options } = generatorOf(c)
  const judges = Object.values(c.scoring?.models ?? {}).map((m) => m.model)
  return [
    ...(dataMatch(summary, v.data) === "a later release of the published file"
      ? [`data: ${v.data.later!.join(", ")}, a later release (the paper read ${v.data.names.join(", ")})`]
      : []),
    ...Object.entries(v.generator ?? {})
      .filter(([k, want]) => options[k] !== want)
      .map(([k, want]) => `generator ${k}: ${options[k] === undefined ? "not set" : String(options[k])}, not ${want}`),
    ...(v.judge === undefined || judges.some((j) => v.judge!.ids.includes(j))
      ? []
      : [`judge: ${judges.join(", ") || "none"}, not ${v.judge.ids.join(" or ")}`])
  ]
}

const percent = (x: number): string => (100 * x).toFixed(1)

const measured = (c: Cell, v: Published.BenchmarkValue): Table.Cell => {
  const e = Slices.estimate(c, v.slice, v.metric)
  if (e === undefined || e.mean === null || e.n === 0) return { text: "–", value: null }
  const ci = e.ci95[0] === null || e.ci95[1] === null ? "[n/a]" : `[${percent(e.ci95[0])}, ${percent(e.ci95[1])}]`
  return { ...num(percent(e.mean), 100 * e.mean), detail: `${ci} n=${e.n}` }
}

/** The values published for the run's data beside the cells that call their reader; undefined when the run's benchmark has none. */
export const table = (
  summary: ResultLine.Summary,
  values: ReadonlyArray<Published.BenchmarkValue> = Published.benchmarkValues
): Table.Table | undefined => {
  const d = dataOf(summary.dataset.source)
  // Only values of metrics the run scores: a retrieval-only run gets no section.
  const held = values.filter(
    (v) => v.data.benchmark === d?.benchmark && summary.metrics.some((m) => m.name === v.metric)
  )
  if (d === undefined || held.length === 0) return undefined
  const mine = held.filter((v) => dataMatch(summary, v.data) !== undefined)
  const rows = mine.flatMap((v): Array<Table.Row> => {
    const cells = summary.cells.filter((c) => v.reader.ids.includes(generatorOf(c).model?.model ?? ""))
    const head: Array<Table.Cell> = [
      { text: `${v.metric}, ${Slices.title(v.slice)}`, detail: v.source },
      { text: `${v.reader.label}${v.judge === undefined ? "" : `, judged by ${v.judge.label}`}`, detail: v.setting },
      num(percent(v.value), 100 * v.value)
    ]
    return cells.map((c) => {
      const m = measured(c, v)
      const diff = typeof m.value === "number" ? m.value - 100 * v.value : undefined
      const differs = differences(summary, c, v)
      return {
        kinds: c.id === summary.baseline ? ["baseline"] : [],
        cells: [
          ...head,
          { text: c.name, detail: generatorOf(c).model!.model },
          m,
          diff === undefined ? { text: "–" } : num(`${diff > 0 ? "+" : ""}${diff.toFixed(1)}`, diff),
          { text: differs.length === 0 ? "the paper's, as far as the run records it" : differs.join("; ") }
        ]
      }
    })
  })
  const covered = [...new Set(held.map(describeData))]
  const called = (v: Published.BenchmarkValue) =>
    summary.cells.some((c) => v.reader.ids.includes(generatorOf(c).model?.model ?? ""))
  const uncalled = [...new Set(mine.filter((v) => !called(v)).map((v) => v.reader.label))]
  return {
    id: "published",
    title: `Values published on ${Published.nameOf(d.benchmark)}, beside this run's (%).`,
    notes: [
      mine.length === 0
        ? `The published values held here are for ${Slices.words(covered)}; this run's data (${Format.md(summary.dataset.source)}, ${summary.dataset.instances} instances) is none of them, so none is shown.`
        : rows.length === 0
          ? `Values are published for this run's data with the readers ${Slices.words(uncalled)}; no cell's generator calls one of them, so none is shown.`
          : [
              "Measured: the value, its 95% CI and n (questions with a value); difference: measured minus published, in points. Setup: what the run records that is not the paper's; data of the published file name, number of questions and source options is taken as the published data (its bytes are not checked). Under each published value: where it is printed (the list: packages/report/src/Published.ts).",
              ...(uncalled.length === 0
                ? []
                : [`Also published for this data, with readers no cell calls: ${Slices.words(uncalled)}.`])
            ].join(" "),
      `docs/${d.benchmark}.md says which command reproduces each published value and what else differs from the paper's runs.`
    ],
    columns: [
      left("Published value"),
      left("Reader (paper's setting)"),
      right("Paper"),
      left("Cell"),
      right("Measured"),
      right("Difference"),
      left("Setup")
    ],
    rows
  }
}

/** `longmemeval_oracle.json (500 questions)`, `turns=8, topics=travel_restaurant`. */
const describeData = (v: Published.BenchmarkValue): string =>
  [
    ...(v.data.names.length > 0 ? [v.data.names.join(", ")] : []),
    ...Object.entries(v.data.options ?? {}).map(([k, x]) => `${k}=${x}`)
  ].join(", ") + (v.data.instances === undefined ? "" : ` (${v.data.instances} questions)`)
