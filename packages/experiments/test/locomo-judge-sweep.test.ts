/**
 * The Mem0 evaluation's LoCoMo judge through a real sweep: the `qa` generator and `locomo-judge`
 * ask a loopback OpenAI-compatible server, which answers each question of the hand-written fixture
 * from a script, with Mem0's prompt read from a checkout of mem0ai/mem0 at the pinned commit. The
 * judge's requests as they reach the server are the keyword arguments their evaluate_llm_judge
 * passes to the OpenAI client (tools/reference/locomo_judge_harness.py, on the same answers and
 * replies), and summary.json's per-category means are the ones their llm_judge.py prints.
 * Skipped, with one line, without the checkout or Python.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"
import { Config } from "@cupid-lab/runner"
import { LocomoJudgeReference } from "@cupid-lab/scorers/testing"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it } from "@effect/vitest"
import { beforeEach } from "vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Sweeps from "../src/Sweeps.js"
import { tempDir } from "./support.js"

const fixture = path.join(import.meta.dirname, "..", "..", "data", "test", "fixtures", "locomo", "locomo_tiny.json")

/** Question -> [the reader's scripted answer, the judge's scripted reply]. */
const script: Readonly<Record<string, readonly [string, string]>> = {
  "What is the name of Ana's kitten?": ["Pixel", '{"label": "CORRECT"}'],
  "When did Ben hurt his knee?": ["In June 2023", '```json\n{"label": "CORRECT"}\n```'],
  "What did Clara make at the pottery workshop, and where does she live?": ["A mug, Porto", '{"label": "WRONG"}'],
  "Would Ben likely enjoy a trail running race?": ["Likely yes", '{"label":"CORRECT"}'],
  "What color is Ben's kitten?": ["Not mentioned", '{"label": "CORRECT"}'],
  "What colour did Ana paint her studio?": ["Blue", '{"label": "WRONG"}'],
  "How many miles does Ben run each week?": ["30 miles", '{"label": "CORRECT"}'],
  "What did Ana do on the weekend?": ["She went hiking", '{\n  "label": "WRONG"\n}'],
  "What book did Kai finish?": ["A novel", '{"label": "CORRECT", "reason": "same book"}']
}

const judgeModel = "gpt-4o-mini"

const named = (content: string): string =>
  Object.keys(script).find((q) => content.includes(`Question: ${q}\n`)) ?? "unscripted"

interface LocomoQuestion {
  readonly question: string
  readonly answer?: string | number
  readonly category: 1 | 2 | 3 | 4 | 5
}

/** The fixture's questions as the harness takes them (answers as the file gives them, "" when absent, as Mem0's search.py writes them). */
const items = (): ReadonlyArray<LocomoJudgeReference.Item> =>
  (
    JSON.parse(fs.readFileSync(fixture, "utf8")) as ReadonlyArray<{ sample_id: string; qa: Array<LocomoQuestion> }>
  ).flatMap((conversation) =>
    conversation.qa.map((q) => ({
      conversation: conversation.sample_id,
      question: q.question,
      answer: q.answer ?? "",
      response: script[q.question]![0],
      category: q.category,
      reply: script[q.question]![1]
    }))
  )

const configText = (server: string, cacheDir: string) =>
  [
    "name: locomo-judge",
    `data: { source: ${JSON.stringify(`locomo:${fixture}`)} }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  reader: { provider: openai, model: reader, baseURL: "${server}" }`,
    `  judge: { provider: openai, model: ${judgeModel}, baseURL: "${server}" }`,
    "pipeline:",
    "  generator: { use: qa, model: reader }",
    "scorers: [{ use: locomo-judge, model: judge }]",
    "concurrency: 2"
  ].join("\n")

describe("the Mem0 evaluation's LoCoMo judge in a sweep", () => {
  beforeEach((ctx) => void LocomoJudgeReference.need(ctx))

  it.scopedLive("sends their requests on the wire and gives their per-category means in summary.json", () =>
    Effect.gen(function* () {
      const dir = LocomoJudgeReference.need()
      const theirs = yield* Effect.promise(() => LocomoJudgeReference.run(items()))
      const server = yield* OpenAiServer.make({
        chat: (body) => {
          const content = body.messages.at(-1)?.content ?? ""
          if (body.model === judgeModel) return script[named(content)]?.[1] ?? "unscripted"
          return script[/^Question: (.*)$/m.exec(content)?.[1] ?? ""]?.[0] ?? "unscripted"
        }
      })
      const work = tempDir()
      const saved = process.env.MEM0_REFERENCE_DIR
      process.env.MEM0_REFERENCE_DIR = dir
      const run = yield* Effect.gen(function* () {
        const config = yield* Config.parse(configText(server.baseURL, path.join(work, "cache")), "judge.yaml", {})
        return yield* Sweeps.sweep({ ...config, out: path.join(work, "out"), outGiven: true })
      }).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (saved === undefined) delete process.env.MEM0_REFERENCE_DIR
            else process.env.MEM0_REFERENCE_DIR = saved
          })
        )
      )
      expect(run.pairs.failed).toBe(0)

      // Each judge request as the server got it is their create(**kwargs), and nothing more.
      const bodies = server.requests.map((r) => r.body as OpenAiServer.ChatBody).filter((b) => b.model === judgeModel)
      const asked = bodies.map((b) => named(b.messages.at(-1)!.content))
      expect([...asked].sort()).toEqual([...theirs.main.asked].sort())
      expect(asked).not.toContain("What color is Ben's kitten?")
      const list = items()
      for (const [k, body] of bodies.entries())
        expect(body, asked[k]).toEqual(theirs.judged[list.findIndex((i) => i.question === asked[k])]!.request)

      const summary = JSON.parse(fs.readFileSync(run.files.summary, "utf8")) as ResultLine.Summary
      const types = summary.cells[0]!.types!
      const byNumber: Readonly<Record<string, string>> = {
        "1": "multi-hop",
        "2": "temporal",
        "3": "open-domain",
        "4": "single-hop"
      }
      for (const [category, value] of Object.entries(theirs.main.means))
        expect(types[byNumber[category]!]!.metrics["generation.locomo_judge"]!.mean, category).toBe(value)
      // By hand: 5 of the 8 judged answers are CORRECT; the adversarial question has no value.
      expect(summary.cells[0]!.slices.all.metrics["generation.locomo_judge"]!).toMatchObject({ n: 8, mean: 5 / 8 })
      expect(types["adversarial"]?.metrics["generation.locomo_judge"]?.n ?? 0).toBe(0)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
