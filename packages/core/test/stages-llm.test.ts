import { describe, expect } from "@effect/vitest"
import { it } from "../src/testing/NodeTest.js"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Builtins from "../src/Builtins.js"
import * as Corpus from "../src/Corpus.js"
import * as Domain from "../src/Domain.js"
import { ModelError, ModelNotConfigured, PluginError, StageError } from "../src/Errors.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import type * as Errors from "../src/Errors.js"
import type { SessionSummary, SessionView } from "../src/Domain.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as Pipeline from "../src/Pipeline.js"
import * as Plugin from "../src/Plugin.js"
import * as Retriever from "../src/Retriever.js"
import * as LlmGenerator from "../src/LlmGenerator.js"
import * as LlmInferrer from "../src/LlmInferrer.js"
import * as LlmSummarizer from "../src/LlmSummarizer.js"
import * as PromptTemplate from "../src/PromptTemplate.js"

/** A chat model that records what it was sent and answers with a function of the prompt. */
const scripted = (answer: (prompt: string) => string) => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const service: LanguageModel.Service = {
    info: { provider: "scripted", model: "m1", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return {
          text: answer(request.messages.map((m) => m.content).join("\n")),
          promptTokens: 10,
          completionTokens: 5
        }
      })
  }
  return { service, requests, prompts: () => requests.map((r) => r.messages.map((m) => m.content).join("\n")) }
}

const failing: LanguageModel.Service = {
  info: { provider: "scripted", model: "down", params: {} },
  complete: () =>
    Effect.fail(new ModelError({ provider: "scripted", model: "down", reason: "connection refused", retryable: true }))
}

const modelsWith = (lm: LanguageModel.Service, options: Models.MakeOptions = {}) =>
  Models.layer({ m: { languageModel: lm } }, options).pipe(Layer.provideMerge(ModelCache.layerMemory))

const session = (index: number, turns: ReadonlyArray<string>): Domain.SessionView => {
  const dialogue = turns.map((content, i) => ({
    role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
    content
  }))
  return { id: Domain.sessionId(index), index, hash: `h${index}`, dialogue }
}

const dana1 = session(1, [
  "I need a weekly update for Dana, my manager, from these notes: migration 70% done.",
  "Here is a detailed update with background.",
  "Too long for Dana. Put a one-line status first.",
  "Done.",
  "Perfect, thanks!"
])
const dana2 = session(4, [
  "Help me summarize the sprint review for Dana.",
  "Here is a summary.",
  "Keep it under 150 words.",
  "Trimmed.",
  "Great."
])
const request = "Write Dana an update on the data migration."

const summarizerOptions: LlmSummarizer.Options = {
  model: "m",
  scope: "session",
  maxTokens: 512,
  temperature: 0,
  thinking: "strip"
}
/** The summary of one session. */
const summarizeOne = (
  summarizer: {
    summarize: (s: ReadonlyArray<SessionView>) => Effect.Effect<ReadonlyArray<SessionSummary>, Errors.StageError>
  },
  session: SessionView
) => Effect.map(summarizer.summarize([session]), (all) => all[0]!)
const inferrerOptions: LlmInferrer.Options = {
  model: "m",
  maxTokens: 512,
  temperature: 0,
  prompts: "project",
  thinking: "strip"
}
const generatorOptions = (preference: LlmGenerator.PreferenceSource): LlmGenerator.Options => ({
  model: "m",
  preference,
  maxTokens: 2048,
  temperature: 0,
  prompts: "project",
  thinking: "strip"
})

