// Where the scorers' prompts are found: a path (absolute, or relative to the working directory),
// else the name of one of the files shipped in packages/scorers/prompts. The template engine is
// core's PromptTemplate.
import { Errors, PromptTemplate } from "@cupid-lab/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const promptsDir = fileURLToPath(new URL("../../prompts/", import.meta.url))

/** Read a template: `spec` is a path or a shipped file's name; without `spec`, `defaultFile`. */
export const load = (
  plugin: string,
  spec: string | undefined,
  defaultFile: string,
  allowed: ReadonlyArray<string>,
  required: ReadonlyArray<string>
): Effect.Effect<PromptTemplate.Template, Errors.PluginError> =>
  Effect.suspend(() => {
    const candidates =
      spec === undefined
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
    return PromptTemplate.load({ plugin, file, required, optional: allowed.filter((a) => !required.includes(a)) })
  })
