// tools/reference/harness.py runs the CUPID authors' own evaluation code (their checkout beside the
// repository, ../shared/reference/kixlab-CUPID) with a scripted transport. These tests check the
// harness against expectations written by hand, so later tests can trust what it reports about the
// messages their code sends and the scores it computes.
import { LlmInferrer } from "@cupid-lab/core"
import { describe, expect, it } from "vitest"
import * as ReferenceHarness from "../src/testing/ReferenceHarness.js"

const { keyOf } = ReferenceHarness
type Call = ReferenceHarness.Call
type Evaluated = ReferenceHarness.Evaluated

const run = (command: "render" | "evaluate" | "parse", input: unknown): Promise<any> =>
  ReferenceHarness.run(command, input)

const count = (text: string, part: string): number => text.split(part).length - 1

const subject = "test-subject"
const gpt4o = "gpt-4o-2024-11-20"

/** Their evaluate() on both tasks with the GPT-4o matcher, the instances named by their keys. */
const evaluateBoth = (instances: Record<string, unknown>, answers: unknown) =>
  run("evaluate", {
    subject,
    evaluator: gpt4o,
    use_matcher: false,
    task: "both",
    instances: Object.entries(instances).map(([name, data]) => ({ name, data })),
    answers
  })

const session = (factor: string, user: string, assistant: string) => ({
  context_factor: factor,
  contextual_preference: `preference for ${factor}`,
  dialogue: [
    { role: "user", content: user },
    { role: "assistant", content: assistant }
  ]
})

const render = async (
  stages: ReadonlyArray<{ stage: string; args: unknown }>,
  evaluator = gpt4o
): Promise<ReadonlyArray<Call>> => (await run("render", { subject, evaluator, calls: stages })).calls