const tmpFile = (name: string, text: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stages-test-"))
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a typed failure, got ${exit.cause._tag}`)
  return failure
}

describe("PromptTemplate", () => {
  const spec = { plugin: "llm", file: "my.md", required: ["request", "evidence"], optional: ["extra"] }

  it.effect("fills placeholders in one pass and drops comments", () =>
    Effect.gen(function* () {
      const t = yield* PromptTemplate.fromText(
        spec,
        "<!-- notes {{ignored}} -->\nAsk: {{ request }}\nSeen: {{evidence}}"
      )
      expect(t.placeholders).toEqual(["request", "evidence"])
      expect(PromptTemplate.renderText(t, { request: "use {{evidence}} literally", evidence: "E" })).toBe(
        "Ask: use {{evidence}} literally\nSeen: E"
      )
    })
  )

  it.effect("names the file and the unknown placeholder", () =>
    Effect.gen(function* () {
      const e = failureOf(yield* Effect.exit(PromptTemplate.fromText(spec, "{{request}} {{evidence}} {{requets}}")))
      expect(e).toBeInstanceOf(PluginError)
      expect(e.message).toBe(
        'plugin "llm": template my.md: unknown placeholder {{requets}}; available: {{request}}, {{evidence}}, {{extra}}'
      )
    })
  )

  it.effect("names the missing required placeholder", () =>
    Effect.gen(function* () {
      const e = failureOf(yield* Effect.exit(PromptTemplate.fromText(spec, "Only {{request}} here")))
      expect(e.message).toBe(
        'plugin "llm": template my.md: missing placeholder {{evidence}} (required: {{request}}, {{evidence}})'
      )
    })
  )

  it.effect("explains a placeholder that exists but not in this setting", () =>
    Effect.gen(function* () {
      const e = failureOf(
        yield* Effect.exit(
          PromptTemplate.fromText(
            { ...spec, unavailable: { preference: "no preference in this mode" } },
            "{{request}}{{evidence}}{{preference}}"
          )
        )
      )
      expect(e.message).toContain("placeholder {{preference}} is not available here (no preference in this mode)")
    })
  )

  it.effect("an unreadable file is a PluginError naming it", () =>
    Effect.gen(function* () {
      const e = failureOf(yield* Effect.exit(PromptTemplate.load({ ...spec, file: "/nonexistent/prompt.md" })))
      expect(e.message).toMatch(/^plugin "llm": template \/nonexistent\/prompt\.md: cannot be read/)
    })
  )

  it.effect("every default prompt file passes its plugin's checks", () =>
    Effect.gen(function* () {
      const built = [
        yield* Effect.exit(LlmSummarizer.make(summarizerOptions)),
        yield* Effect.exit(LlmInferrer.make(inferrerOptions)),
        ...(yield* Effect.forEach(["inferred", "gold", "none"] as const, (p) =>
          Effect.exit(LlmGenerator.make(generatorOptions(p)))
        ))
      ]
      expect(built.map((e) => e._tag)).toEqual(["Success", "Success", "Success", "Success", "Success"])
    }).pipe(Effect.provide(modelsWith(scripted(() => "").service)))
  )
})

describe("summarizer llm: parsing", () => {
  const cases: ReadonlyArray<readonly [string, string, { context: Array<string>; preferences: Array<string> }]> = [
    [
      "the requested format",
      "Context:\n- Weekly update for Dana.\nPreferences:\n- One-line status first.\n- Under 150 words.",
      {
        context: ["Weekly update for Dana."],
        preferences: ["One-line status first.", "Under 150 words."]
      }
    ],
    [
      "markdown headings, star bullets, preamble",
      "Here is the summary:\n\n## Context\n* Update for **Dana**\n\n## User Preferences\n* Status line on top",
      {
        context: ["Update for Dana"],
        preferences: ["Status line on top"]
      }
    ],
    [
      "bold labels with numbering",
      "**Context:**\n1. Sprint review for Dana\n\n**Preferences:**\n1) Keep it short\n2) No background",
      {
        context: ["Sprint review for Dana"],
        preferences: ["Keep it short", "No background"]
      }
    ],
    [
      "labels with the item inline",
      "- Context: a memo for the board\n- Preferences: plain language, no acronyms",
      {
        context: ["a memo for the board"],
        preferences: ["plain language, no acronyms"]
      }
    ],
    [
      "prose lines and a wrapped bullet",
      "Session context:\nThe user plans a trip.\n\nRequirements:\n- Trains only,\n  never flights\n- Budget first\n\nLet me know if you need more.",
      {
        context: ["The user plans a trip."],
        preferences: ["Trains only, never flights", "Budget first"]
      }
    ],
    [
      "'None' under a heading",
      "Context:\n- Casual chat\nPreferences:\n- None",
      { context: ["Casual chat"], preferences: [] }
    ],
    [
      "JSON in a code fence",
      '```json\n{"context": ["Report for Dana"], "preferences": ["Tables over prose"]}\n```',
      {
        context: ["Report for Dana"],
        preferences: ["Tables over prose"]
      }
    ]
  ]
  for (const [name, answer, expected] of cases) {
    it(name, () => {
      expect(LlmSummarizer.parse(answer)).toEqual(expected)
    })
  }

  it("bullets with no heading are not a summary", () => {
    expect(LlmSummarizer.parse("- something\n- something else")).toEqual({ context: [], preferences: [] })
  })

  it("the dry-run answer parses", () => {
    const parsed = LlmSummarizer.parse(LlmSummarizer.dryRunAnswer)
    expect(parsed.context).toHaveLength(1)
    expect(parsed.preferences).toHaveLength(2)
  })
})

describe("summarizer llm", () => {
  it.effect("prompts with the session's dialogue only and attaches the session id", () => {
    const lm = scripted(() => "Context:\n- Update for Dana\nPreferences:\n- Status first")
    return Effect.gen(function* () {
      const summarizer = yield* LlmSummarizer.make(summarizerOptions)
      const summary = yield* summarizeOne(summarizer, dana1)
      expect(summary).toEqual({ sessionId: "s2", context: ["Update for Dana"], preferences: ["Status first"] })
      const [prompt] = lm.prompts()
      expect(prompt).toContain("User: Too long for Dana. Put a one-line status first.")
      expect(prompt).toContain("Assistant: Here is a detailed update with background.")
      expect(prompt).not.toContain("s2")
      expect(prompt).not.toContain("{{")
      expect(lm.requests[0]).toMatchObject({ temperature: 0, maxTokens: 512 })
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("summarizes a session shared by several instances once", () => {
    const lm = scripted(() => "Context:\n- Update for Dana\nPreferences:\n- Status first")
    return Effect.gen(function* () {
      const summarizer = yield* LlmSummarizer.make(summarizerOptions)
      const first = yield* summarizeOne(summarizer, dana1)
      const again = yield* summarizeOne(summarizer, dana1)
      const elsewhere = yield* summarizeOne(summarizer, { ...dana1, id: "s7", index: 6 })
      expect(lm.requests).toHaveLength(1)
      expect(again).toEqual(first)
      expect(elsewhere.sessionId).toBe("s7")
      expect(elsewhere.preferences).toEqual(["Status first"])
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("an answer without list items is a StageError naming the session", () => {
    const lm = scripted(() => "I could not find anything notable in this conversation.")
    return Effect.gen(function* () {
      const summarizer = yield* LlmSummarizer.make(summarizerOptions)
      const e = failureOf(yield* Effect.exit(summarizeOne(summarizer, dana2)))
      expect(e).toBeInstanceOf(StageError)
      expect(e.message).toBe(
        'summarize (llm): session s5: no list items found under a "Context:" or "Preferences:" heading; got: "I could not find anything notable in this conversation."'
      )
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("a model failure becomes the stage's error", () =>
    Effect.gen(function* () {
      const summarizer = yield* LlmSummarizer.make(summarizerOptions)
      const e = failureOf(yield* Effect.exit(summarizeOne(summarizer, dana2)))
      expect(e).toEqual(
        new StageError({ stage: "summarize", plugin: "llm", reason: "scripted/down: connection refused" })
      )
    }).pipe(Effect.provide(modelsWith(failing)))
  )

  it.effect("an unknown model name fails when the plugin is built", () =>
    Effect.gen(function* () {
      const e = failureOf(yield* Effect.exit(LlmSummarizer.make({ ...summarizerOptions, model: "gpt" })))
      expect(e).toBeInstanceOf(ModelNotConfigured)
      expect(e.message).toContain("no model of that name is configured (configured: m)")
    }).pipe(Effect.provide(modelsWith(scripted(() => "").service)))
  )

  it.effect("uses a template given by path", () => {
    const file = tmpFile("mine.md", "<!-- my summary prompt -->\nSUMMARIZE THIS:\n{{dialogue}}")
    const lm = scripted(() => "Context:\n- x\nPreferences:\n- y")
    return Effect.gen(function* () {
      const summarizer = yield* LlmSummarizer.make({ ...summarizerOptions, template: file })
      yield* summarizeOne(summarizer, dana2)
      expect(lm.prompts()[0]).toBe(`SUMMARIZE THIS:\n${Domain.dialogueText(dana2.dialogue)}`)
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })
})

describe("inferrer llm: parsing", () => {
  const pref = "Updates for Dana should open with a one-line status and stay under 150 words."
  const cases: ReadonlyArray<readonly [string, string, string, string]> = [
    ["the requested format", `Analysis: Dana wants brevity.\nPreference: ${pref}`, pref, "Dana wants brevity."],
    [
      "bold label, colon outside",
      `Dana wants brevity.\n\n**Inferred preference**: ${pref}`,
      pref,
      "Dana wants brevity."
    ],
    [
      "bold label, colon inside, quoted",
      `**Analysis:** Dana wants brevity.\n**Preference:** "${pref}"`,
      pref,
      "Dana wants brevity."
    ],
    [
      "heading with the sentence on the next line",
      `## Analysis\nDana wants brevity.\n\n## Inferred Preference\n\n> ${pref}`,
      pref,
      "Dana wants brevity."
    ],
    [
      "curly quotes then commentary",
      `Analysis: short.\nPreference: \u201C${pref}\u201D This matches both sessions.`,
      pref,
      "short."
    ],
    ["trailing prose after the sentence", `Preference: ${pref} It reflects the two sessions about Dana.`, pref, ""],
    ["word-count note", `Analysis: x\nFinal preference: ${pref} (16 words)`, pref, "x"],
    ["numbered sections", `1. Analysis: Dana wants brevity.\n2. Preference: ${pref}`, pref, "Dana wants brevity."],
    [
      "lower case label with a dash",
      `analysis - Dana wants brevity.\npreference - ${pref}`,
      pref,
      "Dana wants brevity."
    ],
    [
      "the last label wins",
      `Analysis: the preference: earlier was tables.\nPreference: bullets.\n\nPreference: ${pref}`,
      pref,
      "the preference: earlier was tables.\nPreference: bullets."
    ],
    [
      "'Final answer' label",
      `Reasoning: both Dana sessions agree.\nFinal answer: ${pref}`,
      pref,
      "both Dana sessions agree."
    ],
    ["JSON object", `{"analysis": "Dana wants brevity.", "preference": "${pref}"}`, pref, "Dana wants brevity."],
    ["JSON in a fence", '```json\n{"inferred_preference": "' + pref + '"}\n```', pref, ""],
    [
      "a reasoning block first",
      `<think>Dana... Preference: tables?</think>\nAnalysis: brevity.\nPreference: ${pref}`,
      pref,
      "brevity."
    ],
    ["a bare sentence", pref, pref, ""],
    [
      "abbreviations inside the sentence",
      "Preference: Reports for Dr. Lee should cite e.g. two sources per claim. Extra.",
      "Reports for Dr. Lee should cite e.g. two sources per claim.",
      ""
    ]
  ]
  for (const [name, answer, preference, analysis] of cases) {
    it(name, () => {
      expect(LlmInferrer.parse(answer)).toEqual({ ok: true, value: { preference, analysis } })
    })
  }

  it("a first sentence over 30 words is kept whole", () => {
    const long =
      "Updates for Dana should open with a one-line status, list each risk as a bullet with an owner and a date, stay under 150 words, and end with the single decision she must make this week."
    const parsed = LlmInferrer.parse(`Preference: ${long} That is all.`)
    expect(parsed).toEqual({ ok: true, value: { preference: long, analysis: "" } })
  })

  const unreadable: ReadonlyArray<readonly [string, string]> = [
    ["empty", "   "],
    ["several sentences without a label", "The user likes short things. They also like tables. Hard to say more."],
    ["an empty preference", "Analysis: unclear.\nPreference:"],
    ["JSON without a preference field", '{"analysis": "nothing"}']
  ]
  for (const [name, answer] of unreadable) {
    it(`unreadable: ${name}`, () => {
      const parsed = LlmInferrer.parse(answer)
      expect(parsed.ok).toBe(false)
    })
  }

  it("the dry-run answer parses", () => {
    expect(LlmInferrer.parse(LlmInferrer.dryRunAnswer)).toEqual({
      ok: true,
      value: {
        preference:
          "Instructions should break the procedure into short numbered steps with a quick check after each section.",
        analysis:
          "In the earlier sessions about this kind of task the user asked twice for numbered steps and\nobjected when checks were missing."
      }
    })
  })
})

