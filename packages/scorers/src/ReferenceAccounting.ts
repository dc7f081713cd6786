/**
 * The authors' arithmetic, for the LLM scorers' `accounting: reference`: how their evaluation code
 * reads the decomposer's, matcher's and judge's answers and what it counts when it cannot.
 * - JSON is read as their `parse_json` reads it: the text between the first "```json" and the last
 *   "```" when there is one, else the whole answer.
 * - A matcher label scores 1, 0.5 or 0 only when it is exactly "Fully Covered", "Partially Covered"
 *   or "Not Covered"; anything else scores 0. Entries are summed however many there are.
 * - A judge score is the text after the first "### Evaluation Score" (or "### **Evaluation
 *   Score**") heading, cut at "/", ".", and a blank line, "**" removed, then `float`; decimals are
 *   thereby truncated ("7.5" is 7) and anything unreadable is 0.
 *
 * `accounting: strict` (the default) reads answers leniently instead, keeps decimals, and makes an
 * unreadable answer a recorded failure, never a score.
 *
 * @example
 * import { ReferenceAccounting } from "@cupid-lab/scorers"
 * ReferenceAccounting.judgeScore("### Evaluation Score\n\n7.5") // 7
 * ReferenceAccounting.labelScore("Partially covered") // 0 (labels must match exactly)
 */
import { Python } from "@cupid-lab/core"
import { Schema } from "effect"

export const Accounting = Schema.Literal("strict", "reference").annotations({
  description:
    "strict (default): unreadable answers are failures, decimals kept; reference: the authors' arithmetic (unreadable counts 0, judge decimals truncated, exact labels)."
})
export type Accounting = typeof Accounting.Type

/** Their `parse_json`: the value, or undefined where it raises. */
export const parseJson = (answer: string): { readonly value: unknown } | undefined => {
  const rest = answer.includes("```json") ? answer.split("```json")[1]! : undefined
  const text = Python.strip(
    rest === undefined ? answer : rest.lastIndexOf("```") < 0 ? rest : rest.slice(0, rest.lastIndexOf("```"))
  )
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

/** Their `match_label_to_score`. */
export const labelScore = (label: unknown): number =>
  label === "Fully Covered" ? 1 : label === "Partially Covered" ? 0.5 : 0

/**
 * The summed label scores of a matcher answer, or undefined when their code could not read it (then
 * both sides of the instance count 0). A general model's entries are under `results`; PrefMatcher
 * answers with the list itself.
 */
export const matcherSum = (answer: string, prefmatcher: boolean): number | undefined => {
  const parsed = parseJson(answer)
  if (parsed === undefined) return undefined
  const list = prefmatcher
    ? parsed.value
    : parsed.value !== null && typeof parsed.value === "object" && !Array.isArray(parsed.value)
      ? (parsed.value as Record<string, unknown>)["results"]
      : undefined
  if (!Array.isArray(list)) return undefined
  return list.reduce<number>(
    (n, e) => n + labelScore(e !== null && typeof e === "object" ? (e as Record<string, unknown>)["label"] : undefined),
    0
  )
}

/** A decomposer answer's checklist as their code reads it, or undefined where it raises. */
export const checklist = (answer: string): ReadonlyArray<string> | undefined => {
  const parsed = parseJson(answer)
  const list =
    parsed !== undefined && parsed.value !== null && typeof parsed.value === "object" && !Array.isArray(parsed.value)
      ? (parsed.value as Record<string, unknown>)["checklist"]
      : undefined
  return Array.isArray(list) ? list.map((x) => (typeof x === "string" ? x : JSON.stringify(x))) : undefined
}

const scoreHeadings = ["### **Evaluation Score**", "### Evaluation Score"] as const

/** The judge's score as their `process_output` and `process_generation_result` compute it. */
export const judgeScore = (answer: string): number => {
  const heading = scoreHeadings.find((h) => answer.includes(h))
  if (heading === undefined) return 0
  let score = Python.strip(Python.strip(answer.split(heading)[1]!))
  if (score.includes("/")) score = score.split("/")[0]!
  if (score.includes(".")) score = score.split(".")[0]!
  if (score.includes("\n\n")) score = score.split("\n\n")[0]!
  if (score.includes("**")) score = score.replaceAll("**", "")
  return Python.float(score) ?? 0
}
