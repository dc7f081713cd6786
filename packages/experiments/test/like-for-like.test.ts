/**
 * Like for like: `compare` of two real runs scored by different judges (two models of the loopback
 * OpenAI server) refuses, naming both runs, the field and both values; with --allow-mismatch it
 * writes the comparison with the table of differences before any number. A run that does not
 * record its scoring (an older summary.json) leaves those fields unknown and is not refused.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Compare, LikeForLike } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { commandIo, runPromise, tempDir } from "./support.js"

interface Body {
  readonly model?: string
  readonly messages: ReadonlyArray<{ readonly content: string }>
}

/** The judges give 7 (test-judge-a) and 8 (test-judge-b); the subject answers in one line. */
const chat = (body: Body) =>
  body.model === "test-judge-a" ? "Score: 7" : body.model === "test-judge-b" ? "Score: 8" : "A short reply."

const config = (dir: string, baseURL: string, judge: string, accounting = "strict") =>
  [
    "name: judged",
    `data: { source: "synthetic:personas=2,seed=4" }`,
    `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
    "models:",
    ...[
      ["subject", "test-subject"],
      ["judge", judge]
    ].map(
      ([entry, model]) =>
        `  ${entry}: { provider: openai, model: ${model}, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`
    ),
    "pipeline:",
    "  retriever: { use: recency, k: 2 }",
    "  generator: { use: llm, model: subject, preference: none }",
    `scorers: [{ use: retrieval, ks: [2] }, { use: judge, model: judge, accounting: ${accounting} }]`
  ].join("\n") + "\n"

const sweep = (dir: string, baseURL: string, name: string, judge: string) =>
  Effect.gen(function* () {
    fs.writeFileSync(path.join(dir, `${name}.yaml`), config(dir, baseURL, judge))
    const { err, io } = commandIo(dir)
    const out = path.join(dir, name)
    expect(yield* Commands.main(["sweep", "--config", name, "--out", out], io), err.join("")).toBe(0)
    return out
  })

describe("compare like for like", () => {
  it.scopedLive("refuses two runs judged by different models, and with --allow-mismatch says so first", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ chat: (body) => chat(body as Body) })
      const dir = tempDir("cupid-like-")
      const first = yield* sweep(dir, server.baseURL, "first", "test-judge-a")
      const second = yield* sweep(dir, server.baseURL, "second", "test-judge-b")

      // The run records what scored each cell: the judge's options and the model it resolved to.
      const summary = (yield* RunDir.read(first)).summary
      expect(summary.cells[0]!.scoring?.models).toEqual({
        judge: { entry: "judge", provider: "openai", model: "test-judge-a" }
      })
      expect(summary.cells[0]!.scoring?.scorers[1]).toMatchObject({
        use: "judge",
        model: "judge",
        accounting: "strict"
      })

      const target = path.join(dir, "compare")
      const refused = commandIo(dir)
      const code = yield* Commands.main(["compare", "--runs", `${first},${second}`, "--out", target], refused.io)
      const message = refused.err.join("")
      expect(code, message).toBe(1)
      expect(message).toContain(`error: ${first} and ${second} differ in what makes their numbers comparable`)
      expect(message).toContain("judge model (judge.model): first openai/test-judge-a, second openai/test-judge-b")
      expect(message).toContain("--allow-mismatch")
      expect(fs.existsSync(target)).toBe(false)

      const allowed = commandIo(dir)
      expect(
        yield* Commands.main(
          ["compare", "--runs", `${first},${second}`, "--out", target, "--allow-mismatch"],
          allowed.io
        ),
        allowed.err.join("")
      ).toBe(0)
      expect(allowed.err.join("")).toBe(
        `warning: the runs differ in judge model (judge.model); compared anyway (--allow-mismatch): the table of differences opens ${path.join(target, "compare.md")}\n`
      )
      const md = fs.readFileSync(path.join(target, "compare.md"), "utf8")
      const table = md.indexOf("## What differs between the runs")
      const row = md.indexOf("| judge model (judge.model) | openai/test-judge-a | openai/test-judge-b | recency |")
      expect(table).toBeGreaterThan(0)
      expect(row).toBeGreaterThan(table)
      // Before any number: the title, then the table, then the rest.
      expect(md.slice(0, table)).not.toMatch(/\d/)
      expect(md.slice(0, row)).not.toMatch(/\d\.\d{3}/)
      expect(md).toContain("(compared anyway: --allow-mismatch)")
      // Same judge scores across the runs: 7 -> 8 on every instance.
      expect(md).toMatch(/\| recency \| 7\.000 → 8\.000: \+1\.000/)
      const html = fs.readFileSync(path.join(target, "compare.html"), "utf8")
      expect(html.indexOf("What differs between the runs")).toBeLessThan(html.indexOf("7.000 → 8.000"))
      expect(html).toContain("openai/test-judge-b")

      // The same run twice: nothing differs, no table.
      const self = path.join(dir, "self")
      const same = commandIo(dir)
      expect(yield* Commands.main(["compare", "--runs", `${first},${first}`, "--out", self], same.io)).toBe(0)
      expect(same.err.join("")).toBe("")
      expect(fs.readFileSync(path.join(self, "compare.md"), "utf8")).not.toContain("What differs")
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.scopedLive("a single run's verdict says when its ranked cells are scored by different judges", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ chat: (body) => chat(body as Body) })
      const dir = tempDir("cupid-like-swap-")
      const swap = config(dir, server.baseURL, "test-judge-a")
        .replace(
          "  judge: { provider: openai, model: test-judge-a,",
          "  judge-a: { provider: openai, model: test-judge-a,"
        )
        .replace("{ use: judge, model: judge,", "{ use: judge, model: evaluator,")
        .replace(
          "pipeline:",
          `  judge-b: { provider: openai, model: test-judge-b, baseURL: ${JSON.stringify(server.baseURL)}, apiKeyEnv: CUPID_TEST_KEY }\nsweep: { models.evaluator: [judge-a, judge-b] }\npipeline:`
        )
      fs.writeFileSync(path.join(dir, "swap.yaml"), swap)
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      expect(yield* Commands.main(["sweep", "--config", "swap", "--out", out], io), err.join("")).toBe(0)
      const md = fs.readFileSync(path.join(out, "report.md"), "utf8")
      const note = md.indexOf(
        "The ranked cells are not scored alike: judge model (judge.model) is openai/test-judge-a in judge-a; openai/test-judge-b in judge-b."
      )
      expect(note).toBeGreaterThan(md.indexOf("## Verdict"))
      expect(note).toBeLessThan(md.indexOf("| rank | cell |"))
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it("names accounting modes and prompt packs, leaves a scorer only one run uses aside, and leaves unrecorded scoring unknown", async () => {
    const dir = tempDir("cupid-like-unit-")
    // A run to take a real summary from (offline: no model).
    const out = path.join(dir, "run")
    fs.writeFileSync(
      path.join(dir, "offline.yaml"),
      [
        "name: offline",
        `data: { source: "synthetic:personas=1,seed=4" }`,
        `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
        "pipeline: { retriever: { use: recency, k: 2 }, inferrer: extractive }",
        "scorers: [{ use: retrieval, ks: [2] }, { use: preference-match }]"
      ].join("\n") + "\n"
    )
    const { err, io } = commandIo(dir)
    expect(await runPromise(Commands.main(["sweep", "--config", "offline", "--out", out], io)), err.join("")).toBe(0)
    const run = await runPromise(RunDir.read(out))
    const cell = run.summary.cells[0]!
    const scoring = cell.scoring!
    const judged = {
      ...scoring,
      scorers: [
        ...scoring.scorers.map((s) => (s["use"] === "preference-match" ? { ...s, accounting: "reference" } : s)),
        { use: "judge", model: "evaluator", prompts: "reference" }
      ],
      models: { evaluator: { entry: "gpt", provider: "openai", model: "gpt-4o" } }
    }
    const other = {
      ...cell,
      scoring: {
        ...scoring,
        scorers: [...scoring.scorers, { use: "judge", model: "evaluator", prompts: "project" }],
        models: judged.models
      }
    }
    const found = LikeForLike.differences(
      run.summary,
      run.summary,
      [{ a: { ...cell, scoring: judged }, b: other, label: "recency" }],
      run.summary.metrics
    )
    expect(LikeForLike.lines(found)).toEqual([
      "accounting mode (preference-match): first reference, second strict (cell recency)",
      "prompt pack (judge.prompts): first reference, second project (cell recency)"
    ])
    expect(LikeForLike.refuses(found)).toBe(true)
    // A judge only the first cell has: its metric is scored in one run only, no difference here.
    expect(
      LikeForLike.differences(run.summary, run.summary, [{ a: other, b: cell, label: "recency" }], run.summary.metrics)
    ).toEqual([])

    // A run whose summary.json predates cells[].scoring: unknown, said so, not refused.
    const { scoring: _, ...older } = cell
    const unknown = LikeForLike.differences(
      run.summary,
      run.summary,
      [{ a: cell, b: older, label: "recency" }],
      run.summary.metrics
    )
    expect(LikeForLike.refuses(unknown)).toBe(false)
    expect(LikeForLike.lines(unknown)).toEqual([
      "scorers' settings and models (unknown): first recorded, second not recorded (a run made before summary.json kept cells[].scoring) (cell recency)"
    ])
    const oldRun = { ...run, summary: { ...run.summary, cells: [older] } }
    const c = Compare.compare(run, oldRun)
    expect(c.differences).toHaveLength(1)
    expect(Compare.document(c).blocks[0]).toMatchObject({ title: ["Like for like"] })
    expect(LikeForLike.table(c.differences, false)).toBeUndefined()
    expect(LikeForLike.unknowns(c.differences)).toEqual([
      "Unknown: scorers' settings and models (recency): first run recorded; second run not recorded (a run made before summary.json kept cells[].scoring). They may differ; this comparison cannot tell."
    ])
  })
})
