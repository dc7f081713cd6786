/**
 * Log summaries through a real sweep: a loopback OpenAI-compatible server answers the summarizer's
 * `scope: log` prompt in the paper's Fig. 23 shape (`{"summaries": [{"session_id", "analysis",
 * "context", "preferences"}]}`), which the prompt asks for, or in the `{"sessions": [{"session",
 * ...}]}` shape an earlier prompt asked for. Both are read: every pair succeeds and carries each
 * session's summary, which the inference prompt then holds.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Config } from "@cupid-lab/runner"
import type { ResultLine } from "@cupid-lab/results"

import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as path from "node:path"

import { lines, tempDir } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const configText = (server: string, cacheDir: string) =>
  [
    "name: log-summaries",
    'data: { source: "synthetic:personas=2,seed=5" }',
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  subject: { provider: openai, model: subject, baseURL: "${server}" }`,
    "pipeline:",
    "  retriever: all",
    "  summarizer: { use: llm, model: subject, scope: log }",
    "  inferrer: { use: llm, model: subject }",
    "scorers: [{ use: retrieval, ks: [2] }]"
  ].join("\n")

type Shape = "fig23" | "earlier"

/** A log summary of `n` sessions in `shape`; session i's context names it, so a test can see where it went. */
const logSummary = (n: number, shape: Shape): string => {
  const entry = (i: number) => ({
    analysis: `Session ${i} shows care for detail.`,
    context: [`Context of session ${i}.`],
    preferences: [`Preference of session ${i}.`]
  })
  const numbers = Array.from({ length: n }, (_, i) => i + 1)
  const value =
    shape === "fig23"
      ? { summaries: numbers.map((i) => ({ session_id: i, ...entry(i) })) }
      : { sessions: numbers.map((i) => ({ session: i, ...entry(i) })) }
  return "```json\n" + JSON.stringify(value) + "\n```"
}

describe("log summaries from a loopback model", () => {
  for (const shape of ["fig23", "earlier"] as const) {
    it.scopedLive(`an answer in the ${shape === "fig23" ? "paper's Fig. 23" : "earlier"} shape is read`, () =>
      Effect.gen(function* () {
        const server = yield* OpenAiServer.make({
          chat: (body) => {
            const user = body.messages.map((m) => m.content).join("\n")
            if (!user.includes("For each session, write a short analysis")) return "Preference: Keep it short."
            return logSummary((user.match(/^### Session \d+$/gm) ?? []).length, shape)
          }
        })
        const dir = tempDir("cupid-log-summaries-")
        const config = yield* Config.parse(configText(server.baseURL, path.join(dir, "cache")), "summaries.yaml", {})
        const run = yield* Sweeps.sweep({ ...config, out: path.join(dir, "run"), outGiven: true })
        expect(run.pairs.failed).toBe(0)
        const results = lines(run.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(results).toHaveLength(6)
        for (const line of results) {
          expect(line.status).toBe("ok")
          expect(line.summaries!.map((s) => [s.context, s.preferences])).toEqual(
            line.summaries!.map((_, i) => [[`Context of session ${i + 1}.`], [`Preference of session ${i + 1}.`]])
          )
        }
        // The inference prompts hold the summaries.
        const prompts = server.requests.map((r) => JSON.stringify((r.body as OpenAiServer.ChatBody).messages))
        expect(prompts.some((p) => p.includes("Context of session 1.") && !p.includes("write a short analysis"))).toBe(
          true
        )
      }).pipe(Effect.provide(NodeContext.layer))
    )
  }
})
