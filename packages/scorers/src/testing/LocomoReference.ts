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
import { ReferenceCheckout } from "@cupid-lab/core/testing"
import { execFile, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestContext } from "vitest"

export const repository = "snap-research/locomo"
/** The commit whose `task_eval/` holds the evaluation code (its branch `code`). */
export const commit = "92286325a40764bee61f77824ddb95233b11c4d6"
export const files: Readonly<Record<string, string>> = {
  "task_eval/evaluation.py": "8b6afaba566526c5e51cba7efb1e4e743dfadf563fd9f2852fe9f39c93ad6209",
  "task_eval/evaluation_stats.py": "8eeb6ab551aa2876140d08332ed47e231b3ff8cc120b6764aa650ee4158aca66"
}

const repo = fileURLToPath(new URL("../../../../", import.meta.url))
export const harness = path.join(repo, "tools", "reference", "locomo_harness.py")
export const besideDir = path.resolve(repo, "..", "shared", "reference", "snap-research-locomo")
const howToGet = `git clone https://github.com/${repository} && git -C locomo checkout ${commit}, then set LOCOMO_REFERENCE_DIR=$PWD/locomo`

const given = process.env["LOCOMO_REFERENCE_DIR"]
export const dir: string | undefined =
  given !== undefined && given !== "" ? path.resolve(given) : fs.existsSync(besideDir) ? besideDir : undefined

/** Each pinned file that is missing or whose sha256 differs. */
export const problems = (checkout: string): ReadonlyArray<string> =>
  Object.entries(files).flatMap(([file, sha256]) => {
    const full = path.join(checkout, file)
    if (!fs.existsSync(full)) return [`${full} is missing`]
    const actual = createHash("sha256").update(fs.readFileSync(full)).digest("hex")
    return actual === sha256 ? [] : [`${full} has sha256 ${actual}, not the pinned ${sha256}`]
  })

export const python = process.env["LOCOMO_PYTHON"] || "python3"

const probe = () =>
  spawnSync(python, ["-c", "import sys, nltk, regex, numpy, tqdm; sys.exit(0 if sys.version_info >= (3, 9) else 3)"], {
    encoding: "utf8"
  })

/** Why the harness cannot run here, or undefined. */
export const unavailable: string | undefined = (() => {
  if (dir === undefined)
    return `the LoCoMo authors' repository (${repository} at ${commit}) is not at LOCOMO_REFERENCE_DIR nor ${besideDir}: ${howToGet}`
  const result = probe()
  if (result.error !== undefined || result.status !== 0)
    return `${python} cannot run the LoCoMo harness (needs Python 3.9+ with nltk, regex, numpy, tqdm: pip install nltk==3.10.3 regex numpy): ${result.error?.message ?? result.stderr.trim().split("\n").at(-1) ?? ""}`
  return undefined
})()

let checked: ReadonlyArray<string> | undefined

/** In a test or `beforeEach`: skip when the checkout or Python is missing; fail when the checkout is not the pinned one. */
export const need = (ctx?: TestContext): void => {
  if (unavailable !== undefined)
    ReferenceCheckout.skip("needs the LoCoMo authors' repository and nltk", unavailable, ctx)
  checked ??= problems(dir!)
  if (checked.length > 0)
    throw new Error(`${dir} is not ${repository} at ${commit}: ${checked.join("; ")}. ${howToGet}`)
}

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

/** Run the harness (asynchronously: a blocking child process stalls the test worker's RPC). */
export const run = (input: { readonly items: ReadonlyArray<Item>; readonly words: ReadonlyArray<string> }) =>
  new Promise<Output>((resolve, reject) => {
    const child = execFile(
      python,
      [harness, "--reference-dir", dir!],
      { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        error === null ? resolve(JSON.parse(stdout) as Output) : reject(new Error(`${error.message}\n${stderr}`))
    )
    child.stdin!.end(JSON.stringify(input))
  })