describe("reference harness: render", () => {
  it("inference: a system message, then a user message with every session and the request", async () => {
    const [call] = await render([
      {
        stage: "inference",
        args: {
          curr_request: "Draft the agenda for Tuesday's design review.",
          prior_interactions: [
            session("design team", "Make me an agenda.", "Here it is."),
            session("gym", "A workout plan?", "Sure.")
          ]
        }
      }
    ])
    expect(call!.transport).toBe("subject")
    expect(call!.model).toBe(subject)
    expect(call!.params).toEqual({ temperature: 0, max_tokens: 8192 })
    expect(call!.messages.map((m) => m.role)).toEqual(["system", "user"])
    const user = call!.messages[1]!.content
    expect(count(user, "### Session ")).toBe(2)
    expect(user).toContain("### Session 1\n\n#### User\n\nMake me an agenda.\n\n#### AI Assistant\n\nHere it is.")
    expect(user.indexOf("### Session 2")).toBeGreaterThan(user.indexOf("### Session 1"))
    expect(user).toContain("Draft the agenda for Tuesday's design review.")
    expect(call!.messages[0]!.content).not.toContain("Draft the agenda")
  })

  it("a call's key is sha256(JSON.stringify(messages)), also for non-ASCII, control characters and U+2028", async () => {
    const tricky = 'café — "quoted" \\ back\tslash\u0001\u001f\u007f\u2028\u2029 😀 日本語\r\n'
    const calls = await render([
      { stage: "generation", args: { curr_request: tricky, prior_interactions: [session("x", tricky, tricky)] } },
      { stage: "judge", args: { user_request: tricky, ai_response: tricky, preference: tricky, checklist: [tricky] } }
    ])
    expect(calls).toHaveLength(2)
    for (const call of calls) {
      expect(call.messages.some((m) => m.content.includes(tricky))).toBe(true)
      expect(call.key).toBe(keyOf(call.messages))
    }
  })

  it("matcher with an OpenAI evaluator: developer role, the 8 examples' preference blocks, max_completion_tokens", async () => {
    const [call] = await render([
      { stage: "match", args: { checklist: ["Is it short?", "Is it formal?"], preference: "Replies must be short." } }
    ])
    expect(call!.transport).toBe("openai")
    expect(call!.model).toBe(gpt4o)
    expect(call!.params).toEqual({ temperature: 0, max_completion_tokens: 8192 })
    expect(call!.messages.map((m) => m.role)).toEqual(["developer", "user"])
    const system = call!.messages[0]!.content
    expect(count(system, "#### Preference")).toBe(8)
    // The system template is formatted: its doubled braces come out single.
    expect(system).not.toContain("{{")
    expect(call!.messages[1]!.content).toContain("Replies must be short.")
    expect(call!.messages[1]!.content).toContain("1. Is it short?\n2. Is it formal?")
  })

  it("PrefMatcher: the vLLM endpoint, system role, no examples, max_tokens", async () => {
    const [call] = await render([
      { stage: "match-prefmatcher", args: { checklist: ["Is it short?"], preference: "Replies must be short." } }
    ])
    expect(call!.transport).toBe("vllm")
    expect(call!.model).toBe("kixlab/prefmatcher-7b")
    expect(call!.params).toEqual({ temperature: 0, max_tokens: 8192 })
    expect(call!.messages.map((m) => m.role)).toEqual(["system", "user"])
    expect(count(call!.messages[0]!.content, "#### Preference")).toBe(0)
    expect(call!.messages[1]!.content).toContain("Replies must be short.")
    expect(call!.messages[1]!.content).toContain("1. Is it short?")
  })

  it("judge: preference and checklist in the developer message, request and response in the user message", async () => {
    const [call] = await render([
      {
        stage: "judge",
        args: {
          user_request: "Plan my week.",
          ai_response: "Monday: rest.",
          preference: "Plans must be daily.",
          checklist: ["Is it daily?", "Is it dated?"]
        }
      }
    ])
    expect(call!.transport).toBe("openai")
    expect(call!.params).toEqual({ temperature: 0, max_completion_tokens: 8192 })
    expect(call!.messages.map((m) => m.role)).toEqual(["developer", "user"])
    expect(call!.messages[0]!.content).toContain('"Plans must be daily."')
    expect(call!.messages[0]!.content).toContain("- Is it daily?\n- Is it dated?")
    expect(call!.messages[1]!.content).toContain("Plan my week.")
    expect(call!.messages[1]!.content).toContain("Monday: rest.")
  })

  it("the decomposer's model is gpt-4o-2024-11-20 whatever the evaluator (4096 tokens); the matcher follows the evaluator", async () => {
    const [decompose, match] = await render(
      [
        { stage: "decompose", args: { preference: "Replies must be short." } },
        { stage: "match", args: { checklist: ["Is it short?"], preference: "Replies must be short." } }
      ],
      "gpt-4o-mini-2024-07-18"
    )
    expect(decompose!.model).toBe(gpt4o)
    expect(decompose!.params).toEqual({ temperature: 0, max_completion_tokens: 4096 })
    expect(decompose!.messages.map((m) => m.role)).toEqual(["developer", "user"])
    expect(decompose!.messages[1]!.content).toContain("Replies must be short.")
    expect(match!.model).toBe("gpt-4o-mini-2024-07-18")
  })
})

