/**
 * Report cost on a full-size run: 756 instances (CUPID's size) x 16 cells with the preference-match
 * metrics (macro and pooled), retrieval recall and precision. Times reading the run directory, the
 * analysis (paired bootstrap + permutation tests + Holm over every difference), rendering
 * report.md / report.html / results.csv, and reports the sizes and the heap.
 *
 * Run: npm run bench -- report
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Statistics } from "@cupid-lab/scorers"
import { type Domain, Scorer } from "@cupid-lab/core"
import { Analysis, Examples, Document, Html, Markdown, Figures } from "@cupid-lab/report"
import { Exports, RunDir, type ResultLine, Summary } from "@cupid-lab/results"

import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"

import { summaryFold } from "../test/report-fixtures.js"

const instances = Number(process.env["BENCH_INSTANCES"] ?? 756)
const cells = Number(process.env["BENCH_CELLS"] ?? 16)
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`
const time = <A>(label: string, f: () => A): A => {
  const start = performance.now()
  const a = f()
  console.log(`${label.padEnd(34)} ${((performance.now() - start) / 1000).toFixed(2)} s`)
  return a
}

const timeAsync = async <A>(label: string, f: () => Promise<A>): Promise<A> => {
  const start = performance.now()
  const a = await f()
  console.log(`${label.padEnd(34)} ${((performance.now() - start) / 1000).toFixed(2)} s`)
  return a
}

const metrics: ReadonlyArray<ResultLine.MetricDescription> = [
  Scorer.metric({ name: "retrieval.precision", description: "", family: "retrieval", headline: true }),
  Scorer.metric({ name: "retrieval.recall", description: "", family: "retrieval", headline: true, mainRank: 2 }),
  Scorer.metric({ name: "inference.f1", description: "", family: "inference" }),
  Scorer.metric({ name: "inference.precision_micro", description: "", family: "inference", aggregate: Scorer.ratio }),
  Scorer.metric({ name: "inference.recall_micro", description: "", family: "inference", aggregate: Scorer.ratio }),
  Scorer.metric({
    name: "inference.f1_micro",
    description: "",
    family: "inference",
    headline: true,
    mainRank: 1,
    aggregate: Scorer.f1Of("inference.precision_micro", "inference.recall_micro")
  })
]

const write = (dir: string): void => {
  const next = Statistics.rng(11)
  const types: ReadonlyArray<Domain.InstanceType> = ["consistent", "contrastive", "changing"]
  const acc = summaryFold({ metrics, seed: 7, resamples: 1000 })
  const out = fs.openSync(path.join(dir, "results.jsonl"), "w")
  const infos = Array.from({ length: cells }, (_, c) => ({
    id: `cell${String(c).padStart(12, "0")}`,
    name: c === 0 ? "all" : `retriever-${c}`,
    params: {
      retriever: { use: c === 0 ? "all" : "bm25", k: c },
      summarizer: null,
      inferrer: { use: "llm" },
      generator: null
    },
    usesGold: false,
    oracleRetrieval: false,
    heuristicStages: [],
    plugins: []
  }))
  for (const cell of infos) {
    const skill = 0.3 + 0.02 * Number(cell.id.slice(-2))
    for (let i = 0; i < instances; i++) {
      const pd = 2 + Math.floor(next() * 3),
        rd = 2 + Math.floor(next() * 2)
      const pn = Math.min(pd, Math.round(next() * pd * skill * 2) / 2),
        rn = Math.min(rd, Math.round(next() * rd * skill * 2) / 2)
      const p = pn / pd,
        r = rn / rd
      const line: ResultLine.ResultLine = {
        cell: cell.id,
        cellName: cell.name,
        instance: `p${Math.floor(i / 3)}:${types[i % 3]}`,
        personaId: `p${Math.floor(i / 3)}`,
        type: types[i % 3]!,
        status: next() < 0.01 ? "failed" : "ok",
        params: cell.params,
        meta: {
          sessions: 8,
          historyTokens: 6000 + Math.floor(next() * 4000),
          relevantMeanPosition: 1.5 + Math.floor(next() * 13) / 2,
          relevant: ["s2", "s5"],
          stale: []
        },
        selected: ["s2", "s5"],
        ranking: null,
        summaries: null,
        inference: { preference: "Numbered micro-steps with a check after each section.", analysis: "" },
        generation: null,
        scores: {
          "retrieval.precision": next(),
          "retrieval.recall": next(),
          "inference.f1": p + r === 0 ? 0 : (2 * p * r) / (p + r),
          "inference.precision_micro": { num: pn, den: pd },
          "inference.recall_micro": { num: rn, den: rd }
        },
        usage: {
          calls: 2,
          promptTokens: 9000,
          completionTokens: 120,
          byStage: {},
          byModel: { "openai/gpt-4o": { calls: 2, promptTokens: 9000, completionTokens: 120 } }
        },
        error: null
      }
      const final =
        line.status === "failed"
          ? { ...line, scores: {}, error: { stage: "infer", plugin: "llm", tag: "StageError", message: "HTTP 429" } }
          : line
      acc.add(final)
      fs.writeSync(out, `${JSON.stringify(final)}\n`)
    }
  }
  fs.closeSync(out)
  const summary = {
    config: { name: "bench", hash: "0" },
    dataset: { source: "none", hash: "0", instances, skipped: [] },
    seed: 7,
    resamples: 1000,
    baseline: infos[0]!.id,
    metrics: acc.metrics(),
    cells: acc.cells(infos)
  }
  fs.writeFileSync(path.join(dir, "summary.json"), Summary.encode(summary))
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-report-bench-"))
console.log(`run: ${instances} instances x ${cells} cells = ${instances * cells} result lines`)
time("write the synthetic run", () => write(dir))
console.log(`results.jsonl ${mb(fs.statSync(path.join(dir, "results.jsonl")).size)}`)
const run = await timeAsync("read the run directory", () =>
  Effect.runPromise(RunDir.read(dir).pipe(Effect.provide(NodeContext.layer)))
)
const analysis = time("analysis (paired tests + Holm)", () => Analysis.analyze(run))
console.log(
  `  ${analysis.families.primary.tests + analysis.families.exploratory.tests} tests; ${analysis.permutations.screening} permutations each, ${analysis.permutations.refinedTests} of them refined with ${analysis.permutations.refined}; ${analysis.summary.resamples} bootstrap resamples`
)
const examples = Examples.none("benchmark")
const md = time("report.md", () => Markdown.render(Document.report(analysis, examples)))
const figures = await timeAsync("charts (Vega)", () => Effect.runPromise(Figures.report(analysis)))
const html = time("report.html", () => Html.render(Document.report(analysis, examples, run.info, figures)))
const csv = time("results.csv", () => Exports.csv(run.index.table))
const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`
console.log(`sizes: report.md ${kb(md.length)}, report.html ${kb(html.length)}, results.csv ${kb(csv.length)}`)
;(globalThis as { gc?: () => void }).gc?.()
console.log(`heap after rendering: ${mb(process.memoryUsage().heapUsed)}, rss ${mb(process.memoryUsage().rss)}`)
fs.rmSync(dir, { recursive: true, force: true })
