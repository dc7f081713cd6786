/**
 * Prompt templates, the one template engine of core, scorers and synthesis. A template is a user
 * message and an optional system message, each a sequence of literal text and named slots, checked
 * against the slots its plugin offers when the plugin is built, so a typo fails a sweep before any
 * model is called.
 *
 * Two syntaxes produce the same template:
 * - **The project's markdown files** (`packages/<pkg>/prompts/*.md`, or a user's file named by a
 *   `template` option): `{{name}}` slots; `<!-- system -->` and `<!-- user -->` on lines of their
 *   own start the two messages (a file without them is one user message); every other HTML comment
 *   is a note for humans and is removed. Each message is trimmed.
 * - **The authors' YAML prompt files** (`ReferencePrompts`): Python `str.format` fields (`{name}`,
 *   with `{{` and `}}` for literal braces), read with {@link fromPythonFormat}. A section the
 *   reference sends without formatting is taken {@link literal}ly. Nothing is trimmed, so what is
 *   sent is byte for byte what the authors' code sends.
 *
 * Substitution is one pass: text put into a slot (a dialogue that happens to contain `{{x}}`) is
 * never expanded again.
 *
 * @example
 * import { PromptTemplate } from "@cupid-lab/core"
 * const t = yield* PromptTemplate.load({
 *   plugin: "llm",
 *   file: PromptTemplate.defaultFile("infer.md"),
 *   required: ["request", "evidence"]
 * })
 * const messages = PromptTemplate.render(t, { request: "Draft the memo", evidence: "..." })
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { PluginError } from "./Errors.js"
import type { ChatMessage } from "./LanguageModel.js"

/** Literal text, or a named slot filled when rendering. */
export type Piece = string | { readonly slot: string }

export interface Template {
  /** Where the template was read from (as given), for messages. */
  readonly file: string
  /** The system message, when there is one. */
  readonly system?: ReadonlyArray<Piece>
  readonly user: ReadonlyArray<Piece>
  /** The slots the template uses, in order of first use. */
  readonly placeholders: ReadonlyArray<string>
  /** The template's source text as read (comments included): what fingerprints hash. */
  readonly text: string
}

export interface Spec {
  /** The plugin loading the template, for error messages. */
  readonly plugin: string
  readonly file: string
  /** Placeholders the template must use. */
  readonly required: ReadonlyArray<string>
  /** Placeholders it may use besides the required ones. */
  readonly optional?: ReadonlyArray<string>
  /** Placeholders that exist elsewhere but not in this setting, with the reason (for the message). */
  readonly unavailable?: Readonly<Record<string, string>>
}

const promptsDir = fileURLToPath(new URL("../prompts/", import.meta.url))

/** The path of one of the default prompt files shipped in `packages/core/prompts/`. */
export const defaultFile = (name: string): string => path.join(promptsDir, name)

const slot = /\{\{\s*([^{}]*?)\s*\}\}/g
const marker = /^<!--\s*(system|user)\s*-->[ \t]*$/
const comment = /<!--[\s\S]*?-->[ \t]*\n?/g

const piecesOf = (text: string): Array<Piece> => {
  const out: Array<Piece> = []
  let last = 0
  for (const m of text.matchAll(slot)) {
    if (m.index > last) out.push(text.slice(last, m.index))
    out.push({ slot: m[1]! })
    last = m.index + m[0].length
  }
  if (last < text.length) out.push(text.slice(last))
  return out
}

/** Literal text: a section sent exactly as written, braces included. */
export const literal = (text: string): ReadonlyArray<Piece> => (text === "" ? [] : [text])

/**
 * A Python `str.format` string as pieces: `{name}` is a slot, `{{` and `}}` are literal braces.
 * Conversions, format specs, indexes and positional fields are not used by any published prompt
 * and are refused, as is a lone brace (Python refuses those too).
 */
export const fromPythonFormat = (text: string): ReadonlyArray<Piece> | string => {
  const out: Array<Piece> = []
  let buf = ""
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "{" && text[i + 1] === "{") {
      buf += "{"
      i++
    } else if (c === "}" && text[i + 1] === "}") {
      buf += "}"
      i++
    } else if (c === "{") {
      const end = text.indexOf("}", i)
      const name = end < 0 ? "" : text.slice(i + 1, end)
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
        return `unsupported format field at offset ${i}: "${text.slice(i, i + 20)}"`
      if (buf !== "") out.push(buf)
      buf = ""
      out.push({ slot: name })
      i = end
    } else if (c === "}") return `single '}' at offset ${i}`
    else buf += c
  }
  if (buf !== "") out.push(buf)
  return out
}

