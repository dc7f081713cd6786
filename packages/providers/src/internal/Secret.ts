import { Errors } from "@cupid-lab/core"
import { Config, Effect, Option, Redacted, Schema } from "effect"
import * as Failure from "./Failure.js"

/**
 * An `apiKeyEnv` option: the *name* of the variable holding the key. A value that is not a variable
 * name (most often a key pasted in its place) is rejected without being repeated in the message.
 */
export const KeyEnvName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/),
  Schema.annotations({
    message: () => ({
      message:
        "expected the name of an environment variable (letters, digits and _, e.g. OPENAI_API_KEY), not the key itself; the value is not shown",
      override: true
    })
  })
)

/** Sent to servers that need no key (local OpenAI-compatible servers); the SDKs insist on one. */
export const placeholderKey = "not-needed"

/**
 * The API key from the environment variable `name`, held redacted. A missing or empty variable is
 * an error when `required`, otherwise the placeholder.
 */
export const apiKey = (
  plugin: string,
  model: string,
  name: string,
  required: boolean
): Effect.Effect<Redacted.Redacted<string>, Errors.PluginError> =>
  Config.option(Config.redacted(name)).pipe(
    Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>()),
    Effect.flatMap((found) => {
      const present = Option.filter(found, (r) => Redacted.value(r).trim() !== "")
      if (Option.isSome(present)) return Effect.succeed(present.value)
      return required
        ? Effect.fail(
            new Errors.PluginError({
              plugin,
              reason:
                `model "${model}": environment variable ${name} is not set; export the API key there, ` +
                `or set apiKeyEnv to the variable that holds it`
            })
          )
        : Effect.succeed(Redacted.make(placeholderKey))
    })
  )

/** A non-empty string setting: the option if given, else the environment variable, else none. */
export const setting = (option: string | undefined, name: string): Effect.Effect<string | undefined> =>
  option !== undefined && option.trim() !== ""
    ? Effect.succeed(option.trim())
    : Config.option(Config.string(name)).pipe(
        Effect.map((o) => Option.getOrUndefined(Option.filter(o, (s) => s.trim() !== ""))),
        Effect.map((s) => s?.trim()),
        Effect.orElseSucceed(() => undefined)
      )

/**
 * What a model's messages must not show: its key (the placeholder is no secret) and the values of
 * the other variables the config names as holding secrets (`ProviderContext.secretVariables`).
 */
export const scrubbables = (
  key: Redacted.Redacted<string>,
  others: ReadonlyArray<string> = []
): Effect.Effect<Failure.Secrets> =>
  Effect.map(
    Effect.forEach(others, (name) =>
      Config.option(Config.redacted(name)).pipe(Effect.orElseSucceed(() => Option.none<Redacted.Redacted<string>>()))
    ),
    (found) => {
      const own = Redacted.value(key)
      return Failure.secrets([
        own === placeholderKey ? undefined : own,
        ...found.flatMap((o) => (Option.isSome(o) ? [Redacted.value(o.value)] : []))
      ])
    }
  )
