/**
 * The CUPID authors' prompts, loaded at run time from their repository (`kixlab/CUPID`, MIT) at a
 * pinned commit and never copied into this one. Stage plugins with `prompts: reference` build their
 * templates from these files, so that what a model receives is what the authors' evaluation code
 * sends.
 *
 * Where the files come from, in order:
 * 1. a checkout: the service's `dir` (from `CUPID_REFERENCE_DIR` unless a sweep sets it);
 * 2. the download cache (`<cacheDir>/<commit>/<path>`), filled from
 *    `https://raw.githubusercontent.com/kixlab/CUPID/<commit>/<path>` (or `CUPID_REFERENCE_URL`).
 * Every file is checked against the sha256 pinned below; a mismatch or a missing file is an error
 * that names the file, the expected hash and how to get the right one.
 *
 * A dry run may price a sweep without the files: with `placeholders`, an unavailable file is
 * replaced by filler of its pinned size, and the template says so.
 *
 * @example
 * import { ReferencePrompts } from "@cupid-lab/core"
 * const t = yield* ReferencePrompts.template("infer", { plugin: "llm", required: ["curr_request", "interaction_log"] })
 * ReferencePrompts.interactionLog(sessions) // "### Session 1\n\n#### User\n\n..."
 */
import type { FileSystem } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { parse as parseYaml } from "yaml"
import { PluginError } from "./Errors.js"
import * as Files from "./Files.js"
import { sha256Hex } from "./Hash.js"
import * as HttpGet from "./HttpGet.js"
import { assignedLiteral, jsonDumps, type PyDict, type PyValue, strip } from "./Python.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const repository = "kixlab/CUPID"
export const commit = "a8560cab293ae98be4fe260689d58bddf96b51ef"
export const defaultUrl = "https://raw.githubusercontent.com/kixlab/CUPID"

/** The files the project reads, their pinned sha256 and size in bytes (facts about the pinned commit). */
export const files = {
  infer: {
    path: "prompts/evaluation/preference_inferrer.yaml",
    sha256: "b20374118413bd228b67a6fc3ac210766ff2415f8c3014cc61b6b432e83be472",
    bytes: 1829
  },
  generate: {
    path: "prompts/evaluation/response_generator.yaml",
    sha256: "ff560852a4bcd5f11f79e64b57c5233e7a74cecf757dedf6db8ede198e54e566",
    bytes: 965
  },
  match: {
    path: "prompts/evaluation/preference_matcher.yaml",
    sha256: "71c5093971cf7e7836f7a295d6a43749ea038d8bfc959b6b70a267a370f2c1ac",
    bytes: 2211
  },
  matchPrefmatcher: {
    path: "prompts/evaluation/preference_matcher_model.yaml",
    sha256: "7b6950efd93b094e54855bf0b3461e858e4db4e238c632320998b3f175931b94",
    bytes: 764
  },
  judge: {
    path: "prompts/evaluation/response_judger.yaml",
    sha256: "254de52c9d88136b6d12745ee6d48507345de741bd31dd219a9968b53a3de0a9",
    bytes: 2196
  },
  decompose: {
    path: "prompts/synthesis/preference_decomposer.yaml",
    sha256: "3b93f7cd604ae5dfceb3c5d9ddcf8604c13e9e0312eca97c161a002120decef6",
    bytes: 3626
  },
  matcherExamples: {
    path: "evaluation/modules/preference_matcher.py",
    sha256: "441c9162195d96274ac98b6b7732e9d3ef0eb72c424986a45b87492c8ccef6c9",
    bytes: 6598
  }
} as const
export type FileName = keyof typeof files
export type PromptName = Exclude<FileName, "matcherExamples">

/**
 * Which sections the authors' code formats with `str.format`: the inferrer and the generator pass
 * their system prompt as written; the matcher, decomposer and judge format both.
 */
const systemFormatted: Readonly<Record<PromptName, boolean>> = {
  infer: false,
  generate: false,
  match: true,
  matchPrefmatcher: true,
  judge: true,
  decompose: true
}

