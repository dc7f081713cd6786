/**
 * The tables of what a run could not score: failed pairs grouped by error, dataset rows skipped,
 * and what each cell did with an example instance.
 */
import type { Analysis } from "./Analysis.js"
import type { Example, Examples } from "./Examples.js"
import * as Format from "./Format.js"
import type { Table } from "./Table.js"
import { cellRow, left, num, right } from "./Tables.js"

/** Failed pairs grouped by stage, plugin and error, with the first messages (one a line). */
export const failures = (a: Analysis): Table => ({
  id: "failures",
  title: "Failures",
  notes: [
    `${a.index.failures.length} failed pairs, grouped by stage, plugin and error; a rerun of the sweep retries them.`
  ],
  columns: [left("stage"), left("plugin"), left("error"), right("count"), left("cells"), left("first examples")],
  rows: a.failures.map((f) => ({
    kinds: [],
    cells: [
      { text: f.stage },
      { text: f.plugin },
      { text: f.tag },
      num(String(f.count), f.count),
      { text: f.cells.join(", ") },
      { text: f.examples.map((x) => `${x.cell} · ${x.instance}: ${Format.clip(x.message, 200)}`).join("\n") }
    ]
  }))
})

/** The first 50 dataset rows skipped under `onInvalid: skip`. */
export const skipped = (a: Analysis): Table => ({
  id: "skipped",
  title: "Skipped dataset rows",
  notes: [
    `${a.summary.dataset.skipped.length} rows of the dataset were skipped (onInvalid: skip) and are in no table${a.summary.dataset.skipped.length > 50 ? "; the first 50 are listed, all in summary.json" : ""}.`
  ],
  columns: [left("row"), left("reason")],
  rows: a.summary.dataset.skipped
    .slice(0, 50)
    .map((s) => ({ kinds: [], cells: [{ text: s.row }, { text: Format.clip(s.reason, 300) }] }))
})

/** Whether some cell inferred a preference (or failed) on an example: else the examples have no such column. */
export const inferred = (examples: Examples): boolean =>
  examples.examples.some((x) => x.cells.some((c) => c.status === "failed" || c.preference !== null))

/** What each cell selected and inferred for one example instance, with its per-instance score. */
export const example = (a: Analysis, examples: Examples, x: Example): Table => {
  const infers = inferred(examples)
  return {
    id: `example-${x.id}`,
    title: `${x.id} (${x.type})`,
    notes: [],
    columns: [
      left("cell"),
      left("selected"),
      ...(infers ? [left("inferred preference")] : []),
      right(examples.metric ?? "score")
    ],
    rows: x.cells.flatMap((c) => {
      const cell = a.cells.find((v) => v.summary.id === c.cell)
      return cell === undefined
        ? []
        : [
            cellRow(a, cell.summary, [
              { text: c.selected === null ? "–" : c.selected.join(" ") },
              ...(infers
                ? [
                    {
                      text:
                        c.status === "failed"
                          ? `failed: ${Format.clip(c.error ?? "", 200)}`
                          : Format.clip(c.preference ?? "–", 300)
                    }
                  ]
                : []),
              num(Format.number(c.value), c.value)
            ])
          ]
    })
  }
}
