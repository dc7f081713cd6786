// longmemeval-judge without the authors' repository: how their templates are read from a Python
// file (on a file written here in the same shape, not theirs), where the file may come from and
// what is refused, the verdict rule, and the scorer's failures and dry run. Their own code is
// compared in longmemeval-reference.test.ts.
import { Domain, Errors, type LanguageModel, ModelCache, Models, Scorer } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect, Either, Layer } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import * as LongMemEvalJudge from "../src/LongMemEvalJudge.js"
import * as LongMemEvalPrompts from "../src/LongMemEvalPrompts.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeTrace, pluginEnv, scriptedModel } from "./fixtures.js"

// A module of the same shape as theirs, with this test's own template texts.
const shaped = [
  "import os",
  "",
  "def get_anscheck_prompt(task, question, answer, response, abstention=False):",
  "    if not abstention:",
  "        if task in ['single-session-user', 'single-session-assistant', 'multi-session']:",
  '            template = "Shared {{rule}}. \\n\\nQ: {}\\nA: {}\\nR: {}"',
  "            prompt = template.format(question, answer, response)",
  "        elif task == 'temporal-reasoning':",
  "            template = \"Dates: {}\" ' | {} | {}'",
  "            prompt = template.format(question, answer, response)",
  "        elif task == 'knowledge-update':",
  '            template = "Update: {} {} {}"',
  "            prompt = template.format(question, answer, response)",
  "        elif task == 'single-session-preference':",
  '            template = "Rubric: {} {} {}"',
  "            prompt = template.format(question, answer, response)",
  "        else:",
  "            raise NotImplementedError",
  "    else:",
  '        template = "Unanswerable: {} / {} / {}"',
  "        prompt = template.format(question, answer, response) ",
  "    return prompt",
  "",
  "",
  "if __name__ == '__main__':",
  '    template = "not read: {}"',
  ""
].join("\n")

const instance = (id: string, type: string, answer: string | null = "At the city library"): Domain.Instance => ({
  id,
  personaId: id,
  type,
  query: { key: Domain.queryKey(id), request: "Where do I work now?", sessions: [] },
  gold: {
    factor: "",
    preference: "",
    checklist: [],
    sessions: [],
    ...(answer === null ? {} : { answer })
  }
})

const answered = (i: Domain.Instance, text = "You work at the city library.") => makeTrace(i, { generation: { text } })

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), "lme-judge-"))

/** A loopback file server answering every GET with `status` and `body`; records the paths asked for. */
const fileServer = (status: number, body: string) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly paths: Array<string>; readonly server: http.Server }>((resume) => {
      const paths: Array<string> = []
      const server = http.createServer((req, res) => {
        paths.push(req.url ?? "")
        res.writeHead(status, { "content-type": "text/plain" })
        res.end(body)
      })
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, server }))
      )
    }),
    ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

const withCache = <A, E>(effect: Effect.Effect<A, E, ModelCache.ModelCache>) =>
  Effect.provide(effect, ModelCache.layerMemory)

describe("LongMemEval's judge templates, read from a Python module", () => {
  it("reads each template literal with the question types of its branch, the else branch as abstention", () => {
    const t = Either.getOrThrow(LongMemEvalPrompts.parse(shaped, "shaped.py"))
    const p = (task: LongMemEvalPrompts.Task, abstention = false) =>
      LongMemEvalPrompts.prompt(t, task, "Q?", "A", "R {}", abstention)
    expect(p("single-session-user")).toBe("Shared {rule}. \n\nQ: Q?\nA: A\nR: R {}")
    expect(p("multi-session")).toBe(p("single-session-assistant"))
    // Adjacent literals are one string, as in Python.
    expect(p("temporal-reasoning")).toBe("Dates: Q? | A | R {}")
    expect(p("knowledge-update")).toBe("Update: Q? A R {}")
    expect(p("single-session-preference")).toBe("Rubric: Q? A R {}")
    expect(p("knowledge-update", true)).toBe("Unanswerable: Q? / A / R {}")
    expect(t.standIn).toBe(false)
  })

  it("refuses a module whose function is not shaped as expected, saying what is wrong", () => {
    const problem = (source: string) =>
      Either.match(LongMemEvalPrompts.parse(source, "x.py"), { onLeft: (e) => e, onRight: () => "" })
    expect(problem("x = 1\n")).toBe("no function get_anscheck_prompt")
    expect(problem(shaped.replace("elif task == 'knowledge-update'", "elif task == 'knowledge-updates'"))).toBe(
      'unknown question type "knowledge-updates"'
    )
    expect(problem(shaped.replace('"Update: {} {} {}"', '"Update: {} {}"'))).toMatch(/does not have the three fields/)
    expect(problem(shaped.replace('"Rubric: {} {} {}"', '"Rubric: {name} {} {}"'))).toMatch(/unsupported format field/)
    expect(
      problem(
        shaped.replace(
          "prompt = template.format(question, answer, response) ",
          "prompt = template.format(answer, question, response)"
        )
      )
    ).toMatch(/not formatted with \(question, answer, response\)/)
  })
})

