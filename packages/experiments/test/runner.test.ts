import { type LanguageModel, Plugin, Retriever } from "@cupid-lab/core"
import { Classifier } from "@cupid-lab/retrievers"
import { Config, ResultLog, Runner, RunPlace } from "@cupid-lab/runner"
import { RunId, type ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Deferred, Effect, Exit, Fiber, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

import { flaky, instance, lines, opener, tempDir, testPlugins, visibleSignature } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

// consistent: relevant s2, s3; contrastive: s1; changing: s3, s4
const data = [
  instance("p1", "consistent", [1, 2]),
  instance("p1", "contrastive", [0]),
  instance("p2", "changing", [2, 3])
]

const configText = (extra = "") =>
  [
    "name: t",
    "seed: 5",
    "pipeline: { inferrer: echo }",
    "scorers: [hits]",
    "sweep:",
    "  retriever:",
    "    - first",
    "    - { use: latest, k: 2 }",
    "    - gold",
    "bootstrap: { resamples: 100 }",
    extra
  ].join("\n")

const setup = (text: string, dir = tempDir()) =>
  Effect.map(Config.parse(text, "t.yaml", {}), (c) => ({
    ...c,
    out: path.join(dir, "out"),
    outGiven: true,
    cacheDir: path.join(dir, "cache")
  }))

const read = (file: string) => fs.readFileSync(file, "utf8")
const outputs = (out: string) => ["results.jsonl", "summary.json", "report.md"].map((f) => read(path.join(out, f)))

describe("Runner.sweep", () => {
  it.effect("writes one line per (cell, instance), sorted, and a summary with hand-checkable values", () =>
    Effect.gen(function* () {
      const config = yield* setup(configText())
      const outcome = yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) })
      expect(outcome.interrupted).toBe(false)
      expect(outcome.pairs).toEqual({ total: 9, done: 9, ran: 9, resumed: 0, failed: 0 })
      const results = lines(outcome.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      expect(results.map((r) => `${r.cellName}:${r.instance}`)).toEqual([
        "first:p1:consistent",
        "latest:p1:consistent",
        "gold:p1:consistent",
        "first:p1:contrastive",
        "latest:p1:contrastive",
        "gold:p1:contrastive",
        "first:p2:changing",
        "latest:p2:changing",
        "gold:p2:changing"
      ])
      const r0 = results[0]!
      expect(r0.params).toEqual({
        retriever: { use: "first", k: 1 },
        summarizer: null,
        inferrer: { use: "echo" },
        generator: null
      })
      expect(r0.meta).toEqual({
        sessions: 4,
        historyTokens: 26,
        relevantMeanPosition: 2.5,
        relevant: ["s2", "s3"],
        stale: []
      })
      expect(r0.selected).toEqual(["s1"])
      expect(r0.inference).toEqual({ preference: "p1 other 0 words here", analysis: "" })
      expect(r0.scores).toEqual({
        "retrieval.hit": 0,
        "inference.p": { num: 0, den: 1 },
        "inference.r": { num: 0, den: 2 },
        "cost.calls": 0
      })
      expect(r0.usage).toEqual({ calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} })
      expect(r0.error).toBeNull()

      const summary = JSON.parse(read(outcome.files.summary)) as ResultLine.Summary
      expect(summary.config.name).toBe("t")
      expect(summary.dataset).toEqual({ source: "sample", hash: "fixture", instances: 3, skipped: [] })
      expect(summary.baseline).toBe(outcome.grid.cells[0]!.id)
      const latest = summary.cells[1]!
      // latest(k=2) selects s3, s4: consistent finds 1 of 2, contrastive 0 of 1, changing 2 of 2
      expect(latest.slices.all.metrics["retrieval.hit"]!.mean).toBeCloseTo((0.5 + 0 + 1) / 3, 12)
      // pooled precision (1 + 0 + 2) / 6, recall 3 / 5
      expect(latest.slices.all.metrics["inference.p"]!.mean).toBeCloseTo(0.5, 12)
      expect(latest.slices.all.metrics["inference.r"]!.mean).toBeCloseTo(0.6, 12)
      expect(latest.slices.all.metrics["inference.f1"]!.mean).toBeCloseTo(0.6 / 1.1, 12)
      expect(summary.cells.map((c) => c.usesGold)).toEqual([false, false, true])
      expect(summary.cells[2]!.slices.all.metrics["retrieval.hit"]!.mean).toBe(1)
      expect(summary.cells[0]!.heuristicStages).toEqual(["inferrer"])

      const run = JSON.parse(read(outcome.files.run)) as Record<string, unknown>
      expect(run.pairs).toEqual({ total: 9, resumed: 0, ran: 9, failed: 0, lines: 9 })
      expect(Object.keys(run)).toEqual(
        expect.arrayContaining([
          "startedAt",
          "durationMs",
          "pairsPerSecond",
          "cache",
          "stageTimeMs",
          "versions",
          "modelCalls"
        ])
      )
      expect(fs.existsSync(outcome.files.report)).toBe(true)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.live(
    "a pair slower than the hold time: later lines are appended out of order, and the file still ends sorted, as without it",
    () =>
      Effect.gen(function* () {
        // "slow" answers like "first", but takes 1.3 s on its first call (the first instance): the
        // lines finished meanwhile are held 1 s at most, then appended out of order, and finalize
        // sorts the file.
        const slow = Plugin.retriever({
          name: "slow",
          description: "The earliest session, slowly on the first call.",
          options: Schema.Struct({}),
          make: () =>
            Effect.sync(() => {
              let calls = 0
              return {
                needsSummaries: false,
                retrieve: ({ query }) =>
                  Effect.as(
                    calls++ === 0 ? Effect.sleep("1300 millis") : Effect.void,
                    Retriever.fromScores(
                      query.sessions.map((s) => [s.id, -s.index]),
                      1
                    )
                  )
              }
            })
        })
        const many = Array.from({ length: 40 }, (_, i) => instance(`p${i + 1}`, "consistent", [1, 2]))
        const text = (use: string) =>
          configText().replace("    - first\n    - { use: latest, k: 2 }\n    - gold", `    - ${use}\n    - gold`) +
          "\nconcurrency: 4"
        const slowRun = yield* Sweeps.sweep(yield* setup(text("slow")), {
          plugins: [...testPlugins, slow],
          openDataset: opener(many)
        })
        const quickRun = yield* Sweeps.sweep(yield* setup(text("first")), {
          plugins: testPlugins,
          openDataset: opener(many)
        })
        const ids = (file: string) => lines(file).map((l) => (JSON.parse(l) as ResultLine.ResultLine).instance)
        expect(ids(slowRun.files.results)).toEqual(ids(quickRun.files.results))
        expect(ids(slowRun.files.results).slice(0, 4)).toEqual([
          "p1:consistent",
          "p1:consistent",
          "p2:consistent",
          "p2:consistent"
        ])
        expect(slowRun.pairs).toEqual({ total: 80, done: 80, ran: 80, resumed: 0, failed: 0 })
        const took = (JSON.parse(read(slowRun.files.run)) as { durationMs: number }).durationMs
        expect(took).toBeGreaterThanOrEqual(1300)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "removes the temporary files a killed sweep left in the run directory; nothing but the outputs is left after",
    () =>
      Effect.gen(function* () {
        const config = yield* setup(configText())
        // What a sweep killed while writing its files atomically leaves behind (core's Files.temporaryName).
        fs.mkdirSync(config.out, { recursive: true })
        const leftovers = [`${ResultLog.fileName}.4242.0.tmp`, "summary.json.4242.1.tmp", "results.parquet.99.12.tmp"]
        for (const name of leftovers) fs.writeFileSync(path.join(config.out, name), "half a file")
        const outcome = yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) })
        expect(outcome.pairs.done).toBe(9)
        const left = fs.readdirSync(config.out)
        expect(left.filter((f) => f.endsWith(".tmp"))).toEqual([])
        // no lock, and no directory of records beside the outputs
        expect(left.filter((f) => f.startsWith("."))).toEqual([])
        expect(left.filter((f) => fs.statSync(path.join(config.out, f)).isDirectory())).toEqual([])
        const fresh = yield* setup(configText())
        yield* Sweeps.sweep(fresh, { plugins: testPlugins, openDataset: opener(data) })
        expect(outputs(config.out)).toEqual(outputs(fresh.out))
        expect(left.sort()).toEqual(fs.readdirSync(fresh.out).sort())
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a rerun does no work and leaves every output byte-identical", () =>
    Effect.gen(function* () {
      const config = yield* setup(configText())
      yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) })
      const before = outputs(config.out)
      const again = yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) })
      expect(again.pairs).toEqual({ total: 9, done: 9, ran: 0, resumed: 9, failed: 0 })
      expect(outputs(config.out)).toEqual(before)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.live(
    "an interrupted sweep finishes the pair in flight and writes what is done; resuming it ends where an uninterrupted run does",
    () =>
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        let seen = 0
        // signals once 4 pairs have started, then takes long enough for the interruption to land mid-pair
        const stopper = Plugin.retriever({
          name: "stopper",
          description: "",
          options: Schema.Struct({}),
          make: () =>
            Effect.succeed({
              needsSummaries: false,
              retrieve: ({ query }) =>
                Effect.gen(function* () {
                  if (++seen === 4) {
                    yield* Deferred.succeed(started, undefined)
                    yield* Effect.sleep("50 millis")
                  }
                  return Retriever.fromScores(
                    query.sessions.map((s) => [s.id, s.index]),
                    1
                  )
                })
            })
        })
        const plugins = [...testPlugins, stopper]
        const text = configText().replace("    - gold", "    - gold\n    - stopper")
        const many = [...data, instance("p3", "consistent", [0, 3]), instance("p3", "changing", [1])]
        const interrupted = yield* setup(text)
        const fiber = yield* Effect.fork(
          Sweeps.sweep({ ...interrupted, concurrency: 1 }, { plugins, openDataset: opener(many) })
        )
        yield* Deferred.await(started)
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        const results = path.join(interrupted.out, "results.jsonl")
        const done = lines(results).length
        // the pair in flight when the interruption came (the 4th started) was finished and written
        expect(done).toBeGreaterThanOrEqual(4)
        expect(done).toBeLessThan(20)
        expect(fs.existsSync(path.join(interrupted.out, "summary.json"))).toBe(true)
        const run = JSON.parse(read(path.join(interrupted.out, "run.json"))) as {
          interrupted: boolean
          pairs: { lines: number }
        }
        expect(run.interrupted).toBe(true)
        expect(run.pairs.lines).toBe(done)
        const second = yield* Sweeps.sweep({ ...interrupted, concurrency: 1 }, { plugins, openDataset: opener(many) })
        expect(second.interrupted).toBe(false)
        expect(second.pairs.ran).toBe(20 - done)
        const fresh = yield* setup(text)
        seen = 100
        yield* Sweeps.sweep(fresh, { plugins, openDataset: opener(many) })
        expect(outputs(second.out).slice(0, 2)).toEqual(outputs(fresh.out).slice(0, 2))
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a failed pair is a result line with its error, counted, and retried by the next run", () =>
    Effect.gen(function* () {
      const state = { failing: new Set([visibleSignature(data[1]!.query)]) as ReadonlySet<string> }
      const plugins = [...testPlugins, flaky(state)]
      const config = yield* setup(configText().replace("    - gold", "    - flaky"))
      const first = yield* Sweeps.sweep(config, { plugins, openDataset: opener(data) })
      expect(first.pairs.failed).toBe(1)
      const failed = lines(first.files.results)
        .map((l) => JSON.parse(l) as ResultLine.ResultLine)
        .filter((r) => r.status === "failed")
      expect(failed.map((r) => [r.cellName, r.instance, r.error])).toEqual([
        [
          "flaky",
          "p1:contrastive",
          {
            stage: "retrieve",
            plugin: "flaky",
            tag: "StageError",
            message: "retrieve (flaky): no luck with this history"
          }
        ]
      ])
      expect(failed[0]!.scores).toEqual({})
      const flakyCell = first.summary.cells[2]!
      expect([flakyCell.slices.all.n, flakyCell.slices.all.failed, flakyCell.slices.contrastive.failed]).toEqual([
        2, 1, 1
      ])
      const run = JSON.parse(read(first.files.run)) as { failuresByStage: unknown }
      expect(run.failuresByStage).toEqual({ retrieve: 1 })

      state.failing = new Set()
      const second = yield* Sweeps.sweep(config, { plugins, openDataset: opener(data) })
      expect(second.pairs).toEqual({ total: 9, done: 9, ran: 1, resumed: 8, failed: 0 })
      const after = lines(second.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      expect(after.filter((r) => r.status === "failed")).toHaveLength(0)
      expect(new Set(after.map((r) => `${r.cell}:${r.instance}`)).size).toBe(9)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "runs never mix: a changed config is a new run, refused in the old one's --out, given its own directory by default",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const first = yield* Sweeps.sweep(yield* setup(configText(), dir), {
          plugins: testPlugins,
          openDataset: opener(data)
        })
        const before = read(first.files.results)
        const recorded = JSON.parse(read(path.join(first.out, RunId.fileName))) as RunId.Identity
        // a config without the gold cell, pointed at the same directory
        const fewer = yield* setup(configText().replace("    - gold\n", ""), dir)
        const refused = yield* Effect.flip(Sweeps.sweep(fewer, { plugins: testPlugins, openDataset: opener(data) }))
        const mine = RunPlace.identity(fewer, { source: "sample", fingerprint: "fixture" })
        expect(refused.message).toBe(
          `${fewer.out}: holds another run: run ${recorded.id} (config t, hash ${recorded.config.hash}; data sample, fingerprint fixture); ` +
            `this sweep is run ${mine.id} (config t, hash ${mine.config.hash}; data sample, fingerprint fixture); the config differs. ` +
            "Resuming is for the same run only: give another --out (or leave --out and out: unset, for runs/<name>/<run id>), or delete the directory"
        )
        expect(read(first.files.results)).toBe(before)
        // by default each run gets runs/<name>/<run id>, and latest points at the newest
        const parent = path.join(dir, "runs", "t")
        const a = yield* Sweeps.sweep(
          { ...fewer, out: parent, outGiven: false },
          { plugins: testPlugins, openDataset: opener(data) }
        )
        const b = yield* Sweeps.sweep(
          { ...fewer, out: parent, outGiven: false },
          { plugins: testPlugins, openDataset: opener(data, "other data") }
        )
        expect(a.out).toBe(path.join(parent, mine.id))
        expect(b.out).not.toBe(a.out)
        expect(fs.readlinkSync(path.join(parent, RunId.latestName))).toBe(path.basename(b.out))
        expect(lines(a.files.results)).toHaveLength(6)
        // the same run again resumes in its own directory
        const again = yield* Sweeps.sweep(
          { ...fewer, out: parent, outGiven: false },
          { plugins: testPlugins, openDataset: opener(data) }
        )
        expect([again.out, again.pairs.ran, again.pairs.resumed]).toEqual([a.out, 0, 6])
        // a directory with results but no recorded identity is not resumed blindly
        const legacy = path.join(dir, "legacy")
        fs.mkdirSync(legacy)
        fs.writeFileSync(path.join(legacy, ResultLog.fileName), "")
        expect(
          (yield* Effect.flip(
            Sweeps.sweep({ ...fewer, out: legacy }, { plugins: testPlugins, openDataset: opener(data) })
          )).message
        ).toMatch(/legacy: holds results of a run whose identity is not recorded \(no run-id\.json\)/)
      }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("Runner.dryRun", () => {
  const calls: Array<LanguageModel.CompletionRequest> = []
  const scripted = Plugin.provider({
    name: "scripted",
    description: "",
    options: Schema.Struct({}),
    make: (_options, model) =>
      Effect.succeed({
        languageModel: {
          info: { provider: "scripted", model, params: {} },
          complete: (r: LanguageModel.CompletionRequest) =>
            Effect.sync(() => {
              calls.push(r)
              return { text: `Preference: ${r.messages[0]!.content}`, promptTokens: 11, completionTokens: 5 }
            })
        }
      })
  })
  const text = [
    "models: { m: { provider: scripted, model: tiny } }",
    "pipeline: { inferrer: { use: asks, model: m } }",
    "scorers: [hits]",
    "sweep:",
    "  retriever: [first, latest]"
  ].join("\n")

  it.effect("counts the calls a sweep would make, what the cache answers, and the tokens, sending nothing", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = yield* setup(text, dir)
      const plugins = [...testPlugins, scripted]
      const d = yield* Runner.dryRun(config, { plugins, openDataset: opener(data) })
      expect(d.grid.cells.map((c) => c.name)).toEqual(["first", "latest"])
      expect(d.instances).toBe(3)
      expect(d.pairs).toEqual({ total: 6, done: 0, toRun: 6 })
      // two distinct questions ("help p1" is asked by both p1 instances, in both cells): the other
      // four askings are answered by the cache
      expect(d.calls).toEqual({ total: 6, toSend: 2, cached: 4 })
      // prompt "plain: help p1" = 5 tokens + 4 per message; answer "Preference: short answers." = 2 + 1 + 1 + 2 + 1
      expect(d.tokens).toEqual({ prompt: 18, completion: 14 })
      expect(d.byModel).toEqual({
        "scripted/tiny": { toSend: 2, cached: 4, promptTokens: 18, completionTokens: 14, rate: 1 }
      })
      expect(calls).toHaveLength(0)
      expect(fs.existsSync(config.out)).toBe(false)
      expect(fs.existsSync(config.cacheDir)).toBe(false)

      const real = yield* Sweeps.sweep(config, { plugins, openDataset: opener(data) })
      expect(calls).toHaveLength(2)
      expect(real.summary.cells[0]!.slices.all.metrics["cost.calls"]!.mean).toBe(1)
      const afterRun = yield* Runner.dryRun(config, { plugins, openDataset: opener(data) })
      expect(afterRun.pairs).toEqual({ total: 6, done: 6, toRun: 0 })
      expect(afterRun.calls).toEqual({ total: 0, toSend: 0, cached: 0 })
      const elsewhere = yield* Runner.dryRun(
        { ...config, out: path.join(dir, "other") },
        { plugins, openDataset: opener(data) }
      )
      expect(elsewhere.calls).toEqual({ total: 6, toSend: 0, cached: 6 })
      expect(calls).toHaveLength(2)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("Runner.sweep with history transforms", () => {
  it.effect(
    "pads and moves histories per cell, records the new length and positions, and fails what cannot apply",
    () =>
      Effect.gen(function* () {
        const config = yield* setup(
          [
            "name: t",
            "seed: 5",
            "scorers: [hits]",
            "pipeline: { retriever: { use: latest, k: 2 } }",
            "sweep:",
            "  transform: [{}, { pad: 2, position: early }]",
            "bootstrap: { resamples: 100 }"
          ].join("\n")
        )
        const lonely = instance("p3", "consistent", [0])
        const outcome = yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener([...data, lonely]) })
        const results = lines(outcome.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        const padded = results.filter((r) => r.cellName === "pad=2,position=early")
        expect(padded.map((r) => [r.instance, r.status, r.meta.sessions, r.meta.relevant])).toEqual([
          ["p1:consistent", "ok", 6, ["s1", "s2"]],
          ["p1:contrastive", "ok", 6, ["s1"]],
          ["p2:changing", "ok", 6, ["s1", "s2"]],
          // p3 pads from the sessions of p1 and p2.
          ["p3:consistent", "ok", 6, ["s1"]]
        ])
        expect(padded[0]!.params).toMatchObject({ transform: { pad: 2, position: "early" } })
        // latest(k=2) now picks the last two sessions: padding and others, never the moved relevant ones.
        expect(padded[0]!.selected).toEqual(["s5", "s6"])
        const plain = results.filter((r) => r.cellName === "pad=0,position=none")
        expect(plain.map((r) => r.meta.sessions)).toEqual([4, 4, 4, 4])
        expect(plain[0]!.params).not.toHaveProperty("transform")
        const summary = JSON.parse(read(outcome.files.summary)) as ResultLine.Summary
        expect(summary.cells.map((c) => c.params["transform"] ?? null)).toEqual([null, { pad: 2, position: "early" }])
        expect(read(outcome.files.report)).toContain("## History transforms")
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a pad with no other persona to draw from fails each pair, with the reason", () =>
    Effect.gen(function* () {
      const config = yield* setup(
        "name: t\nscorers: [hits]\npipeline: { retriever: first }\ndata: { transform: { pad: 3 } }\nbootstrap: { resamples: 100 }\n"
      )
      const outcome = yield* Sweeps.sweep(config, {
        plugins: testPlugins,
        openDataset: opener([instance("solo", "consistent", [1])])
      })
      expect(outcome.pairs.failed).toBe(1)
      const [line] = lines(outcome.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      expect(line!.status).toBe("failed")
      expect(line!.error).toEqual({
        stage: "transform",
        plugin: "pad=3",
        tag: "DatasetError",
        message:
          "transform of solo:consistent, pad: no session of another persona is available to pad with (the dataset has 1 persona(s))"
      })
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("Runner.sweep with a fitted retriever", () => {
  it.effect("records what the plugin fitted, with its training source and fingerprint, in run.json", () =>
    Effect.gen(function* () {
      const config = yield* setup(
        [
          "name: t",
          "scorers: [hits]",
          'pipeline: { retriever: { use: factor-classifier, train: "synthetic:personas=4,seed=9" } }',
          "bootstrap: { resamples: 100 }"
        ].join("\n")
      )
      const outcome = yield* Sweeps.sweep(config, {
        plugins: [...testPlugins, Classifier.plugin],
        openDataset: opener(data)
      })
      expect(outcome.pairs.failed).toBe(0)
      const run = JSON.parse(read(outcome.files.run)) as {
        fits: Array<{
          cell: string
          plugin: string
          train: string
          trainFingerprint: string
          parameters: Classifier.Fitted
        }>
      }
      expect(run.fits.length).toBe(1)
      const [fit] = run.fits
      expect(fit!.plugin).toBe("factor-classifier")
      expect(fit!.train).toBe("synthetic:personas=4,seed=9")
      expect(fit!.trainFingerprint).toMatch(/^[0-9a-f]{64}$/)
      expect(fit!.parameters.instances).toBe(12)
      expect(fit!.parameters.features).toEqual([...Classifier.featureNames])
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("Runner.sweep on a damaged results file", () => {
  it.effect("stops with the line number, and with repair keeps every intact line and reruns only the lost pairs", () =>
    Effect.gen(function* () {
      const config = yield* setup(configText())
      yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) })
      const file = path.join(config.out, "results.jsonl")
      const good = lines(file)
      // a line in the middle damaged by an editor
      fs.writeFileSync(file, [...good.slice(0, 4), '{"cell": oops', ...good.slice(5)].join("\n") + "\n")
      const error = yield* Effect.flip(Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) }))
      expect(error.message).toBe(
        `${file}: line 5 is not valid JSON; expected one result line per line; the file was edited or damaged. Rerun with --repair to keep the 8 intact lines and move the corrupt ones to results.corrupt.jsonl`
      )
      const logs: Array<string> = []
      const repaired = yield* Sweeps.sweep(config, {
        plugins: testPlugins,
        openDataset: opener(data),
        repair: true,
        log: (l) => logs.push(l)
      })
      expect(repaired.pairs).toMatchObject({ resumed: 8, ran: 1, done: 9 })
      expect(logs.find((l) => l.startsWith("resuming"))).toBe(
        `resuming in ${config.out}: 8 pairs done, 1 corrupt lines moved to results.corrupt.jsonl`
      )
      expect(lines(file)).toEqual(good)
      expect(lines(path.join(config.out, "results.corrupt.jsonl"))).toEqual(['{"cell": oops'])
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("Runner.sweep on no data", () => {
  it.effect("an empty dataset is an error naming the source, not a successful run of 0 instances", () =>
    Effect.gen(function* () {
      const config = yield* setup(configText())
      const error = yield* Effect.flip(Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener([]) }))
      expect(error.message).toBe("sample: no instances to run")
      const filtered = yield* setup(configText("data: { types: [changing] }"))
      const none = yield* Effect.flip(
        Sweeps.sweep(filtered, { plugins: testPlugins, openDataset: opener(data.filter((i) => i.type !== "changing")) })
      )
      expect(none.message).toBe("sample: no instances to run after the filters (types changing)")
      // the data is read once, by the pair loop: the log was open, but nothing was written or summarized
      expect(lines(path.join(config.out, "results.jsonl"))).toEqual([])
      expect(fs.existsSync(path.join(config.out, "summary.json"))).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
