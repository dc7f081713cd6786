/**
 * PrefEval's error-type judge prompts, loaded at run time from the authors' repository
 * (`amazon-science/PrefEval`, CC BY-NC 4.0) at a pinned commit and never copied into this one: the
 * four prompt files of `error_type/` and the system prompt of
 * `generation_task/llm_based_evaluation_errortypes.py` (read as the Python string literal it is,
 * `Python.literalAt`), filled as their code fills them: `str.replace` of each placeholder in their
 * order, so a placeholder inside an inserted text is replaced too, as in theirs.
 *
 * Where the files come from, in order: a checkout of the pinned commit (`dir`,
 * `PREFEVAL_REFERENCE_DIR` unless a test provides {@link Reference}); the sweep's model cache (keys
 * naming the commit, the path and the hash); a download of `<url>/<commit>/<path>`
 * (`PREFEVAL_REFERENCE_URL`, else GitHub's raw files), then cached. Every file must match its
 * pinned sha256; a mismatch or a missing file is a PluginError naming the file and how to get the
 * right one. A dry run sends nothing: without a checkout or cached copies it prices the calls with
 * stand-ins of the files' sizes.
 *
 * @example
 * import { PrefEvalPrompts } from "@cupid-lab/scorers"
 * const p = yield* PrefEvalPrompts.prompts({ dir: "/src/PrefEval" })
 * PrefEvalPrompts.fill(p, "violate", { preference: "No dogs", question: "Pets?", response: "A cat." })
 */
import { Errors, type ModelCache, Python } from "@cupid-lab/core"
import * as PinnedFile from "./internal/PinnedFile.js"
import { Context, Effect, Option } from "effect"
import * as path from "node:path"

export const repository = "amazon-science/PrefEval"
export const commit = "50795054b5ff5f418d2b768a331d71e480f93331"

/** Their four checks, in the order their evaluation loop asks them (their `file_dict`). */
export const checks = ["acknow", "violate", "hallucinate", "helpful"] as const
export type Check = (typeof checks)[number]

/** The files read, their pinned sha256 and size in bytes (facts about the pinned commit). */
export const files = {
  acknow: {
    path: "error_type/check_acknowledge.txt",
    sha256: "82d7a34883a681bf089aa38f02bfd4fcc2a6cca38f82e2ae139a75714a8a7503",
    bytes: 1908
  },
  violate: {
    path: "error_type/check_violation.txt",
    sha256: "bc5f62437604e875075f861f60c89a912b9562a54e3969c3394af8ab6c6a6b16",
    bytes: 1162
  },
  hallucinate: {
    path: "error_type/check_hallucination.txt",
    sha256: "2cff58730a87653365ff8bff275a2b0f0fbfb11525b966f3ffef9d53dd30f251",
    bytes: 1206
  },
  helpful: {
    path: "error_type/check_helpful.txt",
    sha256: "5f09a40ea8f3c9f967a9868527b47daeab540c1b22717b95b10d8f5ee0e27b16",
    bytes: 1784
  },
  system: {
    path: "generation_task/llm_based_evaluation_errortypes.py",
    sha256: "2edeb28d8bf347781c9ad62c9f3426c8dfbfa0b64018d6b233a254e7407e7cbe",
    bytes: 9514
  }
} as const
export type FileName = keyof typeof files

/** Which placeholder gets which text, in the order their code replaces them. */
const replacements: Readonly<Record<Check, ReadonlyArray<readonly [string, keyof Inputs]>>> = {
  acknow: [
    ["{end_generation}", "response"],
    ["{question}", "question"]
  ],
  violate: [
    ["{preference}", "preference"],
    ["{question}", "question"],
    ["{end_generation}", "response"]
  ],
  hallucinate: [
    ["{preference}", "preference"],
    ["{assistant_restatement}", "restatement"]
  ],
  helpful: [
    ["{preference}", "preference"],
    ["{question}", "question"],
    ["{end_generation}", "response"]
  ]
}

/** What a check's prompt is filled with (`restatement`: the acknowledgement check's extracted preference). */
export interface Inputs {
  readonly preference: string
  readonly question: string
  readonly response: string
  readonly restatement?: string
}