/** A file's text, or a stand-in of its pinned size when a dry run prices a sweep without it. */
export type Source = { readonly text: string } | { readonly placeholder: string }

export interface Service {
  /** Needs the file system to keep a download in the cache. */
  readonly read: (name: FileName) => Effect.Effect<Source, PluginError, FileSystem.FileSystem>
}

export class ReferencePrompts extends Context.Tag("@cupid-lab/core/ReferencePrompts")<ReferencePrompts, Service>() {}

export interface Options {
  /** A checkout of the pinned commit. */
  readonly dir?: string | undefined
  /** Where downloaded files are kept. */
  readonly cacheDir: string
  /** Root of the raw-file server; `<url>/<commit>/<path>` is fetched. */
  readonly url?: string | undefined
  /** Download limits; unset ones from `CUPID_HTTP_*`, else HttpGet's defaults with a 60 s deadline. */
  readonly limits?: Partial<HttpGet.Limits>
  /** Stand in filler for files that cannot be had (dry runs only). */
  readonly placeholders?: boolean
  /** Told once per file that a stand-in replaced, with the reason. */
  readonly onPlaceholder?: (file: string, reason: string) => void
}

const howToGet = (opts: Options) =>
  `get the authors' files at commit ${commit}: \`git clone https://github.com/${repository} && git -C CUPID checkout ${commit}\`, ` +
  `then set CUPID_REFERENCE_DIR to that directory` +
  (opts.dir === undefined
    ? `, or let the project download them from ${HttpGet.redact(opts.url ?? defaultUrl)} (network needed once; they are cached in ${opts.cacheDir})`
    : "")

const refError = (file: string, reason: string) =>
  new PluginError({ plugin: "reference prompts", reason: `${file}: ${reason}` })

const verified = (name: FileName, file: string, bytes: Buffer, opts: Options): Effect.Effect<string, PluginError> => {
  const pin = files[name]
  const actual = sha256Hex(bytes)
  return actual === pin.sha256
    ? Effect.succeed(bytes.toString("utf8"))
    : Effect.fail(
        refError(
          file,
          `sha256 ${actual} does not match the pinned ${pin.sha256} (${repository} at ${commit}); ${howToGet(opts)}`
        )
      )
}

/** The files are a few kB: a minute in all is generous (CUPID_HTTP_DEADLINE still changes it). */
const limits = (opts: Options) => HttpGet.limits(opts.limits, { ...HttpGet.defaults, deadlineMs: 60_000 })

