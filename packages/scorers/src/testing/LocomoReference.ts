/**
 * Runs `tools/reference/locomo_harness.py`, which scores scripted answers with the LoCoMo authors'
 * own `task_eval/evaluation.py` and `evaluation_stats.py` (snap-research/locomo at {@link commit}),
 * so tests can compare {@link LocomoF1} with their numbers. Their repository is found at
 * `LOCOMO_REFERENCE_DIR`, else `../shared/reference/snap-research-locomo` beside this repository;
 * the harness needs Python 3.9+ with nltk, regex and numpy (`pip install nltk==3.10.3 regex numpy`).
 * When either is missing, {@link need} skips the test with one line saying what and how to get it;
 * when the checkout is there but its files are not the pinned ones, it fails the test.
 *
 * @example
 * import { LocomoReference } from "@cupid-lab/scorers/testing"
 * beforeEach(LocomoReference.need)
 * const out = await LocomoReference.run({ items: [{ prediction: "Paris", answer: "Paris", category: 4 }], words: [] })
 */
import * as AuthorsCheckout from "./AuthorsCheckout.js"

export const repository = "snap-research/locomo"
/** The commit whose `task_eval/` holds the evaluation code (its branch `code`). */
export const commit = "92286325a40764bee61f77824ddb95233b11c4d6"

const checkout = await AuthorsCheckout.make({
  name: "LoCoMo",
  variable: "LOCOMO",
  repository,
  commit,
  files: {
    "task_eval/evaluation.py": "8b6afaba566526c5e51cba7efb1e4e743dfadf563fd9f2852fe9f39c93ad6209",
    "task_eval/evaluation_stats.py": "8eeb6ab551aa2876140d08332ed47e231b3ff8cc120b6764aa650ee4158aca66"
  },
  harness: "locomo_harness.py",
  modules: ["nltk", "regex", "numpy", "tqdm"],
  install: "pip install nltk==3.10.3 regex numpy tqdm",
  howToGet: `git clone https://github.com/${repository} && git -C locomo checkout ${commit}, then set LOCOMO_REFERENCE_DIR=$PWD/locomo`
})

export const { dir, need, unavailable } = checkout

export interface Item {
  readonly prediction: string
  readonly answer: string
  readonly category: 1 | 2 | 3 | 4 | 5
}

export interface Output {
  readonly scores: ReadonlyArray<number>
  readonly categories: Readonly<Record<string, { readonly count: number; readonly sum: number; readonly mean: number }>>
  readonly overall: number | null
  readonly stems: ReadonlyArray<string>
}

export const run = (input: { readonly items: ReadonlyArray<Item>; readonly words: ReadonlyArray<string> }) =>
  checkout.run<Output>(input)
