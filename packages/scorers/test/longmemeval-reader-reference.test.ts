// The `qa` generator's LongMemEval reader (prompt: longmemeval) against the LongMemEval authors'
// own src/generation/run_generation.py (tools/reference/longmemeval_reader_harness.py runs its
// main on the same questions with a stub client that records each chat call and answers from a
// script): for every setting, each message our reader sends is theirs byte for byte, with their
// max_tokens and temperature, and each answer we keep is the hypothesis their script writes. The
// questions go through this project's LongMemEval reader from a file, as in a sweep.
import { Domain, type LanguageModel, LongMemEvalReader, ModelCache, Models, QaGenerator } from "@cupid-lab/core"
import { Dataset } from "@cupid-lab/data"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import * as AuthorsCheckout from "../src/testing/AuthorsCheckout.js"

const checkout = await AuthorsCheckout.make({
  name: "LongMemEval",
  variable: "LONGMEMEVAL",
  repository: LongMemEvalReader.repository,
  commit: LongMemEvalReader.commit,
  files: { [LongMemEvalReader.file.path]: LongMemEvalReader.file.sha256 },
  harness: "longmemeval_reader_harness.py",
  modules: ["numpy"],
  install: "pip install numpy",
  howToGet: LongMemEvalReader.howToGet
})

type Turn = { role: "user" | "assistant"; content: string; has_answer?: boolean }
interface Entry {
  question_id: string
  question_type: string
  question: string
  answer: string | number
  question_date: string
  haystack_session_ids: ReadonlyArray<string>
  haystack_dates: ReadonlyArray<string>
  haystack_sessions: ReadonlyArray<ReadonlyArray<Turn>>
  answer_session_ids: ReadonlyArray<string>
  /** The scripted answer. */
  reply: string
}

const user = (content: string, has_answer?: boolean): Turn =>
  has_answer === undefined ? { role: "user", content } : { role: "user", content, has_answer }
const assistant = (content: string, has_answer?: boolean): Turn =>
  has_answer === undefined ? { role: "assistant", content } : { role: "assistant", content, has_answer }

// Questions written for this test: sessions out of date order (as in the oracle file), a tie of
// dates, a year boundary, has_answer turns of both roles, non-ASCII text, quotes, backslashes,
// newlines and surrounding whitespace that json.dumps escapes and the nl format strips.
const entries: ReadonlyArray<Entry> = [
  {
    question_id: "r-multi-1",
    question_type: "multi-session",
    question: "How many cafés did I try in Kyōto?",
    answer: 2,
    question_date: "2024/01/03 (Wed) 09:05",
    haystack_session_ids: ["s_b", "answer_a1", "s_c", "answer_a2"],
    haystack_dates: [
      "2023/12/31 (Sun) 23:59",
      "2023/05/20 (Sat) 02:21",
      "2024/01/01 (Mon) 00:00",
      "2023/05/20 (Sat) 02:21"
    ],
    haystack_sessions: [
      [user('Plan a "quiet" New Year\'s Eve?  '), assistant("Sure:\n1. Tea\n2. Sleep \\ rest")],
      [user("I tried Café Naïve in 京都 today ☕", true), assistant("Lovely! 🎉", false)],
      [user("\u00a0Happy new year!\x1c"), assistant("\ufeffSame to you.")],
      [user("Another one: Kissa Ōmori.", true), assistant("Noted.")]
    ],
    answer_session_ids: ["answer_a1", "answer_a2"],
    reply: "  Two cafés.\n"
  },
  {
    question_id: "r-assistant-1",
    question_type: "single-session-assistant",
    question: "Which book did you recommend?",
    answer: "Der Zauberberg",
    question_date: "2023/08/14 (Mon) 18:30",
    haystack_session_ids: ["answer_x", "s_y"],
    haystack_dates: ["2023/08/02 (Wed) 07:45", "2023/07/30 (Sun) 21:10"],
    haystack_sessions: [
      [user("Any long novel?"), assistant("Try »Der Zauberberg« by Thomas Mann.", true)],
      [user("Tabs {or} spaces? {0} {}"), assistant("Spaces.\t")]
    ],
    answer_session_ids: ["answer_x"],
    reply: "\u00a0Der Zauberberg\x1d"
  },
  {
    question_id: "r-temporal-1_abs",
    question_type: "temporal-reasoning",
    question: "How many days before my trip to Oslo did I buy the tent?",
    answer: "The information provided is not enough.",
    question_date: "2023/03/01 (Wed) 12:00",
    haystack_session_ids: ["s_t"],
    haystack_dates: ["2023/02/11 (Sat) 16:20"],
    haystack_sessions: [[user("I bought a two-person tent."), assistant("Great for camping.")]],
    answer_session_ids: [],
    reply: " "
  }
]

