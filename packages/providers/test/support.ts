import { Models, Plugin } from "@cupid-lab/core"
import { ConfigProvider, Effect, type Scope } from "effect"

/**
 * Decode raw options the way the runner does and build the provider, reading environment
 * variables from `env` only (never from the real environment, so a developer's keys cannot leak in).
 */
export const build = <O, I>(
  plugin: Plugin.ProviderPlugin<O, I>,
  raw: Record<string, unknown>,
  env: Record<string, string> = {},
  model = "test-model"
): Effect.Effect<Models.ModelBundle, Error, Scope.Scope> =>
  Plugin.decodeOptions(plugin, raw).pipe(
    Effect.mapError((e) => new Error(e.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "))),
    Effect.flatMap((options) => plugin.make(options, model)),
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))
  )

/** Tiny waits so retry tests run fast on the real clock. */
export const fast = { retryBaseMs: 1, retryMaxMs: 5, timeoutMs: 10_000 }

export const user = (content: string) => ({ messages: [{ role: "user" as const, content }] })
