/**
 * LongMemEval's QA judge prompts, loaded at run time from the authors' repository
 * (`xiaowu0162/LongMemEval`, MIT) at a pinned commit and never copied into this one: the five
 * templates of `get_anscheck_prompt` in `src/evaluation/evaluate_qa.py`, read as the Python string
 * literals they are (`Python.literalAt`), each with the question types its branch tests for, and
 * filled as their `template.format(question, answer, response)` fills them.
 *
 * Where the file comes from, in order:
 * 1. a checkout of the pinned commit: `dir` (`LONGMEMEVAL_REFERENCE_DIR` unless a test provides
 *    {@link Reference});
 * 2. the sweep's model cache, which keeps an earlier download under a key naming the commit, the
 *    path and the file's hash;
 * 3. a download of `<url>/<commit>/<path>` (`LONGMEMEVAL_REFERENCE_URL`, else GitHub's raw files),
 *    then kept in that cache.
 * The file must match the sha256 pinned below whichever way it came; a mismatch or a missing file
 * is a PluginError naming the file, the hash and how to get the right one. A dry run sends nothing:
 * without 1 or 2 it prices the judge's calls with stand-in templates of the same size.
 *
 * @example
 * import { LongMemEvalPrompts } from "@cupid-lab/scorers"
 * const templates = yield* LongMemEvalPrompts.templates({ dir: "/src/LongMemEval" })
 * LongMemEvalPrompts.prompt(templates, "knowledge-update", "Where do I work?", "At the library", "The library", false)
 */
import { Errors, type ModelCache, Python } from "@cupid-lab/core"
import * as PinnedFile from "./internal/PinnedFile.js"
import * as PyFormat from "./internal/PyFormat.js"
import { Context, Effect, Either, Option } from "effect"

export const repository = "xiaowu0162/LongMemEval"
export const commit = "9e0b455f4ef0e2ab8f2e582289761153549043fc"
/** The file read, its pinned sha256 and size in bytes (facts about the pinned commit). */
export const file = {
  path: "src/evaluation/evaluate_qa.py",
  sha256: "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251",
  bytes: 7436
} as const

/** LongMemEval's question types, as the reader gives them as instance types. */
export const tasks = [
  "single-session-user",
  "single-session-assistant",
  "single-session-preference",
  "temporal-reasoning",
  "knowledge-update",
  "multi-session"
] as const
export type Task = (typeof tasks)[number]
export const isTask = (type: string): type is Task => (tasks as ReadonlyArray<string>).includes(type)

/** Literal text, or the index of a positional `str.format` argument. */
export type Piece = PyFormat.Piece

/** The judge's templates: one per question type, and the one for abstention questions. */
export interface Templates {
  readonly byTask: Readonly<Record<Task, ReadonlyArray<Piece>>>
  readonly abstention: ReadonlyArray<Piece>
  /** Where they were read from, or why stand-ins replace them (dry runs). */
  readonly source: string
  readonly standIn: boolean
}

export type Locations = PinnedFile.Locations

/** The locations a sweep uses; tests provide their own. */
export class Reference extends Context.Tag("@cupid-lab/scorers/LongMemEvalPrompts/Reference")<
  Reference,
  Omit<Locations, "dryRun">
>() {}

export const howToGet = `git clone https://github.com/${repository} && git -C LongMemEval checkout ${commit}, then set LONGMEMEVAL_REFERENCE_DIR=$PWD/LongMemEval`

const source: PinnedFile.Source = { repository, commit, plugin: "longmemeval-judge", variable: "LONGMEMEVAL", howToGet }

/** `LONGMEMEVAL_REFERENCE_DIR` and `LONGMEMEVAL_REFERENCE_URL`. */
export const fromEnvironment = (): Omit<Locations, "dryRun"> => PinnedFile.fromEnvironment(source)

const refError = (where: string, reason: string) =>
  new Errors.PluginError({ plugin: "longmemeval-judge", reason: `${where}: ${reason}` })

/** The model-cache key of the pinned file. */
export const cacheKey = PinnedFile.cacheKey(source, file)

/** The file's text and where it came from, or undefined in a dry run that has neither checkout nor cached copy. */
export const read = (at: Locations) => PinnedFile.read(source, file, at)

/** `str.format`'s fields: `{}` (numbered in turn) or `{0}`; `{{` and `}}` are braces. */
export const formatPieces = (template: string): ReadonlyArray<Piece> | string => PyFormat.pieces(template)

const condition = /^\s*(?:(?:el)?if\s+task\s+(?:in|==)\s+(.+):|else:)\s*$/
const formatted = /^\s*prompt\s*=\s*template\.format\(\s*question\s*,\s*answer\s*,\s*response\s*\)\s*$/

