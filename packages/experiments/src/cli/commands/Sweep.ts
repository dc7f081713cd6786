import { Command, Options } from "@effect/cli"
import { Effect, Either, Option, Struct } from "effect"
import * as path from "node:path"
import type { Benchmarks as BenchmarksModule } from "@cupid-lab/report"
import type {
  Budget as BudgetModule,
  Config as ConfigModule,
  Progress,
  Runner as RunnerModule
} from "@cupid-lab/runner"
import type { Shard as ShardModule } from "@cupid-lab/results"

import {
  CommandIo,
  configFile,
  configOption,
  countOption,
  dataOption,
  given,
  invalid,
  logTo,
  outOption,
  outputs,
  typesOption
} from "./Io.js"

// Loaded when a sweep runs (or --shard is given), not for --help: the results package is large.
const shardModule: Effect.Effect<typeof ShardModule> = Effect.promise(() =>
  import("@cupid-lab/results").then((m) => m.Shard)
)

const options = {
  config: configOption(
    "the YAML config to run (see docs/config.md); a bare name such as contextual is looked up in configs/"
  ),
  data: dataOption(
    "run on this data instead of the config's data.source: sample, a .parquet/.jsonl/.json file, a directory, hf:kixlab/CUPID or synthetic:personas=100,seed=1"
  ),
  out: outOption(
    "the run directory, instead of the config's out (default runs/<name>/<run id>, the id hashing the config and the data); a rerun of the same run resumes in it, a directory holding another run is refused"
  ),
  limit: countOption("limit", "only the first n instances"),
  concurrency: countOption(
    "concurrency",
    "pairs (cell, instance) in flight at once, instead of the config's concurrency"
  ),
  types: typesOption("only these instance types"),
  maxCells: countOption(
    "max-cells",
    "the largest grid to expand, instead of the config's maxCells (default 10000); a larger grid is refused with its size before any work"
  ),
  budgetUsd: Options.float("budget-usd").pipe(
    Options.withPseudoName("usd"),
    Options.mapEffect((x) =>
      x > 0 && Number.isFinite(x)
        ? Effect.succeed(x)
        : invalid(`--budget-usd expects a positive number of dollars, got "${x}"`)
    ),
    Options.optional,
    Options.withDescription(
      "the most this sweep may spend on model calls at list prices, instead of the config's budget.usd: refused before any work when the dry run's estimate is over it; " +
        "stops taking pairs when the next could pass it (exit code 4; rerun with a larger budget to resume)"
    )
  ),
  batch: Options.boolean("batch").pipe(
    Options.withDescription(
      "send every model's calls as provider batch jobs where its provider has them (OpenAI's Batch API: half the price, answered within 24 hours); " +
        'with --dry-run, the forecast at batch prices. A rerun collects the batches a stopped sweep left running (docs/providers.md, "Batch jobs")'
    )
  ),
  dryRun: Options.boolean("dry-run").pipe(
    Options.withDescription(
      "print the grid and the model calls (and estimated tokens) the sweep would make; send and write nothing"
    )
  ),
  allowFailures: Options.boolean("allow-failures").pipe(
    Options.withDescription(
      "exit 0 even when every pair failed (default: exit 3 when all the pairs run failed, or more than --max-failed-share of them)"
    )
  ),
  maxFailedShare: Options.float("max-failed-share").pipe(
    Options.withPseudoName("fraction"),
    Options.mapEffect((x) =>
      x >= 0 && x <= 1
        ? Effect.succeed(x)
        : invalid(`--max-failed-share expects a fraction between 0 and 1, got "${x}"`)
    ),
    Options.optional,
    Options.withDescription(
      "exit 3 when more than this share of the pairs run failed (outputs are written all the same); default: only when all failed"
    )
  ),
  shard: Options.text("shard").pipe(
    Options.withPseudoName("i/N"),
    Options.mapEffect((value) =>
      Effect.flatMap(shardModule, (Shard) =>
        Either.match(Shard.parse(value), { onLeft: invalid, onRight: Effect.succeed })
      )
    ),
    Options.optional,
    Options.withDescription(
      "run only shard i of N (numbered from 1: 1/3, 2/3, 3/3), every cell of a share of the instances fixed by a hash of the instance id, into runs/<name>/<run id>-shard-i-of-N (or --out); " +
        "`cupid-lab merge` combines the N shard directories into the run (docs/distributed.md)"
    )
  ),
  shardReports: Options.boolean("shard-reports").pipe(
    Options.withDescription(
      "with --shard: also write the shard's own reports (report.md, report.html, report.tex, results.csv, results.parquet) for its share; " +
        "by default a shard writes its results, summary.json and run.json, and `cupid-lab merge` writes the reports of the whole run"
    )
  ),
  repair: Options.boolean("repair").pipe(
    Options.withDescription(
      "when results.jsonl in the run directory has corrupt lines: keep the intact ones, move the corrupt ones to results.corrupt.jsonl and run their pairs again (without it the sweep stops and names them)"
    )
  )
}

