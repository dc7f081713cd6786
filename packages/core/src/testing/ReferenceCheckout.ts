/**
 * Where the tests find the CUPID authors' repository (`kixlab/CUPID` at the pinned commit of
 * {@link ReferencePrompts}), the one rule every test and `tools/test-extras.mjs` use:
 * 1. `CUPID_REFERENCE_DIR`, when set;
 * 2. `../shared/reference/kixlab-CUPID` beside this repository (CI's layout);
 * 3. the download cache, `<cacheRoot>/<commit>/`, which `npm test`'s pretest fills from the commit's
 *    archive (`CUPID_REFERENCE_ARCHIVE_URL`, else GitHub's codeload) when 1 and 2 are absent; only a
 *    download whose pinned files match their sha256 is kept.
 *
 * A test that needs the files calls {@link need} (or uses it as a `beforeEach` hook): when none of
 * the three exists, the test is skipped with a short note and the reason, which `vitest.setup.ts`
 * prints once at the end with the count. When the files are there but wrong (a missing file, a
 * hash that does not match), {@link need} throws: the test fails, it is never skipped.
 *
 * @example
 * import { ReferenceCheckout } from "@cupid-lab/core/testing"
 * beforeEach(ReferenceCheckout.need)
 * const prompt = fs.readFileSync(path.join(ReferenceCheckout.dir, "prompts", "evaluation", "preference_inferrer.yaml"))
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestContext } from "vitest"
import { getCurrentTest } from "vitest/suite"
import { commit, files, repository } from "../ReferencePrompts.js"
import * as Subprocess from "./Subprocess.js"

export { commit, repository }

const repo = fileURLToPath(new URL("../../../../", import.meta.url))

/** CI's layout: the authors' repository in `../shared/reference/kixlab-CUPID` beside this one. */
export const besideDir = path.resolve(repo, "..", "shared", "reference", "kixlab-CUPID")

/** Where downloads are kept: `CUPID_REFERENCE_CACHE`, else `$XDG_CACHE_HOME/cupid-lab/reference`, else `~/.cache/...`. */
export const cacheRoot = (env: NodeJS.ProcessEnv = process.env): string =>
  env["CUPID_REFERENCE_CACHE"] ||
  path.join(env["XDG_CACHE_HOME"] || path.join(os.homedir(), ".cache"), "cupid-lab", "reference")

/** The pinned commit's archive: `CUPID_REFERENCE_ARCHIVE_URL`, else GitHub's. */
export const archiveUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  env["CUPID_REFERENCE_ARCHIVE_URL"] || `https://codeload.github.com/${repository}/tar.gz/${commit}`

/** How a person gets the files by hand. */
export const howToGet = `git clone https://github.com/${repository} && git -C CUPID checkout ${commit}, then set CUPID_REFERENCE_DIR=$PWD/CUPID (or put it at ${besideDir})`

export type Resolved =
  | { readonly dir: string; readonly from: "CUPID_REFERENCE_DIR" | "beside" | "cache" }
  | { readonly dir: undefined; readonly tried: ReadonlyArray<string> }

/** The checkout the tests use, by the rule above, or the places looked at (`beside` is for tests of this rule). */
export const resolve = (env: NodeJS.ProcessEnv = process.env, beside: string = besideDir): Resolved => {
  const given = env["CUPID_REFERENCE_DIR"]
  // A directory named by hand is used as it is: when it is wrong, the tests say so by failing.
  if (given !== undefined && given !== "") return { dir: path.resolve(given), from: "CUPID_REFERENCE_DIR" }
  if (fs.existsSync(beside)) return { dir: beside, from: "beside" }
  const cached = path.join(cacheRoot(env), commit)
  if (fs.existsSync(cached)) return { dir: cached, from: "cache" }
  return { dir: undefined, tried: [beside, cached] }
}

/** What is wrong with a checkout: each pinned file that is missing or whose sha256 differs. */
export const problems = (dir: string): ReadonlyArray<string> =>
  Object.values(files).flatMap((f) => {
    const file = path.join(dir, f.path)
    if (!fs.existsSync(file)) return [`${file} is missing`]
    const actual = createHash("sha256").update(fs.readFileSync(file)).digest("hex")
    return actual === f.sha256 ? [] : [`${file} has sha256 ${actual}, not the pinned ${f.sha256}`]
  })

/** A download that arrived but is not the pinned commit: the tests must fail, not skip. */
export class MismatchError extends Error {}

/**
 * Download the pinned commit's archive from `url`, unpack it (with `tar`), check the pinned files and
 * move it to `<root>/<commit>/`. Returns that directory. Throws {@link MismatchError} when the files
 * do not match their hashes (nothing is kept), any other error when the download or unpacking failed.
 */
