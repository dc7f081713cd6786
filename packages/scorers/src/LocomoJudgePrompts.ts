/**
 * The prompt of the Mem0 evaluation's LLM judge for LoCoMo, loaded at run time from Mem0's
 * repository (`mem0ai/mem0`, Apache-2.0) at a pinned commit and never copied into this one: the
 * `ACCURACY_PROMPT` of `evaluation/metrics/llm_judge.py`, read as the Python string literal it is
 * (`Python.literalAt`), checked to be filled as their `evaluate_llm_judge` fills it
 * (`ACCURACY_PROMPT.format(question=..., gold_answer=..., generated_answer=...)`).
 *
 * The commit is the one at which that file took its last form (2025-07-08); the file is unchanged
 * up to the commit that moved the evaluation out of the repository (2026-06-14, into
 * mem0ai/memory-benchmarks), so the newest snapshot of mem0ai/mem0 no longer holds it.
 *
 * Where the file comes from, in order: a checkout of the pinned commit (`dir`, `MEM0_REFERENCE_DIR`
 * unless a test provides {@link Reference}); the sweep's model cache (a key naming the commit, the
 * path and the hash); a download of `<url>/<commit>/<path>` (`MEM0_REFERENCE_URL`, else GitHub's
 * raw files), then cached. It must match the sha256 pinned below; a mismatch or a missing file is a
 * PluginError naming the file and how to get the right one. A dry run sends nothing: without a
 * checkout or a cached copy it prices the judge's calls with a stand-in of the prompt's size.
 *
 * @example
 * import { LocomoJudgePrompts } from "@cupid-lab/scorers"
 * const p = yield* LocomoJudgePrompts.prompt({ dir: "/src/mem0" })
 * LocomoJudgePrompts.fill(p, { question: "Where does Ana live?", gold: "Lisbon", generated: "In Lisbon." })
 */
import { Errors, type ModelCache, Python } from "@cupid-lab/core"
import { Context, Effect, Either, Option } from "effect"
import * as PinnedFile from "./internal/PinnedFile.js"
import * as PyFormat from "./internal/PyFormat.js"

export const repository = "mem0ai/mem0"
/** The commit at which `evaluation/metrics/llm_judge.py` was last changed in mem0ai/mem0. */
export const commit = "aae5989e78a6188b3b047c104d960c9ad0927e75"
/** The file read, its pinned sha256 and size in bytes (facts about the pinned commit). */
export const file = {
  path: "evaluation/metrics/llm_judge.py",
  sha256: "ac2e242f6ea0b817ba1b229ff9e5271f6846b7b8a9aefa8a5a5a81ea58df3b3c",
  bytes: 4872
} as const

/** The prompt's fields, in the order {@link fill} takes them. */
const fields = ["question", "gold_answer", "generated_answer"] as const

export interface Prompt {
  readonly pieces: ReadonlyArray<PyFormat.Piece>
  /** Where it was read from, or why a stand-in replaces it (dry runs). */
  readonly source: string
  readonly standIn: boolean
}

export type Locations = PinnedFile.Locations

/** The locations a sweep uses; tests provide their own. */
export class Reference extends Context.Tag("@cupid-lab/scorers/LocomoJudgePrompts/Reference")<
  Reference,
  Omit<Locations, "dryRun">
>() {}

export const howToGet = `git clone https://github.com/${repository} && git -C mem0 checkout ${commit}, then set MEM0_REFERENCE_DIR=$PWD/mem0`

const source: PinnedFile.Source = { repository, commit, plugin: "locomo-judge", variable: "MEM0", howToGet }

/** `MEM0_REFERENCE_DIR` and `MEM0_REFERENCE_URL`. */
export const fromEnvironment = (): Omit<Locations, "dryRun"> => PinnedFile.fromEnvironment(source)

/** The locations of the provided {@link Reference}, else the environment's. */
export const locations: Effect.Effect<Omit<Locations, "dryRun">> = Effect.map(Effect.serviceOption(Reference), (o) =>
  Option.getOrElse(o, fromEnvironment)
)

/** The model-cache key of the pinned file. */
export const cacheKey = PinnedFile.cacheKey(source, file)

/** The file's text and where it came from, or undefined in a dry run that has neither checkout nor cached copy. */
export const read = (at: Locations) => PinnedFile.read(source, file, at)

const formatted =
  /\bACCURACY_PROMPT\.format\(\s*question\s*=\s*question\s*,\s*gold_answer\s*=\s*gold_answer\s*,\s*generated_answer\s*=\s*generated_answer\s*,?\s*\)/

/** Their `ACCURACY_PROMPT`, checked to be filled with (question, gold_answer, generated_answer). */
export const parse = (text: string, from: string): Either.Either<Prompt, string> => {
  const found = [...text.matchAll(/^ACCURACY_PROMPT\s*=\s*/gm)]
  if (found.length !== 1) return Either.left(`expected one ACCURACY_PROMPT assignment, found ${found.length}`)
  const lit = Python.literalAt(text, found[0]!.index + found[0]![0].length)
  if (typeof lit === "string") return Either.left(`ACCURACY_PROMPT: ${lit}`)
  if (typeof lit.value !== "string") return Either.left("ACCURACY_PROMPT is not a string literal")
  const literal = lit.value
  if (!formatted.test(text))
    return Either.left("ACCURACY_PROMPT is not formatted with (question=, gold_answer=, generated_answer=)")
  const pieces = PyFormat.pieces(literal, fields)
  if (typeof pieces === "string") return Either.left(`ACCURACY_PROMPT: ${pieces}`)
  const missing = fields.filter((_, i) => !pieces.includes(i))
  if (missing.length > 0) return Either.left(`ACCURACY_PROMPT has no field ${missing.join(", ")}`)
  return Either.right({ pieces, source: from, standIn: false })
}

/** The dry run's stand-in: filler of the prompt's size (some 1,600 characters, 400 estimated tokens) around the three fields. */
export const standIn = (reason: string): Prompt => ({
  pieces: [`${"xxx ".repeat(400).trim()}\nQuestion: `, 0, "\nGold answer: ", 1, "\nGenerated answer: ", 2],
  source: reason,
  standIn: true
})

/** Their prompt from the locations given (a stand-in in a dry run without the file). */
export const prompt = Effect.fn("LocomoJudgePrompts.prompt")(function* (
  at: Locations
): Effect.fn.Return<Prompt, Errors.PluginError, ModelCache.ModelCache> {
  const got = yield* read(at)
  if (got === undefined)
    return standIn(`${file.path} of ${repository} at ${commit} is neither in a checkout nor in the cache`)
  return yield* Either.match(parse(got.text, got.from), {
    onLeft: (reason) =>
      Effect.fail(
        new Errors.PluginError({
          plugin: "locomo-judge",
          reason: `${got.from}: cannot read the judge's prompt: ${reason}`
        })
      ),
    onRight: Effect.succeed
  })
})

/** The user message their `evaluate_llm_judge(question, gold_answer, generated_answer)` sends. */
export const fill = (
  p: Prompt,
  args: { readonly question: string; readonly gold: string; readonly generated: string }
): string => PyFormat.fill(p.pieces, [args.question, args.gold, args.generated])