type Args = Command.Command.ParseConfig<typeof options>

/** From this many cells on, the sweep says how large its grid is before building it. */
const largeGrid = 1000

const run = Effect.fn("Sweep.run")(function* (a: Args) {
  const io = yield* CommandIo
  const Config = yield* Effect.promise(() => import("@cupid-lab/runner").then((m) => m.Config))
  const loaded = yield* Config.load(yield* configFile(a.config), io.env ?? process.env)
  const config = Config.withOverrides(
    loaded,
    given(Struct.pick(a, "data", "out", "limit", "concurrency", "types", "maxCells", "budgetUsd"))
  )
  if (config.sources.length === 0) return yield* runOne(a, config)
  // One run per data source, one after another (a failure stops the rest; a rerun resumes), then the side-by-side table.
  const Benchmarks = yield* Effect.promise(() => import("@cupid-lab/report").then((m) => m.Benchmarks))
  const runs: Array<BenchmarksModule.SourceRun> = []
  for (const [index, source] of config.sources.entries()) {
    logTo(io)(`data source ${index + 1} of ${config.sources.length}: ${source}`)
    const one: ConfigModule.Config = {
      ...config,
      sources: [],
      data: { ...config.data, source },
      ...(config.outGiven ? { out: path.join(config.out, Benchmarks.folderOf(source, index)) } : {})
    }
    const outcome = yield* runOne(a, one)
    if (outcome !== undefined) runs.push({ source, dir: outcome.out, summary: outcome.summary })
  }
  if (runs.length === 0) return
  const written = yield* Benchmarks.write(config.out, runs)
  io.stdout(`\n${written.text}\nbenchmarks: ${written.file}\n`)
})

