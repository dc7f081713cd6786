// locomo-judge against the Mem0 evaluation's own code (tools/reference/locomo_judge_harness.py
// imports their llm_judge.py and evals.py from a checkout of mem0ai/mem0, with a stub client
// answering scripted replies): the messages the scorer sends are theirs byte for byte, with their
// model's settings; every score is theirs, every reply their code cannot read fails here too;
// adversarial questions are skipped as their scripts skip them; the per-category means are the
// numbers their llm_judge.py prints.
import { Domain, type LanguageModel, ModelCache, Tokens } from "@cupid-lab/core"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import * as LocomoF1 from "../src/LocomoF1.js"
import * as LocomoJudge from "../src/LocomoJudge.js"
import * as LocomoJudgePrompts from "../src/LocomoJudgePrompts.js"
import * as LocomoJudgeReference from "../src/testing/LocomoJudgeReference.js"
import { mean } from "../src/Statistics.js"
import { buildScorer, makeTrace, pluginEnv } from "./fixtures.js"

type Item = LocomoJudgeReference.Item

const item = (
  category: Item["category"],
  question: string,
  answer: string | number,
  response: string,
  reply: string,
  conversation = "conv-1"
): Item => ({ conversation, question, answer, response, category, reply })

// Questions and answers written for this test; the replies cover their reading's edges.
const items: ReadonlyArray<Item> = [
  item(4, "Where does Ana live?", "Lisbon", "She lives in Lisbon.", '{"label": "CORRECT"}'),
  item(4, "What is Ana's kitten called?", "Pixel", "Mochi", '{"label": "WRONG"}'),
  item(4, "What did Ana paint?", "Her studio", "The studio {walls}", '```json\n{"label": "CORRECT"}\n```'),
  item(4, "Which café does Ben like?", "Café Naïve", "Café Naïve", '```\n{"label": "CORRECT"}\n```'),
  item(4, "What sport does Kai play?", "Tennis", "tennis", 'Sure.\n```json {"label": "WRONG"} ``` done'),
  item(4, "What is Ben's job?", "Nurse", "a nurse", '{"label": "correct"}'),
  item(4, "What does Ana drink?", "Tea", "tea", '{"label": "CORRECT "}'),
  item(4, "Where did Kai study?", "Porto", "Porto", '{"label": true}'),
  item(4, "What did Ben bake?", "Bread", "bread", '{"label": "WRONG", "label": "CORRECT"}'),
  item(4, "What is Ana's brother's name?", "Rui", "Rui", '{"label": "CORRECT", "confidence": NaN}'),
  item(4, "How old is Kai's dog?", 3, "three", '\u2003{"label": "CORRECT"}\x1c\n'),
  item(4, "Who gave Ana the vase?", "Clara", "Clara", '```json\u00a0{"label": "CORRECT"}\u00a0```'),
  item(4, "What does Ben collect?", "Stamps", "stamps", "CORRECT"),
  item(4, "What does Kai fear?", "Spiders", "spiders", '["CORRECT"]'),
  item(4, "Where did Ben travel?", "Oslo", "Oslo", '{"verdict": "CORRECT"}'),
  item(4, "What did Ana read?", "Dune", "Dune", '"CORRECT"'),
  item(4, "What does Clara grow?", "Tomatoes", "tomatoes", 'It matches. {"label": "CORRECT"}'),
  item(4, "What is Kai's car?", "A van", "a van", '\ufeff{"label": "CORRECT"}'),
  item(4, "When is Ben's birthday?", "May", "May", "I'm sorry, but I can't help with that."),
  item(2, "When did Ben hurt his knee?", "Early June 2023", "June 2023", '{"label": "CORRECT"}', "conv-2"),
  item(2, "When did Ana adopt Pixel?", "7 May 2023", "last week", '{"label": "WRONG"}', "conv-2"),
  item(1, "What did Clara make, and where?", "A blue vase; Lisbon", "a vase, Lisbon", '{"label": "CORRECT"}', "conv-2"),
  item(1, "How many miles does Ben run?", 30, "30 miles", '{"label":"CORRECT"}', "conv-2"),
  item(1, "Which pets does Kai have?", "A dog, a cat", "a dog", '{\n  "label": "WRONG"\n}', "conv-2"),
  item(3, "Would Ben enjoy a trail race?", "Likely yes", "Yes", '{"label": "CORRECT"}', "conv-2"),
  item(3, "Is Ana an introvert?", "Likely no; she hosts", "No", "", "conv-2"),
  item(5, "What color is Ben's kitten?", "Not mentioned", "Grey", '{"label": "CORRECT"}', "conv-2"),
  item(5, "What is Kai's cat's name?", "", "Not mentioned", "not json", "conv-2")
]

const typeOf = (category: Item["category"]) => Object.entries(LocomoF1.categories).find(([, c]) => c === category)![0]

const instanceOf = (i: Item, k: number): Domain.Instance => ({
  id: `${i.conversation}:q${k + 1}`,
  personaId: i.conversation,
  type: typeOf(i.category),
  query: { key: Domain.queryKey(i.conversation), request: i.question, sessions: [] },
  gold: { factor: "", preference: "", checklist: [], sessions: [], answer: String(i.answer) }
})

/** The judge: each item's reply, found by its question in the prompt. */
const judge = () => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const lm: LanguageModel.Service = {
    info: { provider: "test", model: LocomoJudge.authorsModel, params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        const content = request.messages[0]!.content
        const found = items.find((i) => content.includes(`Question: ${i.question}\n`))!
        return { text: found.reply, promptTokens: 300, completionTokens: 5 }
      })
  }
  return { lm, requests }
}

