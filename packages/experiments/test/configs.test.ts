import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Config, Runner } from "@cupid-lab/runner"
import { lines, tempDir } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const configs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "configs")
const load = (name: string, env: Readonly<Record<string, string>> = {}) =>
  Effect.map(Config.load(path.join(configs, name), env), (c) => {
    const dir = tempDir()
    return { ...c, out: path.join(dir, "out"), outGiven: true, cacheDir: path.join(dir, "cache") }
  })

describe("the shipped configs", () => {
  it.effect("smoke.yaml runs end to end with the built-in plugins", () =>
    Effect.gen(function* () {
      const outcome = yield* Sweeps.sweep(yield* load("smoke.yaml"), { report: false })
      expect(outcome.grid.cells.map((c) => c.name)).toEqual(["all", "recency", "bm25", "oracle"])
      expect(outcome.pairs).toEqual({ total: 12, done: 12, ran: 12, resumed: 0, failed: 0 })
      expect(lines(outcome.files.results)).toHaveLength(12)
      expect(outcome.summary.cells.map((c) => c.usesGold)).toEqual([false, false, false, true])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("contextual.yaml is the offline sweep the README promises: nine cells, no model call", () =>
    Effect.gen(function* () {
      const config = yield* load("contextual.yaml")
      expect(config.description).toContain("Uses no model")
      expect(config.description).toContain("heuristic")
      const dry = yield* Runner.dryRun(config)
      expect(dry.grid.cells.map((c) => c.name)).toEqual([
        "all",
        "recency",
        "bm25",
        "embedding",
        "context-factor(policy=all-matching)",
        "context-factor(policy=most-recent)",
        "context-factor(policy=detect-change)",
        "factor-classifier",
        "oracle"
      ])
      expect(dry.grid.baseline.name).toBe("all")
      expect(dry.calls.total).toBe(0)
      expect(dry.failed).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "locomo-qa.yaml needs a model and the published file: on the fixture its dry run plans one answer per question and cell",
    () =>
      Effect.gen(function* () {
        const fixture = path.resolve(
          configs,
          "..",
          "packages",
          "data",
          "test",
          "fixtures",
          "locomo",
          "locomo_tiny.json"
        )
        const config = yield* load("locomo-qa.yaml", { LOCOMO_FILE: fixture })
        const dry = yield* Runner.dryRun(config)
        expect(dry.grid.cells.map((c) => c.name)).toEqual(["full-conversation", "bm25-top5"])
        // 9 questions x 2 cells; conv-2 has two sessions, so its top five are the whole conversation.
        expect(dry.calls.total).toBe(18)
        expect(dry.failed).toBe(0)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("prefeval.yaml's dry run on the fixture plans an answer and four judge calls per instance", () =>
    Effect.gen(function* () {
      const dir = path.resolve(configs, "..", "packages", "data", "test", "fixtures", "prefeval")
      const dry = yield* Runner.dryRun(
        yield* load("prefeval.yaml", { PREFEVAL_DIR: dir, PREFEVAL_TURNS: "2", PREFEVAL_TOPICS: "travel_hotel" })
      )
      expect([dry.grid.cells.map((c) => c.name), dry.calls.total, dry.failed]).toEqual([["full-history"], 20, 0])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "longmemeval-qa.yaml needs two models and the published files: on the fixtures its dry run plans an answer and a judgement per question, on each source",
    () =>
      Effect.gen(function* () {
        const fixture = (name: string) =>
          path.resolve(configs, "..", "packages", "data", "test", "fixtures", "longmemeval", name)
        const env = {
          LONGMEMEVAL_ORACLE_FILE: fixture("longmemeval_oracle_tiny.json"),
          LONGMEMEVAL_S_FILE: fixture("longmemeval_s_tiny.json")
        }
        const config = yield* load("longmemeval-qa.yaml", env)
        expect(config.sources).toEqual([
          `longmemeval:${env.LONGMEMEVAL_ORACLE_FILE}`,
          `longmemeval:${env.LONGMEMEVAL_S_FILE}`
        ])
        // Without the authors' file (no checkout, nothing cached) the judge's prompts are stand-ins: nothing is downloaded.
        const calls: Array<number> = []
        for (const source of config.sources) {
          const dry = yield* Runner.dryRun(Config.withOverrides(config, { data: source }))
          expect(dry.grid.cells.map((c) => c.name)).toEqual(["full-history"])
          expect(dry.failed).toBe(0)
          calls.push(dry.calls.total)
        }
        // One question in the oracle fixture, four in the _s one: an answer and a judgement each.
        expect(calls).toEqual([2, 8])
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
