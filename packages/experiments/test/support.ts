/**
 * Small plugins and data for the experiments tests: they exercise the runner without depending on
 * the real retrievers, scorers or models.
 */
import { Dataset } from "@cupid-lab/data"
import { Domain, Errors, Models, Plugin, Retriever, Scorer } from "@cupid-lab/core"
import { CompiledCli, Subprocess } from "@cupid-lab/core/testing"
import type { Runner } from "@cupid-lab/runner"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Schema, Stream } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export { resultLine } from "./result-line.js"

const K = (k: number) => Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { default: () => k })

/** The first k sessions. */
export const first = Plugin.retriever({
  name: "first",
  description: "The k earliest sessions.",
  options: Schema.Struct({ k: K(1) }),
  make: ({ k }) =>
    Effect.succeed({
      needsSummaries: false,
      retrieve: ({ query }) =>
        Effect.succeed(
          Retriever.fromScores(
            query.sessions.map((s) => [s.id, -s.index]),
            k
          )
        )
    })
})

/** The k most recent sessions, ranking `representation` text (only `summary` needs a summarizer). */
export const latest = Plugin.retriever({
  name: "latest",
  description: "The k most recent sessions.",
  options: Schema.Struct({
    k: K(2),
    representation: Schema.optionalWith(Schema.Literal("dialogue", "summary"), { default: () => "dialogue" as const }),
    tags: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] })
  }),
  make: ({ k, representation }) =>
    Effect.succeed({
      needsSummaries: representation === "summary",
      retrieve: ({ query }) =>
        Effect.succeed(
          Retriever.fromScores(
            query.sessions.map((s) => [s.id, s.index]),
            k
          )
        )
    })
})

export const gold = Plugin.goldRetriever({
  name: "gold",
  description: "The relevant sessions, from gold labels.",
  options: Schema.Struct({}),
  make: () =>
    Effect.succeed({
      needsSummaries: false,
      retrieve: (_input, g) =>
        Effect.succeed({ ranking: [], selected: g.sessions.filter((s) => s.label === "relevant").map((s) => s.id) })
    })
})

/** Fails for the instances whose ids are in `state.failing` (the test changes it between runs). */
/** What a retriever can tell histories apart by: the content hashes of their sessions. */
export const visibleSignature = (query: Domain.Query): string => query.sessions.map((s) => s.hash).join(",")

/** Fails on the histories whose {@link visibleSignature} is in `failing`. */
export const flaky = (state: { failing: ReadonlySet<string> }) =>
  Plugin.retriever({
    name: "flaky",
    description: "Fails on chosen instances.",
    options: Schema.Struct({}),
    make: () =>
      Effect.succeed({
        needsSummaries: false,
        retrieve: ({ query }) =>
          state.failing.has(visibleSignature(query))
            ? Effect.fail(
                new Errors.StageError({ stage: "retrieve", plugin: "flaky", reason: `no luck with this history` })
              )
            : Effect.succeed(
                Retriever.fromScores(
                  query.sessions.map((s) => [s.id, s.index]),
                  1
                )
              )
      })
  })

/** The first user message of every evidence session, joined. */
export const echo = Plugin.inferrer({
  name: "echo",
  description: "Quotes the evidence.",
  heuristic: true,
  options: Schema.Struct({}),
  make: () =>
    Effect.succeed({
      infer: ({ evidence }) =>
        Effect.succeed({
          preference: evidence.sessions.map((s) => s.dialogue[0]?.content ?? "").join(" / "),
          analysis: ""
        })
    })
})

/** Asks a configured chat model once per instance. */
export const asks = Plugin.inferrer({
  name: "asks",
  description: "One model call per instance.",
  options: Schema.Struct({
    model: Schema.String,
    style: Schema.optionalWith(Schema.String, { default: () => "plain" })
  }),
  make: ({ model, style }) =>
    Effect.gen(function* () {
      const lm = yield* (yield* Models.Models).languageModel(model)
      return {
        infer: ({ request }) =>
          lm
            .complete({
              messages: [{ role: "user", content: `${style}: ${request}` }],
              dryRunAnswer: "Preference: short answers."
            })
            .pipe(
              Effect.map((c) => ({ preference: c.text, analysis: "" })),
              Effect.mapError(Errors.stageErrorFromModel("infer", "asks"))
            )
      }
    })
})

