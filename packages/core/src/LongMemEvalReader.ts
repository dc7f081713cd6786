/**
 * LongMemEval's reader as its authors run it: the prompt their `prepare_prompt` in
 * `src/generation/run_generation.py` (xiaowu0162/LongMemEval, MIT) builds for a question read from
 * its whole history (retriever types `orig-session` and `oracle-session`), and the settings of
 * their chat call. Their text is loaded at run time from that file at a pinned commit and
 * hash-checked (`PinnedFile`: `LONGMEMEVAL_REFERENCE_DIR`, else the model cache, else a download),
 * never copied into this repository: the answer templates of the two reading methods (`direct`,
 * their `--cot false`; `con`, `--cot true`), the session header, the JSON format's prefix and the
 * `nl` format's turn line, each read as the Python string literal it is (`Python.literalAt`). A
 * dry run without the file uses stand-ins of the same size.
 *
 * What is this project's: the published dates rebuilt from the domain's `YYYY-MM-DDTHH:MM`
 * ({@link publishedDate}) and the sessions in chronological order (their sort by the date string
 * gives the same order). Their truncation of the history to 126,200 o200k tokens
 * (`128000 - max_tokens - 1000`) is not done: this project has no o200k tokenizer (see docs/longmemeval.md).
 *
 * @example
 * import { LongMemEvalReader } from "@cupid-lab/core"
 * const t = yield* LongMemEvalReader.templates(LongMemEvalReader.fromEnvironment())
 * LongMemEvalReader.prompt(t, { sessions, question: "Where do I work?", date: "2023-05-20T02:21", reading: "con", historyFormat: "json" })
 */
import { Effect, Either } from "effect"
import type { Message } from "./Domain.js"
import { PluginError } from "./Errors.js"
import type * as ModelCache from "./ModelCache.js"
import * as PinnedFile from "./PinnedFile.js"
import * as Python from "./Python.js"

export const repository = "xiaowu0162/LongMemEval"
export const commit = "9e0b455f4ef0e2ab8f2e582289761153549043fc"
/** The file read, its pinned sha256 and size in bytes (facts about the pinned commit). */
export const file = {
  path: "src/generation/run_generation.py",
  sha256: "4f1eb3c69d7ad40f04065b9c0bc86f6582441018fc6ff751d162d66c95baf672",
  bytes: 21608
} as const

/** `direct` is their `--cot false`, `con` their `--cot true` (run_generation.sh's default, the README's advice). */
export const readings = ["direct", "con"] as const
export type Reading = (typeof readings)[number]
export const historyFormats = ["json", "nl"] as const
export type HistoryFormat = (typeof historyFormats)[number]

/**
 * Their `max_tokens`, sent with `temperature` 0 and `n` 1: `gen_length`, which is
 * `500 if not args.cot else 800` with `args.cot` the string "true" or "false", always truthy, so
 * 800 for both reading methods.
 */
export const maxTokens = 800
/** Their `model2maxlength` for gpt-4o; the history is cut at `contextLength - gen_length - 1000` tokens (126,200). */
export const contextLength = 128_000
export const historyTokenLimit = contextLength - maxTokens - 1000

export const howToGet = `git clone https://github.com/${repository} && git -C LongMemEval checkout ${commit}, then set LONGMEMEVAL_REFERENCE_DIR=$PWD/LongMemEval`

const source: PinnedFile.Source = { repository, commit, plugin: "qa", variable: "LONGMEMEVAL", howToGet }

/** `LONGMEMEVAL_REFERENCE_DIR` and `LONGMEMEVAL_REFERENCE_URL`. */
export const fromEnvironment = (): Omit<PinnedFile.Locations, "dryRun"> => PinnedFile.fromEnvironment(source)

/** The model-cache key of the pinned file. */
export const cacheKey = PinnedFile.cacheKey(source, file)

/** A `str.format` template whose fields are all `{}`: the text around them (one more piece than fields). */
export type Parts = ReadonlyArray<string>

