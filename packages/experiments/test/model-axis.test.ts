/**
 * Models as a sweep axis: `sweep: { models.subject: [small, big] }` binds the role `subject`, which
 * stages name as their model, to each `models:` entry in turn. It multiplies the swept and the
 * explicit cells alike (the paper's ablations once per model), names cells by the entry
 * (`full-history [small]`), keys them by it (`params.models`), and sends each entry's own decoding.
 * A loopback OpenAI-compatible server records what each model received.
 */
import { Plugin } from "@cupid-lab/core"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Analysis } from "@cupid-lab/report"
import { type Calls, type ResultLine, RunDir } from "@cupid-lab/results"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Config, Grid, Plugins } from "@cupid-lab/runner"

import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { commandIo, lines, tempDir } from "./support.js"

const models = (baseURL: string) => [
  "models:",
  `  small: { provider: openai, model: test-small, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`,
  `  big: { provider: openai, model: test-big, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: null, maxTokensParam: max_completion_tokens, systemRole: developer }`
]

const ablations = (baseURL: string, extra: ReadonlyArray<string> = []) =>
  [
    "name: models",
    `data: { source: "synthetic:personas=2,seed=3" }`,
    ...models(baseURL),
    "pipeline:",
    "  retriever: all",
    "  inferrer: { use: llm, model: subject }",
    "sweep:",
    "  models.subject: [small, big]",
    "cells:",
    "  - name: full-history",
    "  - name: recent",
    "    retriever: { use: recency, k: 2 }",
    "scorers: [{ use: retrieval, ks: [2] }]",
    "report: { baseline: full-history }",
    ...extra
  ].join("\n") + "\n"

const registry = Plugin.makeRegistry(Plugins.builtins())

const grid = (text: string) =>
  Effect.gen(function* () {
    const config = yield* Config.parse(text, "cfg.yaml", {})
    return yield* Grid.expand(config, registry)
  })

