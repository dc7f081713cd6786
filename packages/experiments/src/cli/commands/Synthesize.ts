import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { CommandIo, configFile, configOption, countOption, given, logTo, outOption } from "./Io.js"

const options = {
  config: configOption(
    "the synthesis config (see configs/synth.yaml and docs/synthesis.md); a bare name such as synth is looked up in configs/"
  ),
  out: outOption("the output directory, instead of the config's out; a rerun into it resumes"),
  personas: countOption("personas", "how many personas, instead of the config's personas.count"),
  dryRun: Options.boolean("dry-run").pipe(
    Options.withDescription(
      "print the model calls, tokens and dollars the synthesis would spend; send and write nothing"
    )
  ),
  rebuild: Options.boolean("rebuild").pipe(
    Options.withDescription(
      "rebuild and revalidate the instances from the output's raw.jsonl alone, with no model call"
    )
  )
}

type Args = Command.Command.ParseConfig<typeof options>

const run = Effect.fn("Synthesize.run")(function* (a: Args) {
  const io = yield* CommandIo
  const { SynthConfig, Synthesis, Progress } = yield* Effect.promise(() => import("@cupid-lab/synthesis"))
  const file = yield* configFile(a.config)
  const loaded = yield* SynthConfig.load(file, io.env ?? process.env)
  const config = SynthConfig.withOverrides(loaded, given({ out: a.out, personas: a.personas }))
  const log = logTo(io)
  if (a.dryRun) {
    const d = yield* Synthesis.dryRun(config, { log })
    io.stdout(`${Synthesis.describeDryRun(d)}\n`)
    return
  }
  log(`synthesize: ${config.file} -> ${config.out}`)
  const synthesis = a.rebuild
    ? Synthesis.rebuild(config)
    : Synthesis.run(config, { log, progress: Progress.make(io.stderr) })
  const outcome = yield* synthesis.pipe(
    Effect.onInterrupt(() =>
      Effect.sync(() => log("interrupted: finished units are kept in raw.jsonl; rerun the same command to resume"))
    )
  )
  io.stdout(
    [
      `personas: ${outcome.personas.complete}/${outcome.personas.total} complete`,
      `instances: ${outcome.instances.valid} valid, ${outcome.instances.excluded} excluded by validation (${outcome.files.validation})`,
      `failures this run: ${outcome.failures.length} (${outcome.files.failures})`,
      ...(outcome.files.parquet === undefined ? [] : [`data: ${outcome.files.parquet}`]),
      ...(outcome.files.jsonl === undefined ? [] : [`data: ${outcome.files.jsonl}`])
    ].join("\n") + "\n"
  )
  const nothing = Synthesis.nothingBuilt(outcome)
  if (nothing !== undefined) return yield* nothing
  if (outcome.failures.length > 0) log(`${outcome.failures.length} units failed; rerun the same command to retry them`)
})

export const command = Command.make("synthesize", options, run).pipe(
  Command.withDescription(
    "generate CUPID-style instances with models (personas, factors, sessions, checklists, simulated dialogues), validate them and write JSONL and parquet; " +
      "a rerun resumes without repeating answered calls"
  )
)
