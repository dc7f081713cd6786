/**
 * Runs `tools/reference/prefeval_harness.py`, which judges scripted responses with the PrefEval
 * authors' own `llm_based_evaluation_errortypes.py` and
 * `get_preference_following_accuracy_generation_task.py` (amazon-science/PrefEval at the commit
 * {@link PrefEvalPrompts} pins, a stub Bedrock client answering scripted replies), so tests can
 * compare `prefeval-judge` with their code. Their repository is found at `PREFEVAL_REFERENCE_DIR`,
 * else `../shared/reference/amazon-science-PrefEval` beside this one; the harness needs Python 3.9+
 * with beautifulsoup4 and PyYAML (`PREFEVAL_PYTHON`, else python3). When either is missing,
 * {@link need} skips the test with one line saying what and how to get it; when the checkout is
 * there but its files are not the pinned ones, it fails the test.
 *
 * @example
 * import { PrefEvalReference } from "@cupid-lab/scorers/testing"
 * beforeEach(PrefEvalReference.need)
 * const out = await PrefEvalReference.run([{ preference: "...", question: "...", response: "...", replies: ["...", "...", "...", "..."] }])
 */
import { commit, files, howToGet, repository } from "../PrefEvalPrompts.js"
import * as AuthorsCheckout from "./AuthorsCheckout.js"

export { commit, repository }

const checkout = await AuthorsCheckout.make({
  name: "PrefEval",
  variable: "PREFEVAL",
  repository,
  commit,
  // Their files the harness runs besides the pinned ones (read, never loaded by the project).
  files: {
    ...Object.fromEntries(Object.values(files).map((f) => [f.path, f.sha256])),
    "generation_task/get_preference_following_accuracy_generation_task.py":
      "beb50d58f12c3947f62585b81eeb7727428117270b128eff8a86d0334ed72859",
    "utils/common_utils.py": "31926731576ceb9cce76809682577643d50e7674e4a1b9a9c90cdda0db0dc0b2"
  },
  harness: "prefeval_harness.py",
  modules: ["bs4", "yaml"],
  install: "pip install beautifulsoup4 pyyaml",
  howToGet
})

export const { dir, need, unavailable } = checkout

/** One scripted response and the judge's four replies, in their call order (acknow, violate, hallucinate, helpful). */
export interface Item {
  readonly preference: string
  readonly question: string
  readonly response: string
  readonly replies: readonly [string, string, string, string]
}

export interface Output {
  readonly requests: ReadonlyArray<{
    readonly modelId: string
    readonly body: {
      readonly max_tokens: number
      readonly system: string
      readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
      readonly temperature: number
    }
  }>
  readonly analyses: ReadonlyArray<Readonly<Record<string, Readonly<Record<string, string>>>>>
  readonly flags: ReadonlyArray<Readonly<Record<string, number>>>
  readonly printed: ReadonlyArray<string>
}

export const run = (items: ReadonlyArray<Item>) => checkout.run<Output>({ items })
