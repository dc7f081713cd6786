/**
 * `paper.md` and `paper.tex`: a run laid out as the CUPID paper lays out its results, models as
 * rows and the paper's settings as columns, each measured value with its 95% CI and N beside the
 * published value ({@link Published}) and the difference. A model's row is the `models:` entry its
 * cells bind the role `subject` to (or the entry their stages call); a setting is the cell's name
 * without the model (`full-history [gpt-4o]` is `full-history`). Settings that change only the
 * generator are left out of the inference tables: their inference is the baseline's call.
 *
 * @example
 * const doc = Reproduction.document(summary) // undefined when the run scored no inference or generation
 * fs.writeFileSync("runs/x/paper.md", Markdown.render(doc!))
 */
import { Hash } from "@cupid-lab/core"
import { settingOf } from "./Analysis.js"
import type { ResultLine } from "@cupid-lab/results"
import * as Doc from "./Document.js"
import * as Format from "./Format.js"
import * as Notes from "./Notes.js"
import * as Published from "./Published.js"
import type * as Table from "./Table.js"
import { left, num, right } from "./Tables.js"

type Cell = ResultLine.CellSummary

const metrics = {
  precision: "inference.precision_micro",
  recall: "inference.recall_micro",
  f1: "inference.f1_micro",
  generation: "generation.score"
} as const

/** A cell's model: the entry behind the role `subject`, else behind the one name its stages call. */
export const modelOf = (c: Cell): { readonly entry: string; readonly id: string } | undefined => {
  const models = c.models ?? {}
  const m = models["subject"] ?? (Object.keys(models).length === 1 ? Object.values(models)[0] : undefined)
  return m === undefined ? undefined : { entry: m.entry, id: m.model }
}

const withoutGenerator = (c: Cell): string => {
  const { generator: _g, models: _m, ...rest } = c.params
  return Hash.canonicalJson(rest)
}

interface Layout {
  readonly rows: ReadonlyArray<{ readonly entry: string; readonly id: string; readonly label: string }>
  readonly settings: ReadonlyArray<string>
  /** Settings whose cells differ from the baseline's only in the generator. */
  readonly generationOnly: ReadonlySet<string>
  readonly cell: (entry: string, setting: string) => Cell | undefined
  /** Cells the tables have no place for: no model, or a second cell of one model and setting. */
  readonly leftOut: ReadonlyArray<Cell>
}

const layout = (summary: ResultLine.Summary): Layout => {
  const cells = summary.cells.filter((c) => modelOf(c) !== undefined)
  const rows = [...new Map(cells.map((c) => [modelOf(c)!.entry, modelOf(c)!.id])).entries()].map(([entry, id]) => {
    const paper = Published.modelOf(entry, id)
    return { entry, id, label: paper === undefined ? entry : `${paper.label}` }
  })
  const settings = [...new Set(cells.map(settingOf))]
  const baseline = summary.cells.find((c) => c.id === summary.baseline)
  const generationOnly = new Set(
    settings.filter((s) => {
      const of = cells.filter((c) => settingOf(c) === s)
      return (
        baseline !== undefined &&
        s !== settingOf(baseline) &&
        of.every((c) => withoutGenerator(c) === withoutGenerator(baseline))
      )
    })
  )
  const cell = (entry: string, setting: string) =>
    cells.find((c) => modelOf(c)!.entry === entry && settingOf(c) === setting)
  // A cell with no model has no row; a second cell of one model and setting (a judge swap) has no place.
  const leftOut = summary.cells.filter((c) => {
    const m = modelOf(c)
    return m === undefined || cell(m.entry, settingOf(c)) !== c
  })
  return { rows, settings, generationOnly, cell, leftOut }
}

/** A measured value: in percent for inference, as is for the 1-10 score; its CI and N as detail. */
const measured = (c: Cell | undefined, slice: ResultLine.Slice, metric: string, percent: boolean): Table.Cell => {
  if (c === undefined) return { text: "not run" }
  const e = c.slices[slice].metrics[metric]
  const scale = (x: number | null) => (x === null ? null : percent ? 100 * x : x)
  const digits = percent ? 1 : 2
  const show = (x: number | null) => (x === null ? "–" : x.toFixed(digits))
  if (e === undefined || e.mean === null || e.n === 0)
    return { text: "–", value: null, detail: `n=${e?.n ?? 0}, ${c.slices[slice].failed} failed` }
  return {
    ...num(show(scale(e.mean)), scale(e.mean)),
    detail: `${e.ci95[0] === null && e.ci95[1] === null ? "[n/a]" : `[${show(scale(e.ci95[0]))}, ${show(scale(e.ci95[1]))}]`} n=${e.n}`
  }
}

const published = (entry: string, setting: string, slice: ResultLine.Slice, metric: string, percent: boolean) => {
  const v = Published.find(entry, setting, slice, metric)
  return v === undefined ? undefined : percent ? 100 * v.value : v.value
}

/** Published value and the difference measured - published, in the table's unit. */
const beside = (mine: Table.Cell, paper: number | undefined, digits: number): Array<Table.Cell> => {
  const diff = paper === undefined || mine.value === undefined || mine.value === null ? undefined : mine.value - paper
  return [
    paper === undefined ? { text: "–" } : num(paper.toFixed(digits), paper),
    diff === undefined ? { text: "–" } : num(`${diff > 0 ? "+" : ""}${diff.toFixed(digits)}`, diff)
  ]
}