const runOne = Effect.fn("Sweep.runOne")(function* (a: Args, config: ConfigModule.Config) {
  const io = yield* CommandIo
  const log = logTo(io)
  const [Runner, Progress, Grid] = yield* Effect.promise(() =>
    import("@cupid-lab/runner").then((m) => [m.Runner, m.Progress, m.Grid] as const)
  )
  // A large grid takes a while to build: say how large before starting (a grid over the limit is refused by the runner).
  const size = Grid.size(config)
  if (size.cells > largeGrid && size.cells <= config.maxCells)
    log(`grid: ${Grid.describeSize(size)}; building them before any pair runs`)
  if (a.dryRun) {
    const d = yield* Runner.dryRun(config, {
      ...io.runner,
      log,
      ...given({ shard: a.shard }),
      ...(a.batch ? { batch: true } : {})
    })
    const [Config, Budget] = yield* Effect.promise(() =>
      import("@cupid-lab/runner").then((m) => [m.Config, m.Budget] as const)
    )
    io.stdout(`${describeDryRun(d, config, Config, Budget, io.env ?? process.env).join("\n")}\n`)
    return undefined
  }
  const shard = Option.getOrUndefined(a.shard)
  const Shard = yield* shardModule
  const runDir = shard === undefined ? "<run id>" : `<run id>-${Shard.suffix(shard)}`
  log(
    `sweep ${config.name}${shard === undefined ? "" : ` (${Shard.describe(shard)})`}: ${config.file} -> ${config.outGiven ? config.out : path.join(config.out, runDir)}`
  )
  const interrupted = (s: { readonly done: number; readonly total: number | undefined }) => log(interruptedLine(s))
  // The last snapshot shown, for the line printed when the sweep is interrupted before it returns.
  let last: Progress.Snapshot | undefined
  const shown = Progress.make(io.stderr)
  const progress: Progress.Progress = { update: (s) => shown.update((last = s)), done: (s) => shown.done((last = s)) }
  const Sweeps = yield* Effect.promise(() => import("../../Sweeps.js"))
  const outcome = yield* Sweeps.sweep(config, {
    ...io.runner,
    log,
    progress,
    ...(a.repair ? { repair: true } : {}),
    ...(a.batch ? { batch: true } : {}),
    // A shard's reports describe half a run: merge writes the whole run's.
    ...(shard !== undefined && !a.shardReports ? { report: false } : {}),
    ...given({ shard: a.shard })
  }).pipe(
    Effect.onInterrupt(() =>
      Effect.sync(() =>
        last === undefined
          ? log("interrupted before any pair ran; nothing was written")
          : interrupted({ done: last.pairsDone, total: last.pairsTotal })
      )
    )
  )
  const Leaderboard = yield* Effect.promise(() => import("@cupid-lab/report").then((m) => m.Leaderboard))
  // The CLI always writes the reports, so the opening is there.
  if (outcome.published !== undefined) {
    const models = Object.entries(config.models).map(([n, m]) => `${n} = ${m.provider}/${m.model}`)
    io.stdout(Leaderboard.console(outcome.published.analysis, outcome.published.verdict, models))
  }
  io.stdout(
    `\n${outcome.pairs.done}/${outcome.pairs.total} pairs done (${outcome.pairs.ran} this run), ${outcome.pairs.failed} failed this run\n`
  )
  io.stdout(
    outcome.published !== undefined
      ? outputs(outcome.out)
      : `results: ${outcome.files.results}\nsummary: ${outcome.files.summary}\n(no reports for a shard: \`cupid-lab merge\` writes the whole run's, or pass --shard-reports)\n`
  )
  if (outcome.pairs.failed > 0)
    log(
      `${outcome.pairs.failed} pairs failed (status "failed" in ${outcome.files.results}); rerun the same command to retry them`
    )
  if (outcome.stopped === "budget" && outcome.budget !== undefined) {
    const { Budget, Errors } = yield* Effect.promise(() => import("@cupid-lab/runner"))
    return yield* new Errors.BudgetError({ message: Budget.stoppedMessage(outcome.budget, outcome.pairs) })
  }
  if (outcome.interrupted) {
    interrupted(outcome.pairs)
    return yield* Effect.interrupt
  }
  const { failed, ran } = outcome.pairs
  const limit = Option.getOrUndefined(a.maxFailedShare)
  if (!a.allowFailures && ran > 0 && (failed === ran || (limit !== undefined && failed / ran > limit))) {
    const { Errors } = yield* Effect.promise(() => import("@cupid-lab/runner"))
    return yield* new Errors.TooManyFailures({
      message:
        `${failed} of the ${ran} pairs run failed${failed === ran ? "" : ` (more than --max-failed-share ${limit})`}; the outputs are written, the errors are in ${outcome.published !== undefined ? outcome.files.report : outcome.files.results}. ` +
        "Fix the cause and rerun to retry them, or pass --allow-failures to exit 0"
    })
  }
  return outcome
})

/** What an interrupted sweep says; the total is left out while it is not known yet (interrupted before the first pair). */
export const interruptedLine = (s: { readonly done: number; readonly total: number | undefined }): string =>
  `interrupted: ${s.done}${s.total === undefined ? "" : ` of ${s.total}`} pairs are done and written; rerun the same command to resume`

/** The dry run's cost at batch prices beside what the same calls cost sent one by one. */
const batchForecast = (
  d: RunnerModule.DryRun,
  Budget: typeof BudgetModule,
  table: ReturnType<typeof BudgetModule.prices>,
  micro: number
): string => {
  const direct = Budget.estimate(
    Object.fromEntries(Object.entries(d.byModel).map(([k, m]) => [k, { ...m, rate: 1 }])),
    table
  ).micro
  const batched = Object.entries(d.byModel)
    .filter(([, m]) => m.rate !== 1)
    .map(([k]) => k)
  return `  batch forecast: ${Budget.dollars(micro)} with ${batched.join(", ")} as batch jobs, against ${Budget.dollars(direct)} sent one by one`
}

/** Each cell's calls to send and their cost (a call several cells share is charged to the first that makes it). */
const costPerCell = (
  d: RunnerModule.DryRun,
  Budget: typeof BudgetModule,
  table: ReturnType<typeof BudgetModule.prices>
): Array<string> => {
  const lines = d.grid.cells.flatMap((c) => {
    const models = Object.fromEntries(Object.entries(d.byCell[c.id] ?? {}).filter(([, m]) => m.toSend > 0))
    const toSend = Object.values(models).reduce((n, m) => n + m.toSend, 0)
    if (toSend === 0) return []
    const { micro, unpriced } = Budget.estimate(models, table)
    const cost = `${Budget.dollars(micro)}${unpriced.length > 0 ? ` + unpriced calls to ${unpriced.join(", ")}` : ""}`
    return [`  ${c.name}: ${toSend} calls to send, ${cost}`]
  })
  return lines.length === 0 ? [] : ["estimated cost per cell (shared calls charged to the first cell):", ...lines]
}

