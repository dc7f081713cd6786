// longmemeval-judge against the LongMemEval authors' own evaluation code
// (tools/reference/longmemeval_harness.py imports their get_anscheck_prompt and runs their
// evaluate_qa.py and print_qa_metrics.py with a stub client answering scripted replies): the
// messages the scorer sends are theirs byte for byte, with their settings; every verdict is their
// label; per type, overall, task-averaged and abstention accuracy are the numbers they print.
import { Domain, type LanguageModel, ModelCache } from "@cupid-lab/core"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import * as LongMemEvalJudge from "../src/LongMemEvalJudge.js"
import * as LongMemEvalPrompts from "../src/LongMemEvalPrompts.js"
import * as LongMemEvalReference from "../src/testing/LongMemEvalReference.js"
import { mean } from "../src/Statistics.js"
import { buildScorer, makeTrace, pluginEnv } from "./fixtures.js"

type Item = LongMemEvalReference.Item

const row = (
  question_id: string,
  question_type: string,
  question: string,
  answer: string | number,
  hypothesis: string,
  reply: string
): Item => ({
  question_id,
  question_type,
  question,
  answer,
  hypothesis,
  abstention: question_id.includes("_abs"),
  reply
})

// Questions and answers written for this test; the replies cover their rule's edges.
const items: ReadonlyArray<Item> = [
  row("t-ssu-1", "single-session-user", "How many kayaks do I own?", 2, "You own two kayaks.", "Yes."),
  row("t-ssu-2", "single-session-user", "What is my cat called?", "Miso", "Braces {} and {0} stay: Miso", "no"),
  row(
    "t-ssa-1",
    "single-session-assistant",
    "Which café did you suggest?",
    "Café Naïve",
    "Café Naïve —\nnear the port",
    " YES\n"
  ),
  row(
    "t-ssp-1",
    "single-session-preference",
    "Any dinner ideas?",
    "The user prefers vegan dishes.",
    "Try a lentil stew.",
    "Yes, the model response is correct since it"
  ),
  row("t-tr-1", "temporal-reasoning", "How many days between the hike and the race?", "18 days", "19 days", "eyes"),
  row(
    "t-tr-2_abs",
    "temporal-reasoning",
    "How many days after the Oslo trip did I buy skis?",
    "You never mentioned an Oslo trip.",
    "No information available",
    "Yes"
  ),
  row(
    "t-ku-1",
    "knowledge-update",
    "Where do I work now?",
    "At the city library",
    "You moved from the museum to the city library.",
    "Ｙｅｓ"
  ),
  row("t-ku-2_abs", "knowledge-update", "What is my new manager's name?", "Not mentioned.", "  Dana \n", ""),
  row("t-ms-1", "multi-session", "How many concerts did I attend?", 3, "Three", "No; yes"),
  row(
    "t-ms-2",
    "multi-session",
    "Which cities did I visit in May?",
    "Lisbon, Porto",
    "Lisbon",
    "I'm sorry, but I can't help with that."
  ),
  row(
    "t-ms-3_abs",
    "multi-session",
    "How much did my violin cost?",
    "The price is never given.",
    "You did not say.",
    "yes"
  )
]

const instanceOf = (item: Item): Domain.Instance => ({
  id: item.question_id,
  personaId: item.question_id,
  type: item.question_type,
  query: { key: Domain.queryKey(item.question_id), request: item.question, sessions: [] },
  gold: { factor: "", preference: "", checklist: [], sessions: [], answer: String(item.answer) }
})

