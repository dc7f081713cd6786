import { Errors, ProgressLine } from "@cupid-lab/core"
import { Config, Plugins, Progress, Runner } from "@cupid-lab/runner"
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Stream } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { instance, lines, opener, tempDir, testPlugins, writeConfig } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures")

describe("user plugin modules", () => {
  const registryFor = (plugins: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const dir = tempDir()
      const file = writeConfig(dir, `plugins: ${JSON.stringify(plugins)}\n`)
      const config = yield* Config.load(file, {})
      return { file, result: yield* Effect.either(Plugins.registry(config, testPlugins)) }
    })

  it.effect("are imported relative to the config file and registered beside the built-ins", () =>
    Effect.gen(function* () {
      const { result } = yield* registryFor([path.join(fixtures, "slow-plugins.ts")])
      expect(result._tag).toBe("Right")
      if (result._tag === "Right") {
        expect(result.right.names("retriever")).toEqual(["first", "gold", "latest", "slow"])
        expect(result.right.names("scorer")).toEqual(["found", "hits"])
      }
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a module that exports no plugin, cannot be imported, or reuses a name is a config error", () =>
    Effect.gen(function* () {
      const bad = yield* registryFor([path.join(fixtures, "not-a-plugin.ts")])
      expect(bad.result._tag === "Left" && bad.result.left.message).toBe(
        `${bad.file}: plugins[0]: ${path.join(fixtures, "not-a-plugin.ts")}: the default export must be a plugin built with Plugin.retriever(...), Plugin.scorer(...) etc., or an array of them`
      )
      const missing = yield* registryFor(["./nowhere.ts"])
      expect(missing.result._tag === "Left" && missing.result.left.message).toBe(
        `${missing.file}: plugins[0]: cannot import ./nowhere.ts: ${path.join(path.dirname(missing.file), "nowhere.ts")} does not exist`
      )
      const clash = yield* registryFor([path.join(fixtures, "clashing-plugin.ts")])
      expect(clash.result._tag === "Left" && clash.result.left.message).toBe(
        `${clash.file}: plugins: two retriever plugins are named "first"; rename the one in your module`
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("data errors during a sweep", () => {
  it.effect("stop it with the loader's error, keep the lines written, and a rerun resumes", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const data = [instance("p1", "consistent", [1]), instance("p2", "changing", [2])]
      const config = {
        ...(yield* Config.parse("pipeline: { retriever: first }\nscorers: [hits]\n", "t.yaml", {})),
        out: path.join(dir, "out"),
        outGiven: true,
        cacheDir: path.join(dir, "c")
      }
      let runs = 0
      // the sweep's one read of the data fails after the first instance
      const failing: Runner.OpenDataset = (source, o) =>
        Effect.map(opener(data)(source, o), (opened) => ({
          ...opened,
          instances: Stream.suspend(() =>
            ++runs === 1
              ? Stream.concat(
                  Stream.make(data[0]!),
                  Stream.fail(
                    new Errors.DatasetError({
                      source: "t.jsonl",
                      row: 2,
                      field: "prior_interactions",
                      reason: "expected an array"
                    })
                  )
                )
              : Stream.fromIterable(data)
          )
        }))
      const error = yield* Effect.flip(Sweeps.sweep(config, { plugins: testPlugins, openDataset: failing }))
      expect(error.message).toBe("t.jsonl, row 2, prior_interactions: expected an array")
      expect(lines(path.join(config.out, "results.jsonl"))).toHaveLength(1)
      const again = yield* Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data) })
      expect(again.pairs).toEqual({ total: 2, done: 2, ran: 1, resumed: 1, failed: 0 })
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("progress", () => {
  const snapshot: Progress.Snapshot = {
    cells: 4,
    instancesSeen: 30,
    instancesTotal: 100,
    pairsDone: 150,
    pairsTotal: 400,
    pairsRun: 50,
    pairsToRun: 300,
    failed: 2,
    cacheHits: 1200,
    calls: 15000,
    tokens: 2_500_000,
    elapsedMs: 20_000
  }

  it("states pairs, instances, ETA at this run's rate, calls, tokens and failures", () => {
    // 250 pairs left at 50 per 20 s
    expect(Progress.eta(snapshot)).toBe(100_000)
    expect(Progress.describe(snapshot)).toBe(
      "150/400 pairs (37.5%) · 4 cells x 30/100 instances · ETA 1m40s · calls 15k (cached 1.2k) · tokens 2.5M · failed 2"
    )
    expect(ProgressLine.bar(0.375, 8)).toBe("[###-----]")
  })

  it("draws one rewritten line on a terminal and plain lines at a slower pace otherwise", () => {
    const tty: Array<string> = [],
      plain: Array<string> = []
    const a = Progress.make({ write: (t) => tty.push(t), isTTY: true, columns: 60 })
    const b = Progress.make({ write: (t) => plain.push(t), isTTY: false })
    for (const ms of [0, 50, 150, 9_000, 10_500]) {
      a.update({ ...snapshot, elapsedMs: ms })
      b.update({ ...snapshot, elapsedMs: ms })
    }
    a.done(snapshot)
    expect(tty).toHaveLength(5) // 0, 150, 9000, 10500, done
    expect(tty.every((t) => t.startsWith("\r") && t.trimEnd().length <= 60)).toBe(true)
    expect(tty.at(-1)!.endsWith("\n")).toBe(true)
    expect(plain).toEqual([
      `progress: ${Progress.describe({ ...snapshot, elapsedMs: 0 })}\n`,
      `progress: ${Progress.describe({ ...snapshot, elapsedMs: 10_500 })}\n`
    ])
  })
})