/** A summarizer that needs no model. */
export const firstLine = Plugin.summarizer({
  name: "first-line",
  description: "The first user message as the only context bullet.",
  options: Schema.Struct({}),
  make: () =>
    Effect.succeed({
      summarize: (sessions) =>
        Effect.succeed(
          sessions.map((s) => ({ sessionId: s.id, context: [s.dialogue[0]?.content ?? ""], preferences: [] }))
        )
    })
})

/**
 * Per instance: `retrieval.hit` (share of relevant sessions selected, mean), `inference.p` and
 * `inference.r` (pooled, from the number of relevant sessions selected over selected / relevant),
 * `inference.f1` (micro F1 of those two) and `cost.calls`.
 */
export const hits = Plugin.scorer({
  name: "hits",
  description: "Relevant sessions selected.",
  options: Schema.Struct({}),
  make: () =>
    Effect.succeed({
      metrics: [
        Scorer.metric({
          name: "retrieval.hit",
          description: "share of relevant selected",
          family: "retrieval",
          headline: true,
          mainRank: 2
        }),
        Scorer.metric({
          name: "inference.p",
          description: "pooled precision",
          family: "inference",
          heuristic: true,
          aggregate: Scorer.ratio
        }),
        Scorer.metric({
          name: "inference.r",
          description: "pooled recall",
          family: "inference",
          heuristic: true,
          aggregate: Scorer.ratio
        }),
        Scorer.metric({
          name: "inference.f1",
          description: "micro F1",
          family: "inference",
          heuristic: true,
          headline: true,
          mainRank: 1,
          aggregate: Scorer.f1Of("inference.p", "inference.r")
        }),
        Scorer.metric({ name: "cost.calls", description: "model calls", family: "cost", direction: "lower" })
      ],
      score: ({ instance, trace }) => {
        const relevant = new Set(instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id))
        const selected = trace.retrieval?.selected ?? instance.query.sessions.map((s) => s.id)
        const found = selected.filter((id) => relevant.has(id)).length
        return Effect.succeed({
          "retrieval.hit": relevant.size === 0 ? NaN : found / relevant.size,
          "inference.p": { num: found, den: selected.length },
          "inference.r": { num: found, den: relevant.size },
          "cost.calls": trace.usage.length
        })
      }
    })
})

export const testPlugins: ReadonlyArray<Plugin.AnyPlugin> = [first, latest, gold, echo, asks, firstLine, hits]

const session = (factor: string, preference: string, text: string): Domain.WirePriorInteraction => ({
  context_factor: factor,
  contextual_preference: preference,
  dialogue: [
    { role: "user", content: text },
    { role: "assistant", content: "ok" }
  ]
})

/**
 * A tiny hand-made dataset: instance `relevant` says which of its 4 sessions share the current
 * factor and preference (the others are about other factors).
 */
export const instance = (persona: string, type: Domain.CupidType, relevant: ReadonlyArray<number>): Domain.Instance =>
  Domain.fromRow({
    persona_id: persona,
    instance_type: type,
    current_request: `help ${persona}`,
    current_context_factor: "A",
    current_contextual_preference: "pA",
    current_checklist: ["x"],
    prior_interactions: [0, 1, 2, 3].map((i) =>
      relevant.includes(i)
        ? session("A", "pA", `${persona} a${i} text`)
        : session(`F${i}`, `p${i}`, `${persona} other ${i} words here`)
    )
  })

export const opener =
  (instances: ReadonlyArray<Domain.Instance>, fingerprint = "fixture"): Runner.OpenDataset =>
  (source, options) =>
    Effect.succeed({
      source,
      benchmark: "cupid",
      resolved: source,
      fingerprint,
      instances: Stream.fromIterable(instances).pipe(
        Stream.filter((i) => options.types === undefined || options.types.includes(i.type)),
        (s) => (options.limit === undefined ? s : Stream.take(s, options.limit))
      ),
      skipped: () => []
    } satisfies Dataset.Opened)

