/**
 * The judge's `repeats` through a real sweep: a loopback OpenAI-compatible server generates
 * responses and judges them with a score per instance plus seeded Gaussian noise of a known SD
 * (the noise depends on the request's seed, as a sampling model's answer would). The report's
 * spread of the repeats must match the injected noise within its Monte-Carlo error, and a rerun
 * on the same cache sends nothing.
 */
import { Hash } from "@cupid-lab/core"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Agreement } from "@cupid-lab/scorers"
import { Config } from "@cupid-lab/runner"
import type { ResultLine } from "@cupid-lab/results"

import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

import { lines, tempDir } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const sigma = 0.6
const personas = 14 // 42 instances

/** A uniform number in [0, 1) from a 32-bit seed (mulberry32), twice for Box-Muller. */
const uniforms = (seed: number): readonly [number, number] => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return [next(), next()]
}

const seedOf = (text: string): number => Number.parseInt(Hash.sha256Hex(text).slice(0, 8), 16)

/** The judge's answer: a score in [3, 7] fixed by the prompt, plus N(0, sigma) noise drawn from the prompt and the request's seed. */
const judged = (body: OpenAiServer.ChatBody): string => {
  const prompt = body.messages.map((m) => m.content).join("\n")
  const base = 3 + 4 * uniforms(seedOf(prompt))[0]
  const [u1, u2] = uniforms(seedOf(`${prompt}\u0000${String(body["seed"] ?? "none")}`))
  const z = Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2)
  return `1. The response covers part of the checklist.\n\nScore: ${(base + sigma * z).toFixed(4)}`
}

/** c4(k): E[sample SD of k normal values] / sigma. */
const c4 = (k: number): number => {
  // Gamma(k/2) / Gamma((k-1)/2) for integer k from the half-integer recurrences.
  const gamma = (x: number): number => (x === 1 ? 1 : x === 0.5 ? Math.sqrt(Math.PI) : (x - 1) * gamma(x - 1))
  return Math.sqrt(2 / (k - 1)) * (gamma(k / 2) / gamma((k - 1) / 2))
}

const configText = (server: string, cacheDir: string, repeats: number) =>
  [
    "name: repeats",
    `data: { source: "synthetic:personas=${personas},seed=3" }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  subject: { provider: openai, model: subject, baseURL: "${server}" }`,
    `  evaluator: { provider: openai, model: evaluator, baseURL: "${server}", temperature: 1 }`,
    "pipeline:",
    "  retriever: { use: recency, k: 2 }",
    "  generator: { use: llm, model: subject, preference: gold }",
    `scorers: [{ use: judge, model: evaluator, repeats: ${repeats} }]`,
    "concurrency: 4"
  ].join("\n")

describe("judge repeats against a noisy loopback judge", () => {
  it.scopedLive("the report's spread matches the injected noise; a rerun on the same cache sends no request", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: (body) =>
          body.model === "evaluator" ? judged(body) : "Here is the answer, with the steps you asked for."
      })
      const dir = tempDir()
      const cache = path.join(dir, "cache")
      const sweep = (out: string, repeats: number) =>
        Effect.flatMap(Config.parse(configText(server.baseURL, cache, repeats), "repeats.yaml", {}), (c) =>
          Sweeps.sweep({ ...c, out: path.join(dir, out), outGiven: true })
        )
      const judgeRequests = () =>
        server.requests.filter((r) => (r.body as OpenAiServer.ChatBody | undefined)?.model === "evaluator").length

      const k = 4
      const first = yield* sweep("first", k)
      expect(first.pairs.failed).toBe(0)
      const n = first.instances
      expect(n).toBe(3 * personas)
      // Each distinct judge prompt is asked once per repeat, each repeat with its own seed. (The
      // consistent and contrastive instances of a persona share a request, a gold preference and
      // here a response: their judgments are one cached set.)
      const judgeBodies = server.requests
        .map((r) => r.body as OpenAiServer.ChatBody)
        .filter((b) => b.model === "evaluator")
      const prompts = new Set(judgeBodies.map((b) => JSON.stringify(b.messages)))
      expect(prompts.size).toBeGreaterThan(personas)
      expect(judgeRequests()).toBe(prompts.size * k)
      expect(new Set(judgeBodies.map((b) => `${JSON.stringify(b.messages)} ${String(b["seed"])}`)).size).toBe(
        prompts.size * k
      )
      expect(new Set(judgeBodies.map((b) => b["seed"]))).toEqual(new Set([undefined, 1, 2, 3]))

      const results = lines(first.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      expect(results).toHaveLength(n)
      for (const line of results) {
        const values = line.repeats?.["generation.score"] as ReadonlyArray<number>
        expect(values).toHaveLength(k)
        expect(line.scores["generation.score"]).toBeCloseTo(values.reduce((a, b) => a + b, 0) / k, 12)
      }
      // The spread of k normal draws has mean c4(k) sigma and SD sigma sqrt(1 - c4^2); its mean over
      // the distinct judgments is within 4 Monte-Carlo standard errors of the expectation.
      const repeats = results.map((l) => l.repeats!["generation.score"] as ReadonlyArray<number>)
      const distinct = [...new Map(repeats.map((r) => [JSON.stringify(r), r])).values()]
      expect(distinct).toHaveLength(prompts.size)
      const spread = Agreement.of(distinct).meanWithinSd
      const mcError = (sigma * Math.sqrt(1 - c4(k) ** 2)) / Math.sqrt(distinct.length)
      expect(Math.abs(spread - c4(k) * sigma)).toBeLessThan(4 * mcError)
      // Scores spread over [3, 7] (variance 4/3) against noise variance 0.36: ICC near 0.79; the
      // judge's share of the mean's variance near 0.09 / (4/3 + 0.09) = 0.063.
      const agreement = Agreement.of(repeats)
      expect(agreement.icc).toBeGreaterThan(0.6)
      expect(agreement.icc).toBeLessThan(0.92)
      expect(agreement.judgeShare).toBeGreaterThan(0.02)
      expect(agreement.judgeShare).toBeLessThan(0.15)

      const report = fs.readFileSync(first.files.report, "utf8")
      expect(report).toContain("## Repeated judgments")
      const row = report.split("\n").find((l) => l.includes("`generation.score`") && l.startsWith("| "))
      expect(row).toBeDefined()
      const fmt = (x: number) => x.toFixed(3)
      expect(row).toContain(
        `| ${n} | ${k} | ${fmt(agreement.meanWithinSd)} | ${fmt(agreement.icc)} | ${fmt(agreement.judgeShare)} |`
      )
      expect(fs.readFileSync(path.join(first.out, "report.html"), "utf8")).toContain(
        '<h2 id="repeats">Repeated judgments</h2>'
      )

      // The same sweep into another directory: every call is answered by the cache.
      const before = server.requests.length
      const second = yield* sweep("second", k)
      expect(server.requests.length).toBe(before)
      expect(fs.readFileSync(second.files.results, "utf8")).toBe(fs.readFileSync(first.files.results, "utf8"))

      // One more repeat asks only for it: one request per instance.
      yield* sweep("third", k + 1)
      expect(server.requests.length).toBe(before + prompts.size)
      expect(judgeRequests()).toBe(prompts.size * (k + 1))
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