export interface Templates {
  /** Formatted with (history, question date, question). */
  readonly answer: Readonly<Record<Reading, Parts>>
  /** Formatted with (session number, session date, session text). */
  readonly session: Parts
  /** What precedes `json.dumps(turns)` in the `json` format. */
  readonly jsonPrefix: string
  /** Formatted with (role, stripped content), once per turn, in the `nl` format. */
  readonly nlTurn: Parts
  /** Where they were read from, or why stand-ins replace them (dry runs). */
  readonly source: string
  readonly standIn: boolean
}

const parts = (template: string, fields: number): Parts | string => {
  const pieces = template.split("{}")
  if (pieces.some((p) => p.includes("{") || p.includes("}")))
    return "has a format field other than {} or an escaped brace"
  return pieces.length === fields + 1 ? pieces : `has ${pieces.length - 1} fields, not ${fields}`
}

const lineBefore = (text: string, at: number): string =>
  text
    .slice(0, at)
    .split("\n")
    .slice(0, -1)
    .reverse()
    .find((l) => l.trim() !== "")
    ?.trim() ?? ""

/** Each string literal that follows `prefix` on a line and is followed by `suffix` there, with where it starts. */
const literals = (
  text: string,
  prefix: string,
  suffix: string
): ReadonlyArray<{ readonly value: string; readonly at: number }> => {
  const out: Array<{ value: string; at: number }> = []
  for (let at = text.indexOf(prefix); at >= 0; at = text.indexOf(prefix, at + 1)) {
    const lit = Python.literalAt(text, at + prefix.length)
    if (typeof lit === "string" || typeof lit.value !== "string") continue
    // `literalAt` stops after the whitespace that follows a literal, newlines included.
    let end = lit.end
    while (end > 0 && /\s/.test(text[end - 1]!)) end--
    if (text.slice(end).split("\n")[0]!.trim() === suffix) out.push({ value: lit.value, at })
  }
  return out
}

/**
 * The templates of `prepare_prompt`: the two answer templates of its plain branch (no key
 * expansion), under `if cot:` and `else:`; the session header of the session-level retriever
 * types; the `json` format's prefix and the `nl` format's turn line.
 */
export const parse = (text: string, from: string): Either.Either<Templates, string> => {
  const start = text.indexOf("def prepare_prompt(")
  if (start < 0) return Either.left("no function prepare_prompt")
  const end = text.indexOf("\ndef ", start + 1)
  const body = text.slice(start, end < 0 ? text.length : end)
  const plain = body.indexOf("if merge_key_expansion_into_value is None or merge_key_expansion_into_value == 'none':")
  if (plain < 0) return Either.left("no branch without key expansion")
  const [con, direct] = literals(body.slice(plain), "answer_prompt_template = ", "")
  if (con === undefined || direct === undefined) return Either.left("no answer templates in the plain branch")
  const after = body.slice(plain)
  if (lineBefore(after, con.at) !== "if cot:" || lineBefore(after, direct.at) !== "else:")
    return Either.left("the plain branch's answer templates are not under `if cot:` and `else:`")
  const session = literals(body, "history_string += ", ".format(i+1, chunk_date, sess_string)").find(
    (l) => lineBefore(body, l.at) === 'if retriever_type in ["orig-session", "flat-session", "oracle-session"]:'
  )
  if (session === undefined) return Either.left("no session header for the session-level retriever types")
  const json = literals(body, "sess_string = ", "+ json.dumps(chunk_entry)")
  if (json.length !== 1) return Either.left("no single `sess_string = ... + json.dumps(chunk_entry)`")
  const nl = literals(body, "sess_string += ", ".format(turn_entry['role'], turn_entry['content'].strip())").find(
    (l) => lineBefore(body, l.at) === "for turn_entry in chunk_entry:"
  )
  if (nl === undefined) return Either.left("no turn line of the nl format")
  const checked = [
    ["the con answer template", parts(con.value, 3)],
    ["the direct answer template", parts(direct.value, 3)],
    ["the session header", parts(session.value, 3)],
    ["the nl turn line", parts(nl.value, 2)]
  ] as const
  for (const [what, p] of checked) if (typeof p === "string") return Either.left(`${what} ${p}`)
  const [conParts, directParts, sessionParts, nlParts] = checked.map(([, p]) => p as Parts)
  return Either.right({
    answer: { con: conParts!, direct: directParts! },
    session: sessionParts!,
    jsonPrefix: json[0]!.value,
    nlTurn: nlParts!,
    source: from,
    standIn: false
  })
}

