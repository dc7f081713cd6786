/**
 * LoCoMo question answering through a real sweep: the `qa` generator asks a loopback
 * OpenAI-compatible server, which answers each question of the hand-written fixture from a script,
 * and `locomo-f1` scores the answers. Each question's score is worked out by hand below, and
 * summary.json gives the per-category means of those values.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"
import { Config } from "@cupid-lab/runner"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Sweeps from "../src/Sweeps.js"
import { lines, tempDir } from "./support.js"

const fixture = path.join(import.meta.dirname, "..", "..", "data", "test", "fixtures", "locomo", "locomo_tiny.json")

/** Question -> [scripted answer, its score by hand (tokens after normalization and stemming)]. */
const script: Readonly<Record<string, readonly [string, number]>> = {
  // single-hop: [pixel] = [pixel]
  "What is the name of Ana's kitten?": ["Pixel", 1],
  // temporal: [june, 2023] against [earli, june, 2023]: P 1, R 2/3, F1 0.8
  "When did Ben hurt his knee?": ["June 2023", 0.8],
  // multi-hop: the answer "A blue vase; Lisbon" has no comma, one part [blue, vase, lisbon];
  // "a blue vase" gives P 1, R 2/3 (0.8), "Lisbon" P 1, R 1/3 (0.5): the best is 0.8
  "What did Clara make at the pottery workshop, and where does she live?": ["a blue vase, Lisbon", 0.8],
  // open-domain: [like, ye] against [ye]: P 1/2, R 1, F1 2/3
  "Would Ben likely enjoy a trail running race?": ["Likely yes", 2 / 3],
  // adversarial: the answer says it is not there
  "What color is Ben's kitten?": ["No information available", 1],
  // single-hop: [yellow] against [warm, yellow]: 2/3
  "What colour did Ana paint her studio?": ["yellow", 2 / 3],
  // single-hop, a numeric answer: [30, mile] against [30]: 2/3
  "How many miles does Ben run each week?": ["30 miles", 2 / 3],
  "What did Ana do on the weekend?": ["She adopted a kitten", 1],
  // single-hop: [novel] against [novel, about, lighthous, keeper]: P 1, R 1/4, F1 0.4
  "What book did Kai finish?": ["a novel", 0.4]
}

const questionOf = (body: OpenAiServer.ChatBody): string => {
  const user = body.messages.at(-1)?.content ?? ""
  return /^Question: (.*)$/m.exec(user)?.[1] ?? ""
}

const configText = (server: string, cacheDir: string) =>
  [
    "name: locomo-qa",
    `data: { source: ${JSON.stringify(`locomo:${fixture}`)} }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  reader: { provider: openai, model: reader, baseURL: "${server}" }`,
    "pipeline:",
    "  generator: { use: qa, model: reader }",
    "scorers: [{ use: locomo-f1 }]",
    "concurrency: 2"
  ].join("\n")

describe("LoCoMo question answering", () => {
  it.scopedLive(
    "answers every question from the sessions and scores it by its category, per category in summary.json",
    () =>
      Effect.gen(function* () {
        const server = yield* OpenAiServer.make({ chat: (body) => script[questionOf(body)]?.[0] ?? "unscripted" })
        const dir = tempDir()
        const config = yield* Config.parse(configText(server.baseURL, path.join(dir, "cache")), "locomo-qa.yaml", {})
        const run = yield* Sweeps.sweep({ ...config, out: path.join(dir, "out"), outGiven: true })
        expect(run.pairs.failed).toBe(0)

        const bodies = server.requests.map((r) => r.body as OpenAiServer.ChatBody)
        expect(bodies.map(questionOf).sort()).toEqual(Object.keys(script).sort())
        // The prompt shows the sessions with their dates and speakers.
        const kai = bodies.find((b) => questionOf(b) === "What book did Kai finish?")!.messages.at(-1)!.content
        expect(kai).toMatch(/### Session 1 \(\d{4}-\d\d-\d\d \d\d:\d\d\)\nKai: /)

        const results = lines(run.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(results).toHaveLength(Object.keys(script).length)
        const byType = new Map<string, Array<number>>()
        for (const line of results) {
          const value = line.scores["generation.locomo_f1"] as number
          const expected = Object.values(script).find(([answer]) => answer === line.generation?.text)
          expect(expected, line.instance).toBeDefined()
          expect(value, line.instance).toBeCloseTo(expected![1], 12)
          byType.set(line.type, [...(byType.get(line.type) ?? []), value])
        }

        const summary = JSON.parse(fs.readFileSync(run.files.summary, "utf8")) as ResultLine.Summary
        const types = summary.cells[0]!.types!
        expect(Object.keys(types).sort()).toEqual(["adversarial", "multi-hop", "open-domain", "single-hop", "temporal"])
        // single-hop: (1 + 2/3 + 2/3 + 1 + 0.4) / 5
        expect(types["single-hop"]!.metrics["generation.locomo_f1"]!.mean).toBeCloseTo(
          (1 + 2 / 3 + 2 / 3 + 1 + 0.4) / 5,
          12
        )
        expect(types["single-hop"]!.n).toBe(5)
        for (const [type, values] of byType)
          expect(types[type]!.metrics["generation.locomo_f1"]!.mean, type).toBeCloseTo(
            values.reduce((a, b) => a + b, 0) / values.length,
            12
          )
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