/** Run an effect on this machine's file system, as the CLI runs its commands. */
export const runPromise = <A, E>(effect: Effect.Effect<A, E, NodeContext.NodeContext>): Promise<A> =>
  Effect.runPromise(Effect.provide(effect, NodeContext.layer))

export const tempDir = (prefix = "cupid-exp-"): string => fs.mkdtempSync(path.join(os.tmpdir(), prefix))

/** A tiny real file system, when this machine lets the tests mount one (root with CAP_SYS_ADMIN); else why not. */
export const mountTmpfs = (bytes: number): { readonly dir: string; readonly unmount: () => void } | string => {
  const dir = tempDir("cupid-tmpfs-")
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir])
  if (r.status !== 0)
    return `cannot mount a tmpfs here (${(r.stderr?.toString() ?? "").trim() || r.error?.message || `exit ${r.status}`})`
  return {
    dir,
    unmount: () => {
      spawnSync("umount", [dir])
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Write a config file into `dir` and return its path. */
export const writeConfig = (dir: string, text: string, name = "test.yaml"): string => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}

export const lines = (file: string): Array<string> =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")

/**
 * A config whose one cell generates with `model` on a loopback OpenAI-compatible server, two pairs at
 * a time, 3 instances per persona: it runs at the server's pace, so a test can stop it mid-sweep.
 * `cacheDir` may be a `${VAR}` the environment of each run sets.
 */
export const loopbackSweep = (o: {
  name: string
  personas: number
  cacheDir: string
  model: string
  baseURL: string
}): string =>
  [
    `name: ${o.name}`,
    `data: { source: "synthetic:personas=${o.personas},seed=3" }`,
    "seed: 1",
    `cacheDir: ${JSON.stringify(o.cacheDir)}`,
    "models:",
    `  subject: { provider: openai, model: ${o.model}, baseURL: ${JSON.stringify(o.baseURL)}, apiKeyEnv: CUPID_TEST_KEY }`,
    "pipeline:",
    "  retriever: { use: recency, k: 2 }",
    "  generator: { use: llm, model: subject, preference: gold }",
    "scorers: [{ use: retrieval, ks: [2] }, { use: cost }]",
    "concurrency: 2"
  ].join("\n") + "\n"

/** How a child process ended, with everything it printed. */
export type ProcessExit = Subprocess.Exit

/**
 * Run a command to its end ({@link Subprocess.run}); the test process stays free to serve loopback
 * HTTP meanwhile, and its worker to answer vitest.
 */
export const runProcess = (command: string, args: ReadonlyArray<string>, options: Subprocess.Options = {}) =>
  Effect.promise(() => Subprocess.run(command, args, options))

/**
 * Build the compiled CLI (packages/experiments/dist/cli.mjs) when a source is newer than its last
 * build, without blocking the worker; for a `beforeAll` hook with a ceiling: `beforeAll(buildCli)`.
 */
export const buildCli = CompiledCli.build

/** The parent's environment without model or CUPID settings of its own (a developer's keys never leak into a test). */
export const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !/^(OPENAI_|CUPID_|CO_API_KEY)/.test(k)) env[k] = v
  }
  return env
}

/**
 * The command line's io for `Commands.main` in this process: configs looked up in `dir`, stdout
 * and stderr collected in `out` and `err`, and `env` (default: the test key `CUPID_TEST_KEY` that the
 * loopback model entries name).
 */
export const commandIo = (dir: string, env: Record<string, string> = { CUPID_TEST_KEY: "sk-test" }) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io = {
    configDirs: [dir],
    stdout: (t: string) => void out.push(t),
    stderr: { write: (t: string) => void err.push(t) },
    env
  }
  return { out, err, io }
}

/** A config whose one cell infers with a loopback OpenAI-compatible model (`subject`) from every session. */
export const loopbackInferrerConfig = (
  name: string,
  cacheDir: string,
  baseURL: string,
  extra: ReadonlyArray<string> = []
): string =>
  [
    `name: ${name}`,
    `data: { source: "synthetic:personas=1,seed=9" }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    ...extra,
    "models:",
    `  subject: { provider: openai, model: test-subject, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`,
    "pipeline:",
    "  retriever: all",
    "  inferrer: { use: llm, model: subject }",
    "scorers: [{ use: retrieval, ks: [2] }]"
  ].join("\n") + "\n"
