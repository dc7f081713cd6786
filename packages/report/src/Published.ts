/**
 * Values the CUPID paper publishes (Kim et al., COLM 2025, arXiv 2508.01674), as data: the model,
 * the setting (named as `configs/paper.yaml` names its cells), the instance type, the metric in its
 * own unit (F1 0.430, not 43.0) and where the paper prints it. The reproduction report puts them
 * beside measured values; its tests read them too. Only the figures listed here are held: a table
 * cell without one says so instead of showing a number.
 *
 * @example
 * Published.find("gpt-4o", "full-history", "all", "inference.f1_micro")?.value // 0.43
 */
import type { ResultLine } from "@cupid-lab/results"

/** A model of the paper's Table 8: the name `configs/paper.yaml` gives its entry, and the ids it is served under. */
export interface Model {
  readonly entry: string
  readonly label: string
  readonly ids: ReadonlyArray<string>
}

export interface Value {
  readonly entry: string
  readonly setting: string
  readonly slice: ResultLine.Slice
  readonly metric: string
  readonly value: number
  readonly source: string
}

export const models: ReadonlyArray<Model> = [
  { entry: "gpt-4o", label: "GPT-4o", ids: ["gpt-4o-2024-08-06"] },
  { entry: "o3-mini", label: "o3-mini", ids: ["o3-mini-2025-01-31", "o3-mini"] },
  { entry: "claude-3.7-sonnet", label: "Claude 3.7 Sonnet", ids: ["claude-3-7-sonnet-20250219"] },
  { entry: "claude-3.5-sonnet", label: "Claude 3.5 Sonnet", ids: ["claude-3-5-sonnet-20240620"] },
  { entry: "llama-3.1-405b", label: "Llama 3.1 405B", ids: ["meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo"] },
  { entry: "mistral-7b", label: "Mistral 7B", ids: ["mistralai/Mistral-7B-Instruct-v0.3"] },
  { entry: "qwen2.5-72b", label: "Qwen2.5 72B", ids: ["Qwen/Qwen2.5-72B-Instruct-Turbo"] },
  { entry: "deepseek-r1", label: "DeepSeek-R1", ids: ["deepseek-ai/DeepSeek-R1"] },
  {
    entry: "gemini-2.0-flash-thinking",
    label: "Gemini 2.0 Flash Thinking",
    ids: ["gemini-2.0-flash-thinking-exp-01-21"]
  },
  { entry: "gemini-2.0-pro", label: "Gemini 2.0 Pro", ids: ["gemini-2.0-pro-exp-02-05"] }
]

const main = "headline results: inference from the full history, all instances"
const oracle = "headline results: inference from the oracle sessions, all instances"
const generation = "headline results: generation score (1-10), all instances"

/** Full-history micro P / R / F1 of one model, as printed (fractions of the printed percentages). */
const prf = (entry: string, p: number, r: number, f1: number): Array<Value> =>
  (
    [
      ["inference.precision_micro", p],
      ["inference.recall_micro", r],
      ["inference.f1_micro", f1]
    ] as const
  ).map(([metric, value]) => ({ entry, setting: "full-history", slice: "all", metric, value, source: main }))

const one = (entry: string, setting: string, metric: string, value: number, source: string): Value => ({
  entry,
  setting,
  slice: "all",
  metric,
  value,
  source
})

export const values: ReadonlyArray<Value> = [
  ...prf("claude-3.7-sonnet", 0.491, 0.646, 0.558),
  ...prf("deepseek-r1", 0.42, 0.595, 0.493),
  ...prf("gemini-2.0-pro", 0.401, 0.635, 0.492),
  ...prf("claude-3.5-sonnet", 0.409, 0.569, 0.476),
  ...prf("gpt-4o", 0.366, 0.521, 0.43),
  ...prf("qwen2.5-72b", 0.328, 0.449, 0.379),
  ...prf("llama-3.1-405b", 0.302, 0.451, 0.362),
  ...prf("mistral-7b", 0.269, 0.307, 0.286),
  one("claude-3.7-sonnet", "oracle-sessions", "inference.f1_micro", 0.763, oracle),
  one("deepseek-r1", "oracle-sessions", "inference.f1_micro", 0.708, oracle),
  one("gemini-2.0-pro", "oracle-sessions", "inference.f1_micro", 0.714, oracle),
  one("claude-3.5-sonnet", "oracle-sessions", "inference.f1_micro", 0.71, oracle),
  one("gpt-4o", "oracle-sessions", "inference.f1_micro", 0.658, oracle),
  one("mistral-7b", "oracle-sessions", "inference.f1_micro", 0.525, oracle),
  one(
    "mistral-7b",
    "summaries",
    "inference.f1_micro",
    0.418,
    "headline results: inference from session summaries, all instances"
  ),
  one("deepseek-r1", "full-history", "generation.score", 7.68, generation),
  one("deepseek-r1", "oracle-preference", "generation.score", 9.66, generation),
  one("gpt-4o", "full-history", "generation.score", 6.46, generation),
  one("gpt-4o", "oracle-preference", "generation.score", 9.2, generation)
]

