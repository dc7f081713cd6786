import { Plugin } from "@cupid-lab/core"
import { Builtins as Providers } from "@cupid-lab/providers"
import { Bm25 } from "@cupid-lab/retrievers"
import { Config, Grid, Runner } from "@cupid-lab/runner"

import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

import { instance, opener, tempDir, testPlugins } from "./support.js"

const registry = Plugin.makeRegistry(testPlugins)
const parse = (text: string, env: Record<string, string> = {}) => Config.parse(text, "cfg.yaml", env)
const message = <A, E extends { message: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (e) => e.message)
const gridError = (text: string) => message(Effect.flatMap(parse(text), (c) => Grid.expand(c, registry)))

describe("Config.parse", () => {
  it.effect("fills defaults", () =>
    Effect.gen(function* () {
      const c = yield* parse("pipeline:\n  retriever: first\n")
      expect(c.name).toBe("cfg")
      expect(c.data).toEqual({ source: "sample", onInvalid: "fail" })
      expect(c.seed).toBe(0)
      expect(c.concurrency).toBe(4)
      expect(c.cacheDir).toBe(".cache/models")
      expect(c.out).toBe(path.join("runs", "cfg"))
      expect(c.bootstrap).toEqual({ resamples: 1000, largeSample: 2000 })
      expect(c.pipeline).toEqual({ retriever: { use: "first" }, summarizer: null, inferrer: null, generator: null })
    })
  )

  it.effect("reports YAML syntax errors with line and column", () =>
    Effect.gen(function* () {
      expect(yield* message(parse("name: x\npipeline: {retriever: first\n"))).toBe(
        "cfg.yaml:3:1: YAML syntax error: Flow map in block collection must be sufficiently indented and end with a }"
      )
      expect(yield* message(parse("name: a\nname: b\n"))).toBe(
        "cfg.yaml:2:1: YAML syntax error: Map keys must be unique"
      )
    })
  )

  it.effect("refuses an alias bomb and a value that contains itself, with the line, column and key", () =>
    Effect.gen(function* () {
      const lists = ["name: x", `a: &a [${Array(9).fill('"lol"').join(",")}]`]
      for (const [prev, next] of ["ab", "bc", "cd", "de", "ef", "fg", "gh", "hi"])
        lists.push(`${next}: &${next} [${Array(9).fill(`*${prev}`).join(",")}]`)
      expect(yield* message(parse(`${lists.join("\n")}\n`))).toBe(
        "cfg.yaml:7:8: f[0]: the document expands past 100,000 values here (the alias *e repeats its anchor's whole value); " +
          "nested aliases multiply: write the values out, or use fewer aliases"
      )
      expect(yield* message(parse("name: x\npipeline: &p\n  retriever: first\n  inferrer: *p\n"))).toBe(
        "cfg.yaml:4:13: pipeline.inferrer: the alias *p is inside the value its anchor &p (line 2) names, so that value would contain itself"
      )
    })
  )

  it.effect("refuses a run name that is not one folder name (it would write the run outside runs/)", () =>
    Effect.gen(function* () {
      const help = "a run's name is one folder name under runs/ (no / or \\, not . or .., at most 128 characters)"
      expect(yield* message(parse("name: ../../x\npipeline: { retriever: first }\n"))).toBe(
        `cfg.yaml: name: "../../x" is not one folder name: ${help}`
      )
      expect(yield* message(parse("name: a/b\n"))).toBe(`cfg.yaml: name: "a/b" is not one folder name: ${help}`)
      expect(yield* message(parse('name: "..\\\\up"\n'))).toBe(
        `cfg.yaml: name: "..\\\\up" is not one folder name: ${help}`
      )
      expect(yield* message(parse("name: ..\n"))).toBe(`cfg.yaml: name: ".." is not one folder name: ${help}`)
      expect(yield* message(Config.parse("pipeline: { retriever: first }\n", "..yaml", {}))).toBe(
        `..yaml: name: the file's name gives the run the name ".", which is not one folder name: ${help}; set name:`
      )
      expect((yield* parse("name: contextual-v2.1_b\n")).out).toBe(path.join("runs", "contextual-v2.1_b"))
    })
  )

  it.effect("rejects unknown keys, naming the valid ones", () =>
    Effect.gen(function* () {
      expect(yield* message(parse("sweeps: {}\n"))).toBe(
        `cfg.yaml: unknown top-level key "sweeps" (did you mean "sweep"?); valid keys: bootstrap, budget, cacheDir, cells, concurrency, data, description, maxCells, models, name, out, pipeline, plugins, referenceDir, report, scorers, seed, sweep, transcripts`
      )
      expect(yield* message(parse("data: { sorce: x }\n"))).toBe(
        `cfg.yaml: data: unknown key "sorce" (did you mean "source"?); valid keys: limit, onInvalid, source, transform, types`
      )
      expect(yield* message(parse("pipeline: { retreiver: first }\n"))).toBe(
        `cfg.yaml: pipeline: unknown key "retreiver" (did you mean "retriever"?); valid keys: generator, inferrer, retriever, summarizer`
      )
      expect(yield* message(parse("cells:\n  - { name: a, retriver: first }\n"))).toBe(
        `cfg.yaml: cells[0]: unknown key "retriver" (did you mean "retriever"?); valid keys: generator, inferrer, models, name, retriever, summarizer, transform`
      )
    })
  )

  it.effect("checks value types", () =>
    Effect.gen(function* () {
      expect(yield* message(parse("concurrency: two\n"))).toBe(`cfg.yaml: concurrency: Expected number, actual "two"`)
      expect(yield* message(parse("concurrency: 0\n"))).toBe(
        `cfg.yaml: concurrency: Expected a positive number, actual 0`
      )
      expect(yield* message(parse("data: { types: [consistent, changed] }\n"))).toBe(
        `cfg.yaml: data.types[1]: Expected "consistent" | "contrastive" | "changing", actual "changed"`
      )
      expect(yield* message(parse("pipeline: { retriever: [first] }\n"))).toBe(
        `cfg.yaml: pipeline.retriever: expected { use: <plugin name>, ...options }, a plugin name or null, got ["first"]`
      )
      expect(yield* message(parse("pipeline: { retriever: { k: 2 } }\n"))).toBe(
        `cfg.yaml: pipeline.retriever: missing "use" (the plugin name)`
      )
      expect(yield* message(parse("sweep: { retreiver: [first] }\n"))).toBe(
        `cfg.yaml: sweep.retreiver: unknown sweep axis (did you mean "retriever"?); an axis is a stage (retriever, summarizer, inferrer, generator), a dotted option path such as retriever.k, the history transform (transform, transform.pad, ...) or a model role (models.subject)`
      )
      expect(yield* message(parse("sweep: { retriever: first }\n"))).toBe(
        `cfg.yaml: sweep.retriever: expected a non-empty list of alternatives, got "first"`
      )
      expect(yield* message(parse("models: { m: { model: x } }\n"))).toBe(
        `cfg.yaml: models.m.provider: missing "provider" (the name of a provider plugin)`
      )
      expect(yield* message(parse("[1, 2]\n"))).toContain("cfg.yaml: expected a mapping of keys")
    })
  )

  it.effect("interpolates ${VAR} and ${VAR:-default}, and names the key of an unset variable", () =>
    Effect.gen(function* () {
      const text = [
        "models:",
        '  m: { provider: openai, model: "${MODEL:-gpt-4o}", baseURL: "http://${HOST}:8000/v1" }',
        'description: "costs $$5, ${EMPTY:-fallback}"'
      ].join("\n")
      const c = yield* parse(text, { HOST: "127.0.0.1", EMPTY: "" })
      expect(c.models.m).toEqual({
        provider: "openai",
        model: "gpt-4o",
        options: { baseURL: "http://127.0.0.1:8000/v1" }
      })
      expect(c.description).toBe("costs $5, fallback")
      expect((yield* parse(text, { HOST: "h", MODEL: "local" })).models.m?.model).toBe("local")
      expect(yield* message(parse(text, {}))).toBe(
        "cfg.yaml: models.m.baseURL: environment variable HOST is not set (write ${HOST:-default} to give a default)"
      )
    })
  )

  it.effect("rejects secrets, saying which environment variable to set", () =>
    Effect.gen(function* () {
      expect(yield* message(parse("models: { m: { provider: openai, model: gpt-4o, apiKey: sk-123 } }\n"))).toBe(
        "cfg.yaml: models.m.apiKey: secrets do not belong in config files; set the environment variable OPENAI_API_KEY instead"
      )
      expect(yield* message(parse("models: { m: { provider: cohere, model: x, api_key: abc } }\n"))).toBe(
        "cfg.yaml: models.m.api_key: secrets do not belong in config files; set the environment variable CO_API_KEY instead"
      )
      expect(
        yield* message(parse("models: { m: { provider: openai, model: x, apiKeyEnv: MY_KEY, token: t } }\n"))
      ).toBe(
        "cfg.yaml: models.m.token: secrets do not belong in config files; set the environment variable MY_KEY instead"
      )
      expect(yield* message(parse("pipeline: { retriever: { use: first, password: hunter2 } }\n"))).toBe(
        "cfg.yaml: pipeline.retriever.password: secrets do not belong in config files; set it in the environment variable the provider reads (e.g. OPENAI_API_KEY) instead"
      )
      // not secrets: a key's environment variable name, token budgets
      const ok = yield* parse("models: { m: { provider: openai, model: x, apiKeyEnv: K, maxTokens: 5 } }\n")
      expect(ok.models.m?.options).toEqual({ apiKeyEnv: "K", maxTokens: 5 })
    })
  )

  it.effect("resolves a bare config name in the configs directory", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      fs.writeFileSync(path.join(dir, "mine.yaml"), "name: mine\n")
      expect(yield* Config.resolveFile("mine", dir)).toBe(path.join(dir, "mine.yaml"))
      expect(yield* Config.resolveFile("mine.yaml", dir)).toBe(path.join(dir, "mine.yaml"))
      expect(yield* Config.resolveFile("nothing", dir)).toBe("nothing")
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("hashes what changes results, not where they go", () =>
    Effect.gen(function* () {
      const a = yield* parse("pipeline: { retriever: first }\nconcurrency: 2\nout: x\n")
      const b = yield* parse("out: y\npipeline: { retriever: { use: first } }\n")
      const c = yield* parse("pipeline: { retriever: first }\nseed: 3\n")
      expect(Config.hash(a)).toBe(Config.hash(b))
      expect(Config.hash(a)).not.toBe(Config.hash(c))
      expect(Config.hash(Config.withOverrides(a, { limit: 5 }))).not.toBe(Config.hash(a))
    })
  )
})

describe("config errors found with the plugin registry", () => {
  it.effect("an unknown plugin names the valid choices", () =>
    Effect.gen(function* () {
      expect(yield* gridError("sweep:\n  retriever:\n    - first\n    - latest\n    - { use: lastest, k: 2 }\n")).toBe(
        `cfg.yaml: sweep.retriever[2].use: unknown retriever "lastest" (did you mean "latest"?); valid choices: first, gold, latest`
      )
      expect(yield* gridError("pipeline: { inferrer: llm }\n")).toBe(
        `cfg.yaml: pipeline.inferrer.use: unknown inferrer "llm"; valid choices: asks, echo`
      )
      expect(yield* gridError("scorers: [ { use: hit } ]\n")).toBe(
        `cfg.yaml: scorers[0].use: unknown scorer "hit" (did you mean "hits"?); valid choices: hits`
      )
      expect(yield* gridError("cells:\n  - { retriever: nope }\n")).toBe(
        `cfg.yaml: cells[0].retriever.use: unknown retriever "nope"; valid choices: first, gold, latest`
      )
    })
  )

  it.effect("a bad option is reported where it was written", () =>
    Effect.gen(function* () {
      expect(yield* gridError("pipeline: { retriever: { use: latest, k: two } }\n")).toBe(
        `cfg.yaml: pipeline.retriever.k: Expected number, actual "two"`
      )
      expect(yield* gridError("pipeline: { retriever: { use: latest, k: 2.5 } }\n")).toBe(
        `cfg.yaml: pipeline.retriever.k: Expected an integer, actual 2.5`
      )
      expect(yield* gridError("sweep:\n  retriever:\n    - { use: latest, k: [2, zero] }\n")).toBe(
        `cfg.yaml: sweep.retriever[0].k[1]: Expected number, actual "zero"`
      )
      expect(yield* gridError("pipeline: { retriever: latest }\nsweep:\n  retriever.k: [1, -3]\n")).toBe(
        `cfg.yaml: sweep.retriever.k[1]: Expected a positive number, actual -3`
      )
      expect(yield* gridError("pipeline: { retriever: { use: latest, kk: 2 } }\n")).toBe(
        `cfg.yaml: pipeline.retriever: unknown option "kk" (did you mean "k"?); valid options: k, representation, select, tags`
      )
      expect(yield* gridError("pipeline: { retriever: { use: latest, representation: summaries } }\n")).toBe(
        `cfg.yaml: pipeline.retriever.representation: Expected "dialogue" | "summary", actual "summaries"`
      )
      expect(yield* gridError("sweep:\n  retriever.k: [1]\n")).toBe(
        "cfg.yaml: sweep.retriever.k: sets an option of the retriever, but the cell it applies to has no retriever; give one under pipeline.retriever or in an earlier sweep axis"
      )
    })
  )

  it.effect(
    "a misspelt retriever option is matched against every key the retriever takes, its cut's shorthands included",
    () =>
      Effect.gen(function* () {
        const withBm25 = Plugin.makeRegistry([...testPlugins, Bm25.plugin])
        const error = (text: string) => message(Effect.flatMap(parse(text), (c) => Grid.expand(c, withBm25)))
        const valid = "valid options: b, expand, expandModel, granularity, join, k, k1, representation, select"
        // kk: a doubled k (the cut) is likelier than k hit for 1 (the saturation k1).
        expect(yield* error("pipeline: { retriever: { use: bm25, kk: 2 } }\n")).toBe(
          `cfg.yaml: pipeline.retriever: unknown option "kk" (did you mean "k" or "k1"?); ${valid}`
        )
        // k2: 2 is the neighbour of 1 on the keyboard; once k1 is given, only k is left to suggest.
        expect(yield* error("sweep:\n  retriever:\n    - first\n    - { use: bm25, k2: 1.2 }\n")).toBe(
          `cfg.yaml: sweep.retriever[1]: unknown option "k2" (did you mean "k1" or "k"?); ${valid}`
        )
        expect(yield* error("pipeline: { retriever: { use: bm25, k1: 1.2, k2: 4 } }\n")).toBe(
          `cfg.yaml: pipeline.retriever: unknown option "k2" (did you mean "k"?); ${valid}`
        )
        expect(yield* error("cells:\n  - { retriever: { use: bm25, selct: { top: 2 } } }\n")).toBe(
          `cfg.yaml: cells[0].retriever: unknown option "selct" (did you mean "select"?); ${valid}`
        )
        // A retriever that is not a ranker takes k as its own option; select is still its cut.
        expect(yield* error("pipeline: { retriever: { use: latest, selec: { top: 1 } } }\n")).toBe(
          `cfg.yaml: pipeline.retriever: unknown option "selec" (did you mean "select"?); valid options: k, representation, select, tags`
        )
      })
  )

  it.effect("explicit cell names must be unique and the baseline must exist", () =>
    Effect.gen(function* () {
      expect(yield* gridError("cells:\n  - { name: a, retriever: first }\n  - { name: a, retriever: latest }\n")).toBe(
        `cfg.yaml: cells[1].name: duplicate cell name "a" (also used at cells[0].name)`
      )
      expect(yield* gridError("sweep: { retriever: [first, latest] }\nreport: { baseline: everything }\n")).toBe(
        `cfg.yaml: report.baseline: unknown cell "everything"; valid choices: first, latest`
      )
    })
  )

  it.effect("reads the report's families of tests, and checks the reference cells and the corrections", () =>
    Effect.gen(function* () {
      const c = yield* parse(
        "sweep: { retriever: [first, latest] }\nreport:\n  primary: { metrics: [retrieval.recall], slices: [all] }\n  correction: { primary: bonferroni, exploratory: none }\n  reference: [latest]\n"
      )
      expect(c.report).toEqual({
        primary: { metrics: ["retrieval.recall"], slices: ["all"] },
        correction: { primary: "bonferroni", exploratory: "none" },
        reference: ["latest"]
      })
      expect(yield* gridError("sweep: { retriever: [first, latest] }\nreport: { reference: [first, lastest] }\n")).toBe(
        `cfg.yaml: report.reference[1]: unknown cell "lastest" (did you mean "latest"?); valid choices: first, latest`
      )
      const bad = yield* message(parse("pipeline: { retriever: first }\nreport: { correction: { primary: fdr } }\n"))
      expect(bad).toMatch(/^cfg\.yaml: report\.correction\.primary: .*"holm".*"bonferroni".*"bh".*"none"/)
    })
  )

  const dry = (text: string) =>
    Effect.gen(function* () {
      const dir = tempDir()
      const config = yield* Config.parse(text, "cfg.yaml", {})
      return yield* message(
        Runner.dryRun(
          { ...config, out: path.join(dir, "out"), outGiven: true, cacheDir: path.join(dir, "cache") },
          {
            plugins: testPlugins,
            openDataset: opener([instance("p1", "consistent", [1, 2])])
          }
        )
      )
    })

  it.effect("a model name that is not configured is found before any instance runs", () =>
    Effect.gen(function* () {
      expect(yield* dry("pipeline:\n  retriever: first\n  inferrer: { use: asks, model: judge }\n")).toBe(
        `cfg.yaml: pipeline.inferrer.model: unknown model "judge"; valid choices: none (add it under models:)`
      )
      expect(yield* dry("sweep:\n  inferrer:\n    - { use: asks, model: [a, b] }\n")).toBe(
        `cfg.yaml: sweep.inferrer[0].model[0]: unknown model "a"; valid choices: none (add it under models:)`
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a retriever that ranks summaries needs a summarizer", () =>
    Effect.gen(function* () {
      expect(yield* dry("sweep:\n  retriever:\n    - first\n    - { use: latest, representation: summary }\n")).toBe(
        `cfg.yaml: sweep.retriever[1]: retriever "latest" ranks session summaries, but cell "latest" has no summarizer; add one (pipeline.summarizer, a sweep axis or the cell)`
      )
      const config = yield* Config.parse(
        "pipeline: { summarizer: first-line }\nsweep:\n  retriever:\n    - { use: latest, representation: summary }\n",
        "cfg.yaml",
        {}
      )
      const dir = tempDir()
      const d = yield* Runner.dryRun(
        { ...config, out: path.join(dir, "out"), outGiven: true, cacheDir: path.join(dir, "cache") },
        {
          plugins: testPlugins,
          openDataset: opener([instance("p1", "consistent", [1, 2])])
        }
      )
      expect(d.pairs.total).toBe(1)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("an unknown provider and bad provider options are config errors", () =>
    Effect.gen(function* () {
      const fake = Plugin.provider({
        name: "fake",
        description: "",
        options: Schema.Struct({ temperature: Schema.optional(Schema.Number) }),
        make: () => Effect.succeed({})
      })
      const config = yield* Config.parse("models: { m: { provider: fak, model: x } }\n", "cfg.yaml", {})
      expect(yield* message(Runner.dryRun(config, { plugins: [...testPlugins, fake], openDataset: opener([]) }))).toBe(
        `cfg.yaml: models.m.provider: unknown provider "fak" (did you mean "fake"?); valid choices: fake`
      )
      const bad = yield* Config.parse("models: { m: { provider: fake, model: x, temperature: hot } }\n", "cfg.yaml", {})
      expect(yield* message(Runner.dryRun(bad, { plugins: [...testPlugins, fake], openDataset: opener([]) }))).toBe(
        `cfg.yaml: models.m.temperature: Expected number, actual "hot"`
      )
      const typo = yield* Config.parse("models: { m: { provider: fake, model: x, temprature: 0 } }\n", "cfg.yaml", {})
      expect(yield* message(Runner.dryRun(typo, { plugins: [...testPlugins, fake], openDataset: opener([]) }))).toBe(
        `cfg.yaml: models.m: unknown option "temprature" (did you mean "temperature"?); valid options: model, provider, temperature`
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a key pasted where apiKeyEnv wants a variable name is refused, and never printed", () =>
    Effect.gen(function* () {
      const key = "sk-live-PASTED-0123456789abcdef"
      const config = yield* Config.parse(
        `models: { m: { provider: openai, model: gpt-4o, apiKeyEnv: "${key}" } }\n`,
        "cfg.yaml",
        {}
      )
      const error = yield* message(
        Runner.dryRun(config, { plugins: [...testPlugins, ...Providers.plugins], openDataset: opener([]) })
      )
      expect(error).toBe(
        "cfg.yaml: models.m.apiKeyEnv: expected the name of an environment variable (letters, digits and _, e.g. OPENAI_API_KEY), not the key itself; the value is not shown"
      )
      expect(error).not.toContain("PASTED")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