describe("reference harness: parse", () => {
  const parse = (kind: string, output: string) => run("parse", { kind, output })

  it("judge scores: '7.5' is truncated to 7, '**9**/10' is 9, a score with words is 0, no header is an error", async () => {
    expect(await parse("judge", "### Evaluation Label\n\nGood\n\n### Evaluation Score\n\n7.5")).toEqual({
      ok: true,
      value: 7
    })
    expect(await parse("judge", "### **Evaluation Score**\n**9**/10")).toEqual({ ok: true, value: 9 })
    expect(await parse("judge", "### Evaluation Score\n8 - Very Good")).toEqual({ ok: true, value: 0 })
    const none = await parse("judge", "Score: 8")
    expect(none.ok).toBe(false)
    expect(none.error).toMatch(/^UnboundLocalError: /)
  })

  it("inference: the first line after the preference header; no header is an error", async () => {
    expect(
      await parse("inference", "### Analysis\n\nx\n\n### Most Likely Preference\n\n  Be brief.  \nignored")
    ).toEqual({
      ok: true,
      value: "Be brief."
    })
    expect((await parse("inference", "Be brief.")).error).toMatch(/^IndexError: /)
  })

  it("inference: the project's reference reading reads what theirs reads and fails where theirs raises", async () => {
    const answers = [
      // no heading: their process_output raises (the instance is dropped)
      "### Analysis\n\nA.\n\n### Preference\n\nX",
      // the heading with nothing after it: an empty preference
      "### Analysis\n\nA.\n\n### Most Likely Preference\n\n",
      // the first heading, inside a reasoning block
      "<think>\nDraft.\n### Most Likely Preference\n\nInside.\n</think>\n\n### Most Likely Preference\n\nAfter.",
      "### Most Likely Preference\n\n  Be brief.  \nignored"
    ]
    const read: Array<ReadonlyArray<unknown>> = []
    for (const output of answers) {
      const theirs = await parse("inference", output)
      const ours = LlmInferrer.parseReference(output, "keep")
      read.push([theirs.ok ? theirs.value : theirs.error.split(":")[0], ours.ok ? ours.value.preference : "failed"])
    }
    expect(read).toEqual([
      ["IndexError", "failed"],
      ["", ""],
      ["Inside.", "Inside."],
      ["Be brief.", "Be brief."]
    ])
    // The project's own reading differs on the first three: it reads X, fails, and reads "After."
    // once reasoning is stripped (its default).
    expect(answers.slice(0, 3).map((a) => LlmInferrer.parse(a))).toMatchObject([
      { ok: true, value: { preference: "X" } },
      { ok: false },
      { ok: true, value: { preference: "After." } }
    ])
  })

  it("json: a fenced block is read from the first ```json to the last fence", async () => {
    expect(await parse("json", 'Intro\n```json\n{"a": [1, "x"]}\n```\nend')).toEqual({
      ok: true,
      value: { a: [1, "x"] }
    })
    expect((await parse("json", "not json")).error).toMatch(/^JSONDecodeError: /)
  })
})