/**
 * The templates of `get_anscheck_prompt`: each `template = "..."` literal, with the question types
 * named by the `if task in [...]` / `elif task == '...'` line above it (an `else:` there is the
 * abstention branch), checked to be formatted with (question, answer, response).
 */
export const parse = (source: string, from: string): Either.Either<Templates, string> => {
  const start = source.indexOf("def get_anscheck_prompt(")
  if (start < 0) return Either.left("no function get_anscheck_prompt")
  const rest = source.slice(start + 1)
  const end = rest.search(/\n(?=\S)/)
  const body = source.slice(start, end < 0 ? source.length : start + 1 + end)
  const byTask: Partial<Record<Task, ReadonlyArray<Piece>>> = {}
  let abstention: ReadonlyArray<Piece> | undefined
  for (const m of body.matchAll(/^[ \t]*template\s*=\s*/gm)) {
    const line =
      body
        .slice(0, m.index)
        .split("\n")
        .slice(0, -1)
        .reverse()
        .find((l) => l.trim() !== "") ?? ""
    const cond = condition.exec(line)
    if (cond === null) return Either.left(`no condition line above the template at offset ${m.index}: ${line.trim()}`)
    const lit = Python.literalAt(body, m.index + m[0].length)
    if (typeof lit === "string" || typeof lit.value !== "string")
      return Either.left(`the template at offset ${m.index} is not a string literal`)
    // `end` may be past the line's end: adjacent literals are looked for across lines.
    const after =
      body
        .slice(lit.end)
        .split("\n")
        .find((l) => l.trim() !== "") ?? ""
    if (!formatted.test(after))
      return Either.left(`the template at offset ${m.index} is not formatted with (question, answer, response)`)
    const pieces = formatPieces(lit.value)
    if (typeof pieces === "string") return Either.left(`the template at offset ${m.index}: ${pieces}`)
    const fields = pieces.filter((p) => typeof p === "number")
    if (fields.length !== 3 || fields.some((f) => f > 2))
      return Either.left(
        `the template at offset ${m.index} does not have the three fields (question, answer, response)`
      )
    if (cond[1] === undefined) {
      if (abstention !== undefined) return Either.left("two templates under an else: branch")
      abstention = pieces
      continue
    }
    const named = Python.literalAt(cond[1], 0)
    const types = typeof named === "string" ? [] : Array.isArray(named.value) ? named.value : [named.value]
    for (const t of types) {
      if (typeof t !== "string" || !isTask(t)) return Either.left(`unknown question type ${JSON.stringify(t)}`)
      byTask[t] = pieces
    }
  }
  const missing = tasks.filter((t) => byTask[t] === undefined)
  if (missing.length > 0) return Either.left(`no template for ${missing.join(", ")}`)
  if (abstention === undefined) return Either.left("no abstention template")
  return Either.right({
    byTask: byTask as Record<Task, ReadonlyArray<Piece>>,
    abstention,
    source: from,
    standIn: false
  })
}

/** Dry-run stand-ins: filler of about a real template's size (some 600 characters, 100 words) around the three fields. */
export const standIns = (reason: string): Templates => {
  const filler = "xxxxx ".repeat(100).trim()
  const one: ReadonlyArray<Piece> = [`${filler}\n\n`, 0, "\n\n", 1, "\n\n", 2]
  const byTask = Object.fromEntries(tasks.map((t) => [t, one])) as Record<Task, ReadonlyArray<Piece>>
  return { byTask, abstention: one, source: reason, standIn: true }
}

/** The authors' templates from the locations given (stand-ins in a dry run without the file). */
export const templates = Effect.fn("LongMemEvalPrompts.templates")(function* (
  at: Locations
): Effect.fn.Return<Templates, Errors.PluginError, ModelCache.ModelCache> {
  const got = yield* read(at)
  if (got === undefined)
    return standIns(`${file.path} of ${repository} at ${commit} is neither in a checkout nor in the cache`)
  return yield* Either.match(parse(got.text, got.from), {
    onLeft: (reason) => Effect.fail(refError(got.from, `cannot read the judge's templates: ${reason}`)),
    onRight: Effect.succeed
  })
})

/** The locations of the provided {@link Reference}, else the environment's. */
export const locations: Effect.Effect<Omit<Locations, "dryRun">> = Effect.map(Effect.serviceOption(Reference), (o) =>
  Option.getOrElse(o, fromEnvironment)
)

/** `template.format(*args)` for string arguments. */
export const fill: (pieces: ReadonlyArray<Piece>, args: ReadonlyArray<string>) => string = PyFormat.fill

/** The prompt `get_anscheck_prompt(task, question, answer, response, abstention)` returns. */
export const prompt = (
  t: Templates,
  task: Task,
  question: string,
  answer: string,
  response: string,
  abstention: boolean
): string => fill(abstention ? t.abstention : t.byTask[task], [question, answer, response])
