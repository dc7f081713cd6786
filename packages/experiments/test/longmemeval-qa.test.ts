/**
 * LongMemEval question answering through a real sweep on the reader's fixture
 * (packages/data/test/fixtures/longmemeval/longmemeval_s_tiny.json, four questions of four types):
 * the `qa` generator and the `longmemeval-judge` scorer ask a loopback OpenAI-compatible server,
 * which answers from a script, in two cells (the whole history, and the oracle's evidence
 * sessions). Each verdict is worked out by hand below; summary.json's per-type accuracy is their
 * mean. The judge's requests on the wire are also compared with the prompts the authors' own
 * get_anscheck_prompt builds for the same rows, so the test needs their repository (skipped without).
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"
import { Config } from "@cupid-lab/runner"
import { LongMemEvalReference } from "@cupid-lab/scorers/testing"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Sweeps from "../src/Sweeps.js"
import { lines, tempDir } from "./support.js"

const fixture = path.join(
  import.meta.dirname,
  "..",
  "..",
  "data",
  "test",
  "fixtures",
  "longmemeval",
  "longmemeval_s_tiny.json"
)
type Question = { question_id: string; question_type: string; question: string; answer: string | number }
const questions = JSON.parse(fs.readFileSync(fixture, "utf8")) as ReadonlyArray<Question>

/**
 * The reader, by question and what its prompt shows. The whole history distracts it on the
 * multi-session question (a session about a tap) and lets it guess on the abstention question
 * (the tent was bought, but no Oslo trip is mentioned); the oracle shows the concert sessions alone
 * and, for the abstention question, no session.
 */
const reader = (question: string, prompt: string): string => {
  if (question.startsWith("What breed"))
    return prompt.includes("border collie") ? "A border collie" : "No information available"
  if (question.startsWith("How many concerts")) return prompt.includes("leaking tap") ? "One concert" : "Two concerts"
  if (question.startsWith("How many days"))
    return prompt.includes("two-person tent") ? "12 days" : "No information available"
  return prompt.includes("figure-eight") ? "The figure-eight follow-through" : "No information available"
}

/** The judge, by the response it is shown: the reply, and whether it stops at the token limit. */
const judged: Readonly<Record<string, { readonly reply: string; readonly cut?: true }>> = {
  // Cut at 10 tokens after the verdict: read as it is, as the authors' code reads it.
  "A border collie": { reply: "Yes, the response names the breed", cut: true },
  "One concert": { reply: "No." },
  "Two concerts": { reply: "YES" },
  "12 days": { reply: "no" },
  "No information available": { reply: "Yes." },
  "The figure-eight follow-through": { reply: "Yes" }
}

// By hand: question -> [full history, oracle] verdicts.
const expected: Readonly<Record<string, readonly [number, number]>> = {
  "q-user-1": [1, 1], // "A border collie" in both
  "q-multi-1": [0, 1], // distracted by the tap session / both concerts
  "q-temporal-1_abs": [0, 1], // guesses "12 days" / "No information available" on an unanswerable question
  "q-assistant-1": [1, 1]
}

const questionIn = (content: string) => questions.find((q) => content.includes(q.question))!

const configText = (server: string, cacheDir: string) =>
  [
    "name: longmemeval-qa",
    `data: { source: ${JSON.stringify(`longmemeval:${fixture}`)} }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  reader: { provider: openai, model: reader, baseURL: "${server}", temperature: 0 }`,
    `  judge: { provider: openai, model: judge, baseURL: "${server}" }`,
    "pipeline:",
    "  generator: { use: qa, model: reader }",
    "cells:",
    "  - name: full-history",
    "  - { name: oracle, retriever: oracle }",
    "scorers: [{ use: longmemeval-judge, model: judge }]",
    "concurrency: 2"
  ].join("\n")

describe("LongMemEval question answering", () => {
  it.scopedLive(
    "answers every question, judges it with the authors' prompts and settings, and gives per-type accuracy in summary.json",
    (ctx) =>
      Effect.gen(function* () {
        process.env["LONGMEMEVAL_REFERENCE_DIR"] = LongMemEvalReference.need(ctx)
        const server = yield* OpenAiServer.make({
          chat: (body) => {
            const content = body.messages.at(-1)!.content
            const q = questionIn(content)
            if (body.model === "reader") return reader(q.question, content)
            const response = Object.keys(judged).find((r) => content.includes(`${r}\n`))!
            const { reply, cut } = judged[response]!
            return { content: reply, ...(cut ? { finishReason: "length" } : {}) }
          }
        })
        const dir = tempDir()
        const config = yield* Config.parse(
          configText(server.baseURL, path.join(dir, "cache")),
          "longmemeval-qa.yaml",
          {}
        )
        const run = yield* Sweeps.sweep({ ...config, out: path.join(dir, "out"), outGiven: true })
        expect(run.pairs.failed).toBe(0)

        const results = lines(run.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(results).toHaveLength(8)
        const verdicts = Object.fromEntries(
          Object.keys(expected).map((id) => [
            id,
            ["full-history", "oracle"].map(
              (cell) =>
                results.find((r) => r.instance === id && r.cellName === cell)!.scores["generation.longmemeval_correct"]
            )
          ])
        )
        expect(verdicts).toEqual(expected)

        // The judge's requests: one user message, temperature 0, at most 10 tokens, the prompt their code builds.
        const judgeBodies = server.requests
          .map((r) => r.body as OpenAiServer.ChatBody)
          .filter((b) => b.model === "judge")
        expect(
          new Set(
            judgeBodies.map((b) =>
              JSON.stringify([b.temperature, b.max_tokens, b.messages.length, b.messages[0]!.role])
            )
          )
        ).toEqual(new Set([JSON.stringify([0, 10, 1, "user"])]))
        const rows = results.map((r) => {
          const q = questions.find((x) => x.question_id === r.instance)!
          return { ...q, hypothesis: r.generation!.text, abstention: q.question_id.includes("_abs"), reply: "" }
        })
        const theirs = yield* Effect.promise(() => LongMemEvalReference.run(rows))
        // Identical judge calls of the two cells are answered once by the cache.
        expect(judgeBodies.map((b) => b.messages[0]!.content).sort()).toEqual([...new Set(theirs.prompts)].sort())

        const summary = JSON.parse(fs.readFileSync(run.files.summary, "utf8")) as ResultLine.Summary
        const cell = (name: string) => summary.cells.find((c) => c.name === name)!
        const accuracy = (name: string, type: string) =>
          cell(name).types![type]!.metrics["generation.longmemeval_correct"]!
        // Full history: single-session-user 1/1, multi-session 0/1, temporal-reasoning 0/1, single-session-assistant 1/1.
        expect(
          ["single-session-user", "multi-session", "temporal-reasoning", "single-session-assistant"].map((t) => [
            accuracy("full-history", t).mean,
            accuracy("full-history", t).n
          ])
        ).toEqual([
          [1, 1],
          [0, 1],
          [0, 1],
          [1, 1]
        ])
        expect(cell("full-history").slices.all.metrics["generation.longmemeval_correct"]!.mean).toBe(0.5)
        expect(cell("oracle").slices.all.metrics["generation.longmemeval_correct"]!.mean).toBe(1)
        // Abstention accuracy: the one _abs question, wrong with the whole history, right with the oracle.
        const abstention = (name: string) => cell(name).slices.all.metrics["generation.longmemeval_abstention"]!
        expect([abstention("full-history").mean, abstention("full-history").n]).toEqual([0, 1])
        expect([abstention("oracle").mean, abstention("oracle").n]).toEqual([1, 1])
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
