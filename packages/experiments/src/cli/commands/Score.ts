import { Command, Options } from "@effect/cli"
import { Effect, Either, Option, Stream } from "effect"
import { CommandIo, configFile, countOption, given, invalid, logTo, outOption, outputs, typesOption } from "./Io.js"

const options = {
  data: Options.text("data").pipe(
    Options.withPseudoName("source"),
    Options.withDescription(
      "the data the predictions are for: sample, sample-test, a .parquet/.jsonl/.json file, a directory, hf:kixlab/CUPID, ..."
    )
  ),
  predictions: Options.file("predictions", { exists: "either" }).pipe(
    Options.withPseudoName("file.jsonl"),
    Options.withDescription(
      "one JSON line per (system, instance): persona_id, instance_type, selected (1-based positions in prior_interactions), optional ranking, scores, preference, response, system (docs/external-systems.md)"
    )
  ),
  out: outOption(
    "the run directory (default runs/score-<file name>/<run id>); a rerun with the same file and data resumes in it, a directory holding another run is refused"
  ),
  config: Options.text("config").pipe(
    Options.withPseudoName("file | name"),
    Options.optional,
    Options.withDescription(
      "a config whose scorers (and models, seed, bootstrap, cacheDir, report settings) the run uses; its pipeline, sweep and cells are ignored. " +
        "Default: retrieval at k 2 and 4, plus the offline preference match (lexical matcher) when the lines give preferences"
    )
  ),
  types: typesOption(
    "score only instances of these types (as `sweep --types`); lines for the others are checked, then ignored and counted"
  ),
  limit: countOption(
    "limit",
    "score only the first n instances of the data, after --types (as `sweep --limit`); lines for the others are checked, then ignored and counted"
  ),
  concurrency: countOption("concurrency", "pairs (system, instance) scored at once, instead of the config's"),
  shard: Options.text("shard").pipe(
    Options.withPseudoName("i/N"),
    Options.mapEffect((value) =>
      Effect.flatMap(
        Effect.promise(() => import("@cupid-lab/results").then((m) => m.Shard)),
        (Shard) => Either.match(Shard.parse(value), { onLeft: invalid, onRight: Effect.succeed })
      )
    ),
    Options.optional,
    Options.withDescription("score only shard i of N, as `sweep --shard`; `cupid-lab merge` combines the shards")
  ),
  allowFailures: Options.boolean("allow-failures").pipe(
    Options.withDescription("exit 0 even when every pair failed (default: exit 3 then)")
  )
}

type Args = Command.Command.ParseConfig<typeof options>

const run = Effect.fn("Score.run")(function* (a: Args) {
  const io = yield* CommandIo
  const log = logTo(io)
  const [{ Dataset }, Predictions, Replay, { Config, Errors }] = yield* Effect.promise(() =>
    Promise.all([
      import("@cupid-lab/data"),
      import("../../Predictions.js"),
      import("../../Replay.js"),
      import("@cupid-lab/runner")
    ])
  )
  const open = io.runner?.openDataset ?? Dataset.open
  const opened = yield* open(a.data, {})
  // Every line is checked against the whole data; the filters only choose which instances are scored.
  const read = yield* Predictions.read(a.predictions, opened)
  const filters = given({ types: a.types, limit: a.limit })
  const filtered = [
    ...(filters.types === undefined ? [] : [`--types ${filters.types.join(",")}`]),
    ...(filters.limit === undefined ? [] : [`--limit ${filters.limit}`])
  ].join(" ")
  const kept =
    filtered === ""
      ? undefined
      : yield* Stream.runFold((yield* open(a.data, filters)).instances, new Set<string>(), (ids, i) => ids.add(i.id))
  const { resolved, ignored } = kept === undefined ? { resolved: read, ignored: 0 } : Predictions.keep(read, kept)
  const counted = resolved.systems.map((s) => `${s.name} (${s.predictions.size})`).join(", ")
  log(
    `${a.predictions}: ${resolved.systems.length} system(s), lines per system: ${counted}; ${resolved.instances} instances in ${a.data}${kept === undefined ? "" : `, ${kept.size} scored (${filtered})`}`
  )
  if (ignored > 0)
    log(
      `${a.predictions}: ${ignored} line${ignored === 1 ? " is" : "s are"} for instances outside ${filtered}: ignored, not scored`
    )
  const cfgFile = Option.isSome(a.config) ? yield* configFile(a.config.value) : undefined
  if (cfgFile !== undefined)
    log(
      `${cfgFile}: using its scorers and settings; its ${Replay.replacedKeys.join(", ")} are replaced by the predictions`
    )
  const built = yield* Replay.config({
    resolved,
    source: a.data,
    ...(cfgFile !== undefined ? { configFile: cfgFile } : {}),
    ...(io.env !== undefined ? { env: io.env } : {})
  })
  const config = Config.withOverrides(built, { ...given({ out: a.out, concurrency: a.concurrency }), ...filters })
  const outcome = yield* Replay.score(config, resolved, {
    ...io.runner,
    log,
    ...given({ shard: a.shard })
  })
  const Leaderboard = yield* Effect.promise(() => import("@cupid-lab/report").then((m) => m.Leaderboard))
  if (outcome.published !== undefined)
    io.stdout(Leaderboard.console(outcome.published.analysis, outcome.published.verdict, []))
  io.stdout(
    `\n${outcome.pairs.done}/${outcome.pairs.total} pairs done (${outcome.pairs.ran} this run), ${outcome.pairs.failed} failed this run\n`
  )
  io.stdout(outputs(outcome.out))
  if (outcome.pairs.failed > 0)
    log(
      `${outcome.pairs.failed} pairs failed (status "failed" in ${outcome.files.results}; "no prediction for this instance" where the file has no line for it)`
    )
  if (outcome.interrupted) return yield* Effect.interrupt
  const { failed, ran } = outcome.pairs
  if (!a.allowFailures && ran > 0 && failed === ran)
    return yield* new Errors.TooManyFailures({
      message: `all ${ran} pairs scored failed; the errors are in ${outcome.files.report}. Pass --allow-failures to exit 0`
    })
  return outcome
})

export const command = Command.make("score", options, run).pipe(
  Command.withDescription(
    "score a memory system that runs outside the framework from its predictions file: the same scorers, statistics and reports as a sweep, one cell per system, in an ordinary run directory (compare, merge, report and the viewer read it)"
  )
)
