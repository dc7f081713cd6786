// Synthesis config errors read like sweep config errors: an unknown key gets a suggestion and the
// valid keys; YAML aliases that would make a value contain itself, or explode, are refused at their line.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { SynthConfig } from "@cupid-lab/synthesis"

const base = "models: { m: { provider: openai, model: x } }\nroles: { persona: m, user: m, assistant: m }\n"
const message = (text: string) => {
  const r = SynthConfig.parse(text, "synth.yaml", {})
  return Either.isLeft(r) ? r.left.message : "no error"
}

describe("SynthConfig.parse", () => {
  it("an unknown key gets a did-you-mean and the valid keys, at every level", () => {
    expect(message(`${base}persona: { count: 2 }\n`)).toBe(
      'synth.yaml: unknown top-level key "persona" (did you mean "personas"?); valid keys: cacheDir, concurrency, dialogue, factors, models, out, output, personas, prices, prompts, roles, seed, sessions, validation'
    )
    expect(message(`${base}dialogue: { maxTurn: 3 }\n`)).toBe(
      'synth.yaml: dialogue: unknown key "maxTurn" (did you mean "maxTurns"?); valid keys: dryRunTurns, maxTurns'
    )
    // A name nothing is close to: the valid keys alone.
    expect(message(`${base}output: { csv: true }\n`)).toBe(
      'synth.yaml: output: unknown key "csv"; valid keys: jsonl, parquet'
    )
  })

  it("a value that contains itself is refused at its line and key", () => {
    expect(
      message(
        "models: &m\n  m: { provider: openai, model: x }\n  again: *m\nroles: { persona: m, user: m, assistant: m }\n"
      )
    ).toBe(
      "synth.yaml: line 3, column 10, models.again: the alias *m is inside the value its anchor &m (line 1) names, so that value would contain itself"
    )
  })
})
