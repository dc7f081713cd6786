/**
 * Runs `tools/reference/longmemeval_harness.py`, which builds judge prompts with the LongMemEval
 * authors' own `get_anscheck_prompt` and runs their `evaluate_qa.py` and `print_qa_metrics.py` on
 * scripted judge replies (xiaowu0162/LongMemEval at the commit {@link LongMemEvalPrompts} pins), so
 * tests can compare `longmemeval-judge` with their code. Their repository is found at
 * `LONGMEMEVAL_REFERENCE_DIR`, else `../shared/reference/xiaowu0162-LongMemEval` beside this one;
 * the harness needs Python 3.9+ with numpy. When either is missing, {@link need} skips the test
 * with one line saying what and how to get it; when the checkout is there but its file is not the
 * pinned one, it fails the test.
 *
 * @example
 * import { LongMemEvalReference } from "@cupid-lab/scorers/testing"
 * beforeEach(LongMemEvalReference.need)
 * const out = await LongMemEvalReference.run([{ question_id: "q1", question_type: "multi-session", ... }])
 */
import { commit, file, howToGet, repository } from "../LongMemEvalPrompts.js"
import * as AuthorsCheckout from "./AuthorsCheckout.js"

export { commit, repository }

const checkout = await AuthorsCheckout.make({
  name: "LongMemEval",
  variable: "LONGMEMEVAL",
  repository,
  commit,
  // Their scripts the harness runs besides the pinned file (read, never loaded by the project).
  files: {
    [file.path]: file.sha256,
    "src/evaluation/print_qa_metrics.py": "e9283933a0cefb7a0ded7365e436ae3d1be5aac41853325e6155d83bf07607f0"
  },
  harness: "longmemeval_harness.py",
  modules: ["numpy"],
  install: "pip install numpy",
  howToGet
})

export const { dir, need, unavailable } = checkout

/** One scripted row: a question, its gold answer, the answer to judge and the judge's reply. */
export interface Item {
  readonly question_id: string
  readonly question_type: string
  readonly question: string
  /** As the published file gives it: text, or a number. */
  readonly answer: string | number
  readonly hypothesis: string
  readonly abstention: boolean
  readonly reply: string
}

export interface Output {
  readonly prompts: ReadonlyArray<string>
  readonly requests: ReadonlyArray<{
    readonly model: string
    readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
    readonly n: number
    readonly temperature: number
    readonly max_tokens: number
  }>
  readonly labels: Readonly<Record<string, boolean>>
  readonly printed: ReadonlyArray<string>
  readonly metrics: ReadonlyArray<string>
}

export const run = (items: ReadonlyArray<Item>) => checkout.run<Output>({ items })