const rowLabel = (r: Layout["rows"][number]): Table.Cell => ({ text: r.label, detail: `${r.entry}: ${r.id}` })

const notesOf = (summary: ResultLine.Summary, unit: string): Array<string> => [
  `${unit} Each measured value: the value, its 95% CI and N (instances scored); "not run": the run has no such cell; – : no value (the paper publishes none, or the project holds none; src/Published.ts lists what it holds).`,
  `Data: ${summary.dataset.source}, ${summary.dataset.instances} instances. Published values are for the paper's data (kixlab/CUPID, 756 instances); beside any other data they show the scale only.`
]

/** Inference P / R / F1 (%) per setting, on one slice; published values and the F1 difference beside each. */
export const inference = (summary: ResultLine.Summary, slice: ResultLine.Slice): Table.Table | undefined => {
  const l = layout(summary)
  const settings = l.settings.filter((s) => !l.generationOnly.has(s))
  if (settings.length === 0 || !summary.metrics.some((m) => m.name === metrics.f1)) return undefined
  const parts = [
    ["P", metrics.precision],
    ["R", metrics.recall],
    ["F1", metrics.f1]
  ] as const
  return {
    id: `paper-inference-${slice}`,
    title: `Preference inference, ${Notes.sliceTitle(slice)}: P / R / F1 (%, pooled over instances), measured and published`,
    notes: notesOf(summary, "Preference match, micro (pooled) as the paper computes it."),
    columns: [
      left("Model"),
      ...settings.flatMap((s) => [
        ...parts.map(([label]) => ({ ...right(label), group: s })),
        { ...right("paper F1"), group: s },
        { ...right("Δ F1"), group: s }
      ])
    ],
    rows: l.rows.map((r) => ({
      kinds: [],
      cells: [
        rowLabel(r),
        ...settings.flatMap((s) => {
          const c = l.cell(r.entry, s)
          const [p, rc, f1] = parts.map(([, m]) => measured(c, slice, m, true))
          return [p!, rc!, f1!, ...beside(f1!, published(r.entry, s, slice, metrics.f1, true), 1)]
        })
      ]
    }))
  }
}

/** The judge's 1-10 score per setting, on one slice, beside the published value. */
export const generation = (summary: ResultLine.Summary, slice: ResultLine.Slice): Table.Table | undefined => {
  const l = layout(summary)
  if (!summary.metrics.some((m) => m.name === metrics.generation) || l.settings.length === 0) return undefined
  return {
    id: `paper-generation-${slice}`,
    title: `Response generation, ${Notes.sliceTitle(slice)}: judge score (1-10), measured and published`,
    notes: notesOf(summary, "The LLM judge's score of the reply against the gold preference."),
    columns: [
      left("Model"),
      ...l.settings.flatMap((s) => [right("score"), right("paper"), right("Δ")].map((c) => ({ ...c, group: s })))
    ],
    rows: l.rows.map((r) => ({
      kinds: [],
      cells: [
        rowLabel(r),
        ...l.settings.flatMap((s) => {
          const mine = measured(l.cell(r.entry, s), slice, metrics.generation, false)
          return [mine, ...beside(mine, published(r.entry, s, slice, metrics.generation, false), 2)]
        })
      ]
    }))
  }
}

/** The published values beside their sources, for the reader who checks them. */
const sources = (): Doc.Block =>
  Doc.list(
    [...new Set(Published.values.map((v) => v.source))].map((s) => [
      `${s}: `,
      Published.values
        .filter((v) => v.source === s)
        .map((v) => `${v.entry} ${v.setting} ${v.metric} ${Format.number(v.value)}`)
        .join("; ")
    ])
  )

/** Every table of the report: inference and generation, over all instances and then per instance type. */
export const tables = (summary: ResultLine.Summary): Array<Table.Table> =>
  layout(summary).rows.length === 0
    ? []
    : (["all", "consistent", "contrastive", "changing"] as const).flatMap((slice) =>
        [inference(summary, slice), generation(summary, slice)].filter((t): t is Table.Table => t !== undefined)
      )

/** The reproduction report, or undefined when no cell calls a model or nothing of the paper's was scored. */
export const document = (summary: ResultLine.Summary): Doc.Document | undefined => {
  const all = tables(summary)
  if (all.length === 0) return undefined
  const l = layout(summary)
  return {
    title: `${summary.config.name}: the CUPID paper's tables beside this run`,
    blocks: [
      Doc.p(
        `Models as rows (${l.rows.length}), the paper's settings as columns (${l.settings.join(", ")}). `,
        l.generationOnly.size > 0
          ? `Settings that change only the generator (${[...l.generationOnly].join(", ")}) share the baseline's inference and appear in the generation tables only. `
          : "",
        "Every value's N is the number of instances scored; failures are counted in the run's summary, never scored.",
        l.leftOut.length === 0
          ? ""
          : ` Not in these tables (no model, or a second cell of the same model and setting, e.g. under another judge; report.md has them): ${l.leftOut.map((c) => c.name).join(", ")}.`
      ),
      ...all.flatMap((t) => [Doc.h3(t.title), Doc.p(t.notes.join(" ")), Doc.table(t)]),
      Doc.h3("Published values held"),
      sources()
    ]
  }
}
