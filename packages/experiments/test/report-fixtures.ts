/**
 * Hand-made run directories for the report and compare tests: result lines in the sweep's format,
 * summary.json built by the sweep's own accumulator, an optional run.json, and a dataset the
 * examples section can read back (through `openDataset`, no file needed).
 */
import type { Dataset } from "@cupid-lab/data"
import { Domain, Scorer } from "@cupid-lab/core"
import { Columns, RunDir, type ResultLine, Summary } from "@cupid-lab/results"
import { Effect, Either, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export const tempDir = (prefix: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `cupid-${prefix}-`))

export const metrics: ReadonlyArray<ResultLine.MetricDescription> = [
  Scorer.metric({
    name: "retrieval.recall",
    description: "Relevant selected / relevant.",
    family: "retrieval",
    headline: true,
    mainRank: 2
  }),
  Scorer.metric({
    name: "inference.f1",
    description: "Per-instance F1 (macro).",
    family: "inference",
    heuristic: true
  }),
  Scorer.metric({
    name: "inference.precision_micro",
    description: "Pooled precision.",
    family: "inference",
    heuristic: true,
    aggregate: Scorer.ratio
  }),
  Scorer.metric({
    name: "inference.recall_micro",
    description: "Pooled recall.",
    family: "inference",
    heuristic: true,
    aggregate: Scorer.ratio
  }),
  Scorer.metric({
    name: "inference.f1_micro",
    description: "Micro F1.",
    family: "inference",
    heuristic: true,
    headline: true,
    mainRank: 1,
    aggregate: Scorer.f1Of("inference.precision_micro", "inference.recall_micro")
  })
]

export interface InstanceSpec {
  readonly id: string
  readonly personaId: string
  readonly type: Domain.CupidType
  readonly relevantMeanPosition: number | null
  readonly historyTokens: number
}

/** Four instances: two personas, every type, known positions and history lengths. */
export const instances: ReadonlyArray<InstanceSpec> = [
  { id: "p1:consistent", personaId: "p1", type: "consistent", relevantMeanPosition: 1.5, historyTokens: 100 },
  { id: "p1:contrastive", personaId: "p1", type: "contrastive", relevantMeanPosition: 3.5, historyTokens: 300 },
  { id: "p1:changing", personaId: "p1", type: "changing", relevantMeanPosition: 7.5, historyTokens: 200 },
  { id: "p2:consistent", personaId: "p2", type: "consistent", relevantMeanPosition: 5, historyTokens: 400 }
]

export interface Counts {
  readonly recall: number | null
  /** [precision num, den, recall num, den] */
  readonly counts: readonly [number, number, number, number]
}

const f1 = (p: number, r: number) => (p + r === 0 ? 0 : (2 * p * r) / (p + r))

/** The score keys the preference-match scorer writes for one instance. */
export const scores = (c: Counts): Record<string, ResultLine.Score> => {
  const [pn, pd, rn, rd] = c.counts
  const p = pn / pd,
    r = rn / rd
  return {
    "retrieval.recall": c.recall,
    "inference.f1": f1(p, r),
    "inference.precision_micro": { num: pn, den: pd },
    "inference.recall_micro": { num: rn, den: rd }
  }
}

export interface CellSpec {
  readonly id: string
  readonly name: string
  readonly retriever: string
  readonly usesGold?: boolean
  /** Per instance (in {@link instances} order): scores, or a failure message. */
  readonly results: ReadonlyArray<Counts | { readonly error: string }>
  readonly preference?: string
  readonly usage?: { readonly calls: number; readonly promptTokens: number; readonly completionTokens: number }
}

/** A: the full history (baseline). B: bm25. Hand-computed values are in the report tests. */
export const cellA: CellSpec = {
  id: "aaaa000000000001",
  name: "all",
  retriever: "all",
  results: [
    { recall: 1, counts: [1, 2, 1, 3] },
    { recall: 1, counts: [2, 2, 2, 2] },
    { recall: 1, counts: [0, 1, 0, 2] },
    { recall: 1, counts: [1, 1, 1, 1] }
  ],
  usage: { calls: 2, promptTokens: 100, completionTokens: 10 }
}