const describeDryRun = (
  d: RunnerModule.DryRun,
  config: ConfigModule.Config,
  Config: typeof ConfigModule,
  Budget: typeof BudgetModule,
  env: Readonly<Record<string, string | undefined>>
): Array<string> => {
  const unset = new Map<string, Array<string>>()
  for (const [name, entry] of Object.entries(config.models)) {
    const variable = Config.keyVariable(entry)
    if (variable !== undefined && (env[variable] ?? "") === "")
      unset.set(variable, [...(unset.get(variable) ?? []), `${name} (${entry.provider}/${entry.model})`])
  }
  // The cost at list prices (the cost scorer's, with the config's `prices`), and whether it is within the budget.
  const table = Budget.prices(config)
  const { micro, unpriced } = Budget.estimate(d.byModel, table)
  const refused = config.budget !== undefined && (micro > config.budget.usd * 1e6 || unpriced.length > 0)
  const batched = Object.values(d.byModel).some((m) => m.rate !== 1)
  return [
    `dry run of ${config.file}: nothing is sent and nothing is written`,
    `grid: ${d.grid.cells.length} cells`,
    ...d.grid.cells.map((c) => `  ${c.id}  ${c.name}${c.id === d.grid.baseline.id ? "  (baseline)" : ""}`),
    `instances: ${d.instances}`,
    `run ${d.run}: ${d.out}`,
    `pairs: ${d.pairs.total} (${d.pairs.done} already done in ${d.out}, ${d.pairs.toRun} to run)`,
    `model calls: ${d.calls.total} (${d.calls.toSend} would be sent, ${d.calls.cached} answered by the cache)`,
    ...Object.entries(d.byStage).map(
      ([stage, s]) => `  ${stage}: ${s.total} calls (${s.toSend} would be sent, ${s.cached} answered by the cache)`
    ),
    `estimated tokens to send: ${d.tokens.prompt} prompt, ${d.tokens.completion} completion`,
    ...Object.entries(d.byModel).map(
      ([model, m]) =>
        `  ${model}: ${m.toSend} to send (${m.promptTokens} prompt + ${m.completionTokens} completion tokens), ${m.cached} cached` +
        (m.rate !== 1 ? `, as batch jobs at ${Math.round(m.rate * 100)}% of the list price` : "")
    ),
    `estimated tokens of all calls (if the cache shared nothing): ${d.allTokens.prompt} prompt, ${d.allTokens.completion} completion`,
    ...(Object.keys(d.byModel).length === 0
      ? []
      : [
          `estimated cost of the calls to send: $${(micro / 1e6).toFixed(2)}${unpriced.length > 0 ? ` (not counted, no price: ${unpriced.join(", ")}; add one with the cost scorer's prices option)` : ""} (list prices per million tokens${batched ? ", batch jobs at their batch rate" : ""}; check them before quoting)`,
          ...(batched ? [batchForecast(d, Budget, table, micro)] : [])
        ]),
    ...costPerCell(d, Budget, table),
    ...(config.budget === undefined
      ? []
      : [
          `budget: ${Budget.dollars(config.budget.usd * 1e6)} (${refused ? "the sweep would be refused: the estimate is over it or a model has no price" : "the estimate is within it"})`
        ]),
    ...[...unset].map(
      ([variable, models]) =>
        `warning: ${variable} is not set: a real run would fail to authenticate for ${models.length === 1 ? "model" : "models"} ${models.join(", ")} (unless the server takes no key)`
    ),
    ...(d.failed > 0
      ? [`warning: ${d.failed} pairs failed even in the dry run (see a real run's results for the errors)`]
      : [])
  ]
}

export const command = Command.make("sweep", options, run).pipe(
  Command.withDescription(
    "run a config's grid over its data, or resume it: pairs already in the run directory are kept, failed ones retried. " +
      "Ctrl-C finishes the pairs in flight and writes results, summary and report (exit code 130); a second Ctrl-C quits at once. " +
      "Exit code 3: the outputs are written but every pair run failed (or more than --max-failed-share). " +
      "Exit code 4: the budget (budget.usd, --budget-usd) refused the sweep before any work, or stopped it with the pairs done written."
  )
)
