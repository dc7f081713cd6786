/**
 * The model-calling stages of a synthesis, as plain values: a name, the prompt file it reads
 * (bundled in `packages/synthesis/prompts/`, replaceable through the config's `prompts:` directory),
 * the placeholders that file must use, a parser for the answer, and a well-formed example answer
 * for dry runs. Parsers never throw: a malformed answer is a `Left` with the reason, which the run
 * records as a failure (and the model cache does not keep).
 *
 * @example
 * import { Stages } from "@cupid-lab/synthesis"
 * Stages.checklist.parse('{"items": ["Uses numbered steps?", "Ends with a check?"]}') // Right([...])
 */
import { PromptTemplate } from "@cupid-lab/core"
import { Effect, Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { SynthConfigError } from "./Errors.js"
import { parseObject } from "./internal/json.js"
import { excerpt, sharedRun } from "./internal/text.js"
import { Factor, type Persona, SessionText } from "./Records.js"

/** A preference run this long in a request counts as leaked (the sample validator's rule). */
export const leakRun = 6

export interface Stage<A, C = void> {
  readonly name: string
  /** File name under the prompts directory. */
  readonly file: string
  readonly required: ReadonlyArray<string>
  readonly optional?: ReadonlyArray<string>
  readonly parse: (answer: string, context: C) => Either.Either<A, string>
  /** An answer `parse` accepts; `tag` differs per prompt so dry runs do not share cache entries that real runs would not. */
  readonly dryRunAnswer: (tag: string, context: C) => string
}

const bundledDir = fileURLToPath(new URL("../prompts/", import.meta.url))

/** Load and check a stage's prompt: from `dir` when it holds the file, else the bundled one. */
export const loadPrompt = Effect.fn("Stages.loadPrompt")(function* (
  stage: Pick<Stage<unknown, never>, "name" | "file" | "required" | "optional">,
  dir: string | undefined,
  configFile: string
) {
  const own = dir === undefined ? undefined : path.join(dir, stage.file)
  const file = own !== undefined && fs.existsSync(own) ? own : path.join(bundledDir, stage.file)
  return yield* PromptTemplate.load({
    plugin: `synthesis ${stage.name}`,
    file,
    required: stage.required,
    ...(stage.optional === undefined ? {} : { optional: stage.optional })
  }).pipe(Effect.mapError((e) => new SynthConfigError({ file: configFile, path: "prompts", reason: e.reason })))
})

// 1. Personas -----------------------------------------------------------------------------------

export const persona: Stage<Persona> = {
  name: "persona",
  file: "persona.md",
  required: ["seed", "career_level", "traits", "values", "decision_style"],
  parse: (answer) => {
    const name = /^\s*\**name\**\s*:\s*\**\s*(.+?)\s*\**\s*$/im.exec(answer)?.[1]?.trim()
    const body = /^\s*\**persona\**\s*:\s*\**\s*([\s\S]+)$/im.exec(answer)?.[1]?.trim()
    if (name === undefined || name === "") return Either.left(`no "Name:" line in the persona: "${excerpt(answer)}"`)
    if (body === undefined || body === "")
      return Either.left(`no "Persona:" paragraph after the name: "${excerpt(answer)}"`)
    return Either.right({ name, description: body.replace(/\s+/g, " ") })
  },
  dryRunAnswer: (tag) =>
    `Name: Alex Example ${tag}\nPersona: Alex works as described in the seed. Alex has a few years of experience. ` +
    "Alex values careful work. Alex struggles with tight deadlines. Alex studied in the field. Alex plans each week on Sunday."
}

// 2. Context factors ----------------------------------------------------------------------------

const FactorList = Schema.Struct({ factors: Schema.Array(Factor) })

export const factors: Stage<ReadonlyArray<Factor>, { readonly count: number }> = {
  name: "factors",
  file: "factors.md",
  required: ["persona", "count"],
  parse: (answer, { count }) =>
    Either.flatMap(parseObject(FactorList, answer), ({ factors: list }) => {
      if (list.length !== count) return Either.left(`expected ${count} factors, found ${list.length}`)
      const names = list.map((f) => f.name.toLowerCase())
      const dup = names.find((n, i) => names.indexOf(n) !== i)
      if (dup !== undefined) return Either.left(`two factors are named "${dup}"`)
      const a = list[count - 2]!,
        b = list[count - 1]!
      if (a.factor_type.toLowerCase() !== b.factor_type.toLowerCase()) {
        return Either.left(
          `the last two factors must share a type (a contrastive pair), found "${a.factor_type}" and "${b.factor_type}"`
        )
      }
      if (a.preference === b.preference) return Either.left("the contrastive pair has the same preference")
      for (const [i, f] of [
        [count - 2, a],
        [count - 1, b]
      ] as const) {
        if (f.changed_preference === undefined)
          return Either.left(`factors[${i}] (of the contrastive pair) has no changed_preference`)
        if (f.changed_preference === f.preference)
          return Either.left(`factors[${i}]: changed_preference repeats the preference`)
      }
      return Either.right(list)
    }),
  dryRunAnswer: (tag, { count }) =>
    JSON.stringify({
      factors: Array.from({ length: count }, (_, i) => ({
        background: `Background of factor ${i + 1} (${tag}).`,
        factor_type: i >= count - 2 ? "tool" : "person",
        task_types: ["writing", "planning"],
        name: `Factor ${i + 1} ${tag}`,
        preference_type: "structure",
        preference: `Preference ${i + 1} of ${tag}: responses should follow a specific structure agreed earlier with me.`,
        ...(i >= count - 2
          ? {
              changed_preference: `Changed ${i + 1} of ${tag}: responses should now be short and unstructured prose only.`
            }
          : {})
      }))
    })
}

// 3. Sessions -----------------------------------------------------------------------------------

export interface SessionContext {
  /** The session's preference (the request must not repeat a run of it). */
  readonly preference: string
  /** Preferences the request must not repeat either (the current request: the original and the changed one). */
  readonly alsoForbidden: ReadonlyArray<string>
  readonly factor: string
}

/** The request with its `[resource]` placeholder filled in (the resource appended when the placeholder is missing). */
export const fillResource = (s: SessionText): string => {
  if (s.resource_kind === "none" || s.resource === null || s.resource.trim() === "") return s.request
  return s.request.includes("[resource]")
    ? s.request.split("[resource]").join(s.resource)
    : `${s.request}\n\n${s.resource}`
}

export const session: Stage<SessionText, SessionContext> = {
  name: "sessions",
  file: "session.md",
  required: ["persona", "factor", "factor_type", "background", "preference", "task_types", "position", "total"],
  parse: (answer, ctx) =>
    Either.flatMap(parseObject(SessionText, answer), (s) => {
      if (s.resource_kind !== "none" && (s.resource === null || s.resource.trim() === "")) {
        return Either.left(`resource_kind is "${s.resource_kind}" but the resource is empty`)
      }
      for (const p of [ctx.preference, ...ctx.alsoForbidden]) {
        const leaked = sharedRun(s.request, p, leakRun)
        if (leaked !== undefined)
          return Either.left(`the request without the preference still contains its ${leakRun}-word run "${leaked}"`)
      }
      return Either.right(s)
    }),
  dryRunAnswer: (tag, ctx) =>
    JSON.stringify({
      task_type: "writing",
      story: `A short story (${tag}).`,
      request_with_preference: `Help me with a task involving ${ctx.factor}; ${ctx.preference}`,
      request: `Help me with a task involving ${ctx.factor} (${tag}). Here it is: [resource]`,
      resource_kind: "document",
      resource: "Line one of the document.\nLine two.\nLine three.\nLine four."
    })
}

// 4. Checklists ---------------------------------------------------------------------------------

const ChecklistAnswer = Schema.Struct({
  items: Schema.Array(Schema.NonEmptyString).pipe(
    Schema.minItems(2, { message: () => "expected 2-4 checklist items" }),
    Schema.maxItems(4, { message: () => "expected 2-4 checklist items" })
  )
})

export const checklist: Stage<ReadonlyArray<string>> = {
  name: "checklists",
  file: "checklist.md",
  required: ["preference"],
  parse: (answer) => Either.map(parseObject(ChecklistAnswer, answer), (a) => a.items),
  dryRunAnswer: (tag) =>
    JSON.stringify({ items: [`Does the response follow item one (${tag})?`, "Does the response follow item two?"] })
}

// 5. Dialogues ----------------------------------------------------------------------------------

const UserTurn = Schema.Struct({
  score: Schema.Number.pipe(Schema.between(1, 10, { message: () => "expected a score from 1 to 10" })),
  hints: Schema.optionalWith(Schema.Array(Schema.Int), { default: () => [] }),
  message: Schema.NonEmptyString,
  end: Schema.optional(Schema.Boolean)
})
export interface UserTurn {
  readonly score: number
  readonly hints: ReadonlyArray<number>
  readonly message: string
  /** Score 10 (or the simulator said so): the message is the closing one. */
  readonly end: boolean
}

export const user: Stage<UserTurn, { readonly items: number; readonly dryRunEnd: boolean }> = {
  name: "user",
  file: "user.md",
  required: ["persona", "factor", "preference", "checklist", "dialogue", "turn"],
  optional: ["max_turns"],
  parse: (answer, { items }) =>
    Either.flatMap(parseObject(UserTurn, answer), (t) => {
      const bad = t.hints.find((h) => h < 1 || h > items)
      if (bad !== undefined) return Either.left(`hint ${bad} is not a checklist item number (1-${items})`)
      return Either.right({ score: t.score, hints: t.hints, message: t.message, end: t.score === 10 || t.end === true })
    }),
  dryRunAnswer: (tag, { items, dryRunEnd }) =>
    JSON.stringify(
      dryRunEnd
        ? { score: 10, hints: [], message: "Perfect, thanks." }
        : {
            score: 5,
            hints: Array.from({ length: items }, (_, i) => i + 1),
            message: `Not quite what I need yet (${tag}).`
          }
    )
}

export const assistant: Stage<string> = {
  name: "assistant",
  file: "assistant.md",
  required: [],
  parse: (answer) =>
    answer.trim() === "" ? Either.left("the assistant's answer is empty") : Either.right(answer.trim()),
  dryRunAnswer: (tag) =>
    `Here is a first draft of what you asked for (${tag}). It covers the main points in a few sentences.`
}

// 7. Validation (optional model check) ----------------------------------------------------------

const HintCheck = Schema.Struct({ hinted: Schema.Array(Schema.Int) })

export const hintCheck: Stage<ReadonlyArray<number>, { readonly items: number }> = {
  name: "validator",
  file: "hint-check.md",
  required: ["checklist", "user_turns"],
  parse: (answer, { items }) =>
    Either.flatMap(parseObject(HintCheck, answer), ({ hinted }) => {
      const bad = hinted.find((h) => h < 1 || h > items)
      return bad === undefined
        ? Either.right(hinted)
        : Either.left(`item ${bad} is not a checklist item number (1-${items})`)
    }),
  dryRunAnswer: (_tag, { items }) => JSON.stringify({ hinted: Array.from({ length: items }, (_, i) => i + 1) })
}

/** Every stage's prompt file, for the docs and for checking a prompts directory. */
export const all = [persona, factors, session, checklist, user, assistant, hintCheck] as const
