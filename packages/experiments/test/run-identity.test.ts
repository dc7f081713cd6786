/**
 * Runs never mix: a run's identity (config hash, data fingerprint, history transform) names its
 * directory, `runs/<name>/<run id>/`, and a sweep resumes only into a directory of the same
 * identity. First through the runner (test plugins, hand-made data), then through the compiled CLI
 * with its default output directory.
 */
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Config, Runner, RunPlace } from "@cupid-lab/runner"
import { RunId } from "@cupid-lab/results"
import { Subprocess } from "@cupid-lab/core/testing"

import { buildCli, instance, opener, tempDir, testPlugins } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const data = [
  instance("p1", "consistent", [1, 2]),
  instance("p1", "contrastive", [0]),
  instance("p2", "changing", [2, 3])
]

const configText = (k = 2, extra = "") =>
  [
    "name: t",
    "seed: 5",
    "pipeline: { inferrer: echo }",
    "scorers: [hits]",
    "sweep:",
    "  retriever:",
    "    - first",
    `    - { use: latest, k: ${k} }`,
    extra
  ].join("\n")

/** A config as the CLI loads it without --out: runs go to `<dir>/runs/t/<run id>`. */
const byDefault = (dir: string, text = configText()) =>
  Effect.map(Config.parse(text, "t.yaml", {}), (c) => ({
    ...c,
    out: path.join(dir, "runs", "t"),
    outGiven: false,
    cacheDir: path.join(dir, "cache")
  }))

const read = (file: string) => fs.readFileSync(file, "utf8")
/** Every file of a run directory and its bytes, except run.json (wall-clock times). */
const snapshot = (dir: string) =>
  Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => f !== "run.json")
      .sort()
      .map((f) => [f, read(path.join(dir, f))])
  )
const recorded = (dir: string) => JSON.parse(read(path.join(dir, RunId.fileName))) as RunId.Identity
const latest = (dir: string) => fs.readlinkSync(path.join(dir, "runs", "t", RunId.latestName))
const sweep = (config: Config.Config, fingerprint = "fixture") =>
  Sweeps.sweep(config, { plugins: testPlugins, openDataset: opener(data, fingerprint) })

