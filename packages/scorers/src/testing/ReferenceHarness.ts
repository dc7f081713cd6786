/**
 * Runs `tools/reference/harness.py`, which executes the CUPID authors' own evaluation code (from
 * their checkout beside the repository, `../shared/reference/kixlab-CUPID`, or
 * `CUPID_REFERENCE_DIR`) with a scripted transport, so tests can compare what the project sends and
 * scores with what the authors' code does. When Python, PyYAML or the checkout is missing, every
 * call fails with {@link unavailable}'s reason: tests that use it fail, they are never skipped.
 *
 * @example
 * import { ReferenceHarness } from "@cupid-lab/scorers/testing"
 * const out = ReferenceHarness.run("evaluate", { subject, evaluator, use_matcher: false, task: "both", instances, answers })
 */
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const repo = fileURLToPath(new URL("../../../../", import.meta.url))
export const harness = path.join(repo, "tools", "reference", "harness.py")
export const referenceDir =
  process.env.CUPID_REFERENCE_DIR || path.resolve(repo, "..", "shared", "reference", "kixlab-CUPID")

const probe = (python: string) =>
  spawnSync(python, ["-c", "import sys, yaml; sys.exit(0 if sys.version_info >= (3, 9) else 3)"], { encoding: "utf8" })

/**
 * The interpreter the harness runs with: `CUPID_PYTHON`, else the first of `python3` and Debian's
 * `/usr/bin/python3` (where `apt-get install python3-yaml` puts PyYAML) that imports yaml.
 */
export const python: string =
  [process.env.CUPID_PYTHON, "python3", "/usr/bin/python3"]
    .filter((p): p is string => p !== undefined && p !== "")
    .find((p) => probe(p).status === 0) ?? "python3"

/** Why the harness cannot run here, or undefined. */
export const unavailable: string | undefined = (() => {
  if (!fs.existsSync(path.join(referenceDir, "evaluation", "pipeline", "evaluate.py"))) {
    return `the authors' checkout is missing: clone github.com/kixlab/CUPID at commit a8560cab293ae98be4fe260689d58bddf96b51ef into ${referenceDir}`
  }
  const result = probe(python)
  if (result.error !== undefined)
    return "python3 is not installed: install Python 3.9 or later with PyYAML (Debian: apt-get install python3 python3-yaml)"
  if (result.status === 3)
    return "python3 is older than 3.9: install Python 3.9 or later with PyYAML (Debian: apt-get install python3 python3-yaml)"
  if (result.status !== 0)
    return `python3 cannot import yaml: install PyYAML (Debian: apt-get install python3-yaml, or pip install pyyaml)\n${result.stderr}`
  return undefined
})()

export interface Message {
  readonly role: string
  readonly content: string
}

/** One chat-completions call the authors' code made. */
export interface Call {
  readonly transport: string
  readonly model: string
  readonly messages: ReadonlyArray<Message>
  readonly params: Record<string, unknown>
  readonly key: string
}

export interface Evaluated {
  readonly aggregate: any
  readonly per_instance: any
  readonly files: Record<string, any>
  readonly calls: ReadonlyArray<Call>
  readonly missing: ReadonlyArray<string>
  readonly errors: Record<string, string>
}

/** Run one harness command; throws with the harness's stderr when it fails. */
export const run = (command: "render" | "evaluate" | "parse", input: unknown): any => {
  if (unavailable !== undefined) throw new Error(unavailable)
  const result = spawnSync(python, [harness, command], {
    input: JSON.stringify(input),
    encoding: "utf8",
    env: { ...process.env, CUPID_REFERENCE_DIR: referenceDir },
    maxBuffer: 64 * 1024 * 1024
  })
  if (result.status !== 0) throw new Error(`harness ${command} exited ${result.status}: ${result.stderr}`)
  return JSON.parse(result.stdout) as unknown
}

/** The key the harness answers a call by: sha256 of JSON.stringify of the {role, content} list. */
export const keyOf = (messages: ReadonlyArray<Message>): string =>
  createHash("sha256")
    .update(JSON.stringify(messages.map((m) => ({ role: m.role, content: m.content }))))
    .digest("hex")
