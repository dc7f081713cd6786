// What the scorers that judge a generated answer as a benchmark's authors do share
// (longmemeval-judge, prefeval-judge, locomo-judge): their options (a `models:` entry, the token
// limit and temperature with the authors' values as defaults), building the judge (the model
// looked up, the authors' prompts loaded, stand-ins in a dry run said once), and the call with
// those settings, whose failure fails the instance naming the judge.
import { Errors, type LanguageModel, Models, type Plugin, type Trace } from "@cupid-lab/core"
import { Effect, Schema } from "effect"

/** The options: `model`, and `maxTokens` and `temperature` defaulting to the authors' (null sends none). */
export const options = (defaults: { readonly maxTokens: number | null; readonly temperature: number | null }) =>
  Schema.Struct({
    /** A `models:` entry: the judge. */
    model: Schema.String,
    /** The reply's token limit; null sends none (the entry's own, if it sets one). */
    maxTokens: Schema.optionalWith(Schema.NullOr(Schema.Int.pipe(Schema.positive())), {
      default: () => defaults.maxTokens
    }),
    /** The temperature; null sends none. */
    temperature: Schema.optionalWith(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2))), {
      default: () => defaults.temperature
    })
  })

export interface Options {
  readonly model: string
  readonly maxTokens: number | null
  readonly temperature: number | null
}

/** The authors' prompts as a loader gives them: real, or stand-ins of the same size in a dry run. */
export interface Prompts {
  /** Where they were read from, or why stand-ins replace them. */
  readonly source: string
  readonly standIn: boolean
}

export interface Judge<P> {
  readonly prompts: P
  /** The scorer's failure for this instance. */
  readonly fail: (reason: string) => Errors.StageError
  /** The generated answer to judge, or the failure saying that a generator is needed. */
  readonly answer: (trace: Trace.Trace) => Effect.Effect<string, Errors.StageError>
  /** Ask the judge with the scorer's token limit and temperature; a failed call names the judge (and `what`). */
  readonly ask: (
    request: LanguageModel.CompletionRequest,
    what?: string
  ) => Effect.Effect<LanguageModel.Completion, Errors.StageError>
}

export const make = <P extends Prompts>(spec: {
  /** The scorer's name. */
  readonly name: string
  readonly options: Options
  /** How to get the authors' files, for the dry run's notice. */
  readonly howToGet: string
  readonly load: (dryRun: boolean) => Effect.Effect<P, Errors.PluginError, Plugin.Env>
}): Effect.Effect<Judge<P>, Plugin.MakeError, Plugin.Env> =>
  Effect.gen(function* () {
    const { name, options } = spec
    const models = yield* Models.Models
    const lm = yield* models.languageModel(options.model)
    const prompts = yield* spec.load(models.dryRun === true)
    if (prompts.standIn)
      yield* Effect.logWarning(
        `${name}: ${prompts.source}; this dry run prices the judge's calls with stand-ins of the same size (${spec.howToGet})`
      )
    const who = `judge model "${options.model}" (${lm.info.provider}/${lm.info.model})`
    const fail = (reason: string) => new Errors.StageError({ stage: "score", plugin: name, reason })
    const sampling = {
      ...(options.maxTokens === null ? {} : { maxTokens: options.maxTokens }),
      ...(options.temperature === null ? {} : { temperature: options.temperature })
    }
    return {
      prompts,
      fail,
      answer: (trace) =>
        trace.generation === undefined
          ? Effect.fail(
              fail("no generated answer to judge: configure a generator (e.g. generator: { use: qa, model: ... })")
            )
          : Effect.succeed(trace.generation.text),
      ask: (request, what) => {
        const { messages, ...rest } = request
        return lm
          .complete({ messages, ...sampling, ...rest })
          .pipe(Effect.mapError((e) => fail(`${who}${what === undefined ? "" : `, ${what}`}: ${e.message}`)))
      }
    }
  })