describe("models as a sweep axis", () => {
  it.effect("multiplies the swept and explicit cells, slowest; names and keys cells by the entry", () =>
    Effect.gen(function* () {
      const g = yield* grid(ablations("http://127.0.0.1:9/v1"))
      expect(g.cells.map((c) => c.name)).toEqual([
        "full-history [small]",
        "recent [small]",
        "full-history [big]",
        "recent [big]"
      ])
      expect(g.cells.map((c) => c.models)).toEqual([
        { subject: "small" },
        { subject: "small" },
        { subject: "big" },
        { subject: "big" }
      ])
      expect(new Set(g.cells.map((c) => c.id)).size).toBe(4)
      expect(Grid.identityParams(g.cells[2]!)["models"]).toEqual({ subject: "big" })
      // The name written in report.baseline finds the first model's cell.
      expect(g.baseline.name).toBe("full-history [small]")
      const config = yield* Config.parse(ablations("http://127.0.0.1:9/v1"), "cfg.yaml", {})
      expect(Grid.describeSize(Grid.size(config))).toBe("4 cells (2 explicit x sweep.models.subject 2)")
    })
  )

  it.effect("a cell binds a role itself; cells equal in stages and bindings are one", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        [
          ...models("http://127.0.0.1:9/v1"),
          "pipeline: { retriever: all, inferrer: { use: llm, model: subject } }",
          "cells:",
          "  - { name: a, models: { subject: small } }",
          "  - { name: b, models: { subject: big } }",
          "  - { name: c, models: { subject: big } }"
        ].join("\n")
      )
      expect(g.cells.map((c) => [c.name, c.models?.["subject"]])).toEqual([
        ["a [small]", "small"],
        ["b [big]", "big"]
      ])
      // Only the model varies: generated names are the entries alone.
      const only = yield* grid(
        [
          ...models("http://127.0.0.1:9/v1"),
          "pipeline: { retriever: all, inferrer: { use: llm, model: subject } }",
          "sweep: { models.subject: [big, small] }"
        ].join("\n")
      )
      expect(only.cells.map((c) => c.name)).toEqual(["big", "small"])
    })
  )

  it.effect("an unknown entry, a role no stage names and a malformed axis are refused where written", () =>
    Effect.gen(function* () {
      const base = [
        ...models("http://127.0.0.1:9/v1"),
        "pipeline: { retriever: all, inferrer: { use: llm, model: subject } }"
      ]
      const unknown = yield* Effect.exit(grid([...base, "sweep: { models.subject: [small, bigg] }"].join("\n")))
      expect(Exit.isFailure(unknown) && String(unknown.cause)).toContain(
        `sweep.models.subject[1]: unknown model entry "bigg" (did you mean "big"?); valid choices: small, big`
      )
      const listed = yield* Effect.exit(grid([...base, "sweep: { models.subject: [small, small] }"].join("\n")))
      expect(Exit.isFailure(listed) && String(listed.cause)).toContain(
        `sweep.models.subject[1]: the entry "small" is listed twice`
      )
      const nested = yield* Effect.exit(grid([...base, "sweep: { models.subject.x: [small] }"].join("\n")))
      expect(Exit.isFailure(nested) && String(nested.cause)).toContain("a model axis is models.<role>")
    })
  )

  it.scopedLive("each cell's calls go to its entry, with that entry's decoding; results carry the binding", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: (body) =>
          `### Analysis\n\nSeen.\n\n### Most Likely Preference\n\n${body.model} says: answers need numbered steps.`
      })
      const dir = tempDir("cupid-model-axis-")
      fs.writeFileSync(
        path.join(dir, "models.yaml"),
        ablations(server.baseURL, [`cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`])
      )
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      const code = yield* Commands.main(["sweep", "--config", "models", "--out", out], io)
      expect(code, err.join("")).toBe(0)

      const bodies = server.requests.map((r) => r.body as OpenAiServer.ChatBody & Record<string, unknown>)
      const small = bodies.filter((b) => b.model === "test-small")
      const big = bodies.filter((b) => b.model === "test-big")
      // Both models were sent the same prompts: 6 instances x 2 cells, less those the cache answers
      // (where the 2 most recent sessions are the whole history, both cells send one prompt).
      const prompts = (list: typeof bodies) => new Set(list.map((b) => JSON.stringify(b.messages)))
      expect(small.length).toBeGreaterThan(6)
      expect([small.length, big.length, bodies.length]).toEqual([small.length, small.length, 2 * small.length])
      expect(prompts(small)).toEqual(prompts(big))
      const limit = (b: (typeof bodies)[number]) => [
        b["temperature"],
        b["max_tokens"] !== undefined,
        b["max_completion_tokens"] !== undefined
      ]
      expect(new Set(small.map((b) => JSON.stringify(limit(b))))).toEqual(new Set([JSON.stringify([0, true, false])]))
      expect(new Set(big.map((b) => JSON.stringify(limit(b))))).toEqual(new Set([JSON.stringify([null, false, true])]))

      const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as ResultLine.Summary
      expect(summary.cells.map((c) => [c.name, c.models])).toEqual(
        ["small", "small", "big", "big"].map((e, i) => [
          `${i % 2 === 0 ? "full-history" : "recent"} [${e}]`,
          { subject: { entry: e, provider: "openai", model: `test-${e}` } }
        ])
      )
      // calls.jsonl records each request as the server received it: role and parameter names included.
      const recorded = lines(path.join(out, "calls.jsonl")).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
      const sent = recorded.filter((c) => !c.cached)
      expect(sent).toHaveLength(bodies.length)
      for (const c of sent) expect(bodies).toContainEqual(c.request)
      const bigCalls = sent.filter((c) => c.model === "test-big").map((c) => c.request as Record<string, unknown>)
      expect(bigCalls.every((r) => r["max_completion_tokens"] !== undefined && r["maxTokens"] === undefined)).toBe(true)
      // Reports compare each cell with the baseline's ablation under its own models.
      const run = yield* RunDir.read(out).pipe(Effect.provide(NodeFileSystem.layer))
      const analysis = Analysis.analyze(run)
      const idOf = (name: string) => summary.cells.find((c) => c.name === name)!.id
      const against = (name: string) => [
        ...new Set(analysis.deltas.filter((d) => d.cell === idOf(name)).map((d) => d.against))
      ]
      expect(against("recent [small]")).toEqual([idOf("full-history [small]")])
      expect(against("recent [big]")).toEqual([idOf("full-history [big]")])
      expect(against("full-history [big]")).toEqual([])
      expect([...analysis.baselines].sort()).toEqual([idOf("full-history [small]"), idOf("full-history [big]")].sort())
      expect(fs.readFileSync(path.join(out, "report.md"), "utf8")).toContain(
        "against the baseline full-history under each cell's own models (model axis)"
      )
      const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      expect(results.filter((r) => r.status !== "ok")).toEqual([])
      for (const r of results) {
        const entry = r.cellName.endsWith("[small]") ? "small" : "big"
        expect(r.params["models"]).toEqual({ subject: entry })
        expect(r.inference?.preference).toBe(`test-${entry} says: answers need numbered steps.`)
      }
    })
  )

  it.effect("a bound role that no stage or scorer names is refused before any work", () =>
    Effect.gen(function* () {
      const dir = tempDir("cupid-model-axis-")
      const text = ablations("http://127.0.0.1:9/v1").replace("models.subject:", "models.subjct:")
      fs.writeFileSync(path.join(dir, "models.yaml"), text)
      const { err, io } = commandIo(dir)
      const code = yield* Commands.main(["sweep", "--config", "models", "--dry-run"], io)
      expect(code).not.toBe(0)
      expect(err.join("")).toContain(
        `sweep.models.subjct: no stage or scorer names the model "subjct" (did you mean "subject"?), so binding it changes nothing`
      )
    })
  )
})
