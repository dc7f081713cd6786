import { Domain, Errors, Hash, type LanguageModel, Plugin } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as ContextFactor from "../src/ContextFactor.js"
import { bestSplit } from "../src/internal/ChangeDetection.js"
import * as FactorPrompt from "../src/internal/FactorPrompt.js"
import { suite } from "../src/testing/Conformance.js"
import { env, scriptedChat } from "./support.js"

const session = (index: number, opening: string, ...feedback: ReadonlyArray<string>): Domain.SessionView => {
  const dialogue: Array<Domain.Message> = [{ role: "user", content: opening }]
  for (const f of feedback)
    dialogue.push({ role: "assistant", content: "Here is a revised draft." }, { role: "user", content: f })
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

// A contrastive history: s2 and s5 are about the current factor (Dr. Sarah Chen), s3 and s7 about a
// colleague of the same kind (Dr. James Okafor), the rest about other things.
const contrastive: Domain.Query = {
  key: "nurse",
  request:
    "Can you draft a short handover note for my colleague Dr. Sarah Chen about the two new admissions on ward 4?",
  sessions: [
    session(0, "Help me plan the weekly grocery list for my family of four.", "Cheaper please."),
    session(
      1,
      "I need an email to my colleague Dr. Sarah Chen summarizing the night shift.",
      "Bullet points with times, please."
    ),
    session(2, "Write a note to my colleague Dr. James Okafor about the audit.", "Longer, more context."),
    session(3, "Can you explain how to set up two-factor login on my phone?", "Simpler words."),
    session(4, "Draft a message for Dr. Sarah Chen about the patient in bed 12.", "Times for each event, as bullets."),
    session(5, "Suggest a stretching routine for after long shifts.", "Shorter."),
    session(6, "Prepare talking points for my colleague Dr. James Okafor's case review.", "Full sentences."),
    session(7, "What should I pack for a weekend in Lisbon?", "Fine.")
  ]
}

// A changing history: the same factor (the Riverside Book Club) four times; the user's feedback in
// the first two sessions asks for numbered discussion questions, in the last two for a single
// paragraph without lists.
const changing: Domain.Query = {
  key: "reader",
  request: "I need the discussion guide for the Riverside Book Club meeting on Circe next Tuesday.",
  sessions: [
    session(
      0,
      "Write the discussion guide for the Riverside Book Club meeting on Beloved.",
      "Number the questions, ten of them, grouped by chapter.",
      "Good, keep numbering questions per chapter."
    ),
    session(1, "Help me choose a laptop under 900 dollars.", "Battery life matters most."),
    session(
      2,
      "Riverside Book Club is reading The Road; can you do the guide?",
      "Numbered questions again, grouped by chapter, ten total."
    ),
    session(3, "Plan a birthday dinner menu for six.", "No shellfish."),
    session(
      4,
      "The Riverside Book Club guide for Klara and the Sun, please.",
      "Members complained about homework lists; one flowing paragraph of themes instead, no lists.",
      "Better, a single paragraph, conversational tone."
    ),
    session(5, "Translate this letter to my landlord into Spanish.", "More formal."),
    session(
      6,
      "Riverside Book Club guide for Piranesi, please.",
      "Again one conversational paragraph about themes, no lists at all."
    )
  ]
}

const retrieve = (options: Record<string, unknown>, query: Domain.Query) =>
  Effect.gen(function* () {
    const decoded = yield* Plugin.decodeOptions(ContextFactor.plugin, options).pipe(
      Effect.mapError((e) => new Error(e.issues.map((i) => i.message).join("; ")))
    )
    const service = yield* ContextFactor.plugin.make(decoded)
    return yield* service.retrieve({ query })
  })

const offlineEnv = env({ queries: [contrastive, changing] })

describe("context-factor, offline strategy", () => {
  it.effect("selects the current factor's sessions and excludes a similar factor of the same kind", () =>
    Effect.gen(function* () {
      const r = yield* retrieve({}, contrastive)
      expect(r.selected).toEqual(["s2", "s5"])
      expect(
        r.ranking
          .slice(0, 2)
          .map((x) => x.sessionId)
          .sort()
      ).toEqual(["s2", "s5"])
    }).pipe(Effect.scoped, Effect.provide(offlineEnv))
  )

  it.effect("policies on a changing history: all-matching, most-recent, detect-change", () =>
    Effect.gen(function* () {
      expect((yield* retrieve({ policy: "all-matching" }, changing)).selected).toEqual(["s1", "s3", "s5", "s7"])
      expect((yield* retrieve({ policy: "most-recent" }, changing)).selected).toEqual(["s5", "s7"])
      expect((yield* retrieve({ policy: "most-recent", m: 3 }, changing)).selected).toEqual(["s3", "s5", "s7"])
      expect((yield* retrieve({ policy: "detect-change" }, changing)).selected).toEqual(["s5", "s7"])
      // The stale sessions rank right after the kept ones.
      const ranking = (yield* retrieve({}, changing)).ranking.map((x) => x.sessionId)
      expect(ranking.slice(2, 4).sort()).toEqual(["s1", "s3"])
    }).pipe(Effect.scoped, Effect.provide(offlineEnv))
  )

  it.effect("detect-change keeps both sessions when there are only two of the factor", () =>
    Effect.gen(function* () {
      const two = { ...contrastive, sessions: contrastive.sessions.filter((s) => s.id !== "s3" && s.id !== "s7") }
      expect((yield* retrieve({ policy: "detect-change" }, two)).selected).toEqual(["s2", "s5"])
    }).pipe(Effect.scoped, Effect.provide(offlineEnv))
  )

  it.effect("the embedding strategy (offline TF-IDF + SVD) also finds the factor", () =>
    Effect.gen(function* () {
      expect(
        (yield* retrieve({ strategy: "embedding", policy: "all-matching", threshold: 0.8 }, changing)).selected
      ).toEqual(["s1", "s3", "s5", "s7"])
    }).pipe(Effect.scoped, Effect.provide(offlineEnv))
  )
})

describe("change detection", () => {
  it("splits where feedback within groups is alike and across groups is not", () => {
    const texts = ["carrot onion", "carrot onion", "violin cello", "violin cello"]
    // Equal document frequencies: identical pairs have cosine 1, the two topics cosine 0.
    const four = bestSplit(texts, texts)!
    expect(four.at).toBe(2)
    expect(four.within).toBeCloseTo(1, 12)
    expect(four.across).toBeCloseTo(0, 12)
    const three = bestSplit(["carrot onion", "carrot onion", "violin cello"], texts)!
    expect(three.at).toBe(2)
    expect(three.within).toBeCloseTo(1, 12)
  })

  it("has nothing to compare with fewer than three sessions", () => {
    expect(bestSplit(["carrot", "violin"], ["carrot", "violin"])).toBeUndefined()
    expect(bestSplit([], [])).toBeUndefined()
  })
})

describe("FactorPrompt.parse", () => {
  const known = new Set(["s1", "s2", "s3"])
  it("reads JSON, fenced or wrapped in prose, with ids in several spellings", () => {
    expect(FactorPrompt.parse('{"factor": "Dr. Chen", "sessions": ["s1", "s3"]}', known)).toEqual({
      ok: true,
      sessions: ["s1", "s3"]
    })
    expect(FactorPrompt.parse('Sure!\n```json\n{"sessions": [2, "[s3]", "S1"]}\n```', known)).toEqual({
      ok: true,
      sessions: ["s2", "s3", "s1"]
    })
    expect(FactorPrompt.parse('{"sessions": []}', known)).toEqual({ ok: true, sessions: [] })
  })

  it("falls back to a 'sessions:' line", () => {
    expect(FactorPrompt.parse("Factor: Dr. Chen\nSessions: s1, s2", known)).toEqual({
      ok: true,
      sessions: ["s1", "s2"]
    })
    expect(FactorPrompt.parse("**Sessions:** none", known)).toEqual({ ok: true, sessions: [] })
  })

  it("rejects unknown ids and unreadable answers with a reason", () => {
    const unknown = FactorPrompt.parse('{"sessions": ["s9"]}', known)
    expect(unknown).toEqual({ ok: false, reason: "the answer names sessions that are not in the list: s9" })
    const garbage = FactorPrompt.parse("I think the first one.", known)
    expect(garbage.ok).toBe(false)
  })

  it("its dry-run example parses", () => {
    expect(FactorPrompt.parse(FactorPrompt.example(["s2"]), known)).toEqual({ ok: true, sessions: ["s2"] })
  })
})

/** A chat model that picks the listed sessions sharing a capitalized word with the request. */
const namesAnswer = (request: LanguageModel.CompletionRequest): string => {
  const prompt = request.messages[1]!.content
  const [head, list] = prompt.split("First messages of earlier sessions:")
  const names = new Set((head!.match(/\b[A-Z][a-z]+\b/g) ?? []).filter((w) => !["New", "Can", "I"].includes(w)))
  const ids = [...list!.matchAll(/^\[(s\d+)\] (.*)$/gm)]
    .filter((m) => (m[2]!.match(/\b[A-Z][a-z]+\b/g) ?? []).some((w) => names.has(w)))
    .map((m) => m[1]!)
  return `\`\`\`json\n${JSON.stringify({ factor: "x", sessions: ids })}\n\`\`\``
}

describe("context-factor, llm strategy", () => {
  const envWith = (chat: ReturnType<typeof scriptedChat>) => env({ models: { chat: { languageModel: chat.service } } })

  it.effect("asks per batch and applies the policy to the sessions the model names", () => {
    const chat = scriptedChat(namesAnswer)
    return Effect.gen(function* () {
      const r = yield* retrieve({ strategy: "llm", model: "chat", batchSize: 3, policy: "all-matching" }, changing)
      expect(r.selected).toEqual(["s1", "s3", "s5", "s7"])
      expect(chat.requests.length).toBe(3)
      expect(chat.requests.every((req) => req.temperature === 0 && req.responseFormat === "json")).toBe(true)
      expect(chat.requests[2]!.messages[1]!.content).toContain("[s7] Riverside Book Club guide for Piranesi")
    }).pipe(Effect.scoped, Effect.provide(envWith(chat)))
  })

  it.effect("runs in a dry run on its own example answers (the last session of each batch)", () => {
    const chat = scriptedChat(() => "never sent")
    const dry = env({ models: { chat: { languageModel: chat.service } }, dryRun: true })
    return Effect.gen(function* () {
      const r = yield* retrieve({ strategy: "llm", model: "chat", batchSize: 3, policy: "all-matching" }, changing)
      expect(r.selected).toEqual(["s3", "s6", "s7"])
      expect(chat.requests.length).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(dry))
  })

  it.effect("a malformed answer is a stage error, not a crash", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(retrieve({ strategy: "llm", model: "chat" }, contrastive))
      expect(error).toBeInstanceOf(Errors.StageError)
      expect((error as Errors.StageError).message).toContain("retrieve (context-factor)")
    }).pipe(Effect.scoped, Effect.provide(envWith(scriptedChat(() => "The first and the fourth."))))
  )

  it.effect("an answer naming sessions that were not shown is a stage error", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(retrieve({ strategy: "llm", model: "chat" }, contrastive))
      expect((error as Errors.StageError).message).toContain("not in the list: s99")
    }).pipe(Effect.scoped, Effect.provide(envWith(scriptedChat(() => '{"sessions": ["s99"]}'))))
  )
})

