/**
 * Runs `tools/reference/harness.py`, which executes the CUPID authors' own evaluation code (from
 * their checkout as `ReferenceCheckout` finds it: `CUPID_REFERENCE_DIR`, else
 * `../shared/reference/kixlab-CUPID` beside the repository, else the copy `npm test`'s pretest
 * downloaded) with a scripted transport, so tests can compare what the project sends and scores with
 * what the authors' code does. When the checkout or Python with PyYAML is missing, {@link run} and
 * {@link need} skip the running test saying what is missing and how to get it; when the checkout is
 * there but its files are not the pinned ones, they throw and the test fails.
 *
 * @example
 * import { ReferenceHarness } from "@cupid-lab/scorers/testing"
 * const out = await ReferenceHarness.run("evaluate", { subject, evaluator, use_matcher: false, task: "both", instances, answers })
 */
import { ReferenceCheckout, Subprocess } from "@cupid-lab/core/testing"
import { createHash } from "node:crypto"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestContext } from "vitest"

const repo = fileURLToPath(new URL("../../../../", import.meta.url))
export const harness = path.join(repo, "tools", "reference", "harness.py")
export const referenceDir = ReferenceCheckout.dir

/** How `python` ran a check of its version and PyYAML, or why it could not be started. */
const probe = (python: string): Promise<{ readonly exit: Subprocess.Exit } | { readonly error: Error }> =>
  Subprocess.run(python, ["-c", "import sys, yaml; sys.exit(0 if sys.version_info >= (3, 9) else 3)"]).then(
    (exit) => ({ exit }),
    (error: Error) => ({ error })
  )

/**
 * The interpreter the harness runs with: `CUPID_PYTHON`, else the first of `python3` and Debian's
 * `/usr/bin/python3` (where `apt-get install python3-yaml` puts PyYAML) that imports yaml.
 */
export const python: string = await (async () => {
  for (const p of [process.env.CUPID_PYTHON, "python3", "/usr/bin/python3"])
    if (p !== undefined && p !== "") {
      const result = await probe(p)
      if ("exit" in result && result.exit.code === 0) return p
    }
  return "python3"
})()

/** Why Python cannot run the harness here, or undefined. */
export const pythonMissing: string | undefined = await (async () => {
  const result = await probe(python)
  if ("error" in result)
    return "python3 is not installed: install Python 3.9 or later with PyYAML (Debian: apt-get install python3 python3-yaml)"
  if (result.exit.code === 3)
    return "python3 is older than 3.9: install Python 3.9 or later with PyYAML (Debian: apt-get install python3 python3-yaml)"
  if (result.exit.code !== 0)
    return `python3 cannot import yaml: install PyYAML (Debian: apt-get install python3-yaml, or pip install pyyaml): ${result.exit.stderr.trim().split("\n").at(-1) ?? ""}`
  return undefined
})()

/** Why the harness cannot run here (no checkout, or no Python with PyYAML), or undefined. */
export const unavailable: string | undefined = ReferenceCheckout.missing() ?? pythonMissing

/**
 * In a test (or as a `beforeEach` hook): skips the test when the checkout or Python with PyYAML is
 * missing; fails it when the checkout's files are not the pinned ones.
 */
export const need = (ctx?: TestContext): void => {
  ReferenceCheckout.need(ctx)
  if (pythonMissing !== undefined) ReferenceCheckout.skip("needs python3 with PyYAML", pythonMissing, ctx)
}

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

/**
 * Run one harness command (without blocking the test worker); rejects with the harness's stderr when
 * it fails. Skips (or fails) the running test at once, as {@link need} does, when it cannot run.
 */
export const run = (command: "render" | "evaluate" | "parse", input: unknown): Promise<any> => {
  need()
  return Subprocess.run(python, [harness, command], {
    input: JSON.stringify(input),
    env: { ...process.env, CUPID_REFERENCE_DIR: referenceDir }
  }).then((result) => {
    if (result.code !== 0) throw new Error(`harness ${command} exited ${result.code}: ${result.stderr}`)
    return JSON.parse(result.stdout) as unknown
  })
}

/** The key the harness answers a call by: sha256 of JSON.stringify of the {role, content} list. */
export const keyOf = (messages: ReadonlyArray<Message>): string =>
  createHash("sha256")
    .update(JSON.stringify(messages.map((m) => ({ role: m.role, content: m.content }))))
    .digest("hex")
