/**
 * A checkout of a benchmark's authors' repository at a pinned commit, for the tests that run their
 * evaluation code beside the project's (tools/reference/*_harness.py): found at `<NAME>_REFERENCE_DIR`,
 * else `../shared/reference/<owner>-<repo>` beside this repository, each file the harness runs
 * checked against its sha256, and the Python that runs the harness (`<NAME>_PYTHON`, else python3)
 * probed for the modules it needs. {@link Checkout.need} skips a test with one line when the checkout
 * or Python is missing, and fails it when the checkout is not the pinned one.
 *
 * @example
 * const locomo = await AuthorsCheckout.make({ name: "LoCoMo", variable: "LOCOMO", repository: "snap-research/locomo", ... })
 * beforeEach(locomo.need)
 */
import { ReferenceCheckout, Subprocess } from "@cupid-lab/core/testing"
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestContext } from "vitest"

export interface Spec {
  /** The benchmark's name in messages, e.g. "LoCoMo". */
  readonly name: string
  /** The environment variables' prefix: `<variable>_REFERENCE_DIR`, `<variable>_PYTHON`. */
  readonly variable: string
  readonly repository: string
  readonly commit: string
  /** Each file the harness runs, by path in the checkout, with its sha256. */
  readonly files: Readonly<Record<string, string>>
  /** The harness, under tools/reference/. */
  readonly harness: string
  /** The Python modules the harness imports, and how to install them. */
  readonly modules: ReadonlyArray<string>
  readonly install: string
  readonly howToGet: string
}

export interface Checkout {
  readonly dir: string | undefined
  readonly besideDir: string
  readonly harness: string
  readonly python: string
  /** Why the harness cannot run here, or undefined. */
  readonly unavailable: string | undefined
  /** Each pinned file that is missing or whose sha256 differs. */
  readonly problems: (checkout: string) => ReadonlyArray<string>
  /** In a test or `beforeEach`: skip when the checkout or Python is missing; fail when the checkout is not the pinned one. */
  readonly need: (ctx?: TestContext) => string
  /**
   * Run the harness (`--reference-dir <checkout>`, `input` as JSON on stdin) and parse its stdout
   * as JSON; asynchronously, since a blocking child process stalls the test worker's RPC.
   */
  readonly run: <A>(input: unknown) => Promise<A>
}

const repo = fileURLToPath(new URL("../../../../", import.meta.url))

/** The checkout of `spec`, once Python has been probed (asynchronously: importing numpy or nltk can take seconds). */
export const make = async (spec: Spec): Promise<Checkout> => {
  const besideDir = path.resolve(repo, "..", "shared", "reference", spec.repository.replace("/", "-"))
  const harness = path.join(repo, "tools", "reference", spec.harness)
  const given = process.env[`${spec.variable}_REFERENCE_DIR`]
  const dir =
    given !== undefined && given !== "" ? path.resolve(given) : fs.existsSync(besideDir) ? besideDir : undefined
  const python = process.env[`${spec.variable}_PYTHON`] || "python3"
  const problems = (checkout: string) =>
    Object.entries(spec.files).flatMap(([name, sha256]) => {
      const full = path.join(checkout, name)
      if (!fs.existsSync(full)) return [`${full} is missing`]
      const actual = createHash("sha256").update(fs.readFileSync(full)).digest("hex")
      return actual === sha256 ? [] : [`${full} has sha256 ${actual}, not the pinned ${sha256}`]
    })
  const unavailable = await (async () => {
    if (dir === undefined)
      return `the ${spec.name} authors' repository (${spec.repository} at ${spec.commit}) is not at ${spec.variable}_REFERENCE_DIR nor ${besideDir}: ${spec.howToGet}`
    const imports = ["sys", ...spec.modules].join(", ")
    const probe = await Subprocess.run(python, [
      "-c",
      `import ${imports}; sys.exit(0 if sys.version_info >= (3, 9) else 3)`
    ]).then(
      (exit) => ({ exit, error: undefined }),
      (error: Error) => ({ exit: undefined, error })
    )
    if (probe.exit === undefined || probe.exit.code !== 0)
      return `${python} cannot run the ${spec.name} harness (needs Python 3.9+ with ${spec.modules.join(", ")}: ${spec.install}, or set ${spec.variable}_PYTHON): ${probe.error?.message ?? probe.exit?.stderr.trim().split("\n").at(-1) ?? ""}`
    return undefined
  })()
  let checked: ReadonlyArray<string> | undefined
  const need = (ctx?: TestContext): string => {
    if (unavailable !== undefined)
      ReferenceCheckout.skip(`needs the ${spec.name} authors' repository`, unavailable, ctx)
    checked ??= problems(dir!)
    if (checked.length > 0)
      throw new Error(`${dir} is not ${spec.repository} at ${spec.commit}: ${checked.join("; ")}. ${spec.howToGet}`)
    return dir!
  }
  const run = <A>(input: unknown) =>
    new Promise<A>((resolve, reject) => {
      const child = execFile(
        python,
        [harness, "--reference-dir", need()],
        { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          error === null ? resolve(JSON.parse(stdout) as A) : reject(new Error(`${error.message}\n${stderr}`))
      )
      child.stdin!.end(JSON.stringify(input))
    })
  return { dir, besideDir, harness, python, unavailable, problems, need, run }
}
