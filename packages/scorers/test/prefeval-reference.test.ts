// prefeval-judge against the PrefEval authors' own evaluation code
// (tools/reference/prefeval_harness.py runs their llm_based_evaluation_errortypes.py with a stub
// Bedrock client answering scripted replies, then their accuracy script): the messages the scorer
// sends are theirs byte for byte, with their settings; every reply is parsed to their answer and
// extracted preference; every error type is their analyze_errors flag; the counts and the accuracy
// are the lines they print.
import { Domain, type LanguageModel, ModelCache } from "@cupid-lab/core"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import * as PrefEvalJudge from "../src/PrefEvalJudge.js"
import * as PrefEvalPrompts from "../src/PrefEvalPrompts.js"
import * as PrefEvalReference from "../src/testing/PrefEvalReference.js"
import { buildScorer, makeTrace, pluginEnv } from "./fixtures.js"

const yes = (explanation: string) => `<explanation>${explanation}</explanation>\n<answer>Yes</answer>`
const no = (explanation: string) => `<explanation>${explanation}</explanation>\n<answer>No</answer>`
const pref = "I only stay in hotels that allow dogs, since my terrier travels with me."
const question = "Can you recommend a hotel for a weekend in Edinburgh?"

// Responses and replies written for this test; the replies cover their parse's and rules' edges.
const items: ReadonlyArray<PrefEvalReference.Item> = [
  {
    preference: pref,
    question,
    response: "Since your terrier travels with you, try The Balmoral: it welcomes dogs.",
    replies: [
      "<preference>Since your terrier travels with you</preference>\n<answer>Yes</answer>",
      no("Dog-friendly."),
      no("Same preference."),
      yes("Names a hotel.")
    ]
  },
  {
    preference: pref,
    question,
    response: "Given your terrier, I suggest the Witchery (no pets allowed).",
    replies: [
      "<preference>Given your terrier</preference><answer>Yes</answer>",
      "<ANSWER> YES </ANSWER>",
      no("Same."),
      yes("Helps.")
    ]
  },
  {
    preference: "I avoid hotels above the fourth floor because of a fear of heights.",
    question: "Which rooftop-view hotel in Chicago should I book?",
    response: "As you love rooftops, book a 30th-floor suite at the Langham.",
    replies: [
      "<preference>As you love rooftops</preference>\n<answer>Yes</answer>",
      yes("Too high."),
      "<answer>[Yes]",
      "<Answer>Yes</Answer>"
    ]
  },
  {
    preference: pref,
    question,
    response: "The Scotsman Hotel is lovely; note it has no pets.",
    replies: [
      "<preference></preference>\n<answer>No</answer>",
      yes("No dogs."),
      no("The restatement is empty."),
      yes("A hotel.")
    ]
  },
  {
    // A preference of its own: the empty restatement would otherwise make item 4's hallucination prompt, answered from the cache.
    preference: "I need hotels with step-free access because I use a wheelchair.",
    question,
    response: "I'm sorry, I don't remember your preferences. Could you tell me more?",
    replies: [
      "No tags, just No",
      "<answer>No</answer>",
      "",
      "<explanation>Asks for more &amp; gives nothing.</explanation>\n<answer>No</answer>"
    ]
  },
  {
    preference: "I need rooms {end_generation} with quiet {question} floors — ça va.",
    question: "Where in Porto? {preference}",
    response: "Since you want quiet: Casa {question} & {preference} {end_generation} — <b>bold</b>.",
    replies: [
      "<preference>you <b>want</b> quiet &lt;rooms&gt;<answer>Yes</answer></preference>",
      "<explanation>It recommends a rooftop bar on the 20th floor, which",
      "<explanation>x</explanation><answer>no</answer><answer>yes</answer>",
      "<answer>Yes, I know</answer>"
    ]
  }
]

const instanceOf = (item: PrefEvalReference.Item, k: number): Domain.Instance => ({
  id: `explicit/test:${k + 1}`,
  personaId: `explicit/test:${k + 1}`,
  type: "explicit",
  query: { key: Domain.queryKey(`explicit/test:${k + 1}`), request: item.question, sessions: [] },
  gold: { factor: "", preference: item.preference, checklist: [], sessions: [] }
})

/** The judge: the scripted replies in call order (items are scored one after another). */
const judge = () => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const replies = items.flatMap((i) => i.replies)
  const lm: LanguageModel.Service = {
    info: { provider: "test", model: PrefEvalJudge.authorsModel, params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return { text: replies[requests.length - 1]!, promptTokens: 100, completionTokens: 10 }
      })
  }
  return { lm, requests }
}

const keys = {
  error_unhelpful: "generation.prefeval_error_unhelpful",
  error_inconsistent: "generation.prefeval_error_inconsistent",
  hallucination_of_preference_violation: "generation.prefeval_error_hallucinated_violation",
  preference_unaware_violation: "generation.prefeval_error_unaware_violation",
  preference_adherence_accuracy: "generation.prefeval_followed",
  acknowledgement: "generation.prefeval_acknowledged",
  hallucination: "generation.prefeval_hallucinated",
  violation: "generation.prefeval_violated"
} as const