const fetchFile = (name: FileName, opts: Options): Effect.Effect<Buffer, PluginError> => {
  const url = `${(opts.url ?? defaultUrl).replace(/\/+$/, "")}/${commit}/${files[name].path}`
  return Effect.tryPromise({
    try: async (signal) => {
      const res = await HttpGet.bytes(url, { limits: limits(opts), signal })
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`)
      return res.bytes
    },
    catch: (e) =>
      refError(
        files[name].path,
        `not in ${opts.dir ?? opts.cacheDir} and the download from ${HttpGet.redact(url)} failed ` +
          `(${e instanceof HttpGet.HttpGetError ? e.reason : HttpGet.describe(e)}); ${howToGet(opts)}`
      )
  })
}

/** The service reading files from a checkout, else the download cache, else the network. */
export const make = (opts: Options): Service => {
  const memo = new Map<FileName, Source>()
  const load = (name: FileName): Effect.Effect<string, PluginError, FileSystem.FileSystem> => {
    const rel = files[name].path
    if (opts.dir !== undefined) {
      const file = path.join(opts.dir, rel)
      if (!fs.existsSync(file))
        return Effect.fail(refError(file, `missing from the checkout ${opts.dir}; ${howToGet(opts)}`))
      return Effect.flatMap(
        Effect.sync(() => fs.readFileSync(file)),
        (b) => verified(name, file, b, opts)
      )
    }
    const cached = path.join(opts.cacheDir, commit, rel)
    if (fs.existsSync(cached)) {
      const bytes = fs.readFileSync(cached)
      if (sha256Hex(bytes) === files[name].sha256) return Effect.succeed(bytes.toString("utf8"))
    }
    return fetchFile(name, opts).pipe(
      Effect.flatMap((b) => verified(name, HttpGet.redact(`${opts.url ?? defaultUrl}/${commit}/${rel}`), b, opts)),
      Effect.tap((text) =>
        Files.makeDirectory(path.dirname(cached)).pipe(
          Effect.zipRight(Files.writeFileAtomic(cached, text)),
          Effect.mapError((e) => refError(cached, `cannot keep the download (${Files.describe(e)})`))
        )
      )
    )
  }
  return {
    read: (name) =>
      Effect.suspend(() => {
        const hit = memo.get(name)
        if (hit !== undefined) return Effect.succeed(hit)
        return load(name).pipe(
          Effect.map((text): Source => ({ text })),
          Effect.catchAll((e) =>
            opts.placeholders === true
              ? Effect.sync((): Source => {
                  opts.onPlaceholder?.(files[name].path, e.reason)
                  return { placeholder: `${"x ".repeat(Math.ceil(files[name].bytes / 2))}`.trim() }
                })
              : Effect.fail(e)
          ),
          Effect.tap((s) => Effect.sync(() => memo.set(name, s)))
        )
      })
  }
}

/** The service as the environment sets it: `CUPID_REFERENCE_DIR`, `CUPID_REFERENCE_URL`, cache in `.cache/reference`. */
export const fromEnvironment = (overrides: Partial<Options> = {}): Service =>
  make({
    dir: process.env.CUPID_REFERENCE_DIR || undefined,
    url: process.env.CUPID_REFERENCE_URL || undefined,
    cacheDir: path.resolve(".cache/reference"),
    ...overrides
  })

/** The provided service, or the environment's when none is provided. */
const service: Effect.Effect<Service> = Effect.map(Effect.serviceOption(ReferencePrompts), (o) =>
  Option.getOrElse(o, () => fromEnvironment())
)

/** The text of one of the pinned files (for callers that read more than prompts). */
export const read = (name: FileName): Effect.Effect<Source, PluginError, FileSystem.FileSystem> =>
  Effect.flatMap(service, (s) => s.read(name))

/**
 * One of the authors' prompts as a checked template: `system_prompt` and `user_prompt` of the YAML
 * file, formatted where their code formats them.
 */
export const template = (
  name: PromptName,
  spec: Omit<PromptTemplate.Spec, "file">
): Effect.Effect<PromptTemplate.Template, PluginError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const source = yield* read(name)
    const file = `${repository}@${commit.slice(0, 7)}:${files[name].path}`
    const full = { ...spec, file }
    if ("placeholder" in source) {
      // Filler of the file's size plus the slots the plugin needs: enough to count tokens.
      const slots = spec.required.map((slot) => ({ slot }))
      return yield* PromptTemplate.check(
        full,
        { system: [source.placeholder], user: slots.flatMap((s) => [s, "\n\n"]) },
        ""
      )
    }
    const doc = yield* Effect.try({
      try: () => parseYaml(source.text) as unknown,
      catch: (e) => refError(file, `not valid YAML (${String(e)})`)
    })
    const fields = doc !== null && typeof doc === "object" ? (doc as Record<string, unknown>) : {}
    const user = fields["user_prompt"]
    const system = fields["system_prompt"]
    if (typeof user !== "string") return yield* refError(file, "expected a string field user_prompt")
    if (system !== undefined && typeof system !== "string")
      return yield* refError(file, "expected system_prompt to be a string")
    const parse = (text: string, field: string) => {
      const p = PromptTemplate.fromPythonFormat(text)
      return typeof p === "string" ? Effect.fail(refError(file, `${field}: ${p}`)) : Effect.succeed(p)
    }
    const systemPieces =
      system === undefined
        ? undefined
        : systemFormatted[name]
          ? yield* parse(system, "system_prompt")
          : PromptTemplate.literal(system)
    return yield* PromptTemplate.check(
      full,
      { ...(systemPieces !== undefined ? { system: systemPieces } : {}), user: yield* parse(user, "user_prompt") },
      source.text
    )
  })

// Rendering, as the authors' code renders -------------------------------------------------------

/** A session as the interaction log shows it: its dialogue. */
export interface LogSession {
  readonly dialogue: ReadonlyArray<{ readonly role: string; readonly content: string }>
}

/**
 * The interaction log as the authors' `format_interaction_log` renders it: `### Session N` from 1,
 * each message under `#### User` or `#### AI Assistant`, sessions closed by `---`, the whole
 * stripped.
 */
export const interactionLog = (sessions: ReadonlyArray<LogSession>): string => {
  let out = ""
  sessions.forEach((s, i) => {
    out += `### Session ${i + 1}\n\n`
    for (const m of s.dialogue) out += `#### ${m.role === "user" ? "User" : "AI Assistant"}\n\n${m.content}\n\n`
    out += "---\n\n"
  })
  return strip(out)
}

/** A checklist as the matcher numbers it: `1. item` lines. */
export const numberedChecklist = (items: ReadonlyArray<string>): string =>
  items.map((s, i) => `${i + 1}. ${s}`).join("\n")

/** A checklist as the judge lists it: `- item` lines. */
export const bulletedChecklist = (items: ReadonlyArray<string>): string => items.map((s) => `- ${s}`).join("\n")

/** One of the matcher's annotated examples: a preference and its checklist with ratings, in order. */
export interface MatcherExample {
  readonly preference: string
  readonly checklist: ReadonlyArray<readonly [string, number]>
}

const labelOf = (score: number) => (score === 1 ? "Fully Covered" : score === 0.5 ? "Partially Covered" : "Not Covered")

const isDict = (v: PyValue): v is PyDict => v !== null && typeof v === "object" && "entries" in v
const field = (d: PyDict, key: string) => d.entries.find(([k]) => k === key)?.[1]

/** The matcher's annotated examples, read from the literal `EXAMPLES` of the authors' module. */
export const matcherExamples: Effect.Effect<
  ReadonlyArray<MatcherExample> | undefined,
  PluginError,
  FileSystem.FileSystem
> = Effect.gen(function* () {
  const source = yield* read("matcherExamples")
  if ("placeholder" in source) return undefined
  const file = files.matcherExamples.path
  const value = assignedLiteral(source.text, "EXAMPLES")
  if (typeof value === "string") return yield* refError(file, `cannot read EXAMPLES: ${value}`)
  if (!Array.isArray(value)) return yield* refError(file, "EXAMPLES is not a list")
  const out: Array<MatcherExample> = []
  for (const [i, ex] of (value as ReadonlyArray<PyValue>).entries()) {
    const preference = isDict(ex) ? field(ex, "preference") : undefined
    const checklist = isDict(ex) ? field(ex, "checklist") : undefined
    if (typeof preference !== "string" || checklist === undefined || checklist === null || !isDict(checklist)) {
      return yield* refError(file, `EXAMPLES[${i}]: expected {"preference": str, "checklist": {entry: score}}`)
    }
    const items = checklist.entries.map(([k, v]) => [String(k), typeof v === "number" ? v : Number(v)] as const)
    out.push({ preference, checklist: items })
  }
  return out
})

/** The examples block of the matcher's system prompt, as the authors' `PreferenceMatcher.__call__` builds it. */
export const renderMatcherExamples = (examples: ReadonlyArray<MatcherExample>): string => {
  let out = ""
  for (const ex of examples) {
    out += `#### Preference\n\n${ex.preference}\n\n#### Output\n\n\`\`\`json\n`
    out += jsonDumps({
      results: ex.checklist.map(([entry, score], i) => ({ index: i + 1, entry, label: labelOf(score) }))
    })
    out += "\n```\n\n---\n\n"
  }
  return strip(out)
}
