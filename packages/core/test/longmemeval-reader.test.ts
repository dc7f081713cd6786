// The parts of the LongMemEval reader that are this project's, against hand-written strings: the
// published dates rebuilt from the domain's, the sessions' order, Python's json.dumps and strip,
// the parser's anchors (on a small module written for this test, not the authors' file), and the
// `qa` generator's options and failures. The prompts themselves are compared with the authors'
// code in packages/scorers/test/longmemeval-reader-reference.test.ts.
import { describe, expect } from "@effect/vitest"
import { Effect, Either, Exit, Layer, Schema } from "effect"
import type * as Domain from "../src/Domain.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as LongMemEvalReader from "../src/LongMemEvalReader.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as QaGenerator from "../src/QaGenerator.js"
import { it } from "../src/testing/NodeTest.js"

// Templates written for this test: each field shows between angle brackets.
const t: LongMemEvalReader.Templates = {
  answer: { direct: ["D[", "] at <", "> Q<", ">"], con: ["C[", "] at <", "> Q<", "> step"] },
  session: ["\n#", " on ", ":", "|"],
  jsonPrefix: "\n",
  nlTurn: ["\n", ": ", ""],
  source: "test",
  standIn: false
}

const turns = (...pairs: ReadonlyArray<[Domain.Role, string]>) => pairs.map(([role, content]) => ({ role, content }))

describe("LongMemEval reader: dates and text", () => {
  it("writes the domain's dates as the published files do, weekday included", () => {
    expect(LongMemEvalReader.publishedDate("2023-05-20T02:21")).toBe("2023/05/20 (Sat) 02:21")
    expect(LongMemEvalReader.publishedDate("2024-02-29T00:00")).toBe("2024/02/29 (Thu) 00:00")
    expect(LongMemEvalReader.publishedDate("2000-01-03T23:59")).toBe("2000/01/03 (Mon) 23:59")
  })

  it("dumps a session's turns as json.dumps does: role and content only, ASCII escapes, ', ' and ': '", () => {
    const dialogue = [
      { role: "user" as const, content: 'Café "ok"  ', speaker: "Ana" },
      { role: "assistant" as const, content: "😀 a\\b\n\x7f" }
    ]
    expect(LongMemEvalReader.sessionText(t, dialogue, "json")).toBe(
      '\n[{"role": "user", "content": "Caf\\u00e9 \\"ok\\"  "}, {"role": "assistant", "content": "\\ud83d\\ude00 a\\\\b\\n\\u007f"}]'
    )
  })

  it("writes the nl format one line per turn, content stripped as Python strips it", () => {
    const dialogue = turns(["user", "\u00a0 hi there\x1c\n"], ["assistant", "\ufeffkept BOM "])
    expect(LongMemEvalReader.sessionText(t, dialogue, "nl")).toBe("\nuser: hi there\nassistant: \ufeffkept BOM")
  })

  it("fills the answer template with the history, the question's published date and the question", () => {
    const sessions = [
      { date: "2023-05-20T02:21", dialogue: turns(["user", "a"]) },
      { date: "2023-05-21T10:00", dialogue: turns(["user", "b"], ["assistant", "c"]) }
    ]
    const q = { sessions, question: "Why?", date: "2023-05-30T23:40", historyFormat: "nl" } as const
    expect(LongMemEvalReader.prompt(t, { ...q, reading: "direct" })).toBe(
      "D[\n#1 on 2023/05/20 (Sat) 02:21:\nuser: a|\n#2 on 2023/05/21 (Sun) 10:00:\nuser: b\nassistant: c|] at <2023/05/30 (Tue) 23:40> Q<Why?>"
    )
    expect(LongMemEvalReader.prompt(t, { ...q, reading: "con" })).toMatch(/^C\[.*> step$/s)
  })
})

// A module of the same shape as the authors' prepare_prompt, with this test's own strings.
const module = [
  "def prepare_prompt(entry, retriever_type, cot, merge_key_expansion_into_value):",
  "    if merge_key_expansion_into_value is None or merge_key_expansion_into_value == 'none':",
  "        if cot:",
  "            answer_prompt_template = 'Think.\\n{}\\nDate: {}\\nQ: {}\\nA (steps):'",
  "        else:",
  "            answer_prompt_template = 'Plain.\\n{}\\nDate: {}\\nQ: {}\\nA:'",
  "    elif merge_key_expansion_into_value == 'merge':",
  "        answer_prompt_template = 'Merged {} {} {}'",
  "    for i, cur_item in enumerate(retrieved_chunks):",
  "        if history_format == 'json':",
  "            sess_string = '>' + json.dumps(chunk_entry)",
  "        elif history_format == 'nl':",
  "            if type(chunk_entry) == list:",
  "                for turn_entry in chunk_entry:",
  "                    sess_string += \"\\n* {} says {}\".format(turn_entry['role'], turn_entry['content'].strip())",
  '        if retriever_type in ["orig-session", "flat-session", "oracle-session"]:',
  "            history_string += '\\n## S{} ({})\\n{}\\n'.format(i+1, chunk_date, sess_string)",
  "    return prompt",
  "",
  "def main(args):",
  "    pass"
].join("\n")

describe("LongMemEval reader: reading the authors' module", () => {
  it("finds each template by the code around it", () => {
    const parsed = LongMemEvalReader.parse(module, "m.py")
    expect(parsed).toEqual(
      Either.right({
        answer: {
          con: ["Think.\n", "\nDate: ", "\nQ: ", "\nA (steps):"],
          direct: ["Plain.\n", "\nDate: ", "\nQ: ", "\nA:"]
        },
        session: ["\n## S", " (", ")\n", "\n"],
        jsonPrefix: ">",
        nlTurn: ["\n* ", " says ", ""],
        source: "m.py",
        standIn: false
      })
    )
  })

  it("says what it cannot find", () => {
    expect(LongMemEvalReader.parse("x = 1", "m.py")).toEqual(Either.left("no function prepare_prompt"))
    expect(LongMemEvalReader.parse(module.replace("        if cot:", "        if con:"), "m.py")).toEqual(
      Either.left("the plain branch's answer templates are not under `if cot:` and `else:`")
    )
    expect(LongMemEvalReader.parse(module.replace("Date: {}\\nQ", "Date: {0}\\nQ"), "m.py")).toEqual(
      Either.left("the con answer template has a format field other than {} or an escaped brace")
    )
  })
})

const recording = () => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const lm: LanguageModel.Service = {
    info: { provider: "scripted", model: "m1", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return { text: " The answer \n", promptTokens: 10, completionTokens: 5 }
      })
  }
  // A dry run's registry, so the reader's file is not downloaded: stand-ins replace it.
  const models = Layer.succeed(Models.Models, {
    names: ["reader"],
    dryRun: true,
    languageModel: () => Effect.succeed(lm),
    embeddingModel: () => Effect.die("unused"),
    reranker: () => Effect.die("unused")
  })
  return { requests, layer: Layer.merge(models, ModelCache.layerMemory) }
}