const settings = [
  { retriever_type: "orig-session", history_format: "json", cot: true, reading: "con", topk_context: 1000 },
  { retriever_type: "orig-session", history_format: "json", cot: false, reading: "direct", topk_context: 50 },
  { retriever_type: "oracle-session", history_format: "nl", cot: true, reading: "con", topk_context: 1000 },
  { retriever_type: "oracle-session", history_format: "nl", cot: false, reading: "direct", topk_context: 1000 }
] as const

interface Theirs {
  readonly runs: ReadonlyArray<{
    readonly requests: ReadonlyArray<{
      readonly model: string
      readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
      readonly n: number
      readonly temperature: number
      readonly max_tokens: number
    }>
    readonly hypotheses: Readonly<Record<string, string>>
    readonly truncated: ReadonlyArray<string>
  }>
}

/** Ours: each question read from a file by the data reader, answered by `qa` with prompt: longmemeval. */
const ours = (dir: string, reading: "direct" | "con", historyFormat: "json" | "nl") => {
  const file = path.join(os.tmpdir(), `longmemeval-reader-${process.pid}-${reading}-${historyFormat}.json`)
  fs.writeFileSync(file, JSON.stringify(entries.map(({ reply: _reply, ...e }) => e)))
  const requests: Array<LanguageModel.CompletionRequest> = []
  const lm: LanguageModel.Service = {
    info: { provider: "scripted", model: "gpt-4o-2024-08-06", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        const text = entries.find((e) => request.messages[0]!.content.includes(e.question))!.reply
        return { text, promptTokens: 0, completionTokens: 0 }
      })
  }
  const options = Schema.decodeUnknownSync(QaGenerator.Options)({
    model: "reader",
    prompt: "longmemeval",
    reading,
    historyFormat
  })
  const program = Effect.gen(function* () {
    const { instances } = yield* Dataset.loadAll(`longmemeval:${file}`)
    const generator = yield* QaGenerator.make(options)
    const answers: Record<string, string> = {}
    for (const instance of instances) {
      // No retriever: every session; handed over newest first, the reader orders them.
      const sessions: ReadonlyArray<Domain.SessionView> = [...instance.query.sessions].reverse()
      const out = yield* generator.generate({
        request: instance.query.request,
        evidence: { sessions },
        ...(instance.query.date === undefined ? {} : { date: instance.query.date })
      })
      answers[instance.id] = out.text
    }
    return { answers, requests }
  })
  const saved = process.env["LONGMEMEVAL_REFERENCE_DIR"]
  process.env["LONGMEMEVAL_REFERENCE_DIR"] = dir
  const models = Models.layer({ reader: { languageModel: lm } }).pipe(Layer.provideMerge(ModelCache.layerMemory))
  return Effect.runPromise(
    program.pipe(
      Effect.provide(Layer.merge(models, NodeContext.layer)),
      Effect.ensuring(
        Effect.sync(() => {
          fs.rmSync(file, { force: true })
          if (saved === undefined) delete process.env["LONGMEMEVAL_REFERENCE_DIR"]
          else process.env["LONGMEMEVAL_REFERENCE_DIR"] = saved
        })
      )
    )
  )
}

describe("the qa generator's LongMemEval reader against the authors' run_generation.py", () => {
  beforeEach((ctx) => void checkout.need(ctx))

  it("sends their prompt with their settings and keeps the answer their script writes, in every setting", async () => {
    const dir = checkout.need()
    const theirs = await checkout.run<Theirs>({
      entries,
      settings: settings.map((s) => ({ ...s, model_name: "gpt-4o-2024-08-06" }))
    })
    for (const [i, setting] of settings.entries()) {
      const run = theirs.runs[i]!
      expect(run.truncated).toEqual([])
      const mine = await ours(dir, setting.reading, setting.history_format)
      expect(mine.requests.map((r) => r.messages)).toEqual(run.requests.map((r) => r.messages))
      expect(mine.requests.map((r) => [r.maxTokens, r.temperature])).toEqual(
        run.requests.map((r) => [r.max_tokens, r.temperature])
      )
      // What we do not send: `n` is 1, the API's default; the model is the `models:` entry's.
      expect(new Set(run.requests.map((r) => `${r.n} ${r.model}`))).toEqual(new Set(["1 gpt-4o-2024-08-06"]))
      expect(mine.answers).toEqual(run.hypotheses)
    }
    // Their prompts show no has_answer key, and the sessions in date order.
    const first = theirs.runs[0]!.requests[0]!.messages[0]!.content
    expect(first).not.toContain("has_answer")
    expect(first.indexOf("Kissa")).toBeGreaterThan(first.indexOf("Caf\\u00e9 Na\\u00efve"))
    expect(first.indexOf("Happy new year")).toBeGreaterThan(first.indexOf("New Year's Eve"))
  })
})