/** The paper's model a run's entry stands for: by the entry's name, else by the model id it sends. */
export const modelOf = (entry: string, id: string | undefined): Model | undefined =>
  models.find((m) => m.entry === entry) ?? (id === undefined ? undefined : models.find((m) => m.ids.includes(id)))

export const find = (entry: string, setting: string, slice: ResultLine.Slice, metric: string): Value | undefined =>
  values.find((v) => v.entry === entry && v.setting === setting && v.slice === slice && v.metric === metric)

/** The other benchmarks whose papers' values are held: LongMemEval, LoCoMo, PrefEval. */
export const benchmarks = ["longmemeval", "locomo", "prefeval"] as const
export type Benchmark = (typeof benchmarks)[number]

/** Each benchmark as report titles name it. */
const names: Readonly<Record<Benchmark, string>> = {
  longmemeval: "LongMemEval",
  locomo: "LoCoMo",
  prefeval: "PrefEval"
}
export const nameOf = (benchmark: string): string => names[benchmark as Benchmark] ?? benchmark

/**
 * The data a value was published on: the benchmark, the names its file goes by (an empty list matches every file or
 * folder), its number of questions where the source reads all of them, and the source options
 * (`turns`, `topics`) it needs.
 */
export interface Data {
  readonly benchmark: Benchmark
  readonly names: ReadonlyArray<string>
  /** Names of later releases of the same questions, which the paper did not run on. */
  readonly later?: ReadonlyArray<string>
  readonly instances?: number
  readonly options?: Readonly<Record<string, string>>
}

/** A model as a paper names it, and the ids it is served under. */
export interface Named {
  readonly label: string
  readonly ids: ReadonlyArray<string>
}

/** A value another benchmark's paper publishes, in this project's metric and slice names, as a fraction. */
export interface BenchmarkValue {
  readonly data: Data
  /** The model that answered (the generator's). */
  readonly reader: Named
  /** The model that judged, for judged metrics. */
  readonly judge?: Named
  /** The paper's setting in words (how the reader was prompted, what it read). */
  readonly setting: string
  /** Generator options that reproduce the setting; a cell whose generator lacks one is shown with the difference named. */
  readonly generator?: Readonly<Record<string, string>>
  readonly slice: string
  readonly metric: string
  readonly value: number
  /** Where the paper prints it. */
  readonly source: string
}

const gpt4o: Named = { label: "GPT-4o", ids: ["gpt-4o-2024-08-06"] }
const lmeOracle: Data = { benchmark: "longmemeval", names: ["longmemeval_oracle.json"], instances: 500 }
// The paper ran on the first release; the authors' later release (cleaned histories) has the same 500 questions.
const lmeS: Data = {
  benchmark: "longmemeval",
  names: ["longmemeval_s.json"],
  later: ["longmemeval_s_cleaned.json"],
  instances: 500
}
const lme = (data: Data, reading: "direct" | "con", value: number): BenchmarkValue => ({
  data,
  reader: gpt4o,
  judge: gpt4o,
  setting: `${data === lmeS ? "the whole LongMemEval_S history" : "the evidence sessions only (oracle)"}, ${reading === "con" ? "Chain-of-Note reading" : "direct reading"}`,
  generator: { prompt: "longmemeval", reading },
  slice: "all",
  metric: "generation.longmemeval_correct",
  value,
  source: `LongMemEval (Wu et al., ICLR 2025, arXiv 2410.10813), Figure 3(b): long-context reading on LongMemEval_S and on the oracle sessions${reading === "con" ? ", with Chain-of-Note" : ""}`
})

const locomo10: Data = { benchmark: "locomo", names: ["locomo10.json"], instances: 1986 }
const locomoCategories = ["single-hop", "multi-hop", "temporal", "open-domain", "adversarial", "all"] as const
/** One row of LoCoMo's Table 2 (ACL 2024): answer F1 (%) per category, then overall. */
const locomoRow = (reader: Named, setting: string, f1: readonly [number, number, number, number, number, number]) =>
  locomoCategories.map((slice, i): BenchmarkValue => ({
    data: locomo10,
    reader,
    setting,
    slice,
    metric: "generation.locomo_f1",
    value: f1[i]! / 100,
    source:
      "LoCoMo (Maharana et al., ACL 2024, arXiv 2402.17753), Table 2 of the ACL version: question answering by base and long-context models, F1 per category"
  }))

