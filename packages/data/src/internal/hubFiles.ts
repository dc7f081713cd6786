import { Either, Schema } from "effect"
import YAML from "yaml"
import { describeIssue } from "./rowDecoder.js"

/*
 * Which files of a Hugging Face dataset repository hold the split to read (docs/data.md, "Which
 * file an hf: source reads"). Pure rules over the dataset card's text and the repository's file
 * list; the requests are made in hubDownload.ts.
 */

/** One entry of a config's `data_files`: a split and its file or files (paths or glob patterns). */
const SplitFiles = Schema.Struct({
  split: Schema.String,
  path: Schema.Union(Schema.String, Schema.Array(Schema.String))
})

/** `data_files` as the hub reads it: one path, a list of paths, or a list of `{ split, path }`. */
const DataFiles = Schema.Union(Schema.String, Schema.Array(Schema.Union(Schema.String, SplitFiles)))

const CardConfig = Schema.Struct({
  config_name: Schema.String,
  default: Schema.optional(Schema.Boolean),
  data_files: Schema.optional(DataFiles)
})

/** The part of a dataset card's YAML front matter that says where the data is. */
export const CardMetadata = Schema.Struct({ configs: Schema.optional(Schema.Array(CardConfig)) })
export type CardMetadata = typeof CardMetadata.Type

/** The answer of `<hub>/api/datasets/<owner>/<name>`, reduced to the repository's file list. */
export const Listing = Schema.Struct({ siblings: Schema.Array(Schema.Struct({ rfilename: Schema.String })) })
export type Listing = typeof Listing.Type

/** Why a card or a listing cannot be used: the field (when one is at fault) and what was wrong. */
export interface Problem {
  readonly field?: string
  readonly reason: string
}

const problem = (reason: string, field?: string): Problem => (field === undefined ? { reason } : { field, reason })

const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (value: unknown): Either.Either<A, Problem> =>
    Either.mapLeft(decode(value), (e) => {
      const p = describeIssue(e.issue)
      return problem(p.reason, p.field)
    })
}

const decodeCard = decodeWith(CardMetadata)
export const decodeListing = decodeWith(Listing)

const frontMatterPattern = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/

/** The card's metadata; a card without front matter has none (`{}`). */
export const cardMetadata = (text: string): Either.Either<CardMetadata, Problem> => {
  const match = frontMatterPattern.exec(text)
  if (match === null) return Either.right({})
  let parsed: unknown
  try {
    parsed = YAML.parse(match[1] ?? "")
  } catch (e) {
    return Either.left(
      problem(`the front matter is not valid YAML (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`)
    )
  }
  if (parsed === null || parsed === undefined) return Either.right({})
  return decodeCard(parsed)
}

/** Files (or patterns) a card declares for the split to read, with how they were chosen. */
export interface Declared {
  readonly patterns: ReadonlyArray<string>
  /** E.g. `dataset card, config default, split test`. */
  readonly rule: string
}

/** The split read when a repository has it; otherwise its only split. */
export const wantedSplit = "test"

/**
 * What the card declares for the split to read: the config named `default` (else the one marked
 * `default: true`, else the only one), its `test` split or else its only split. `undefined` when
 * the card declares no configs or the config names no `data_files`: the file list decides then.
 */
export const declaredFiles = (card: CardMetadata): Either.Either<Declared | undefined, Problem> => {
  const configs = card.configs ?? []
  if (configs.length === 0) return Either.right(undefined)
  const index = [
    configs.findIndex((c) => c.config_name === "default"),
    configs.findIndex((c) => c.default === true),
    configs.length === 1 ? 0 : -1
  ].find((i) => i >= 0)
  if (index === undefined) {
    return Either.left(
      problem(
        `declares configs ${configs.map((c) => c.config_name).join(", ")} and none is named default or marked default: true`,
        "configs"
      )
    )
  }
  const config = configs[index]!
  if (config.data_files === undefined) return Either.right(undefined)
  const splits = splitsOf(config.data_files)
  const names = [...splits.keys()]
  const split = splits.has(wantedSplit) ? wantedSplit : names.length === 1 ? names[0]! : undefined
  if (split === undefined) {
    return Either.left(
      problem(
        `config ${config.config_name} declares splits ${names.join(", ")} and none is ${wantedSplit}`,
        `configs[${index}].data_files`
      )
    )
  }
  return Either.right({
    patterns: splits.get(split)!,
    rule: `dataset card, config ${config.config_name}, split ${split}`
  })
}