describe("inferrer llm", () => {
  const answer =
    "Analysis: both sessions ask for brevity.\nPreference: Keep updates for Dana short with the status first."

  it.effect("prompts with the request and the dialogues, oldest first", () => {
    const lm = scripted(() => answer)
    return Effect.gen(function* () {
      const inferrer = yield* LlmInferrer.make(inferrerOptions)
      const out = yield* inferrer.infer({ request, evidence: { sessions: [dana2, dana1] } })
      expect(out).toEqual({
        preference: "Keep updates for Dana short with the status first.",
        analysis: "both sessions ask for brevity."
      })
      const prompt = lm.prompts()[0]!
      expect(prompt).toContain(request)
      const first = prompt.indexOf("### Session 1\nUser: I need a weekly update for Dana")
      const second = prompt.indexOf("### Session 2\nUser: Help me summarize the sprint review")
      expect(first).toBeGreaterThan(0)
      expect(second).toBeGreaterThan(first)
      expect(prompt).not.toContain("{{")
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("reads the summaries instead of the dialogues when they are present", () => {
    const lm = scripted(() => answer)
    return Effect.gen(function* () {
      const inferrer = yield* LlmInferrer.make(inferrerOptions)
      yield* inferrer.infer({
        request,
        evidence: {
          sessions: [dana1, dana2],
          summaries: [
            { sessionId: "s5", context: ["Sprint review for Dana"], preferences: ["Under 150 words"] },
            { sessionId: "s2", context: ["Weekly update for Dana"], preferences: ["Status line first"] }
          ]
        }
      })
      const prompt = lm.prompts()[0]!
      expect(prompt).toContain(
        "### Session 1 (summary)\nContext:\n- Weekly update for Dana\nPreferences:\n- Status line first\n\n### Session 2 (summary)\nContext:\n- Sprint review for Dana\nPreferences:\n- Under 150 words"
      )
      expect(prompt).not.toContain("Too long for Dana")
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("says so when no session was selected", () => {
    const lm = scripted(() => answer)
    return Effect.gen(function* () {
      const inferrer = yield* LlmInferrer.make(inferrerOptions)
      yield* inferrer.infer({ request, evidence: { sessions: [] } })
      expect(lm.prompts()[0]).toContain("(No earlier sessions were selected for this request.)")
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("an unreadable answer is a StageError saying what was expected", () => {
    const lm = scripted(() => "I think they like short updates. Also tables, maybe.")
    return Effect.gen(function* () {
      const inferrer = yield* LlmInferrer.make(inferrerOptions)
      const e = failureOf(yield* Effect.exit(inferrer.infer({ request, evidence: { sessions: [dana1] } })))
      expect(e).toBeInstanceOf(StageError)
      expect(e.message).toBe(
        'infer (llm): no preference label found; expected a short analysis followed by a line "Preference: <one sentence of at most 30 words>", or the sentence on the line after a "### Most Likely Preference" heading; got: "I think they like short updates. Also tables, maybe."'
      )
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("sends the configured temperature and token limit", () => {
    const lm = scripted(() => answer)
    return Effect.gen(function* () {
      const inferrer = yield* LlmInferrer.make({ ...inferrerOptions, temperature: 0.7, maxTokens: 99 })
      yield* inferrer.infer({ request, evidence: { sessions: [dana1] } })
      expect(lm.requests[0]).toMatchObject({ temperature: 0.7, maxTokens: 99 })
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("rejects a user template that lacks the evidence", () =>
    Effect.gen(function* () {
      const file = tmpFile("infer.md", "Guess the preference for {{request}}.")
      const e = failureOf(yield* Effect.exit(LlmInferrer.make({ ...inferrerOptions, template: file })))
      expect(e.message).toBe(
        `plugin "llm": template ${file}: missing placeholder {{evidence}} (required: {{request}}, {{evidence}})`
      )
    }).pipe(Effect.provide(modelsWith(scripted(() => answer).service)))
  )
})

describe("generator llm", () => {
  const evidence = { sessions: [dana1] }

  it.effect("gold mode declares it and puts the passed preference in the prompt", () => {
    const lm = scripted(() => "  Status: on track.\n- Risk: cutover moved.  ")
    return Effect.gen(function* () {
      const generator = yield* LlmGenerator.make(generatorOptions("gold"))
      expect(generator.usesGoldPreference).toBe(true)
      const out = yield* generator.generate({ request, evidence, preference: "GOLD: one-line status first" })
      expect(out).toEqual({ text: "Status: on track.\n- Risk: cutover moved." })
      const prompt = lm.prompts()[0]!
      expect(prompt).toContain("GOLD: one-line status first")
      expect(prompt).toContain(request)
      expect(prompt).toContain("User: Too long for Dana. Put a one-line status first.")
      expect(lm.requests[0]).toMatchObject({ temperature: 0, maxTokens: 2048 })
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("inferred mode uses the passed preference and does not claim gold", () => {
    const lm = scripted(() => "reply")
    return Effect.gen(function* () {
      const generator = yield* LlmGenerator.make(generatorOptions("inferred"))
      expect(generator.usesGoldPreference).toBe(false)
      yield* generator.generate({ request, evidence, preference: "INFERRED: keep it short" })
      expect(lm.prompts()[0]).toContain("INFERRED: keep it short")
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("none mode leaves any passed preference out of the prompt", () => {
    const lm = scripted(() => "reply")
    return Effect.gen(function* () {
      const generator = yield* LlmGenerator.make(generatorOptions("none"))
      expect(generator.usesGoldPreference).toBe(false)
      yield* generator.generate({ request, evidence, preference: "SHOULD NOT APPEAR" })
      const prompt = lm.prompts()[0]!
      expect(prompt).not.toContain("SHOULD NOT APPEAR")
      expect(prompt).not.toContain("expects in this situation:")
      expect(prompt).toContain(request)
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("inferred mode without a preference is a StageError", () =>
    Effect.gen(function* () {
      const generator = yield* LlmGenerator.make(generatorOptions("inferred"))
      const e = failureOf(yield* Effect.exit(generator.generate({ request, evidence })))
      expect(e.message).toBe(
        "generate (llm): preference: inferred, but no inferred preference was passed (configure an inferrer, or use preference: gold or none)"
      )
    }).pipe(Effect.provide(modelsWith(scripted(() => "reply").service)))
  )

  it.effect("a template with {{preference}} is refused in none mode", () =>
    Effect.gen(function* () {
      const file = tmpFile("gen.md", "{{request}} {{preference}}")
      const e = failureOf(yield* Effect.exit(LlmGenerator.make({ ...generatorOptions("none"), template: file })))
      expect(e.message).toBe(
        `plugin "llm": template ${file}: placeholder {{preference}} is not available here (the generator runs with preference: none)`
      )
    }).pipe(Effect.provide(modelsWith(scripted(() => "reply").service)))
  )

  it("reads replies: reasoning blocks dropped, empty is no reply", () => {
    expect(LlmGenerator.parse("<think>plan</think>\n\nHello Dana,")).toBe("Hello Dana,")
    expect(LlmGenerator.parse("<think>only thoughts</think>  ")).toBeUndefined()
  })

  it.effect("an empty reply is a StageError", () =>
    Effect.gen(function* () {
      const generator = yield* LlmGenerator.make(generatorOptions("gold"))
      const e = failureOf(yield* Effect.exit(generator.generate({ request, evidence, preference: "p" })))
      expect(e.message).toBe("generate (llm): the model returned an empty reply")
    }).pipe(Effect.provide(modelsWith(scripted(() => " ").service)))
  )
})

describe("dry runs", () => {
  it.effect("every stage parses its own dry-run answer", () => {
    const lm = scripted(() => "never called")
    return Effect.gen(function* () {
      const summarizer = yield* LlmSummarizer.make(summarizerOptions)
      const summary = yield* summarizeOne(summarizer, dana1)
      expect(summary.preferences).toEqual([
        "Lead with a one-line status before any detail.",
        "Keep the update under 150 words."
      ])
      expect(summary.context).toEqual([
        expect.stringMatching(/^Example session [0-9a-f]{8}\.$/),
        "The user is preparing a project update for their manager, Dana."
      ])
      const inferrer = yield* LlmInferrer.make(inferrerOptions)
      const inferred = yield* inferrer.infer({ request, evidence: { sessions: [dana1] } })
      expect(inferred.preference).toMatch(
        /^Instructions should break the procedure into short numbered steps with a quick check after each section \(case [0-9a-f]{8}\)\.$/
      )
      const reply = yield* (yield* LlmGenerator.make(generatorOptions("inferred"))).generate({
        request,
        evidence: { sessions: [dana1] },
        preference: inferred.preference
      })
      expect(reply.text).toMatch(
        /^Here is a draft reply to your request, shaped by what you asked for in earlier sessions \(case [0-9a-f]{8}\)\.$/
      )
      // Answers that later prompts quote differ with their prompt and repeat with it, so a dry run
      // shares later calls through the cache exactly when a real run would.
      expect((yield* summarizeOne(summarizer, dana2)).context[0]).not.toBe(summary.context[0])
      expect((yield* summarizeOne(summarizer, dana1)).context[0]).toBe(summary.context[0])
      const other = yield* inferrer.infer({ request, evidence: { sessions: [dana2] } })
      expect(other.preference).not.toBe(inferred.preference)
      expect(lm.requests).toHaveLength(0)
    }).pipe(Effect.provide(modelsWith(lm.service, { dryRun: true })))
  })
})

describe("registration", () => {
  const registry = Plugin.makeRegistry(Builtins.plugins)
  const env = Layer.mergeAll(
    modelsWith(scripted(() => "Context:\n- c\nPreferences:\n- p").service),
    Layer.succeed(Plugin.Plugins, registry),
    Corpus.layerFromQueries([], "empty")
  )

  it("lists the stage plugins under their stages", () => {
    expect(registry.names("summarizer")).toContain("llm")
    expect(registry.names("inferrer")).toEqual(expect.arrayContaining(["extractive", "llm"]))
    expect(registry.names("generator")).toContain("llm")
  })

  it.effect("builds from config-shaped specs with schema defaults", () =>
    Effect.gen(function* () {
      const summarizer = yield* Plugin.build("summarizer", { use: "llm", model: "m", scope: "session" })
      expect((yield* summarizeOne(summarizer, dana2)).preferences).toEqual(["p"])
      const generator = yield* Plugin.build("generator", { use: "llm", model: "m", preference: "gold" })
      expect(generator.usesGoldPreference).toBe(true)
    }).pipe(Effect.provide(env), Effect.scoped)
  )

  it.effect("rejects unknown option keys and bad values", () =>
    Effect.gen(function* () {
      const typo = failureOf(yield* Effect.exit(Plugin.build("inferrer", { use: "llm", model: "m", maxToken: 5 })))
      expect(typo.message).toContain("maxToken")
      const mode = failureOf(
        yield* Effect.exit(Plugin.build("generator", { use: "llm", model: "m", preference: "oracle" }))
      )
      expect(mode.message).toContain("preference")
    }).pipe(Effect.provide(env), Effect.scoped)
  )
})

describe("pipeline, end to end", () => {
  const row: Domain.CupidRow = {
    persona_id: "p9",
    instance_type: "consistent",
    current_request: request,
    current_context_factor: "Dana",
    current_contextual_preference: "GOLD-PREF: one-line status, under 150 words",
    current_checklist: ["status first", "under 150 words"],
    prior_interactions: [
      { context_factor: "Dana", contextual_preference: "x", dialogue: dana1.dialogue },
      {
        context_factor: "pandas",
        contextual_preference: "y",
        dialogue: [{ role: "user", content: "Refactor my pandas script." }]
      },
      { context_factor: "Dana", contextual_preference: "x", dialogue: dana2.dialogue }
    ]
  }
  const instance = Domain.fromRow(row)
  const newest = (k: number): Retriever.Service => ({
    needsSummaries: false,
    retrieve: ({ query }) =>
      Effect.succeed(
        Retriever.fromScores(
          query.sessions.map((s) => [s.id, s.index]),
          k
        )
      )
  })

  const answerFor = (prompt: string): string => {
    if (prompt.includes("<conversation>")) {
      return prompt.includes("sprint review")
        ? "Context:\n- Sprint review for Dana\nPreferences:\n- Under 150 words"
        : "Context:\n- Pandas refactor\nPreferences:\n- Type hints"
    }
    if (prompt.includes("## New request")) return "Analysis: recent sessions.\nPreference: Keep it under 150 words."
    return `REPLY given ${prompt.includes("GOLD-PREF") ? "gold" : "no gold"}`
  }

  it.effect("retrieves, summarizes, infers and generates with the gold preference", () => {
    const lm = scripted(answerFor)
    return Effect.gen(function* () {
      const pipeline: Pipeline.CellPipeline = {
        retriever: { plugin: "newest", needsGold: false, service: newest(2) },
        summarizer: { plugin: "llm", service: yield* LlmSummarizer.make(summarizerOptions) },
        inferrer: { plugin: "llm", service: yield* LlmInferrer.make(inferrerOptions) },
        generator: { plugin: "llm", service: yield* LlmGenerator.make(generatorOptions("gold")) },
        scorers: []
      }
      const trace = yield* Pipeline.run(pipeline, instance)
      expect(trace.error).toBeUndefined()
      expect(trace.retrieval?.selected).toEqual(["s2", "s3"])
      expect(trace.summaries).toEqual([
        { sessionId: "s2", context: ["Pandas refactor"], preferences: ["Type hints"] },
        { sessionId: "s3", context: ["Sprint review for Dana"], preferences: ["Under 150 words"] }
      ])
      expect(trace.inference).toEqual({ preference: "Keep it under 150 words.", analysis: "recent sessions." })
      expect(trace.generation).toEqual({ text: "REPLY given gold" })
      expect(trace.usage.map((u) => u.stage)).toEqual(["summarize", "summarize", "infer", "generate"])
      const inferPrompt = lm.prompts().find((p) => p.includes("## New request"))!
      expect(inferPrompt).toContain("- Under 150 words")
      expect(inferPrompt).not.toContain("GOLD-PREF")
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("in inferred mode the generator sees the inferred preference, never the gold one", () => {
    const lm = scripted(answerFor)
    return Effect.gen(function* () {
      const pipeline: Pipeline.CellPipeline = {
        retriever: { plugin: "newest", needsGold: false, service: newest(2) },
        inferrer: { plugin: "llm", service: yield* LlmInferrer.make(inferrerOptions) },
        generator: { plugin: "llm", service: yield* LlmGenerator.make(generatorOptions("inferred")) },
        scorers: []
      }
      const trace = yield* Pipeline.run(pipeline, instance)
      expect(trace.generation).toEqual({ text: "REPLY given no gold" })
      const generatePrompt = lm.prompts().at(-1)!
      expect(generatePrompt).toContain("What this user expects in this situation: Keep it under 150 words.")
      expect(lm.prompts().some((p) => p.includes("GOLD-PREF"))).toBe(false)
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })

  it.effect("records an unreadable inference as the instance's error", () => {
    const lm = scripted((p) => (p.includes("## New request") ? "no idea, sorry. really." : answerFor(p)))
    return Effect.gen(function* () {
      const pipeline: Pipeline.CellPipeline = {
        retriever: { plugin: "newest", needsGold: false, service: newest(1) },
        inferrer: { plugin: "llm", service: yield* LlmInferrer.make(inferrerOptions) },
        generator: { plugin: "llm", service: yield* LlmGenerator.make(generatorOptions("inferred")) },
        scorers: []
      }
      const trace = yield* Pipeline.run(pipeline, instance)
      expect(trace.error).toMatchObject({ stage: "infer", plugin: "llm", tag: "StageError" })
      expect(trace.generation).toBeUndefined()
      expect(trace.usage).toHaveLength(1)
    }).pipe(Effect.provide(modelsWith(lm.service)))
  })
})
