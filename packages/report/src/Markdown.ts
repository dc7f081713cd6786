/**
 * `report.md`: a {@link Document} in Markdown. It has no wall-clock or cache figures (those are in
 * report.html), so reruns give the same bytes.
 *
 * @example
 * fs.writeFileSync("runs/x/report.md", Markdown.render(Document.report(analysis, examples, run.info)))
 */
import type { Block, Document, Inline, Text } from "./Document.js"
import * as Format from "./Format.js"
import * as Table from "./Table.js"

const inline = (x: Inline): string =>
  typeof x === "string"
    ? Format.md(x)
    : "code" in x
      ? `\`${Format.md(x.code)}\``
      : "raw" in x
        ? x.raw
        : Table.mdLine(x.line)

const text = (x: Text): string => x.map(inline).join("")

/** A block's lines, each block followed by an empty line. */
export const lines = (b: Block): Array<string> => {
  switch (b._tag) {
    case "section":
      return [`## ${text(b.title)}`, "", ...b.blocks.flatMap(lines)]
    case "heading":
      return [`${"#".repeat(b.level)} ${text(b.text)}`, ""]
    case "paragraph":
      return [text(b.text), ""]
    case "lines":
      return [...b.lines.map((l) => `${text(l)}  `), ""]
    case "quote":
      return [`> ${text(b.text)}`, ""]
    case "list":
      return [...b.items.flatMap((i) => [`- ${text(i.text)}`, ...(i.items ?? []).map((x) => `  - ${text(x)}`)]), ""]
    case "table":
      return [Table.markdown(b.table), ""]
    case "html":
      return []
    case "only":
      return b.format === "markdown" ? b.blocks.flatMap(lines) : []
  }
}

export const render = (d: Document): string => [`# ${Format.md(d.title)}`, "", ...d.blocks.flatMap(lines)].join("\n")