describe("where the judge's file comes from", () => {
  it.effect("a checkout's file must have the pinned sha256, and must be there", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const missing = yield* Effect.flip(withCache(LongMemEvalPrompts.read({ dir })))
      expect(missing.message).toContain(`${path.join(dir, LongMemEvalPrompts.file.path)}: missing from the checkout`)
      expect(missing.message).toContain("LONGMEMEVAL_REFERENCE_DIR")
      fs.mkdirSync(path.join(dir, "src", "evaluation"), { recursive: true })
      fs.writeFileSync(path.join(dir, LongMemEvalPrompts.file.path), shaped)
      const wrong = yield* Effect.flip(withCache(LongMemEvalPrompts.read({ dir })))
      expect(wrong).toBeInstanceOf(Errors.PluginError)
      expect(wrong.message).toContain(`does not match the pinned ${LongMemEvalPrompts.file.sha256}`)
      expect(wrong.message).toContain(`git -C LongMemEval checkout ${LongMemEvalPrompts.commit}`)
    })
  )

  it.scoped("a download is fetched from <url>/<commit>/<path> and refused when it is not the pinned file", () =>
    Effect.gen(function* () {
      const server = yield* fileServer(200, shaped)
      const wrong = yield* Effect.flip(withCache(LongMemEvalPrompts.read({ url: `${server.url}/raw/` })))
      expect(server.paths).toEqual([`/raw/${LongMemEvalPrompts.commit}/${LongMemEvalPrompts.file.path}`])
      expect(wrong.message).toContain("does not match the pinned")
      const gone = yield* fileServer(404, "not found")
      const failed = yield* Effect.flip(withCache(LongMemEvalPrompts.read({ url: gone.url, limits: { retries: 0 } })))
      expect(failed.message).toMatch(
        /http:\/\/127\.0\.0\.1:\d+\/\S+: no checkout \(LONGMEMEVAL_REFERENCE_DIR\) and the download failed \(HTTP 404\)/
      )
    })
  )

  it.scoped("a dry run sends nothing: without a checkout or a cached copy the templates are stand-ins", () =>
    Effect.gen(function* () {
      const server = yield* fileServer(200, shaped)
      const t = yield* withCache(LongMemEvalPrompts.templates({ url: server.url, dryRun: true }))
      expect(server.paths).toEqual([])
      expect(t.standIn).toBe(true)
      const text = LongMemEvalPrompts.prompt(t, "multi-session", "Q?", "A", "R", false)
      // About a real template's size, so that the dry run's token estimate is close.
      expect(text.length).toBeGreaterThan(500)
      expect(text.endsWith("Q?\n\nA\n\nR")).toBe(true)
    })
  )
})