describe("context-factor options", () => {
  const issues = (raw: unknown) =>
    Effect.map(Effect.flip(Plugin.decodeOptions(ContextFactor.plugin, raw)), (e) =>
      e.issues.map((i) => `${i.path.join(".")}: ${i.message}`)
    )

  it.effect("the llm strategy needs a model; other strategies refuse llm-only options", () =>
    Effect.gen(function* () {
      expect(yield* issues({ strategy: "llm" })).toEqual([
        "model: the llm strategy needs `model` (a chat model under models:)"
      ])
      expect(yield* issues({ model: "gpt" })).toEqual(["model: `model` is only used by the llm strategy"])
      expect(yield* issues({ embedder: { use: "tfidf-svd" } })).toEqual([
        "embedder: `embedder` is only used by the embedding strategy"
      ])
      expect((yield* issues({ policy: "newest" }))[0]).toContain("policy")
    })
  )

  it.effect("defaults: offline strategy, most-recent policy", () =>
    Effect.gen(function* () {
      const o = yield* Plugin.decodeOptions(ContextFactor.plugin, {})
      expect(o).toEqual({
        strategy: "offline",
        policy: "most-recent",
        m: 2,
        threshold: 0.6,
        minContrast: 1.2,
        minGroup: 2
      })
    })
  )
})

suite({ plugin: ContextFactor.plugin })
suite({ plugin: ContextFactor.plugin, options: { policy: "all-matching" } })
suite({ plugin: ContextFactor.plugin, options: { policy: "most-recent", m: 2 } })
suite({ plugin: ContextFactor.plugin, options: { strategy: "embedding", policy: "detect-change" } })
suite({
  plugin: ContextFactor.plugin,
  options: { strategy: "llm", model: "chat", policy: "most-recent" },
  models: { chat: { languageModel: scriptedChat(namesAnswer).service } }
})