export const fetchArchive = async (url: string, root: string, timeoutMs = 300_000): Promise<string> => {
  const target = path.join(root, commit)
  const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) })
  if (res.status !== 200) throw new Error(`HTTP ${res.status}`)
  const body = Buffer.from(await res.arrayBuffer())
  // Nothing is made in the cache until the archive has arrived.
  fs.mkdirSync(root, { recursive: true })
  const work = fs.mkdtempSync(path.join(root, `.${commit}-`))
  try {
    const archive = path.join(work, "archive.tar.gz")
    fs.writeFileSync(archive, body)
    const tree = path.join(work, "tree")
    fs.mkdirSync(tree)
    // GitHub's archives hold one top directory, CUPID-<commit>/.
    const unpacked = await Subprocess.run("tar", ["-xzf", archive, "-C", tree, "--strip-components=1"])
    if (unpacked.code !== 0)
      throw new Error(`tar -xzf ${archive} exited ${unpacked.code ?? unpacked.signal}: ${unpacked.stderr.trim()}`)
    const wrong = problems(tree).map((p) => p.replace(`${tree}${path.sep}`, ""))
    if (wrong.length > 0)
      throw new MismatchError(
        `the archive from ${url} is not ${repository} at ${commit}: ${wrong.join("; ")}. Nothing was kept; ${howToGet}`
      )
    try {
      fs.renameSync(tree, target)
    } catch (e) {
      // Another run put it there first.
      if (!fs.existsSync(target)) throw e
    }
    return target
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

/** A failure's message with its cause (fetch's "fetch failed" says nothing by itself). */
const describe = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause = e.cause instanceof Error ? ` (${e.cause.message})` : ""
  return `${e.message}${cause}`
}

/**
 * What `npm test`'s pretest does: when no checkout is found, download the pinned commit into the
 * cache. Says what it did through `log`; returns the checkout, or undefined when it could not be had
 * (the tests that need it are then skipped). Throws {@link MismatchError} for a download that is not
 * the pinned commit.
 */
export const prepare = async (
  opts: { readonly env?: NodeJS.ProcessEnv; readonly beside?: string; readonly log?: (line: string) => void } = {}
): Promise<string | undefined> => {
  const env = opts.env ?? process.env
  const log = opts.log ?? console.log
  const found = resolve(env, opts.beside)
  if (found.dir !== undefined) return found.dir
  const url = archiveUrl(env)
  const root = cacheRoot(env)
  log(`fetching the CUPID authors' repository (${repository} at ${commit}) from ${url} into ${root}`)
  try {
    const dir = await fetchArchive(url, root)
    log(`the pinned files match their sha256; the tests read ${dir}`)
    return dir
  } catch (e) {
    if (e instanceof MismatchError) throw e
    log(`could not download it: ${describe(e)}; the tests that need it will be skipped`)
    return undefined
  }
}

/** Why the tests that need the checkout skip, or undefined when it is there (right or wrong). */
export const missing = (resolved: Resolved = resolve()): string | undefined =>
  resolved.dir === undefined
    ? `the CUPID authors' repository (${repository} at ${commit}) is not available: not at ${resolved.tried.join(", nor in the cache ")} and it could not be downloaded. Get it with: ${howToGet}`
    : undefined

const resolved = resolve()

/** The checkout the tests read (where it would be, when it is missing: tests that read it call {@link need} first). */
export const dir: string = resolved.dir ?? besideDir

let checked: ReadonlyArray<string> | undefined

/** The short note a skipped test shows; the reason is printed once at the end. */
export const note = "needs the CUPID authors' repository"

/**
 * Skip the running test with `note`, keeping `reason` in its meta for the closing summary. Works in a
 * hook or a test body, also inside an Effect (the test is marked skipped before the throw).
 */
export const skip = (note: string, reason: string, ctx?: TestContext): never => {
  const context = ctx ?? getCurrentTest()?.context
  if (context === undefined) throw new Error(reason)
  ;(context.task.meta as Record<string, unknown>)["skipReason"] = reason
  // The note vitest shows, set before the throw: inside an Effect the throw reaches vitest as another error.
  const result = context.task.result as { note?: string } | undefined
  if (result !== undefined) result.note = note
  context.skip(note)
  throw new Error(reason)
}

/**
 * In a test (or as a `beforeEach` hook): the checkout's directory when it is there and right; skips
 * the test when there is none; throws, failing the test, when its files are not the pinned ones.
 */
export const need = (ctx?: TestContext): string => {
  const why = missing(resolved)
  if (why !== undefined) return skip(note, why, ctx)
  checked ??= problems(dir)
  if (checked.length > 0)
    throw new Error(
      `the CUPID reference at ${dir} (${"from" in resolved ? resolved.from : ""}) is not ${repository} at ${commit}: ${checked.join("; ")}. ${howToGet}`
    )
  return dir
}