const slotsOf = (sections: ReadonlyArray<ReadonlyArray<Piece> | undefined>): ReadonlyArray<string> => [
  ...new Set(sections.flatMap((s) => (s ?? []).flatMap((p) => (typeof p === "string" ? [] : [p.slot]))))
]

/** The placeholders a markdown text uses, in order of first use. */
export const placeholdersOf = (text: string): ReadonlyArray<string> => [
  ...new Set([...text.matchAll(slot)].map((m) => m[1]!))
]

const fail = (spec: Spec, reason: string) =>
  Effect.fail(new PluginError({ plugin: spec.plugin, reason: `template ${spec.file}: ${reason}` }))

/** Check a template's slots against a spec. */
export const check = (
  spec: Spec,
  sections: { readonly system?: ReadonlyArray<Piece>; readonly user: ReadonlyArray<Piece> },
  text: string
): Effect.Effect<Template, PluginError> => {
  const used = slotsOf([sections.system, sections.user])
  const allowed = [...spec.required, ...(spec.optional ?? [])]
  for (const name of used) {
    if (allowed.includes(name)) continue
    const why = spec.unavailable?.[name]
    return fail(
      spec,
      why !== undefined
        ? `placeholder {{${name}}} is not available here (${why})`
        : `unknown placeholder {{${name}}}; available: ${allowed.map((a) => `{{${a}}}`).join(", ")}`
    )
  }
  const missing = spec.required.filter((r) => !used.includes(r))
  if (missing.length > 0) {
    return fail(
      spec,
      `missing placeholder ${missing.map((m) => `{{${m}}}`).join(", ")} (required: ${spec.required.map((r) => `{{${r}}}`).join(", ")})`
    )
  }
  if (sections.user.length === 0) return fail(spec, "no user message (add a <!-- user --> section)")
  return Effect.succeed({
    file: spec.file,
    ...(sections.system !== undefined && sections.system.length > 0 ? { system: sections.system } : {}),
    user: sections.user,
    placeholders: used,
    text
  })
}

/** Check a markdown template text against a spec; `spec.file` only names it in messages. */
export const fromText = (spec: Spec, text: string): Effect.Effect<Template, PluginError> => {
  const lines = text.replace(/\r\n?/g, "\n").split("\n")
  const sections: { system?: Array<string>; user?: Array<string> } = {}
  const before: Array<string> = []
  let current: "system" | "user" | undefined
  for (const line of lines) {
    const m = marker.exec(line)
    if (m !== null) {
      current = m[1] as "system" | "user"
      if (sections[current] !== undefined) return fail(spec, `the <!-- ${current} --> section appears twice`)
      sections[current] = []
    } else (current === undefined ? before : sections[current]!).push(line)
  }
  const clean = (ls: ReadonlyArray<string> | undefined) =>
    ls === undefined ? undefined : ls.join("\n").replace(comment, "").trim()
  const hasMarkers = sections.system !== undefined || sections.user !== undefined
  if (hasMarkers && clean(before) !== "") {
    return fail(spec, "text before the first <!-- system --> or <!-- user --> line; put notes in <!-- ... --> comments")
  }
  const user = clean(hasMarkers ? sections.user : before) ?? ""
  const system = clean(sections.system)
  return check(spec, { ...(system !== undefined ? { system: piecesOf(system) } : {}), user: piecesOf(user) }, text)
}

/** Read and check a markdown template file. A relative path is resolved against the working directory. */
export const load = (spec: Spec): Effect.Effect<Template, PluginError> =>
  Effect.try({
    try: () => fs.readFileSync(path.resolve(spec.file), "utf8"),
    catch: (e) =>
      new PluginError({
        plugin: spec.plugin,
        reason: `template ${spec.file}: cannot be read (${e instanceof Error ? e.message : String(e)})`
      })
  }).pipe(Effect.flatMap((text) => fromText(spec, text)))

const fill = (template: Template, pieces: ReadonlyArray<Piece>, values: Readonly<Record<string, string>>): string =>
  pieces
    .map((p) => {
      if (typeof p === "string") return p
      const value = values[p.slot]
      // A checked template and the plugin's full set of values always agree: a gap is a bug.
      if (value === undefined) throw new Error(`template ${template.file}: no value for {{${p.slot}}}`)
      return value
    })
    .join("")

/** The messages of a template: the system message (when there is one), then the user message. */
export const render = (template: Template, values: Readonly<Record<string, string>>): ReadonlyArray<ChatMessage> => {
  const user: ChatMessage = { role: "user", content: fill(template, template.user, values) }
  return template.system === undefined
    ? [user]
    : [{ role: "system", content: fill(template, template.system, values) }, user]
}

/** The user message alone, for templates that have no system section (synthesis prompts). */
export const renderText = (template: Template, values: Readonly<Record<string, string>>): string =>
  fill(template, template.user, values)
