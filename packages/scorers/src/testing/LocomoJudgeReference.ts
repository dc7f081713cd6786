/**
 * Runs `tools/reference/locomo_judge_harness.py`, which judges scripted LoCoMo answers with the
 * Mem0 evaluation's own code (mem0ai/mem0 at the commit {@link LocomoJudgePrompts} pins: their
 * `evaluate_llm_judge`, the `main` of their llm_judge.py and the `process_item` of their evals.py,
 * a stub client answering scripted replies), so tests can compare `locomo-judge` with their code.
 * Their repository is found at `MEM0_REFERENCE_DIR`, else `../shared/reference/mem0ai-mem0` beside
 * this one; the harness needs Python 3.9+ with numpy. When either is missing, {@link need} skips the
 * test with one line saying what and how to get it; when the checkout is there but its files are not
 * the pinned ones, it fails the test.
 *
 * @example
 * import { LocomoJudgeReference } from "@cupid-lab/scorers/testing"
 * beforeEach(LocomoJudgeReference.need)
 * const out = await LocomoJudgeReference.run([{ conversation: "conv-1", question: "Where?", answer: "Lisbon", ... }])
 */
import { commit, file, howToGet, repository } from "../LocomoJudgePrompts.js"
import * as AuthorsCheckout from "./AuthorsCheckout.js"

export { commit, repository }

const checkout = await AuthorsCheckout.make({
  name: "Mem0",
  variable: "MEM0",
  repository,
  commit,
  // Their code the harness runs besides the pinned file (read, never loaded by the project).
  files: {
    [file.path]: file.sha256,
    "mem0/memory/utils.py": "06992dc0fee87276e6b58d81bd87d3925fda5d5e0c5dcb7fecbd834f569cffe6",
    "evaluation/evals.py": "26ceb5a177a7523a58e8894b9b73b0b8c034a258a3c67090b75db40068dbebc9"
  },
  harness: "locomo_judge_harness.py",
  modules: ["numpy"],
  install: "pip install numpy",
  howToGet
})

export const { dir, need, unavailable } = checkout

/** One scripted question: its conversation, the gold answer, the answer to judge and the judge's reply. */
export interface Item {
  readonly conversation: string
  readonly question: string
  /** As the published file gives it: text, or a number. */
  readonly answer: string | number
  readonly response: string
  readonly category: 1 | 2 | 3 | 4 | 5
  readonly reply: string
}

/** The keyword arguments of one `client.chat.completions.create` call. */
export interface Request {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly [parameter: string]: unknown
}

export interface Output {
  /** Per item, `evaluate_llm_judge` on it: the call it made, and its score or what it raised. */
  readonly judged: ReadonlyArray<{ readonly request: Request | null; readonly score?: 0 | 1; readonly error?: string }>
  /** Their llm_judge.py main on the items whose replies their judge reads. */
  readonly main: {
    readonly asked: ReadonlyArray<string>
    readonly labels: Readonly<Record<string, 0 | 1>>
    readonly printed: ReadonlyArray<string>
    readonly means: Readonly<Record<string, number>>
  }
  /** What their main raises on all the items ("" when nothing). */
  readonly mainError: string
  /** What their evals.py keeps per question, on the same items as `main`. */
  readonly evals: ReadonlyArray<{ readonly question: string; readonly category: string; readonly llm_score: 0 | 1 }>
}

export const run = (items: ReadonlyArray<Item>) => checkout.run<Output>({ items })
