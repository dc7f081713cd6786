/**
 * Prompt templates: plain text (markdown) files with `{{placeholder}}` slots. The default prompts
 * of the stage plugins live in `packages/core/prompts/`; a config can point a plugin at its own
 * file with the `template` option.
 *
 * A template is checked when the plugin is built, so a typo fails the sweep before any model is
 * called: every placeholder it uses must be one the plugin offers, and every placeholder the
 * plugin requires must appear. HTML comments (`<!-- ... -->`) are removed first, so a template can
 * document itself without the notes reaching the model. Substitution is a single pass: text put
 * into a slot (a dialogue that happens to contain `{{x}}`) is never expanded again.
 *
 * @example
 * import { PromptTemplate } from "@cupid-lab/core"
 * const t = yield* PromptTemplate.load({
 *   plugin: "llm",
 *   file: PromptTemplate.defaultFile("infer.md"),
 *   required: ["request", "evidence"]
 * })
 * const prompt = PromptTemplate.render(t, { request: "Draft the memo", evidence: "..." })
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { PluginError } from "../Errors.js"

export interface Template {
  /** The file the template was read from (as given), for messages. */
  readonly file: string
  /** The template text, comments removed. */
  readonly text: string
  /** The placeholders the text uses, in order of first use. */
  readonly placeholders: ReadonlyArray<string>
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

const promptsDir = fileURLToPath(new URL("../../prompts/", import.meta.url))

/** The path of one of the default prompt files shipped in `packages/core/prompts/`. */
export const defaultFile = (name: string): string => path.join(promptsDir, name)

const slot = /\{\{\s*([^{}]*?)\s*\}\}/g
const comment = /<!--[\s\S]*?-->\n?/g

/** The placeholders a text uses, in order of first use. */
export const placeholdersOf = (text: string): ReadonlyArray<string> => [
  ...new Set([...text.matchAll(slot)].map((m) => m[1]!))
]

/** Check a template text against a spec; `file` only names it in messages. */
export const fromText = (spec: Spec, text: string): Effect.Effect<Template, PluginError> => {
  const body = text.replace(comment, "")
  const used = placeholdersOf(body)
  const allowed = [...spec.required, ...(spec.optional ?? [])]
  const fail = (reason: string) => Effect.fail(new PluginError({ plugin: spec.plugin, reason: `template ${spec.file}: ${reason}` }))
  for (const name of used) {
    if (allowed.includes(name)) continue
    const why = spec.unavailable?.[name]
    return fail(
      why !== undefined
        ? `placeholder {{${name}}} is not available here (${why})`
        : `unknown placeholder {{${name}}}; available: ${allowed.map((a) => `{{${a}}}`).join(", ")}`
    )
  }
  const missing = spec.required.filter((r) => !used.includes(r))
  if (missing.length > 0) {
    return fail(`missing placeholder ${missing.map((m) => `{{${m}}}`).join(", ")} (required: ${spec.required.map((r) => `{{${r}}}`).join(", ")})`)
  }
  return Effect.succeed({ file: spec.file, text: body, placeholders: used })
}

/** Read and check a template file. A relative path is resolved against the working directory. */
export const load = (spec: Spec): Effect.Effect<Template, PluginError> =>
  Effect.try({
    try: () => fs.readFileSync(path.resolve(spec.file), "utf8"),
    catch: (e) =>
      new PluginError({
        plugin: spec.plugin,
        reason: `template ${spec.file}: cannot be read (${e instanceof Error ? e.message : String(e)})`
      })
  }).pipe(Effect.flatMap((text) => fromText(spec, text)))

/**
 * Fill every placeholder. The values must cover the template's placeholders; a checked template
 * and the plugin's full set of values always do, so a gap is a programming error and throws.
 */
export const render = (template: Template, values: Readonly<Record<string, string>>): string =>
  template.text.replace(slot, (_whole, name: string) => {
    const value = values[name]
    if (value === undefined) throw new Error(`template ${template.file}: no value for {{${name}}}`)
    return value
  }).trim()
