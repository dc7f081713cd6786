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