describe("the verdict, as their code reads the judge's reply", () => {
  it("is correct when the lowercased reply contains 'yes', wherever", () => {
    const yes = ["yes", "Yes.", " YES\n", "Yes, the response is correct because", "eyes", "No; yes"]
    const no = ["no", "No.", "", "Correct.", "Ｙｅｓ", "y e s"]
    expect(yes.map(LongMemEvalJudge.verdict)).toEqual(yes.map(() => true))
    expect(no.map(LongMemEvalJudge.verdict)).toEqual(no.map(() => false))
    expect(["q_abs", "gpt4_2655b836_abs", "q_abs_2"].map(LongMemEvalJudge.isAbstention)).toEqual([true, true, true])
    expect(LongMemEvalJudge.isAbstention("q-abs")).toBe(false)
  })

  it.effect("a reply cut at the token limit is read and cached when the caller accepts it, and fails otherwise", () =>
    Effect.gen(function* () {
      const inner: LanguageModel.Service = {
        info: { provider: "test", model: "cut", params: {} },
        complete: () =>
          Effect.succeed({ text: "Yes, the response", promptTokens: 3, completionTokens: 10, finishReason: "length" })
      }
      const cache = yield* ModelCache.ModelCache
      const lm = Models.cachedLanguageModel(inner, cache)
      const request = { messages: [{ role: "user" as const, content: "judge" }], maxTokens: 10 }
      const failed = yield* Effect.flip(lm.complete(request))
      expect(failed.reason).toMatch(/^truncated/)
      expect((yield* lm.complete({ ...request, acceptTruncated: true })).text).toBe("Yes, the response")
      expect(yield* cache.has(Models.completionKey(inner.info, request))).toBe(true)
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )
})

describe("the longmemeval-judge scorer", () => {
  const dry = (lm = scriptedModel(() => "no")) =>
    Layer.merge(
      pluginEnv({ judge: { languageModel: lm } }, { dryRun: true }),
      Layer.succeed(LongMemEvalPrompts.Reference, {})
    )

  it.scoped("in a dry run judges with stand-ins, sends nothing and conforms to the scorer contract", () =>
    Effect.gen(function* () {
      const lm = scriptedModel(() => {
        throw new Error("a dry run must not call the model")
      })
      const scorer = yield* buildScorer("longmemeval-judge", { model: "judge" }).pipe(Effect.provide(dry(lm)))
      const plain = instance("q-update-1", "knowledge-update")
      const abs = instance("q-temporal-1_abs", "temporal-reasoning")
      expect(yield* scorer.score({ instance: plain, trace: answered(plain) })).toEqual({
        "generation.longmemeval_correct": 1,
        "generation.longmemeval_abstention": Number.NaN
      })
      expect(yield* scorer.score({ instance: abs, trace: answered(abs) })).toEqual({
        "generation.longmemeval_correct": 1,
        "generation.longmemeval_abstention": 1
      })
      expect(
        yield* ScorerConformance.check(scorer, [
          { instance: plain, trace: answered(plain) },
          { instance: abs, trace: answered(abs) }
        ])
      ).toEqual([])
      expect(scorer.metrics.map((m: Scorer.MetricInfo) => [m.name, m.headline])).toEqual([
        ["generation.longmemeval_correct", true],
        ["generation.longmemeval_abstention", false]
      ])
    })
  )

  it.scoped("fails the instance, saying why, on another benchmark's type, without an answer or a gold answer", () =>
    Effect.gen(function* () {
      const scorer = yield* buildScorer("longmemeval-judge", { model: "judge" }).pipe(Effect.provide(dry()))
      const reason = (i: Domain.Instance, trace = answered(i)) =>
        Effect.map(Effect.flip(scorer.score({ instance: i, trace })), (e) => e.message)
      expect(yield* reason(instance("conv-1:q1", "single-hop"))).toContain(
        'instance type "single-hop" is not a LongMemEval question type'
      )
      const q = instance("q1", "multi-session")
      expect(yield* reason(q, makeTrace(q))).toContain("no generated answer to judge")
      expect(yield* reason(instance("q2", "multi-session", null))).toContain("q2 has no gold answer")
    })
  )

  it("takes the authors' settings by default: at most 10 tokens, temperature 0", () => {
    const options = Either.getOrThrow(
      Either.mapLeft(LongMemEvalJudge.plugin.decode({ model: "judge" }), (e) => new Error(JSON.stringify(e)))
    )
    expect(options.plugin).toBe("longmemeval-judge")
    expect(options.params).toEqual({ model: "judge", maxTokens: 10, temperature: 0 })
  })
})