describe("PrefEval's judge against the authors' evaluation code", () => {
  beforeEach((ctx) => void PrefEvalReference.need(ctx))

  it("sends their messages with their settings, parses replies as they do and gives their error types", async () => {
    const dir = PrefEvalReference.need()
    const theirs = await PrefEvalReference.run(items)
    const { lm, requests } = judge()
    const env = Layer.merge(
      pluginEnv({ judge: { languageModel: lm } }),
      Layer.succeed(PrefEvalPrompts.Reference, { dir })
    )
    const scores = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const scorer = yield* buildScorer("prefeval-judge", { model: "judge" })
          return yield* Effect.forEach(items, (item, k) => {
            const instance = instanceOf(item, k)
            return scorer.score({ instance, trace: makeTrace(instance, { generation: { text: item.response } }) })
          })
        })
      ).pipe(Effect.provide(env))
    )

    expect(requests).toHaveLength(items.length * 4)
    expect(requests.map((r) => r.messages)).toEqual(
      theirs.requests.map((r) => [{ role: "system", content: r.body.system }, ...r.body.messages])
    )
    expect(new Set(theirs.requests.map((r) => r.modelId))).toEqual(new Set([PrefEvalJudge.authorsModel]))
    for (const [i, r] of requests.entries())
      expect([r.temperature, r.maxTokens]).toEqual([
        theirs.requests[i]!.body.temperature,
        theirs.requests[i]!.body.max_tokens
      ])

    // Their parse of each reply.
    const parsed = items.map((item) =>
      Object.fromEntries(
        PrefEvalPrompts.checks.map((c, j) => {
          const p = PrefEvalJudge.parseReply(c, item.replies[j]!)
          return [c, p.extractPref === undefined ? p : { answer: p.answer, extract_pref: p.extractPref }]
        })
      )
    )
    const theirParse = theirs.analyses.map((a) =>
      Object.fromEntries(PrefEvalPrompts.checks.map((c) => [c, c === "acknow" ? a[c] : { answer: a[c]!["answer"] }]))
    )
    expect(parsed).toEqual(theirParse)

    // Their analyze_errors, entry by entry, and what their accuracy script prints.
    const ours = scores.map((s) => Object.fromEntries(Object.entries(keys).map(([theirKey, k]) => [theirKey, s[k]])))
    expect(ours).toEqual(theirs.flags)
    const sum = (k: keyof typeof keys) => scores.reduce((a, s) => a + (s[keys[k]] as number), 0)
    expect(theirs.printed).toEqual([
      `Total Entries Evaluated: ${items.length}`,
      `  Unhelpful Responses: ${sum("error_unhelpful")}`,
      `  Inconsistent Responses: ${sum("error_inconsistent")}`,
      `  Hallucination of Preference Violations: ${sum("hallucination_of_preference_violation")}`,
      `  Preference Unaware Violations: ${sum("preference_unaware_violation")}`,
      `Preference Following Accuracy: ${((100 * sum("preference_adherence_accuracy")) / items.length).toFixed(2)}%`
    ])
    // By hand: followed, inconsistent, hallucinated violation, unaware violation, unhelpful, unhelpful ("know").
    expect(scores.map((s) => s["generation.prefeval_followed"])).toEqual([1, 0, 0, 0, 0, 0])
  })

  it("reads their files from a download too, keeps them in the model cache and reads them from there after", async () => {
    const dir = PrefEvalReference.need()
    for (const f of Object.values(PrefEvalPrompts.files)) expect(fs.statSync(path.join(dir, f.path)).size).toBe(f.bytes)
    const paths: Array<string> = []
    const server = http.createServer((req, res) => {
      paths.push(req.url ?? "")
      res.end(fs.readFileSync(path.join(dir, (req.url ?? "").replace(`/${PrefEvalPrompts.commit}/`, ""))))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const [fromDir, fromUrl, fromCache] = await Effect.runPromise(
        Effect.gen(function* () {
          const a = yield* PrefEvalPrompts.prompts({ dir })
          const b = yield* PrefEvalPrompts.prompts({ url })
          const c = yield* PrefEvalPrompts.prompts({ url: "http://127.0.0.1:9", dryRun: true })
          return [a, b, c] as const
        }).pipe(Effect.provide(ModelCache.layerMemory))
      )
      expect(paths.sort()).toEqual(
        Object.values(PrefEvalPrompts.files)
          .map((f) => `/${PrefEvalPrompts.commit}/${f.path}`)
          .sort()
      )
      expect([fromUrl.system, fromUrl.byCheck]).toEqual([fromDir.system, fromDir.byCheck])
      expect([fromCache.system, fromCache.byCheck, fromCache.standIn]).toEqual([fromDir.system, fromDir.byCheck, false])
    } finally {
      server.close()
    }
  })
})