export const cellB: CellSpec = {
  id: "bbbb000000000002",
  name: "bm25(k=2)",
  retriever: "bm25",
  results: [
    { recall: 0.5, counts: [0, 1, 0, 3] },
    { recall: 1, counts: [1, 2, 1, 2] },
    { recall: 0, counts: [1, 1, 1, 2] },
    { recall: 0.5, counts: [0, 2, 0, 1] }
  ],
  usage: { calls: 1, promptTokens: 40, completionTokens: 5 }
}

export const params = (c: CellSpec) => ({
  retriever: { use: c.retriever, ...(c.retriever === "bm25" ? { k: 2 } : {}) },
  summarizer: null,
  inferrer: { use: "extractive" },
  generator: null
})

export const line = (c: CellSpec, i: number): ResultLine.ResultLine => {
  const inst = instances[i]!
  const r = c.results[i]!
  const failed = "error" in r
  const u = c.usage ?? { calls: 0, promptTokens: 0, completionTokens: 0 }
  const stage = { calls: u.calls, promptTokens: u.promptTokens, completionTokens: u.completionTokens }
  return {
    cell: c.id,
    cellName: c.name,
    instance: inst.id,
    personaId: inst.personaId,
    type: inst.type,
    status: failed ? "failed" : "ok",
    params: params(c),
    meta: {
      sessions: 8,
      historyTokens: inst.historyTokens,
      relevantMeanPosition: inst.relevantMeanPosition,
      relevant: [],
      stale: []
    },
    selected: failed ? null : ["s1", "s2"],
    ranking: null,
    summaries: null,
    inference: failed ? null : { preference: c.preference ?? `inferred by ${c.name}`, analysis: "" },
    generation: null,
    scores: failed ? {} : scores(r),
    usage: {
      ...stage,
      byStage: u.calls === 0 ? {} : { infer: stage },
      byModel: u.calls === 0 ? {} : { "openai/gpt-4o-mini": stage }
    },
    error: failed ? { stage: "infer", plugin: "llm", tag: "StageError", message: r.error } : null
  }
}

export interface RunSpec {
  readonly name?: string
  readonly cells: ReadonlyArray<CellSpec>
  readonly seed?: number
  readonly resamples?: number
  readonly datasetHash?: string
  readonly skipped?: ResultLine.Summary["dataset"]["skipped"]
  readonly runInfo?: Record<string, unknown>
  /** The scorers' metric descriptions; default {@link metrics}. */
  readonly metrics?: ReadonlyArray<ResultLine.MetricDescription>
}

