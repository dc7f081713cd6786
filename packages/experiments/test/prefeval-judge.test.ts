/**
 * PrefEval's preference-following judgement through a real sweep on the reader's fixture
 * (packages/data/test/fixtures/prefeval: two explicit instances, one implicit-choice, one
 * implicit-persona): the `llm` generator (no preference given: the model must find it in the
 * history) and the `prefeval-judge` scorer ask a loopback OpenAI-compatible server, which answers
 * from a script. The judge's four checks are told apart by the authors' prompt each request starts
 * with (loaded from their checkout here, never written in this file), so the test needs their
 * repository (skipped without). Each response's error types are worked out by hand below, and
 * summary.json's per-form rates are their means.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"
import { Config } from "@cupid-lab/runner"
import { PrefEvalPrompts } from "@cupid-lab/scorers"
import { PrefEvalReference } from "@cupid-lab/scorers/testing"
import { ModelCache } from "@cupid-lab/core"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Sweeps from "../src/Sweeps.js"
import { lines, tempDir } from "./support.js"

const fixture = path.join(import.meta.dirname, "..", "..", "data", "test", "fixtures", "prefeval")

/** The reader's answer, by the question it is asked. */
const answers: ReadonlyArray<readonly [string, string]> = [
  ["Edinburgh", "Since your terrier travels with you, The Balmoral welcomes dogs."],
  ["Chicago", "Book a 30th-floor rooftop suite at the Langham."],
  ["Porto", "You like family-run places, so try Casa do Conto."],
  ["Lisbon", "I don't have your details; could you tell me more?"]
]

const tag = (answer: string, preference = "") => `<preference>${preference}</preference>\n<answer>${answer}</answer>`
const verdict = (answer: string) => `<explanation>Scripted.</explanation>\n<answer>${answer}</answer>`

/** The judge's replies by response: acknow, violate, hallucinate, helpful. */
const judged: Readonly<Record<string, readonly [string, string, string, string]>> = {
  Balmoral: [tag("Yes", "Since your terrier travels with you"), verdict("No"), verdict("No"), verdict("Yes")],
  Langham: [tag("No"), verdict("Yes"), verdict("No"), verdict("Yes")],
  // A restatement the judge calls hallucinated, without a violation: still followed.
  "Casa do Conto": [tag("Yes", "You like family-run places"), verdict("No"), verdict("Yes"), verdict("Yes")],
  "could you tell me more": [tag("No"), verdict("No"), verdict("No"), verdict("No")]
}

// By hand, per instance: followed, unhelpful, unaware violation, hallucinated.
const expected: Readonly<Record<string, readonly [number, number, number, number]>> = {
  "explicit/travel_hotel:1": [1, 0, 0, 0],
  "explicit/travel_hotel:2": [0, 0, 1, 0],
  "implicit-choice/travel_hotel:1": [1, 0, 0, 1],
  "implicit-persona/travel_hotel:1": [0, 1, 0, 0]
}

const configText = (server: string, cacheDir: string) =>
  [
    "name: prefeval",
    `data: { source: ${JSON.stringify(`prefeval:${fixture}`)} }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  reader: { provider: openai, model: reader, baseURL: "${server}", temperature: 0 }`,
    `  judge: { provider: openai, model: judge, baseURL: "${server}" }`,
    "pipeline:",
    "  generator: { use: llm, model: reader, preference: none }",
    "cells:",
    "  - name: full-history",
    "scorers: [{ use: prefeval-judge, model: judge }]",
    "concurrency: 2"
  ].join("\n")

describe("PrefEval preference following", () => {
  it.scopedLive(
    "answers every instance, judges each response on the authors' four checks and gives their rates per form in summary.json",
    (ctx) =>
      Effect.gen(function* () {
        const dir0 = PrefEvalReference.need(ctx)
        process.env["PREFEVAL_REFERENCE_DIR"] = dir0
        const prompts = yield* PrefEvalPrompts.prompts({ dir: dir0 }).pipe(Effect.provide(ModelCache.layerMemory))
        const checkOf = (content: string) =>
          PrefEvalPrompts.checks.findIndex((c) => content.startsWith(prompts.byCheck[c].slice(0, 200)))
        const server = yield* OpenAiServer.make({
          chat: (body) => {
            const content = body.messages.at(-1)!.content
            if (body.model === "reader") return answers.find(([q]) => content.includes(q))![1]
            const check = checkOf(content)
            // The hallucination check shows the restatement, not the response (the two empty ones have the same reply).
            const key =
              check === 2
                ? Object.keys(judged).find((k) => content.includes(`"${judged[k]![0].split(/<\/?preference>/)[1]}"`))!
                : Object.keys(judged).find((k) => content.includes(k))!
            return judged[key]![check]!
          }
        })
        const dir = tempDir()
        const config = yield* Config.parse(configText(server.baseURL, path.join(dir, "cache")), "prefeval.yaml", {})
        const run = yield* Sweeps.sweep({ ...config, out: path.join(dir, "out"), outGiven: true })
        expect(run.pairs.failed).toBe(0)

        const results = lines(run.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(results).toHaveLength(4)
        const got = Object.fromEntries(
          results.map((r) => [
            r.instance,
            ["followed", "error_unhelpful", "error_unaware_violation", "hallucinated"].map(
              (m) => r.scores[`generation.prefeval_${m}`]
            )
          ])
        )
        expect(got).toEqual(expected)

        // Four judge calls per response, each a system and a user message, temperature 0, at most 100 tokens.
        const judgeBodies = server.requests
          .map((r) => r.body as OpenAiServer.ChatBody)
          .filter((b) => b.model === "judge")
        expect(judgeBodies).toHaveLength(16)
        expect(
          new Set(judgeBodies.map((b) => JSON.stringify([b.temperature, b.max_tokens, b.messages.map((m) => m.role)])))
        ).toEqual(new Set([JSON.stringify([0, 100, ["system", "user"]])]))
        expect(new Set(judgeBodies.map((b) => b.messages[0]!.content))).toEqual(new Set([prompts.system]))

        const summary = JSON.parse(fs.readFileSync(run.files.summary, "utf8")) as ResultLine.Summary
        const cell = summary.cells[0]!
        const rate = (type: string, m: string) => {
          const s = cell.types![type]!.metrics[`generation.prefeval_${m}`]!
          return [s.mean, s.n]
        }
        expect(rate("explicit", "followed")).toEqual([0.5, 2])
        expect(rate("explicit", "error_unaware_violation")).toEqual([0.5, 2])
        expect(rate("implicit-choice", "followed")).toEqual([1, 1])
        expect(rate("implicit-persona", "error_unhelpful")).toEqual([1, 1])
        expect(cell.slices.all.metrics["generation.prefeval_followed"]!.mean).toBe(0.5)
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