/** The judge: each item's reply, found by its question in the prompt; the cut reply stops at the token limit. */
const judge = () => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const lm: LanguageModel.Service = {
    info: { provider: "test", model: LongMemEvalJudge.authorsModel, params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        const content = request.messages[0]!.content
        const item = items.find((i) => content.includes(`Question: ${i.question}\n`))!
        const cut = item.reply.startsWith("Yes, the model")
        return { text: item.reply, promptTokens: 100, completionTokens: 10, ...(cut ? { finishReason: "length" } : {}) }
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

const round4 = (x: number) => Number(x.toFixed(4))

describe("LongMemEval's judge against the authors' evaluation code", () => {
  beforeEach((ctx) => void LongMemEvalReference.need(ctx))

  it("sends their messages with their settings and gives their verdicts and accuracies", async () => {
    const dir = LongMemEvalReference.need()
    const theirs = await LongMemEvalReference.run(items)
    const { lm, requests } = judge()
    const env = Layer.merge(
      pluginEnv({ judge: { languageModel: lm } }),
      Layer.succeed(LongMemEvalPrompts.Reference, { dir })
    )
    const scores = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const scorer = yield* buildScorer("longmemeval-judge", { model: "judge" })
          return yield* Effect.forEach(items, (item) => {
            const instance = instanceOf(item)
            return scorer.score({ instance, trace: makeTrace(instance, { generation: { text: item.hypothesis } }) })
          })
        })
      ).pipe(Effect.provide(env))
    )

    // The prompts their get_anscheck_prompt builds, and the calls their main makes.
    expect(requests.map((r) => r.messages)).toEqual(theirs.prompts.map((content) => [{ role: "user", content }]))
    expect(requests.map((r) => r.messages)).toEqual(theirs.requests.map((r) => r.messages))
    for (const [i, r] of requests.entries()) {
      expect({ temperature: r.temperature, maxTokens: r.maxTokens }).toEqual({
        temperature: theirs.requests[i]!.temperature,
        maxTokens: theirs.requests[i]!.max_tokens
      })
    }
    expect(theirs.requests.map((r) => [r.model, r.n])).toEqual(items.map(() => [LongMemEvalJudge.authorsModel, 1]))

    const correct = scores.map((s) => s["generation.longmemeval_correct"] as number)
    expect(Object.fromEntries(items.map((i, k) => [i.question_id, correct[k] === 1]))).toEqual(theirs.labels)
    expect(items.map((i) => LongMemEvalJudge.isAbstention(i.question_id))).toEqual(items.map((i) => i.abstention))
    const abstention = scores.map((s) => s["generation.longmemeval_abstention"] as number)
    expect(abstention.map((v, k) => (items[k]!.abstention ? v === correct[k] : Number.isNaN(v)))).toEqual(
      items.map(() => true)
    )

    // What their two scripts print: per type (value, N), overall, task-averaged and abstention accuracy.
    const byType = new Map<string, Array<number>>()
    items.forEach((i, k) => byType.set(i.question_type, [...(byType.get(i.question_type) ?? []), correct[k]!]))
    const perType = (line: string) => {
      const m = /^\t(\S+): (\S+) \((\d+)\)$/.exec(line)!
      return [m[1]!, Number(m[2]), Number(m[3])] as const
    }
    const ours = [...byType].map(([type, v]) => [type, round4(mean(v)), v.length] as const)
    const sorted = <A extends ReadonlyArray<unknown>>(xs: ReadonlyArray<A>) =>
      [...xs].sort((a, b) => String(a[0]).localeCompare(String(b[0])))
    expect(sorted(theirs.printed.filter((l) => l.startsWith("\t")).map(perType))).toEqual(sorted(ours))
    expect(theirs.printed[0]).toBe(`Accuracy: ${round4(mean(correct))}`)
    const figure = (label: string) =>
      Number(
        theirs.metrics
          .find((l) => l.startsWith(label))!
          .split(": ")[1]!
          .split(" ")[0]
      )
    expect(figure("Overall Accuracy")).toBe(round4(mean(correct)))
    expect(figure("Task-averaged Accuracy")).toBe(round4(mean([...byType.values()].map(mean))))
    expect(figure("Abstention Accuracy")).toBe(round4(mean(abstention.filter((v) => !Number.isNaN(v)))))
    expect(theirs.metrics.at(-1)).toMatch(/\(3\)$/)
  })

  it("reads their file from a download too, keeps it in the model cache and reads it from there after", async () => {
    const dir = LongMemEvalReference.need()
    const bytes = fs.readFileSync(path.join(dir, LongMemEvalPrompts.file.path))
    expect(bytes.length).toBe(LongMemEvalPrompts.file.bytes)
    const server = await serve(bytes)
    try {
      const [fromDir, fromUrl, fromCache] = await Effect.runPromise(
        Effect.gen(function* () {
          const a = yield* LongMemEvalPrompts.templates({ dir })
          const b = yield* LongMemEvalPrompts.templates({ url: server.url })
          // Nothing listens there: the copy kept in the cache answers.
          const c = yield* LongMemEvalPrompts.templates({ url: "http://127.0.0.1:9", dryRun: true })
          return [a, b, c] as const
        }).pipe(Effect.provide(ModelCache.layerMemory))
      )
      expect(fromUrl.byTask).toEqual(fromDir.byTask)
      expect(fromCache.abstention).toEqual(fromDir.abstention)
      expect([fromDir.standIn, fromUrl.standIn, fromCache.standIn]).toEqual([false, false, false])
    } finally {
      server.close()
    }
  })
})