/** Write results.jsonl, summary.json (and run.json) the way the sweep does. */
export const writeRun = (dir: string, spec: RunSpec): ResultLine.Summary => {
  fs.mkdirSync(dir, { recursive: true })
  const lines = spec.cells.flatMap((c) => instances.map((_, i) => line(c, i)))
  fs.writeFileSync(path.join(dir, "results.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""))
  const acc = summaryFold({ metrics: spec.metrics ?? metrics, seed: spec.seed ?? 7, resamples: spec.resamples ?? 200 })
  for (const l of lines) acc.add(l)
  const summary: ResultLine.Summary = {
    config: { name: spec.name ?? "tiny", hash: "c0ffee0000000000" },
    dataset: {
      source: "tiny",
      hash: spec.datasetHash ?? "d00d",
      instances: instances.length,
      skipped: spec.skipped ?? []
    },
    seed: spec.seed ?? 7,
    resamples: spec.resamples ?? 200,
    baseline: spec.cells[0]!.id,
    metrics: acc.metrics(),
    cells: acc.cells(
      spec.cells.map((c) => ({
        id: c.id,
        name: c.name,
        params: params(c),
        usesGold: c.usesGold ?? false,
        oracleRetrieval: c.usesGold === true && c.retriever === "oracle",
        heuristicStages: ["inferrer"],
        plugins: []
      }))
    )
  }
  fs.writeFileSync(path.join(dir, "summary.json"), Summary.encode(summary))
  if (spec.runInfo !== undefined)
    fs.writeFileSync(path.join(dir, "run.json"), `${JSON.stringify(spec.runInfo, null, 2)}\n`)
  return summary
}

/** A CUPID row per instance, with the given dialogue text and gold preference. */
export const dataset = (
  options: { readonly hash?: string; readonly opening?: string; readonly preference?: string } = {}
): ((source: string) => Effect.Effect<Dataset.Opened>) => {
  const rows = instances.map((inst): Domain.CupidRow => ({
    persona_id: inst.personaId,
    instance_type: inst.type,
    current_request: `Request of ${inst.id}`,
    current_context_factor: "factor A",
    current_contextual_preference: options.preference ?? "Keep it short.",
    current_checklist: ["short"],
    prior_interactions: Array.from({ length: 8 }, (_, k) => ({
      context_factor: k < 2 ? "factor A" : "factor Z",
      contextual_preference: k < 2 ? (options.preference ?? "Keep it short.") : "Other.",
      dialogue: [
        {
          role: "user" as const,
          content: k === 0 && options.opening !== undefined ? options.opening : `Session ${k + 1} opening`
        },
        { role: "assistant" as const, content: "Sure." }
      ]
    }))
  }))
  return (source) =>
    Effect.succeed({
      source,
      benchmark: "cupid",
      resolved: source,
      fingerprint: options.hash ?? "d00d",
      instances: Stream.fromIterable(rows.map(Domain.fromRow)),
      skipped: () => []
    })
}

/** Markup in every place a report shows text from data, models, config or errors. */
export const hostile = {
  cellName: `<script>window.__pwned = "name"</script>"><img src=x onerror="window.__pwned='img'">`,
  error: `</svg></table><script>window.__pwned = "error"</script><img src=x onerror=alert(1)>`,
  opening: `<img src=x onerror="window.__pwned='dialogue'"> hello </textarea><script>alert("dialogue")</script>`,
  preference: `' onmouseover='alert(3)' data-x="<b>bold</b>"`,
  inferred: `<svg onload=alert(4)><script>alert("inferred")</script></svg> [click](javascript:alert(5)) ![x](http://127.0.0.1:9/x.png) \u202Egnp.exe`
}

/** A run whose second cell has a hostile name, inference and one failure with a hostile message. */
export const writeHostileRun = (dir: string): ResultLine.Summary =>
  writeRun(dir, {
    cells: [
      cellA,
      {
        ...cellB,
        name: hostile.cellName,
        preference: hostile.inferred,
        results: [cellB.results[0]!, { error: hostile.error }, cellB.results[2]!, cellB.results[3]!]
      }
    ],
    skipped: [{ row: "7 (<b>p9</b>:changing)", reason: `field current_request: <script>alert("row")</script>` }],
    runInfo: {
      startedAt: "<script>alert('run')</script>",
      durationMs: 5,
      versions: { "@cupid-lab/core": "0.1.0<script>" }
    }
  })

export const hostileDataset = () => dataset({ opening: hostile.opening, preference: hostile.preference })

/** Summary.of as a fold over result lines in their final order, as the sweep writes summary.json. */
export const summaryFold = (options: Summary.Options) => {
  const rows: Array<ResultLine.Row> = []
  return {
    add: (line: ResultLine.Row): void => void rows.push(line),
    metrics: () => Summary.of(Columns.index(rows), options, []).metrics,
    cells: (cells: ReadonlyArray<ResultLine.CellInfo>) => Summary.of(Columns.index(rows), options, cells).cells
  }
}

/** Parse result lines (the text of results.jsonl); `file` names the source in errors. */
export const parseRows = (text: string, file: string) =>
  Either.all(text.split("\n").flatMap((line, i) => (line.trim() === "" ? [] : [RunDir.parseRow(line, i + 1, file)])))

/**
 * A run of the paper's layout with two models (GPT-4o and Mistral 7B, named as configs/paper.yaml
 * names them), each under `full-history` and `summaries`; with `matcherPair`, a fifth cell equal
 * to GPT-4o's full-history cell but scored by another matcher (`models.matcher`), whose third
 * instance failed. Five instances, one without relevant sessions; hand-computed values are in
 * paper-figures.test.ts.
 */
export const paperInstances: ReadonlyArray<InstanceSpec> = [
  { id: "q1:consistent", personaId: "q1", type: "consistent", relevantMeanPosition: 1.5, historyTokens: 100 },
  { id: "q1:contrastive", personaId: "q1", type: "contrastive", relevantMeanPosition: 2, historyTokens: 400 },
  { id: "q1:changing", personaId: "q1", type: "changing", relevantMeanPosition: 7.5, historyTokens: 300 },
  { id: "q2:consistent", personaId: "q2", type: "consistent", relevantMeanPosition: 7, historyTokens: 200 },
  { id: "q2:changing", personaId: "q2", type: "changing", relevantMeanPosition: null, historyTokens: 500 }
]

export const paperMetrics: ReadonlyArray<ResultLine.MetricDescription> = [
  ...metrics.filter((m) => m.family === "inference"),
  Scorer.metric({ name: "generation.score", description: "Judge 1-10.", family: "generation", headline: true })
]

type Quad = readonly [number, number, number, number]

interface PaperCell {
  readonly id: string
  readonly name: string
  readonly entry: "gpt-4o" | "mistral-7b"
  readonly summaries: boolean
  readonly matcher: string
  /** Per instance of {@link paperInstances}: counts [p num, p den, r num, r den] and the judge's score, or a failure. */
  readonly results: ReadonlyArray<{ readonly counts: Quad; readonly score: number } | "failed">
}

const scored = (counts: ReadonlyArray<Quad>, score: ReadonlyArray<number>) =>
  counts.map((c, i) => ({ counts: c, score: score[i]! }))

export const paperCells: ReadonlyArray<PaperCell> = [
  {
    id: "f000000000000001",
    name: "full-history [gpt-4o]",
    entry: "gpt-4o",
    summaries: false,
    matcher: "gpt-4o-matcher",
    results: scored(
      [
        [1, 2, 1, 2],
        [2, 2, 1, 2],
        [0, 2, 0, 3],
        [1, 1, 2, 2],
        [1, 2, 2, 4]
      ],
      [6, 8, 4, 10, 7]
    )
  },
  {
    id: "f000000000000002",
    name: "full-history [mistral-7b]",
    entry: "mistral-7b",
    summaries: false,
    matcher: "gpt-4o-matcher",
    results: scored(
      [
        [0, 2, 0, 2],
        [1, 2, 1, 2],
        [1, 1, 1, 3],
        [0, 1, 1, 2],
        [1, 2, 1, 4]
      ],
      [3, 5, 4, 6, 2]
    )
  },
  {
    id: "5000000000000001",
    name: "summaries [gpt-4o]",
    entry: "gpt-4o",
    summaries: true,
    matcher: "gpt-4o-matcher",
    results: scored(
      [
        [1, 2, 2, 3],
        [2, 2, 2, 2],
        [1, 2, 1, 3],
        [1, 1, 2, 2],
        [0, 2, 1, 4]
      ],
      [5, 5, 5, 5, 5]
    )
  },
  {
    id: "5000000000000002",
    name: "summaries [mistral-7b]",
    entry: "mistral-7b",
    summaries: true,
    matcher: "gpt-4o-matcher",
    results: scored(
      Array.from({ length: 5 }, () => [1, 2, 1, 2] as const),
      [5, 5, 5, 5, 5]
    )
  }
]

export const prefMatcherCell: PaperCell = {
  id: "f000000000000003",
  name: "full-history [gpt-4o, prefmatcher]",
  entry: "gpt-4o",
  summaries: false,
  matcher: "prefmatcher",
  results: [
    { counts: [1, 2, 1, 2], score: 6 },
    { counts: [2, 2, 2, 2], score: 8 },
    "failed",
    { counts: [1, 1, 2, 2], score: 10 },
    { counts: [1, 2, 2, 4], score: 7 }
  ]
}

const modelIds = { "gpt-4o": "gpt-4o-2024-08-06", "mistral-7b": "mistralai/Mistral-7B-Instruct-v0.3" } as const

const paperParams = (c: PaperCell) => ({
  retriever: { use: "all" },
  summarizer: c.summaries ? { use: "llm", model: "subject", scope: "log" } : null,
  inferrer: { use: "llm", model: "subject" },
  generator: { use: "llm", model: "subject", preference: "none" },
  models: { subject: c.entry, matcher: c.matcher }
})

const paperLine = (c: PaperCell, i: number): ResultLine.ResultLine => {
  const inst = paperInstances[i]!
  const r = c.results[i]!
  const ok = r !== "failed"
  const zero = { calls: 0, promptTokens: 0, completionTokens: 0 }
  return {
    ...line(cellA, 0),
    cell: c.id,
    cellName: c.name,
    instance: inst.id,
    personaId: inst.personaId,
    type: inst.type,
    status: ok ? "ok" : "failed",
    params: paperParams(c),
    meta: {
      sessions: 8,
      historyTokens: inst.historyTokens,
      relevantMeanPosition: inst.relevantMeanPosition,
      relevant: [],
      stale: []
    },
    inference: ok ? { preference: `inferred by ${c.name}`, analysis: "" } : null,
    generation: ok ? { text: `reply by ${c.name}` } : null,
    scores: ok ? { ...scores({ recall: null, counts: r.counts }), "generation.score": r.score } : {},
    usage: { ...zero, byStage: {}, byModel: {} },
    error: ok ? null : { stage: "score", plugin: "preference-match", tag: "StageError", message: "matcher unreadable" }
  }
}

/** Write the paper-layout run (see {@link paperCells}) as the sweep writes results.jsonl and summary.json. */
export const writePaperRun = (dir: string, options: { readonly matcherPair?: boolean } = {}): ResultLine.Summary => {
  const cells = options.matcherPair === true ? [...paperCells, prefMatcherCell] : paperCells
  fs.mkdirSync(dir, { recursive: true })
  const lines = cells.flatMap((c) => paperInstances.map((_, i) => paperLine(c, i)))
  fs.writeFileSync(path.join(dir, "results.jsonl"), lines.map((l) => `${JSON.stringify(l)}\n`).join(""))
  const of = Summary.of(
    Columns.index(lines),
    { metrics: paperMetrics, seed: 7, resamples: 200 },
    cells.map((c) => ({
      id: c.id,
      name: c.name,
      params: paperParams(c),
      usesGold: false,
      oracleRetrieval: false,
      heuristicStages: [],
      plugins: [],
      models: { subject: { entry: c.entry, provider: "openai", model: modelIds[c.entry] } }
    }))
  )
  const summary: ResultLine.Summary = {
    config: { name: "paper-tiny", hash: "c0ffee0000000001" },
    dataset: { source: "tiny", hash: "d00d", instances: paperInstances.length, skipped: [] },
    seed: 7,
    resamples: 200,
    baseline: cells[0]!.id,
    metrics: of.metrics,
    cells: of.cells
  }
  fs.writeFileSync(path.join(dir, "summary.json"), Summary.encode(summary))
  return summary
}