describe("run directories by identity", () => {
  it.effect("the same config twice resumes in the same directory; latest points at it", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = yield* byDefault(dir)
      const first = yield* sweep(config)
      const identity = recorded(first.out)
      expect(first.out).toBe(path.join(dir, "runs", "t", identity.id))
      expect(identity).toEqual(RunPlace.identity(config, { source: "sample", fingerprint: "fixture" }))
      expect(identity.id).toMatch(RunId.idPattern)
      expect(latest(dir)).toBe(identity.id)
      const again = yield* sweep(config)
      expect([again.out, again.pairs.ran, again.pairs.resumed]).toEqual([first.out, 0, 6])
      expect(fs.readdirSync(path.join(dir, "runs", "t")).sort()).toEqual([identity.id, RunId.latestName])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("other data is another run: a new directory, the old one untouched", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = yield* byDefault(dir)
      const first = yield* sweep(config)
      const before = snapshot(first.out)
      const other = yield* sweep(config, "other data")
      expect(other.out).not.toBe(first.out)
      expect(other.pairs.ran).toBe(6)
      expect(recorded(other.out).data.fingerprint).toBe("other data")
      expect(snapshot(first.out)).toEqual(before)
      expect(latest(dir)).toBe(path.basename(other.out))
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a copied config that keeps the name but changes the content gets its own directory", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const original = yield* sweep(yield* byDefault(dir))
      const before = snapshot(original.out)
      const copy = yield* sweep(yield* byDefault(dir, configText(3)))
      expect(path.dirname(copy.out)).toBe(path.dirname(original.out))
      expect(copy.out).not.toBe(original.out)
      expect(recorded(copy.out).config.name).toBe("t")
      expect(recorded(copy.out).config.hash).not.toBe(recorded(original.out).config.hash)
      expect(snapshot(original.out)).toEqual(before)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("--out at another run's directory is refused before any work, naming both runs and what differs", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const theirs = yield* sweep(yield* byDefault(dir))
      const before = snapshot(theirs.out)
      const t = recorded(theirs.out)
      // another history transform, pointed at the first run's directory
      const config = {
        ...(yield* byDefault(dir, configText(2, "data: { transform: { position: late } }"))),
        out: theirs.out,
        outGiven: true
      }
      const mine = RunPlace.identity(config, { source: "sample", fingerprint: "other data" })
      const refused = yield* Effect.flip(sweep(config, "other data"))
      expect(refused.message).toBe(
        `${theirs.out}: holds another run: run ${t.id} (config t, hash ${t.config.hash}; data sample, fingerprint fixture); ` +
          `this sweep is run ${mine.id} (config t, hash ${mine.config.hash}; data sample, fingerprint other data, transform {"position":"late"}); ` +
          "the config (its data.transform among others) and the data differ. " +
          "Resuming is for the same run only: give another --out (or leave --out and out: unset, for runs/<name>/<run id>), or delete the directory"
      )
      expect(snapshot(theirs.out)).toEqual(before)
      // the dry run refuses it too
      expect(
        (yield* Effect.flip(Runner.dryRun(config, { plugins: testPlugins, openDataset: opener(data, "other data") })))
          .message
      ).toBe(refused.message)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a typo in report.main stops the sweep before any pair runs, naming the key and the scorers' metrics", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = yield* byDefault(dir, configText(2, "report: { main: retrieval.hti }"))
      const refused = yield* Effect.flip(sweep(config))
      expect(refused.message).toBe(
        `t.yaml: report.main: unknown metric "retrieval.hti" (did you mean "retrieval.hit"?); ` +
          "valid choices (the scorers' metrics): retrieval.hit, inference.p, inference.r, inference.f1, cost.calls"
      )
      // Nothing ran, nothing was written; the dry run refuses it too.
      expect(fs.existsSync(path.join(dir, "runs"))).toBe(false)
      expect(
        (yield* Effect.flip(Runner.dryRun(config, { plugins: testPlugins, openDataset: opener(data) }))).message
      ).toBe(refused.message)
      // the primary metrics are checked the same way, each at its key
      const primary = yield* byDefault(
        dir,
        configText(2, "report: { primary: { metrics: [retrieval.hit, inference.f] } }")
      )
      expect(
        (yield* Effect.flip(Runner.dryRun(primary, { plugins: testPlugins, openDataset: opener(data) }))).message
      ).toMatch(
        /^t\.yaml: report\.primary\.metrics\[1\]: unknown metric "inference\.f" \(did you mean "inference\.\w+"\?\); valid choices \(the scorers' metrics\): retrieval\.hit, /
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("report settings are not part of the run's identity: the corrected config resumes the same run", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const first = yield* sweep(yield* byDefault(dir, configText(2, "report: { main: inference.f1 }")))
      const corrected = yield* byDefault(dir, configText(2, "report: { main: retrieval.hit, baseline: first }"))
      expect(Config.hash(corrected)).toBe(Config.hash(yield* byDefault(dir)))
      const again = yield* sweep(corrected)
      expect([again.out, again.pairs.ran, again.pairs.resumed]).toEqual([first.out, 0, 6])
      // The reports follow the corrected setting.
      expect(again.summary.main).toBe("retrieval.hit")
      // and the declared families are recorded in the summary for the reports
      const declared = yield* byDefault(
        dir,
        configText(2, "report: { correction: { exploratory: holm }, reference: [first] }")
      )
      expect(Config.hash(declared)).toBe(Config.hash(corrected))
      expect((yield* sweep(declared)).summary.families).toEqual({
        correction: { exploratory: "holm" },
        reference: ["first"]
      })
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("where a symlink cannot be made, latest is a file holding the id, and commands follow it", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const run = path.join(dir, "runs", "t", "0123456789ab")
      fs.mkdirSync(run, { recursive: true })
      const noSymlinks = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(FileSystem.FileSystem, (real) =>
          FileSystem.make({
            ...real,
            symlink: (_target, link) =>
              Effect.fail(
                new SystemError({
                  reason: "PermissionDenied",
                  module: "FileSystem",
                  method: "symlink",
                  pathOrDescriptor: link,
                  description: "EPERM: operation not permitted"
                })
              )
          })
        )
      ).pipe(Layer.provide(NodeFileSystem.layer))
      yield* RunId.linkLatest(run).pipe(Effect.provide(noSymlinks))
      const link = path.join(dir, "runs", "t", RunId.latestName)
      expect(fs.lstatSync(link).isFile()).toBe(true)
      expect(read(link)).toBe("0123456789ab\n")
      expect(fs.readdirSync(path.dirname(run)).sort()).toEqual(["0123456789ab", "latest"])
      expect(yield* RunId.resolve(link)).toBe(run)
      // a symlink replaces the file atomically once symlinks work
      yield* RunId.linkLatest(run).pipe(Effect.provide(NodeFileSystem.layer))
      expect(fs.readlinkSync(link)).toBe("0123456789ab")
      expect(yield* RunId.resolve(link)).toBe(run)
      // the config's directory is not a run: the message names its runs
      expect((yield* Effect.flip(RunId.resolve(path.dirname(run)))).message).toBe(
        `${path.dirname(run)}: holds the runs of one config by id (0123456789ab), not a run; give ${link} for the newest, or ${path.join(path.dirname(run), "<run id>")}`
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")

describe("the CLI's default output directory", () => {
  beforeAll(buildCli)

  it("sweeps into runs/<name>/<run id>, resumes there, and report, compare and export take runs/<name>/latest", async () => {
    const cwd = tempDir("cupid-cli-out-")
    const run = (...args: Array<string>) =>
      Subprocess.run(process.execPath, [cli, ...args], {
        cwd,
        env: { ...process.env, FORCE_COLOR: "0", CUPID_CACHE_DIR: path.join(cwd, "cache") }
      })
    const first = await run("sweep", "--config", "smoke")
    expect(first.code, first.stderr).toBe(0)
    const id = /run ([0-9a-f]{12}): runs\/smoke\/\1\n/.exec(first.stderr)?.[1]
    expect(id, first.stderr).toBeDefined()
    const dir = path.join("runs", "smoke", id!)
    expect(first.stdout).toContain(`report: ${path.join(dir, "report.md")}`)
    expect(fs.readlinkSync(path.join(cwd, "runs", "smoke", "latest"))).toBe(id)
    const results = read(path.join(cwd, dir, "results.jsonl"))

    const again = await run("sweep", "--config", "smoke")
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain("12/12 pairs done (0 this run)")

    // the sample's test split: other data, so another run beside the first, which stays as it was
    const other = await run("sweep", "--config", "smoke", "--data", "sample-test")
    expect(other.code, other.stderr).toBe(0)
    const otherId = fs.readlinkSync(path.join(cwd, "runs", "smoke", "latest"))
    expect(otherId).not.toBe(id)
    expect(read(path.join(cwd, dir, "results.jsonl"))).toBe(results)

    // --out at the first run with the other data: refused, nothing written
    const refused = await run("sweep", "--config", "smoke", "--data", "sample-test", "--out", dir)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`${dir}: holds another run: run ${id} (config smoke, hash `)
    expect(refused.stderr).toContain(`; this sweep is run ${otherId} (config smoke, hash `)
    expect(refused.stderr).toContain("; the config and the data differ. Resuming is for the same run only")
    expect(read(path.join(cwd, dir, "results.jsonl"))).toBe(results)

    const report = await run("report", "--run", "runs/smoke/latest")
    expect(report.code, report.stderr).toBe(0)
    expect(report.stdout).toContain(`report: ${path.join("runs", "smoke", otherId, "report.md")}\n`)
    // other data: refused without --allow-mismatch
    expect((await run("compare", "--runs", `${dir},runs/smoke/latest`)).stderr).toContain(
      "data fingerprint: first sample, "
    )
    const compare = await run("compare", "--runs", `${dir},runs/smoke/latest`, "--allow-mismatch")
    expect(compare.code, compare.stderr).toBe(0)
    expect(compare.stdout).toContain(
      `compare: ${path.join(cwd, "runs", `compare-smoke-${id}-vs-smoke-${otherId}`, "compare.md")}\n`
    )
    const exported = await run("export", "--run", "runs/smoke/latest")
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stdout).toContain(`qrels: ${path.join("runs", "smoke", otherId, "trec", "qrels.txt")}`)
    const parent = await run("report", "--run", "runs/smoke")
    expect(parent.code).toBe(1)
    expect(parent.stderr).toContain(
      `runs/smoke: holds the runs of one config by id (${[id, otherId].sort().join(", ")}), not a run; give runs/smoke/latest for the newest`
    )

    // a directory from before run identities (results, no run-id.json) is not resumed blindly
    fs.rmSync(path.join(cwd, dir, RunId.fileName))
    const legacy = await run("sweep", "--config", "smoke", "--out", dir)
    expect(legacy.code).toBe(1)
    expect(legacy.stderr).toContain(`${dir}: holds results of a run whose identity is not recorded (no run-id.json)`)
  })
})