export interface Prompts {
  readonly system: string
  readonly byCheck: Readonly<Record<Check, string>>
  /** Where they were read from, or why stand-ins replace them (dry runs). */
  readonly source: string
  readonly standIn: boolean
}

export type Locations = PinnedFile.Locations

/** The locations a sweep uses; tests provide their own. */
export class Reference extends Context.Tag("@cupid-lab/scorers/PrefEvalPrompts/Reference")<
  Reference,
  Omit<Locations, "dryRun">
>() {}

export const howToGet = `git clone https://github.com/${repository} && git -C PrefEval checkout ${commit}, then set PREFEVAL_REFERENCE_DIR=$PWD/PrefEval`

const source: PinnedFile.Source = { repository, commit, plugin: "prefeval-judge", variable: "PREFEVAL", howToGet }

export const fromEnvironment = (): Omit<Locations, "dryRun"> => PinnedFile.fromEnvironment(source)

export const locations: Effect.Effect<Omit<Locations, "dryRun">> = Effect.map(Effect.serviceOption(Reference), (o) =>
  Option.getOrElse(o, fromEnvironment)
)

const refError = (where: string, reason: string) =>
  new Errors.PluginError({ plugin: "prefeval-judge", reason: `${where}: ${reason}` })

export const cacheKey = (name: FileName): string => PinnedFile.cacheKey(source, files[name])

/** One file's text, or undefined in a dry run that has neither checkout nor cached copy. */
export const read = (
  name: FileName,
  at: Locations
): Effect.Effect<string | undefined, Errors.PluginError, ModelCache.ModelCache> =>
  Effect.map(PinnedFile.read(source, files[name], at), (got) => got?.text)

/** The one `system_prompt = <string literal>` of their evaluation script. */
export const systemPrompt = (source: string): string | { readonly error: string } => {
  const found = [...source.matchAll(/^[ \t]*system_prompt\s*=\s*/gm)]
  if (found.length !== 1) return { error: `expected one system_prompt assignment, found ${found.length}` }
  const lit = Python.literalAt(source, found[0]!.index + found[0]![0].length)
  if (typeof lit === "string") return { error: lit }
  return typeof lit.value === "string" ? lit.value : { error: "system_prompt is not a string literal" }
}

/** Their prompts from the locations given (stand-ins of the same sizes in a dry run without the files). */
export const prompts = Effect.fn("PrefEvalPrompts.prompts")(function* (
  at: Locations
): Effect.fn.Return<Prompts, Errors.PluginError, ModelCache.ModelCache> {
  const names = Object.keys(files) as ReadonlyArray<FileName>
  const texts = yield* Effect.forEach(names, (name) => read(name, at))
  const from = at.dir ?? `${repository}@${commit.slice(0, 7)}`
  if (texts.some((t) => t === undefined)) {
    const filler = (name: FileName) => {
      const n = files[name].bytes
      const fields = replacements[name === "system" ? "acknow" : name].map(([p]) => p)
      return "x".repeat(Math.max(0, n - fields.join("\n").length)) + "\n" + fields.join("\n")
    }
    const byCheck = Object.fromEntries(checks.map((c) => [c, filler(c)])) as Record<Check, string>
    return {
      system: "x".repeat(130),
      byCheck,
      source: `the judge's files of ${repository} at ${commit} are neither in a checkout nor in the cache`,
      standIn: true
    }
  }
  const text = Object.fromEntries(names.map((n, i) => [n, texts[i]!])) as Record<FileName, string>
  const system = systemPrompt(text.system)
  if (typeof system !== "string")
    return yield* refError(path.join(from, files.system.path), `cannot read the judge's system prompt: ${system.error}`)
  const byCheck = Object.fromEntries(checks.map((c) => [c, text[c]])) as Record<Check, string>
  return { system, byCheck, source: from, standIn: false }
})

/** The check's prompt as their evaluation loop fills it. */
export const fill = (p: Prompts, check: Check, inputs: Inputs): string =>
  replacements[check].reduce(
    (text, [placeholder, key]) => text.split(placeholder).join(inputs[key] ?? ""),
    p.byCheck[check]
  )