/** Dry-run stand-ins: filler of the real templates' sizes (333 and 184 characters with their fields, the header 54). */
export const standIns = (reason: string): Templates => {
  const filler = (n: number) => "x".repeat(n)
  return {
    answer: { con: [filler(300), "\n", "\n", filler(25)], direct: [filler(160), "\n", "\n", filler(16)] },
    session: [filler(10), "\n", filler(36), "\n"],
    jsonPrefix: "\n",
    nlTurn: ["\n\n", ": ", ""],
    source: reason,
    standIn: true
  }
}

/** The authors' templates from the locations given (stand-ins in a dry run without the file). */
export const templates = (at: PinnedFile.Locations): Effect.Effect<Templates, PluginError, ModelCache.ModelCache> =>
  Effect.gen(function* () {
    const got = yield* PinnedFile.read(source, file, at)
    if (got === undefined)
      return standIns(`${file.path} of ${repository} at ${commit} is neither in a checkout nor in the cache`)
    return yield* Either.match(parse(got.text, got.from), {
      onLeft: (reason) =>
        Effect.fail(
          new PluginError({ plugin: "qa", reason: `${got.from}: cannot read the reader's prompt: ${reason}` })
        ),
      onRight: Effect.succeed
    })
  })

/** `template.format(*args)`. */
export const fill = (template: Parts, args: ReadonlyArray<string>): string =>
  template.map((p, i) => (i === 0 ? p : `${args[i - 1] ?? ""}${p}`)).join("")

const weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]

/** The domain's `YYYY-MM-DDTHH:MM` as the published files write it: `2023/05/20 (Sat) 02:21`. */
export const publishedDate = (date: string): string => {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(date)
  if (m === null) return date
  const day = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).getUTCDay()
  return `${m[1]}/${m[2]}/${m[3]} (${weekdays[day]}) ${m[4]}:${m[5]}`
}

/** A session as their reader shows it: its date (the domain's form) and its turns. */
export interface Session {
  readonly date: string
  readonly dialogue: ReadonlyArray<Message>
}

/** One session's text: its turns as `json.dumps` prints them (role and content, no `has_answer`), or as lines. */
export const sessionText = (t: Templates, dialogue: ReadonlyArray<Message>, format: HistoryFormat): string =>
  format === "json"
    ? t.jsonPrefix +
      Python.jsonDumps(
        dialogue.map((m) => ({ role: m.role, content: m.content })),
        null
      )
    : dialogue.map((m) => fill(t.nlTurn, [m.role, Python.strip(m.content)])).join("")

/** The history string, sessions in the order given (chronological), numbered from 1. */
export const history = (t: Templates, sessions: ReadonlyArray<Session>, format: HistoryFormat): string =>
  sessions
    .map((s, i) => fill(t.session, [String(i + 1), publishedDate(s.date), sessionText(t, s.dialogue, format)]))
    .join("")

export interface Question {
  /** Chronological. */
  readonly sessions: ReadonlyArray<Session>
  readonly question: string
  /** The question's date, the domain's form. */
  readonly date: string
  readonly reading: Reading
  readonly historyFormat: HistoryFormat
}

/** The one user message their `prepare_prompt` returns, for a history under their truncation limit. */
export const prompt = (t: Templates, q: Question): string =>
  fill(t.answer[q.reading], [history(t, q.sessions, q.historyFormat), publishedDate(q.date), q.question])