const claude3Sonnet: Named = {
  label: "Claude 3 Sonnet",
  ids: ["anthropic.claude-3-sonnet-20240229-v1:0", "claude-3-sonnet-20240229"]
}

/**
 * PrefEval's repository README: its leaderboard on one topic (travel_restaurant), explicit
 * preferences, the generation task, zero-shot. Its "10 turns" and "300 turns" are their scripts'
 * `--inter_turn=8` and `=298` (example_scripts/run_gpt_gemini.sh), the source's `turns=8` and
 * `turns=298`; judged by Claude 3 Sonnet, their evaluator.
 */
const prefEval = (reader: Named, turns: 8 | 298, value: number): BenchmarkValue => ({
  data: { benchmark: "prefeval", names: [], options: { turns: String(turns), topics: "travel_restaurant" } },
  reader,
  judge: claude3Sonnet,
  setting: `zero-shot (no reminder), ${turns + 2} turns before the question`,
  slice: "explicit",
  metric: "generation.prefeval_followed",
  value,
  source: `PrefEval (Zhao et al., ICLR 2025, arXiv 2502.09597), the repository README's leaderboard (travel_restaurant, explicit preferences, generation task): Zero-shot (${turns + 2} Turns)`
})
const claude35Sonnet: Named = {
  label: "Claude 3.5 Sonnet",
  ids: ["anthropic.claude-3-5-sonnet-20240620-v1:0", "claude-3-5-sonnet-20240620"]
}
const o1Preview: Named = { label: "o1-preview", ids: ["o1-preview-2024-09-12"] }
// The README does not say which GPT-4o snapshot; their code names none.
const gpt4oAny: Named = {
  label: "GPT-4o (snapshot not stated)",
  ids: ["gpt-4o", "gpt-4o-2024-05-13", "gpt-4o-2024-08-06"]
}

const prefEvalValues: ReadonlyArray<BenchmarkValue> = [
  prefEval(o1Preview, 8, 0.5),
  prefEval(o1Preview, 298, 0.14),
  prefEval(gpt4oAny, 8, 0.07),
  prefEval(gpt4oAny, 298, 0.05),
  prefEval(claude3Sonnet, 8, 0.05),
  prefEval(claude3Sonnet, 298, 0.04),
  prefEval(claude35Sonnet, 8, 0.07),
  prefEval(claude35Sonnet, 298, 0.02)
]

/** Values the other benchmarks' papers (and PrefEval's README) publish, each for the data it was measured on. */
export const benchmarkValues: ReadonlyArray<BenchmarkValue> = [
  lme(lmeOracle, "direct", 0.87),
  lme(lmeOracle, "con", 0.924),
  lme(lmeS, "direct", 0.606),
  lme(lmeS, "con", 0.64),
  ...locomoRow(
    { label: "gpt-4-turbo", ids: ["gpt-4-turbo", "gpt-4-turbo-2024-04-09"] },
    "the whole conversation (128K context), the authors' QA prompt",
    [72.3, 51.5, 51.4, 38.5, 15.7, 51.6]
  ),
  ...locomoRow(
    { label: "gpt-3.5-turbo", ids: ["gpt-3.5-turbo-16k", "gpt-3.5-turbo"] },
    "the whole conversation cut to 16K tokens, the authors' QA prompt",
    [52.6, 36.7, 24.3, 24.0, 14.8, 35.9]
  ),
  // Mem0's LLM judge (the locomo-judge scorer) on the whole conversation; adversarial questions not judged.
  {
    data: locomo10,
    reader: { label: "GPT-4o-mini", ids: ["gpt-4o-mini", "gpt-4o-mini-2024-07-18"] },
    judge: { label: "GPT-4o-mini", ids: ["gpt-4o-mini", "gpt-4o-mini-2024-07-18"] },
    setting: "the whole conversation, Mem0's answer prompt; the mean of 10 runs (± 0.19)",
    slice: "all",
    metric: "generation.locomo_judge",
    value: 0.729,
    source:
      "Mem0 (Chhikara et al., arXiv 2504.19413), Table 2: the full-context baseline's LLM-as-a-Judge score J on LoCoMo"
  },
  ...prefEvalValues
]
