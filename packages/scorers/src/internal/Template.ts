import type { LanguageModel } from "@cupid-lab/core"
import { Errors } from "@cupid-lab/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

// A prompt file is markdown. Text before the first marker line is a note for humans and is never
// sent; `<!-- system -->` and `<!-- user -->` start the two messages. A file without markers is
// sent whole as the user message. `{{name}}` placeholders are filled when rendering.

export interface Template {
  readonly source: string
  readonly system?: string
  readonly user: string
}

export const promptsDir = fileURLToPath(new URL("../../prompts/", import.meta.url))

const marker = /^<!--\s*(system|user)\s*-->\s*$/
const placeholder = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g

export const parse = (
  text: string,
  source: string,
  allowed: ReadonlyArray<string>,
  required: ReadonlyArray<string>
): Template | string => {
  const lines = text.replace(/\r\n?/g, "\n").split("\n")
  const sections: Record<string, Array<string>> = {}
  let current: string | undefined
  let sawMarker = false
  for (const line of lines) {
    const m = marker.exec(line)
    if (m !== null) {
      current = m[1]!
      if (sections[current] !== undefined) return `${source}: the <!-- ${current} --> section appears twice`
      sections[current] = []
      sawMarker = true
    } else if (current !== undefined) sections[current]!.push(line)
  }
  const system = sawMarker ? sections["system"]?.join("\n").trim() : undefined
  const user = (sawMarker ? sections["user"]?.join("\n") : text)?.trim()
  if (user === undefined || user === "") return `${source}: no user message (add a <!-- user --> section)`
  const used = new Set<string>()
  for (const part of [system ?? "", user]) for (const m of part.matchAll(placeholder)) used.add(m[1]!)
  const unknown = [...used].filter((n) => !allowed.includes(n))
  if (unknown.length > 0) {
    return `${source}: unknown placeholder ${unknown.map((n) => `{{${n}}}`).join(", ")}; available: ${allowed.map((n) => `{{${n}}}`).join(", ")}`
  }
  const missing = required.filter((n) => !used.has(n))
  if (missing.length > 0) return `${source}: the template must use ${missing.map((n) => `{{${n}}}`).join(", ")}`
  return system === undefined || system === "" ? { source, user } : { source, system, user }
}

/** Fill placeholders in one pass, so that values containing `{{...}}` are never expanded again. */
export const render = (
  template: Template,
  values: Readonly<Record<string, string>>
): ReadonlyArray<LanguageModel.ChatMessage> => {
  const fill = (s: string) => s.replace(placeholder, (_, name: string) => values[name] ?? "")
  const user: LanguageModel.ChatMessage = { role: "user", content: fill(template.user) }
  return template.system === undefined ? [user] : [{ role: "system", content: fill(template.system) }, user]
}

/**
 * Read a template: `spec` is a path (absolute or relative to the working directory) or the file
 * name of one of the prompts shipped in packages/scorers/prompts; without `spec`, `defaultFile`.
 */
export const load = (
  plugin: string,
  spec: string | undefined,
  defaultFile: string,
  allowed: ReadonlyArray<string>,
  required: ReadonlyArray<string>
): Effect.Effect<Template, Errors.PluginError> =>
  Effect.suspend(() => {
    const candidates = spec === undefined
      ? [path.join(promptsDir, defaultFile)]
      : path.isAbsolute(spec)
      ? [spec]
      : [path.resolve(spec), path.join(promptsDir, spec)]
    const file = candidates.find((f) => fs.existsSync(f))
    if (file === undefined) {
      return Effect.fail(
        new Errors.PluginError({ plugin, reason: `prompt template not found; looked for ${candidates.join(" and ")}` })
      )
    }
    return Effect.try({
      try: () => fs.readFileSync(file, "utf8"),
      catch: (e) => new Errors.PluginError({ plugin, reason: `cannot read prompt template ${file}: ${String(e)}` })
    }).pipe(
      Effect.flatMap((text) => {
        const t = parse(text, file, allowed, required)
        return typeof t === "string" ? Effect.fail(new Errors.PluginError({ plugin, reason: t })) : Effect.succeed(t)
      })
    )
  })