const serve = (body: Buffer) =>
  new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
    const server = http.createServer((_, res) => res.end(body))
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() })
    )
  })

describe("the Mem0 evaluation's LoCoMo judge against their code", () => {
  beforeEach((ctx) => void LocomoJudgeReference.need(ctx))

  it("sends their messages with their settings, gives their scores and failures, and their means", async () => {
    const dir = LocomoJudgeReference.need()
    const theirs = await LocomoJudgeReference.run(items)
    const { lm, requests } = judge()
    const env = Layer.merge(
      pluginEnv({ judge: { languageModel: lm } }),
      Layer.succeed(LocomoJudgePrompts.Reference, { dir })
    )
    const outcomes = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const scorer = yield* buildScorer("locomo-judge", { model: "judge" })
          return yield* Effect.forEach(items, (i, k) => {
            const instance = instanceOf(i, k)
            const trace = makeTrace(instance, { generation: { text: i.response } })
            return Effect.either(scorer.score({ instance, trace }))
          })
        })
      ).pipe(Effect.provide(env))
    )

    // Adversarial questions: no call, NaN; their scripts never ask about them either.
    const judged = items.flatMap((i, k) => (i.category === 5 ? [] : [k]))
    const adversarial = items.filter((i) => i.category === 5).map((i) => i.question)
    expect(requests).toHaveLength(judged.length)
    for (const [k, i] of items.entries())
      if (i.category === 5) expect(Either.getOrThrow(outcomes[k]!)["generation.locomo_judge"], i.question).toBeNaN()
    expect(theirs.main.asked.filter((q) => adversarial.includes(q))).toEqual([])
    expect(theirs.evals.filter((e) => adversarial.includes(e.question))).toEqual([])

    // The call their evaluate_llm_judge makes, for each judged question.
    for (const [n, k] of judged.entries()) {
      const ours = requests[n]!
      const request = theirs.judged[k]!.request!
      expect(ours.messages, items[k]!.question).toEqual(request.messages)
      expect(Object.keys(request).sort()).toEqual(["messages", "model", "response_format", "temperature"])
      expect([request.model, request.temperature, request.response_format]).toEqual([
        LocomoJudge.authorsModel,
        0,
        { type: "json_object" }
      ])
      expect([ours.temperature, ours.maxTokens, ours.responseFormat]).toEqual([0, undefined, "json"])
    }

    // Each score is theirs; a reply their code raises on fails the question here.
    const summary = (k: number) => {
      const o = outcomes[k]!
      return Either.isLeft(o) ? "failed" : o.right["generation.locomo_judge"]
    }
    const expected = (k: number) => {
      const t = theirs.judged[k]!
      return t.error !== undefined ? "failed" : t.score
    }
    expect(judged.map(summary)).toEqual(judged.map(expected))
    const failed = judged.filter((k) => theirs.judged[k]!.error !== undefined)
    expect(failed.length).toBeGreaterThanOrEqual(8)
    expect(theirs.mainError).not.toBe("")

    // Their llm_judge.py main and evals.py on the questions whose replies they read.
    const scored = judged.filter((k) => !failed.includes(k))
    const score = (k: number) => Either.getOrThrow(outcomes[k]!)["generation.locomo_judge"] as number
    expect(theirs.main.labels).toEqual(Object.fromEntries(scored.map((k) => [items[k]!.question, score(k)])))
    expect(theirs.evals).toEqual(
      scored.map((k) => ({ question: items[k]!.question, category: String(items[k]!.category), llm_score: score(k) }))
    )
    const byCategory = new Map<string, Array<number>>()
    for (const k of scored) {
      const c = String(items[k]!.category)
      byCategory.set(c, [...(byCategory.get(c) ?? []), score(k)])
    }
    expect(Object.keys(theirs.main.means).sort()).toEqual(["1", "2", "3", "4"])
    for (const [c, values] of byCategory) expect(mean(values), `category ${c}`).toBe(theirs.main.means[c])
  })

  it("reads their file from a download too, keeps it in the model cache and reads it from there after", async () => {
    const dir = LocomoJudgeReference.need()
    const bytes = fs.readFileSync(path.join(dir, LocomoJudgePrompts.file.path))
    expect(bytes.length).toBe(LocomoJudgePrompts.file.bytes)
    const server = await serve(bytes)
    try {
      const [fromDir, fromUrl, fromCache] = await Effect.runPromise(
        Effect.gen(function* () {
          const a = yield* LocomoJudgePrompts.prompt({ dir })
          const b = yield* LocomoJudgePrompts.prompt({ url: server.url })
          // Nothing listens there: the copy kept in the cache answers.
          const c = yield* LocomoJudgePrompts.prompt({ url: "http://127.0.0.1:9", dryRun: true })
          return [a, b, c] as const
        }).pipe(Effect.provide(ModelCache.layerMemory))
      )
      expect(fromUrl.pieces).toEqual(fromDir.pieces)
      expect(fromCache.pieces).toEqual(fromDir.pieces)
      expect([fromDir.standIn, fromUrl.standIn, fromCache.standIn]).toEqual([false, false, false])
      // The stand-in a dry run uses is about the prompt's size, in characters and in estimated tokens.
      const empty = { question: "", gold: "", generated: "" }
      const real = LocomoJudgePrompts.fill(fromDir, empty)
      const stand = LocomoJudgePrompts.fill(LocomoJudgePrompts.standIn(""), empty)
      expect(Math.abs(stand.length - real.length) / real.length).toBeLessThan(0.05)
      expect(Math.abs(Tokens.count(stand) - Tokens.count(real)) / Tokens.count(real)).toBeLessThan(0.05)
    } finally {
      server.close()
    }
  })
})
