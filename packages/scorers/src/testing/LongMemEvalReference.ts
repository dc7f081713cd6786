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
import { ReferenceCheckout } from "@cupid-lab/core/testing"
import { execFile, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestContext } from "vitest"
import { commit, file, howToGet, repository } from "../LongMemEvalPrompts.js"

export { commit, repository }

const repo = fileURLToPath(new URL("../../../../", import.meta.url))
export const harness = path.join(repo, "tools", "reference", "longmemeval_harness.py")
export const besideDir = path.resolve(repo, "..", "shared", "reference", "xiaowu0162-LongMemEval")
/** Their scripts the harness runs besides the pinned file (read, never loaded by the project). */
export const scripts: Readonly<Record<string, string>> = {
  [file.path]: file.sha256,
  "src/evaluation/print_qa_metrics.py": "e9283933a0cefb7a0ded7365e436ae3d1be5aac41853325e6155d83bf07607f0"
}

const given = process.env["LONGMEMEVAL_REFERENCE_DIR"]
export const dir: string | undefined =
  given !== undefined && given !== "" ? path.resolve(given) : fs.existsSync(besideDir) ? besideDir : undefined

/** Each file the harness runs that is missing or whose sha256 differs. */
export const problems = (checkout: string): ReadonlyArray<string> =>
  Object.entries(scripts).flatMap(([name, sha256]) => {
    const full = path.join(checkout, name)
    if (!fs.existsSync(full)) return [`${full} is missing`]
    const actual = createHash("sha256").update(fs.readFileSync(full)).digest("hex")
    return actual === sha256 ? [] : [`${full} has sha256 ${actual}, not the pinned ${sha256}`]
  })

export const python = process.env["LONGMEMEVAL_PYTHON"] || "python3"

/** Why the harness cannot run here, or undefined. */
export const unavailable: string | undefined = (() => {
  if (dir === undefined)
    return `the LongMemEval authors' repository (${repository} at ${commit}) is not at LONGMEMEVAL_REFERENCE_DIR nor ${besideDir}: ${howToGet}`
  const probe = spawnSync(python, ["-c", "import sys, numpy; sys.exit(0 if sys.version_info >= (3, 9) else 3)"], {
    encoding: "utf8"
  })
  if (probe.error !== undefined || probe.status !== 0)
    return `${python} cannot run the LongMemEval harness (needs Python 3.9+ with numpy: pip install numpy): ${probe.error?.message ?? probe.stderr.trim().split("\n").at(-1) ?? ""}`
  return undefined
})()

let checked: ReadonlyArray<string> | undefined

/** In a test or `beforeEach`: skip when the checkout or Python is missing; fail when the checkout is not the pinned one. */
export const need = (ctx?: TestContext): string => {
  if (unavailable !== undefined) ReferenceCheckout.skip("needs the LongMemEval authors' repository", unavailable, ctx)
  checked ??= problems(dir!)
  if (checked.length > 0)
    throw new Error(`${dir} is not ${repository} at ${commit}: ${checked.join("; ")}. ${howToGet}`)
  return dir!
}

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

/** Run the harness (asynchronously: a blocking child process stalls the test worker's RPC). */
export const run = (items: ReadonlyArray<Item>) =>
  new Promise<Output>((resolve, reject) => {
    const child = execFile(
      python,
      [harness, "--reference-dir", dir!],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error === null ? resolve(JSON.parse(stdout) as Output) : reject(new Error(`${error.message}\n${stderr}`))
    )
    child.stdin!.end(JSON.stringify({ items }))
  })