/** A bare path in `data_files` belongs to the `train` split, as the hub reads it. */
const splitsOf = (dataFiles: typeof DataFiles.Type): Map<string, Array<string>> => {
  const splits = new Map<string, Array<string>>()
  const add = (split: string, paths: string | ReadonlyArray<string>) => {
    const list = splits.get(split) ?? []
    list.push(...(typeof paths === "string" ? [paths] : paths).map((p) => p.replace(/^\.\//, "")))
    splits.set(split, list)
  }
  for (const entry of typeof dataFiles === "string" ? [dataFiles] : dataFiles) {
    if (typeof entry === "string") add("train", entry)
    else add(entry.split, entry.path)
  }
  return splits
}

export const isPattern = (p: string): boolean => /[*?[]/.test(p)

/** A glob as the hub reads `data_files`: `*` and `?` stay within a folder, `**` crosses folders. */
const globRegExp = (pattern: string): RegExp => {
  let out = ""
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!
    if (c === "*" && pattern[i + 1] === "*") {
      const slash = pattern[i + 2] === "/"
      out += slash ? "(?:.*/)?" : ".*"
      i += slash ? 2 : 1
    } else if (c === "*") out += "[^/]*"
    else if (c === "?") out += "[^/]"
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2)
      if (end < 0) out += "\\["
      else {
        const body = pattern.slice(i + 1, end)
        out += `[${body.startsWith("!") ? `^${body.slice(1)}` : body.replace(/\\/g, "\\\\")}]`
        i = end
      }
    } else out += c.replace(/[.+^${}()|\\\]]/g, "\\$&")
  }
  return new RegExp(`^${out}$`)
}

/** The declared paths, each pattern replaced by its matches in the file list (in path order); repeats dropped. */
export const expand = (patterns: ReadonlyArray<string>, files: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const p of patterns) {
    const matches = isPattern(p) ? sortPaths(files.filter((f) => globRegExp(p).test(f))) : [p]
    for (const m of matches) if (!out.includes(m)) out.push(m)
  }
  return out
}

/** Code-unit order, the same on every machine: shards `-00000-of-00002` come first. */
export const sortPaths = (paths: ReadonlyArray<string>): Array<string> =>
  [...paths].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))

/** The readable types, in order of preference: a split shipped in several formats is read once. */
const readableTypes: ReadonlyArray<ReadonlyArray<string>> = [[".parquet"], [".jsonl", ".ndjson"], [".json"]]

const extensionOf = (file: string): string => {
  const base = file.slice(file.lastIndexOf("/") + 1).toLowerCase()
  const dot = base.lastIndexOf(".")
  return dot <= 0 ? "" : base.slice(dot)
}

export const isReadable = (file: string): boolean => readableTypes.some((t) => t.includes(extensionOf(file)))

/** The files of the most preferred readable type (all parquet, else all JSON lines, else all JSON), in their order. */
export const preferredType = (files: ReadonlyArray<string>): ReadonlyArray<string> => {
  for (const types of readableTypes) {
    const chosen = files.filter((f) => types.includes(extensionOf(f)))
    if (chosen.length > 0) return chosen
  }
  return []
}

/** The hub's split keywords: a folder name or a word of the file name, delimited by `-._ `, a digit or `/`. */
const splitKeywords: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["test", ["test", "testing", "eval", "evaluation"]],
  ["validation", ["validation", "valid", "val", "dev"]],
  ["train", ["train", "training"]]
]

/** The split a file's path names, if any. */
export const splitOfPath = (file: string): string | undefined => {
  const ext = extensionOf(file)
  const stem = (ext === "" ? file : file.slice(0, -ext.length)).toLowerCase()
  for (const [split, words] of splitKeywords) {
    if (new RegExp(`(?:^|[-._ 0-9/])(?:${words.join("|")})(?:[-._ 0-9/]|$)`).test(stem)) return split
  }
  return undefined
}

/**
 * The split to read from the file list alone: readable files grouped by the split their path
 * names; the `test` group, else the only group. Files that name no split count only when no file
 * names one (they are then the only split). A problem says what was found instead.
 */
export const listedFiles = (files: ReadonlyArray<string>): Either.Either<Declared, Problem> => {
  const readable = sortPaths(files.filter(isReadable))
  if (readable.length === 0) return Either.left(problem("has no .parquet, .jsonl or .json file"))
  const groups = new Map<string, Array<string>>()
  for (const f of readable) {
    const split = splitOfPath(f)
    if (split !== undefined) groups.set(split, [...(groups.get(split) ?? []), f])
  }
  if (groups.size === 0)
    return Either.right({ patterns: preferredType(readable), rule: "file list, the only split (no file names one)" })
  const names = [...groups.keys()]
  const split = groups.has(wantedSplit) ? wantedSplit : names.length === 1 ? names[0]! : undefined
  if (split === undefined)
    return Either.left(problem(`names splits ${names.join(", ")} in its file names and none is ${wantedSplit}`))
  return Either.right({ patterns: preferredType(groups.get(split)!), rule: `file list, split ${split}` })
}

/** A path inside a repository that cannot leave it (no `..`, no empty or absolute parts). */
export const isSafePath = (file: string): boolean =>
  file !== "" && !file.split("/").some((part) => part === ".." || part === "" || part === ".")
