/**
 * A judge swap: `sweep: { models.evaluator: [judge-a, judge-b] }` binds the role only the judge
 * scorer names, so the two cells generate the same replies (one generation call each, the second
 * from the cache) and are judged by different models. The report's "Agreement between judges"
 * gives each judge's mean, ICC(1) and Pearson's r over the instances both scored.
 */
import { ReferenceCheckout } from "@cupid-lab/core/testing"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Judges } from "@cupid-lab/report"
import type { ResultLine } from "@cupid-lab/results"

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { answer, type ChatBody, kindOf, referenceDir } from "./fixtures/paperModel.js"
import { commandIo, lines, tempDir } from "./support.js"

/** judge-a scores 1 + (digest mod 8); judge-b one point more: r = 1, means 1 apart. */
const chat = (body: ChatBody) => {
  if (kindOf(body) !== "judge") return answer(body).text
  const user = body.messages.map((m) => m.content).join("\n")
  const base = 1 + (parseInt(createHash("sha256").update(user).digest("hex").slice(0, 8), 16) % 8)
  return `### Evaluation Score\n\n${body.model === "test-judge-b" ? base + 1 : base}`
}

const config = (dir: string, baseURL: string) =>
  [
    "name: judges",
    `data: { source: "synthetic:personas=4,seed=5" }`,
    `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
    `referenceDir: ${JSON.stringify(referenceDir)}`,
    "models:",
    ...["subject", "judge-a", "judge-b"].map(
      (m) =>
        `  ${m}: { provider: openai, model: test-${m}, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`
    ),
    "pipeline:",
    "  retriever: all",
    "  generator: { use: llm, model: subject, preference: none, prompts: reference }",
    "sweep:",
    "  models.evaluator: [judge-a, judge-b]",
    "scorers: [{ use: judge, model: evaluator, prompts: reference }]"
  ].join("\n") + "\n"

describe("a judge swap", () => {
  it("Pearson's r by hand", () => {
    // x = 1, 2, 3; y = 2, 4, 7: sxy = 5, sxx = 2, syy = 114 / 9, r = 15 / sqrt(228).
    expect(Judges.pearson([1, 2, 3], [2, 4, 7])).toBeCloseTo(15 / Math.sqrt(228), 12)
    expect(Judges.pearson([1, 1, 1], [2, 4, 7])).toBeNaN()
  })

  it.scopedLive("scores the same replies with two judges; the report gives their agreement", () =>
    Effect.gen(function* () {
      ReferenceCheckout.need()
      const server = yield* OpenAiServer.make({ chat: (body) => chat(body as ChatBody) })
      const dir = tempDir("cupid-judges-")
      fs.writeFileSync(path.join(dir, "judges.yaml"), config(dir, server.baseURL))
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      expect(yield* Commands.main(["sweep", "--config", "judges", "--out", out], io), err.join("")).toBe(0)

      const bodies = server.requests.map((r) => r.body as ChatBody)
      // 12 instances: each reply generated once (the second cell's from the cache), judged by both.
      expect(bodies.filter((b) => kindOf(b) === "generate")).toHaveLength(12)
      expect(bodies.filter((b) => b.model === "test-judge-a")).toHaveLength(12)
      expect(bodies.filter((b) => b.model === "test-judge-b")).toHaveLength(12)

      const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      const scores = (cell: string) =>
        results
          .filter((r) => r.cellName === cell)
          .sort((x, y) => (x.instance < y.instance ? -1 : 1))
          .map((r) => r.scores["generation.score"] as number)
      const a = scores("judge-a"),
        b = scores("judge-b")
      expect(b).toEqual(a.map((x) => x + 1))
      // ICC(1) of two judges a constant 1 apart: MSW = 1/2 per instance; MSB = 2 s^2(a), s^2 the sample variance.
      const mean = a.reduce((s, x) => s + x, 0) / a.length
      const s2 = a.reduce((s, x) => s + (x - mean) ** 2, 0) / (a.length - 1)
      const icc = (2 * s2 - 0.5) / (2 * s2 + 0.5)
      const report = fs.readFileSync(path.join(out, "report.md"), "utf8")
      expect(report).toContain("## Agreement between judges")
      const row = report.split("\n").find((l) => l.includes("`generation.score`") && l.includes("evaluator"))!
      expect(row).toContain(`| 12 |`)
      expect(row).toContain(`judge-a: ${mean.toFixed(3)}`)
      expect(row).toContain(`judge-b: ${(mean + 1).toFixed(3)}`)
      expect(row).toContain(`| ${icc.toFixed(3)} | 1.000 |`)
    })
  )
})