describe("reference harness: evaluate", () => {
  interface Scripted {
    readonly stage: string
    readonly args: unknown
    readonly answer: string | { readonly error: string }
  }
  /** Renders each scripted stage and keys its answer by the rendered messages. */
  const answersFor = async (scripted: ReadonlyArray<Scripted>, evaluator = gpt4o): Promise<Record<string, unknown>> => {
    const calls = await render(
      scripted.map(({ args, stage }) => ({ stage, args })),
      evaluator
    )
    return Object.fromEntries(calls.map((call, i) => [keyOf(call.messages), scripted[i]!.answer]))
  }
  const matches = (pairs: ReadonlyArray<readonly [string, string]>) =>
    "```json\n" +
    JSON.stringify({ results: pairs.map(([entry, label], i) => ({ index: i + 1, entry, reasoning: "r", label })) }) +
    "\n```"
  const goldOf = (x: {
    readonly current_contextual_preference: string
    readonly current_checklist: Array<string>
  }) => ({
    preference: x.current_contextual_preference,
    checklist: x.current_checklist
  })
  const checklistAnswer = (items: ReadonlyArray<string>) =>
    `**Analysis**\n\nFine.\n\n**Checklist**\n\n\`\`\`json\n${JSON.stringify({ checklist: items })}\n\`\`\``

  it("two scored instances, one dropped by a failed call: the aggregate computed by hand", async () => {
    const a = {
      current_request: "Draft the agenda for Tuesday's design review.",
      current_contextual_preference: "Design review agendas must give every item an owner and a time box.",
      current_checklist: [
        "Does every item have an owner?",
        "Does every item have a time box?",
        "Is it for the design review?"
      ],
      prior_interactions: [session("design team", "Make me an agenda.", "Here it is.")]
    }
    const b = {
      current_request: "Write the gym plan for next week.",
      current_contextual_preference: "Gym plans must alternate strength and cardio days.",
      current_checklist: ["Do strength and cardio days alternate?", "Is it a weekly plan?"],
      prior_interactions: [session("gym", "A workout plan?", "Sure.")]
    }
    const c = { ...b, current_request: "Nobody answers this one." }
    const inferredA = "Agenda items should each have an owner."
    const inferredB = "Workout plans should mix strength and cardio."
    const checklistA = ["Does each item have an owner?", "Is the agenda short?"]
    const checklistB = ["Is strength included?", "Is cardio included?", "Are they mixed?"]
    const responseA = "Agenda: 1. Intro (Ana, 5 min)"
    const answers = await answersFor([
      // A: inference, decomposition, the two matches, the response (padded: their wrapper strips it), the judge
      {
        stage: "inference",
        args: { curr_request: a.current_request, prior_interactions: a.prior_interactions },
        answer: `### Analysis\n\nOwners.\n\n### Most Likely Preference\n\n${inferredA}\nNot read.`
      },
      { stage: "decompose", args: { preference: inferredA }, answer: checklistAnswer(checklistA) },
      {
        stage: "match",
        args: { checklist: checklistA, preference: a.current_contextual_preference },
        answer: matches([
          [checklistA[0]!, "Fully Covered"],
          [checklistA[1]!, "Partially Covered"]
        ])
      },
      {
        stage: "match",
        args: { checklist: a.current_checklist, preference: inferredA },
        answer: matches([
          [a.current_checklist[0]!, "Fully Covered"],
          [a.current_checklist[1]!, "Not Covered"],
          [a.current_checklist[2]!, "Partially Covered"]
        ])
      },
      {
        stage: "generation",
        args: { curr_request: a.current_request, prior_interactions: a.prior_interactions },
        answer: `\n  ${responseA}  \n`
      },
      {
        stage: "judge",
        args: {
          user_request: a.current_request,
          ai_response: responseA,
          preference: a.current_contextual_preference,
          checklist: a.current_checklist
        },
        answer:
          "### Evaluation of AI Assistant's Response\n\n1. Fine.\n\n### Evaluation Label\n\nGood\n\n### Evaluation Score\n\n7.5"
      },
      // B: the same stages; one inferred item gets a label that is not one of the three (scored 0)
      {
        stage: "inference",
        args: { curr_request: b.current_request, prior_interactions: b.prior_interactions },
        answer: `### Most Likely Preference\n${inferredB}`
      },
      { stage: "decompose", args: { preference: inferredB }, answer: checklistAnswer(checklistB) },
      {
        stage: "match",
        args: { checklist: checklistB, preference: b.current_contextual_preference },
        answer: matches([
          [checklistB[0]!, "Fully Covered"],
          [checklistB[1]!, "Fully Covered"],
          [checklistB[2]!, "Mostly Covered"]
        ])
      },
      {
        stage: "match",
        args: { checklist: b.current_checklist, preference: inferredB },
        answer: matches([
          [b.current_checklist[0]!, "Partially Covered"],
          [b.current_checklist[1]!, "Partially Covered"]
        ])
      },
      {
        stage: "generation",
        args: { curr_request: b.current_request, prior_interactions: b.prior_interactions },
        answer: "Mon strength, Tue cardio."
      },
      {
        stage: "judge",
        args: {
          user_request: b.current_request,
          ai_response: "Mon strength, Tue cardio.",
          preference: b.current_contextual_preference,
          checklist: b.current_checklist
        },
        answer: "### **Evaluation Score**\n\n**9**/10"
      }
    ])
    const result: Evaluated = await evaluateBoth({ a, b, c }, answers)
    // c's inference call has no answer: it fails like a network error and their evaluate() returns
    // before generation, so c has no file and counts nowhere.
    const cInference = (
      await render([
        { stage: "inference", args: { curr_request: c.current_request, prior_interactions: c.prior_interactions } }
      ])
    )[0]!
    expect(result.missing).toEqual([keyOf(cInference.messages)])
    expect(Object.keys(result.files).sort()).toEqual(["a", "b"])
    expect(result.errors).toEqual({})
    // 6 calls each for a and b (subject, decomposer, 2 matches, subject, judge), 1 for c
    expect(result.calls.map((call) => call.transport)).toEqual([
      ...["subject", "openai", "openai", "openai", "subject", "openai"],
      ...["subject", "openai", "openai", "openai", "subject", "openai"],
      "subject"
    ])
    // a: predicted (inferred items vs gold preference) 1 + 0.5 = 1.5 of 2; true (gold items vs inferred) 1 + 0 + 0.5 = 1.5 of 3
    // b: predicted 1 + 1 + 0 = 2 of 3; true 0.5 + 0.5 = 1 of 2
    expect(result.per_instance).toEqual({
      a: {
        inference: { true_matched: 1.5, predicted_matched: 1.5, n_true: 3, n_predicted: 2 },
        generation: { score: 7 }
      },
      b: { inference: { true_matched: 1, predicted_matched: 2, n_true: 2, n_predicted: 3 }, generation: { score: 9 } }
    })
    // Pooled over instances: precision (1.5 + 2) / (2 + 3) = 0.7, recall (1.5 + 1) / (3 + 2) = 0.5,
    // F1 2 * 0.7 * 0.5 / 1.2 = 7/12. Judge: "7.5" truncates to 7, "**9**/10" reads 9: (7 + 9) / 2 = 8.
    // (Per-instance means would differ: precision (0.75 + 2/3) / 2.)
    const { inference, generation } = result.aggregate
    expect(inference).toMatchObject({ n_true_matched: 2.5, n_predicted_matched: 3.5, n_true: 5, n_predicted: 5 })
    expect(inference.precision).toBeCloseTo(0.7, 12)
    expect(inference.recall).toBeCloseTo(0.5, 12)
    expect(inference.f1).toBeCloseTo(7 / 12, 12)
    expect(generation).toEqual({ average_score: 8, n_instances: 2 })
    // What their evaluate() saved: the first line of the inference, the stripped response, the raw score text
    expect(result.files["a"].inference.inferred).toEqual({ preference: inferredA, checklist: checklistA })
    expect(result.files["a"].inference.groundtruth).toEqual({
      preference: a.current_contextual_preference,
      checklist: a.current_checklist
    })
    expect(result.files["a"].generation.ai_response).toBe(responseA)
    expect(result.files["a"].generation.alignment.score).toBe("7.5")
  })

  it("PrefMatcher: its bare JSON list is the result; an unreadable answer scores both directions 0 and skips the second call", async () => {
    const x = {
      current_request: "Summarize the report.",
      current_contextual_preference: "Summaries must be three bullets.",
      current_checklist: ["Are there three bullets?", "Is it a summary?"],
      prior_interactions: [session("report", "Summarize this.", "Done.")]
    }
    const y = { ...x, current_request: "Summarize the memo.", current_checklist: ["One?", "Two?", "Three?"] }
    const answers = await answersFor([
      {
        stage: "inference",
        args: { curr_request: x.current_request, prior_interactions: x.prior_interactions },
        answer: "### Most Likely Preference\nBullets."
      },
      { stage: "decompose", args: { preference: "Bullets." }, answer: checklistAnswer(["Are there bullets?"]) },
      {
        stage: "match-prefmatcher",
        args: { checklist: ["Are there bullets?"], preference: x.current_contextual_preference },
        answer: JSON.stringify([{ entry: "Are there bullets?", label: "Fully Covered" }])
      },
      {
        stage: "match-prefmatcher",
        args: { checklist: x.current_checklist, preference: "Bullets." },
        answer: "```json\n" + JSON.stringify([{ label: "Partially Covered" }, { label: "Not Covered" }]) + "\n```"
      },
      {
        stage: "inference",
        args: { curr_request: y.current_request, prior_interactions: y.prior_interactions },
        answer: "### Most Likely Preference\nShort."
      },
      { stage: "decompose", args: { preference: "Short." }, answer: checklistAnswer(["Is it short?", "Is it plain?"]) },
      {
        stage: "match-prefmatcher",
        args: { checklist: ["Is it short?", "Is it plain?"], preference: y.current_contextual_preference },
        answer: "Sorry, I cannot."
      }
    ])
    const result: Evaluated = await run("evaluate", {
      subject,
      evaluator: gpt4o,
      use_matcher: true,
      task: "inference",
      instances: [
        { name: "x", data: x },
        { name: "y", data: y }
      ],
      answers
    })
    expect(result.missing).toEqual([])
    expect(result.calls.map((call) => call.transport)).toEqual([
      "subject",
      "openai",
      "vllm",
      "vllm",
      "subject",
      "openai",
      "vllm"
    ])
    expect(result.files["y"].inference.match).toEqual({ infer_to_gt: [], gt_to_infer: [] })
    // x: predicted 1 of 1, true 0.5 + 0 of 2; y: 0 of 2 and 0 of 3, still counted.
    // Precision 1 / 3, recall 0.5 / 5 = 0.1, F1 2 * (1/3) * 0.1 / (1/3 + 0.1) = (2/30) / (13/30) = 2/13.
    expect(result.aggregate.inference).toMatchObject({
      n_true_matched: 0.5,
      n_predicted_matched: 1,
      n_true: 5,
      n_predicted: 3
    })
    expect(result.aggregate.inference.precision).toBeCloseTo(1 / 3, 12)
    expect(result.aggregate.inference.recall).toBeCloseTo(0.1, 12)
    expect(result.aggregate.inference.f1).toBeCloseTo(2 / 13, 12)
    expect(result.aggregate.generation).toBeUndefined()
  })

  it("a missing heading or an unreadable decomposition drops the instance before generation; an empty preference is decomposed", async () => {
    const base = {
      current_contextual_preference: "Notes must be dated.",
      current_checklist: ["Is it dated?", "Is it a note?"],
      prior_interactions: [session("notes", "Take notes.", "Ok.")]
    }
    const [p, q, e] = ["Note the call.", "Note the visit.", "Note the trip."].map((current_request) => ({
      ...base,
      current_request
    }))
    const ask = (x: typeof p) => ({ curr_request: x!.current_request, prior_interactions: x!.prior_interactions })
    const answers = await answersFor([
      { stage: "inference", args: ask(p), answer: "### Analysis\n\nA.\n\n### Preference\n\nDate notes." },
      { stage: "inference", args: ask(q), answer: "### Most Likely Preference\n\nDate notes." },
      { stage: "decompose", args: { preference: "Date notes." }, answer: "Too vague to split." },
      { stage: "inference", args: ask(e), answer: "### Analysis\n\nNothing.\n\n### Most Likely Preference\n\n" },
      { stage: "decompose", args: { preference: "" }, answer: checklistAnswer(["Is there any preference?"]) },
      {
        stage: "match",
        args: { checklist: ["Is there any preference?"], preference: base.current_contextual_preference },
        answer: matches([["Is there any preference?", "Not Covered"]])
      },
      {
        stage: "match",
        args: { checklist: base.current_checklist, preference: "" },
        answer: matches([
          ["Is it dated?", "Not Covered"],
          ["Is it a note?", "Partially Covered"]
        ])
      },
      { stage: "generation", args: ask(e), answer: "A note." },
      {
        stage: "judge",
        args: { user_request: e!.current_request, ai_response: "A note.", ...goldOf(base) },
        answer: "### Evaluation Score\n\n4"
      }
    ])
    const result: Evaluated = await evaluateBoth({ p, q, e }, answers)
    expect(result.missing).toEqual([])
    // p stops at its inference, q at its decomposition: neither is generated, judged or saved.
    expect(result.calls.map((call) => call.transport)).toEqual([
      "subject",
      ...["subject", "openai"],
      ...["subject", "openai", "openai", "openai", "subject", "openai"]
    ])
    expect(Object.keys(result.files)).toEqual(["e"])
    expect(result.files["e"].inference.inferred).toEqual({ preference: "", checklist: ["Is there any preference?"] })
    expect(result.aggregate).toEqual({
      inference: {
        precision: 0,
        recall: 0.25,
        f1: 0,
        n_true_matched: 0.5,
        n_predicted_matched: 0,
        n_true: 2,
        n_predicted: 1
      },
      generation: { average_score: 4, n_instances: 1 }
    })
  })

  it("a context-length error stores an empty inference whose zero matches their own aggregation cannot read", async () => {
    const z = {
      current_request: "Summarize everything.",
      current_contextual_preference: "Summaries must be short.",
      current_checklist: ["Is it short?"],
      prior_interactions: [session("notes", "Summarize.", "Ok.")]
    }
    const answers = await answersFor([
      {
        stage: "inference",
        args: { curr_request: z.current_request, prior_interactions: z.prior_interactions },
        answer: { error: "Error code: 400 - context_length_exceeded" }
      }
    ])
    const result: Evaluated = await run("evaluate", {
      subject,
      evaluator: gpt4o,
      use_matcher: false,
      task: "inference",
      instances: [{ name: "z", data: z }],
      answers
    })
    expect(result.missing).toEqual([])
    expect(result.calls).toHaveLength(1)
    expect(result.files["z"].inference.inferred).toEqual({
      preference: "ERROR: Context length exceeded",
      checklist: []
    })
    expect(result.files["z"].inference.match.gt_to_infer).toEqual([{ entry: "Is it short?", score: 0 }])
    expect(result.per_instance).toBeNull()
    expect(result.aggregate).toBeNull()
    expect(result.errors).toEqual({ per_instance: "KeyError: 'label'", aggregate: "KeyError: 'label'" })
  })
})