const session = (index: number, date: string | undefined, content: string): Domain.SessionView => ({
  id: `s${index + 1}`,
  index,
  hash: `h${index}`,
  dialogue: [{ role: "user", content }],
  ...(date === undefined ? {} : { date })
})

const withoutCheckout = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const saved = process.env["LONGMEMEVAL_REFERENCE_DIR"]
      delete process.env["LONGMEMEVAL_REFERENCE_DIR"]
      return saved
    }),
    () => effect,
    (saved) =>
      Effect.sync(() => {
        if (saved !== undefined) process.env["LONGMEMEVAL_REFERENCE_DIR"] = saved
      })
  )

describe("qa generator with prompt: longmemeval", () => {
  const raw = { model: "reader", prompt: "longmemeval", historyFormat: "nl" }
  const options = Schema.decodeUnknownSync(QaGenerator.Options)(raw)

  it.effect(
    "sends one user message, sessions oldest first, with their limit and temperature; keeps the answer stripped",
    () =>
      withoutCheckout(
        Effect.gen(function* () {
          const { requests, layer } = recording()
          const decoded = QaGenerator.plugin.decode(raw)
          expect(Either.isRight(decoded) && decoded.right.params).toEqual({
            prompt: "longmemeval",
            model: "reader",
            reading: "con",
            historyFormat: "nl",
            temperature: 0,
            thinking: "strip"
          })
          const generator = yield* Effect.provide(QaGenerator.make(options), layer)
          const out = yield* generator.generate({
            request: "Where?",
            date: "2023-06-01T08:00",
            evidence: { sessions: [session(2, "2023-05-21T10:00", "later"), session(0, "2023-05-20T02:21", "first")] }
          })
          expect(out).toEqual({ text: "The answer" })
          const [request] = requests
          const x = (n: number) => "x".repeat(n)
          expect(request!.messages).toEqual([
            {
              role: "user",
              content:
                `${x(300)}` +
                `${x(10)}1\n2023/05/20 (Sat) 02:21${x(36)}\n\nuser: first\n` +
                `${x(10)}2\n2023/05/21 (Sun) 10:00${x(36)}\n\nuser: later\n` +
                `\n2023/06/01 (Thu) 08:00\nWhere?${x(25)}`
            }
          ])
          expect([request!.maxTokens, request!.temperature, request!.acceptTruncated]).toEqual([800, 0, true])
        })
      )
  )

  it.effect(
    "fails a question it cannot show as the authors do: no date, summaries, no session, an undated session",
    () =>
      withoutCheckout(
        Effect.gen(function* () {
          const { requests, layer } = recording()
          const generator = yield* Effect.provide(QaGenerator.make(options), layer)
          const dated = session(0, "2023-05-20T02:21", "first")
          const reasons = []
          for (const input of [
            { request: "Q", evidence: { sessions: [dated] } },
            { request: "Q", date: "2023-06-01T08:00", evidence: { sessions: [dated], summaries: [] } },
            { request: "Q", date: "2023-06-01T08:00", evidence: { sessions: [] } },
            { request: "Q", date: "2023-06-01T08:00", evidence: { sessions: [dated, session(1, undefined, "b")] } }
          ]) {
            const exit = yield* Effect.exit(generator.generate(input))
            reasons.push(
              Exit.isFailure(exit)
                ? String(exit.cause).match(/the question has no date|summarizer|non-empty history|s2 has no date/)?.[0]
                : "ok"
            )
          }
          expect(reasons).toEqual(["the question has no date", "summarizer", "non-empty history", "s2 has no date"])
          expect(requests).toHaveLength(0)
        })
      )
  )

  it("rejects the project prompt's options with prompt: longmemeval, and the reader's without it", () => {
    const decode = (raw: object) => Either.isRight(QaGenerator.plugin.decode(raw))
    expect(decode({ model: "m", prompt: "longmemeval", template: "mine.md" })).toBe(false)
    expect(decode({ model: "m", reading: "direct" })).toBe(false)
    expect(decode({ model: "m", prompt: "longmemeval", reading: "cot" })).toBe(false)
    expect(decode({ model: "m", prompt: "project", maxTokens: 300 })).toBe(true)
  })
})
