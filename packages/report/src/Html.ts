/**
 * `report.html`: a {@link Document} (report.md's words plus charts and the run record) as one
 * self-contained page (inline CSS and SVG; a Content-Security-Policy forbids scripts and external resources).
 *
 * @example
 * fs.writeFileSync("runs/x/report.html", Html.render(Document.report(analysis, examples, info, yield* Figures.report(analysis))))
 */
import type { Block, Document, Inline, Text } from "./Document.js"
import * as Format from "./Format.js"
import * as Table from "./Table.js"

const e = Format.html

export const style = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d1d1f; margin: 0; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 12px; } h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; } p.note, figcaption, .muted { color: #555; font-size: 13px; }
table { border-collapse: collapse; margin: 6px 0 14px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f4; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.baseline td { background: #f5f8ff; } tr.oracle td { color: #555; font-style: italic; }
td.sig { background: #eaf6ea; font-weight: 600; } td.best { font-weight: 700; } td .muted { font-weight: 400; font-size: 12px; } td:first-child { white-space: nowrap; } .scroll { overflow-x: auto; }
figure { margin: 12px 0 24px; overflow-x: auto; } figcaption { margin-top: 4px; max-width: 900px; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; }
li { margin: 3px 0; }
code { font-size: 12px; background: #f3f3f3; padding: 0 3px; border-radius: 3px; }
`

const inline = (x: Inline): string =>
  typeof x === "string" ? e(x) : "code" in x ? `<code>${e(x.code)}</code>` : e("raw" in x ? x.raw : x.line)

const text = (x: Text): string => x.map(inline).join("")

const block = (b: Block): string => {
  switch (b._tag) {
    case "section": {
      const body = b.blocks.map(block).join("")
      return b.fold === true
        ? `<details><summary>${text(b.title)}</summary>${body}</details>`
        : `<h2${b.id === undefined ? "" : ` id="${e(b.id)}"`}>${text(b.title)}</h2>${body}`
    }
    case "heading":
      return b.level === 1
        ? `<h2${b.id === undefined ? "" : ` id="${e(b.id)}"`}>${text(b.text)}</h2>`
        : `<h3>${text(b.text)}</h3>`
    case "paragraph":
      return `<p>${text(b.text)}</p>`
    case "lines":
      return `<p class="note">${b.lines.map(text).join("<br>")}</p>`
    case "quote":
      return `<p class="note">${text(b.text)}</p>`
    case "list":
      return `<ul>${b.items.map((i) => `<li>${text(i.text)}${i.items === undefined ? "" : `<ul>${i.items.map((x) => `<li>${text(x)}</li>`).join("")}</ul>`}</li>`).join("")}</ul>`
    case "table":
      return Table.html(b.table)
    case "html":
      return b.html
    case "only":
      return b.format === "html" ? b.blocks.map(block).join("") : ""
  }
}

export const render = (d: Document): string =>
  [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${e(d.title)}</title><style>${style}</style></head><body><main>`,
    `<h1>${e(d.title)}</h1>`,
    ...d.blocks.map(block),
    "</main></body></html>",
    ""
  ].join("\n")
