#!/usr/bin/env node
// Side-by-side retrieval precision / recall_all per instance type, from the summary.json of several
// runs of the same config on different data:
//   node tools/retrieval-table.mjs dev=runs/retrieval-dev test=runs/retrieval-test hard=/tmp/h easy=/tmp/e
// Prints one markdown table: a row per cell, for each run and type "P / Rall" (N in the header).
import * as fs from "node:fs"
import * as path from "node:path"

const runs = process.argv.slice(2).map((arg) => {
  const eq = arg.indexOf("=")
  const [label, dir] = eq < 0 ? [path.basename(arg), arg] : [arg.slice(0, eq), arg.slice(eq + 1)]
  return { label, summary: JSON.parse(fs.readFileSync(path.join(dir, "summary.json"), "utf8")) }
})
if (runs.length === 0) {
  console.error("usage: node tools/retrieval-table.mjs <label>=<run dir> ...")
  process.exit(2)
}
const types = ["consistent", "contrastive", "changing"]
const fmt = (e) => (e === undefined || e.mean === null ? "–" : e.mean.toFixed(2))
const names = [...new Set(runs.flatMap((r) => r.summary.cells.map((c) => c.name)))]
const head = [
  "cell",
  ...runs.flatMap((r) =>
    types.map((t) => {
      const n = Math.max(...r.summary.cells.map((c) => c.slices[t].n))
      return `${r.label} ${t} (n=${n})`
    })
  )
]
console.log(`| ${head.join(" | ")} |`)
console.log(`|${head.map(() => "---").join("|")}|`)
for (const name of names) {
  const cells = runs.flatMap((r) => {
    const c = r.summary.cells.find((x) => x.name === name)
    return types.map((t) =>
      c === undefined
        ? "–"
        : `${fmt(c.slices[t].metrics["retrieval.precision"])} / ${fmt(c.slices[t].metrics["retrieval.recall_all"])}`
    )
  })
  console.log(`| ${name} | ${cells.join(" | ")} |`)
}
