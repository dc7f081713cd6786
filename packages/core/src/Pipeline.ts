/**
 * One instance through one cell's stages: retriever -> optional summarizer -> optional inferrer ->
 * optional generator -> scorers, yielding a {@link Trace}. It never fails: a stage error stops the
 * run and is recorded in the trace, with the model calls made until then.
 *
 * A scorer that reproduces the CUPID authors' scoring of the inference (`Scorer.Service.reference`,
 * preference-match with `accounting: reference`) puts the pair in the order of their evaluate():
 * the inferrer reads its answer as their code does (`reading: reference`), and that scorer runs
 * right after the inferrer, so that its failure ends the pair before a response is generated. The
 * trace's scores keep the order the scorers are listed in.
 *
 * Gold reaches only a retriever built from a plugin that declared `needsGold`, a generator in the
 * oracle-preference setting, and the scorers.
 *
 * Each run is one `pipeline.run` span, and each stage call a `stage.<step>` span inside it (names
 * from the {@link Stage} table, the plugin as attribute `plugin`); the trace's `timings` are those
 * spans' durations, and the model calls made in a stage's span are counted as that stage's.
 *
 * @example
 * import { Pipeline } from "@cupid-lab/core"
 * const trace = yield* Pipeline.run({ retriever, inferrer, scorers }, instance)
 */
import { Cause, Effect, Exit, Option, Tracer } from "effect"
import type { Gold, Instance, SessionSummary, SessionView } from "./Domain.js"
import { StageError } from "./Errors.js"
import type { Evidence } from "./Evidence.js"
import type * as Generator from "./Generator.js"
import type * as Inferrer from "./Inferrer.js"
import type * as Retriever from "./Retriever.js"
import * as Scorer from "./Scorer.js"
import * as Stage from "./Stage.js"
import type * as Summarizer from "./Summarizer.js"
import type { Trace, TraceError } from "./Trace.js"
import * as Usage from "./Usage.js"

export type BuiltRetriever =
  | { readonly plugin: string; readonly needsGold: false; readonly service: Retriever.Service }
  | { readonly plugin: string; readonly needsGold: true; readonly service: Retriever.GoldService }

export interface Built<S> {
  readonly plugin: string
  readonly service: S
}

export interface CellPipeline {
  readonly retriever?: BuiltRetriever
  readonly summarizer?: Built<Summarizer.Service>
  readonly inferrer?: Built<Inferrer.Service>
  readonly generator?: Built<Generator.Service>
  readonly scorers: ReadonlyArray<Built<Scorer.Service>>
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** What one run keeps beside its trace: its usage ledger and the spans of its stages. */
interface Run {
  readonly ledger: Usage.Ledger
  readonly spans: Array<{ readonly step: Stage.Step; readonly span: Tracer.Span }>
}

/**
 * Milliseconds per step, summed over the step's spans (a stage may run more than once: scorers, the
 * summarizer). Spans take their times from the fiber's `Clock`; with tracing or its timing turned
 * off (`Effect.withTracerEnabled(false)`, `Effect.withTracerTiming(false)`) they are 0.
 */
const timingsOf = (spans: Run["spans"]): Record<string, number> => {
  const timings: Record<string, number> = {}
  for (const { span, step } of spans) {
    if (span.status._tag === "Ended")
      timings[step] = (timings[step] ?? 0) + Number(span.status.endTime - span.status.startTime) / 1e6
  }
  return timings
}

/**
 * A stage call in its span (`stage.<step>`, attribute `plugin`), parent of the spans its plugin
 * opens; the calls it makes are the stage's, and the run keeps the span to read its time from.
 * Runs for every stage of every pair of a sweep, so it costs one span and nothing else. It is not an
 * `Effect.fn`: that captures its call site's stack on every call, which made the pairs of
 * packages/core/bench/pipeline.bench.ts 10 to 15% slower.
 */
const stage = <A, E, R>(
  run: Run,
  { span: name, step }: Stage.Row,
  plugin: string,
  call: Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.useSpan(name, { captureStackTrace: false, attributes: { plugin } }, (span) => {
    run.ledger.stage = step
    run.spans.push({ step, span })
    return Effect.withParentSpan(call, span)
  })

const retrieve = (run: Run, retriever: BuiltRetriever, input: Retriever.RetrievalInput, gold: Gold) =>
  stage(
    run,
    Stage.info.retriever,
    retriever.plugin,
    retriever.needsGold ? retriever.service.retrieve(input, gold) : retriever.service.retrieve(input)
  )
const summarize = (run: Run, summarizer: Built<Summarizer.Service>, sessions: ReadonlyArray<SessionView>) =>
  stage(run, Stage.info.summarizer, summarizer.plugin, summarizer.service.summarize(sessions))
const infer = (run: Run, inferrer: Built<Inferrer.Service>, input: Inferrer.InferenceInput) =>
  stage(run, Stage.info.inferrer, inferrer.plugin, inferrer.service.infer(input))
const generate = (run: Run, generator: Built<Generator.Service>, input: Generator.GenerationInput) =>
  stage(run, Stage.info.generator, generator.plugin, generator.service.generate(input))
const score = (run: Run, scorer: Built<Scorer.Service>, input: Scorer.ScoreInput) =>
  stage(run, Stage.info.scorer, scorer.plugin, scorer.service.score(input))

/**
 * The tag of a pair cut by an interruption while it waited on something that lets it be cut (a
 * provider batch job): the pair is not done, and the sweep does not write it.
 */
export const interruptedTag = "Interrupted"

const toTraceError = (cause: Cause.Cause<StageError>): TraceError => {
  if (Cause.isInterruptedOnly(cause)) {
    return { stage: "pipeline", plugin: "", tag: interruptedTag, message: "interrupted before the pair finished" }
  }
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    return { stage: e.stage, plugin: e.plugin, tag: e._tag, message: e.message }
  }
  return defectError(Cause.squash(cause))
}

/** A pair's trace before its stages run. */
const emptyTrace = (instance: Instance): Mutable<Trace> => ({
  instanceId: instance.id,
  instanceType: instance.type,
  scores: {},
  usage: [],
  timings: {}
})

/**
 * One instance through a cell's stages, in one span (`pipeline.run`, attribute `instance`) that
 * holds the stages' spans. The pair is one effect with one usage ledger; a stage adds its span and
 * nothing else, model calls or none. Not an `Effect.fn`, which makes an Error (a stack capture) on
 * every call: this runs once a pair.
 */
export const run = (pipeline: CellPipeline, instance: Instance): Effect.Effect<Trace> =>
  Effect.suspend(() => {
    const trace = emptyTrace(instance)
    const r: Run = { ledger: Usage.ledger(), spans: [] }
    return Effect.map(Effect.exit(Usage.into(r.ledger, runStages(pipeline, instance, trace, r))), (exit) => {
      trace.usage = r.ledger.entries
      trace.timings = timingsOf(r.spans)
      if (Exit.isFailure(exit)) trace.error = toTraceError(exit.cause)
      return trace as Trace
    })
  }).pipe(Effect.withSpan("pipeline.run", { captureStackTrace: false, attributes: { instance: instance.id } }))

const runStages = (
  pipeline: CellPipeline,
  instance: Instance,
  trace: Mutable<Trace>,
  r: Run
): Effect.Effect<void, StageError> =>
  Effect.gen(function* () {
    const { query, gold } = instance
    const summaries = new Map<string, SessionSummary>()
    const summarizeMissing = (summarizer: Built<Summarizer.Service>, sessions: ReadonlyArray<SessionView>) => {
      const todo = sessions.filter((s) => !summaries.has(s.id))
      return Effect.map(todo.length === 0 ? Effect.succeed([]) : summarize(r, summarizer, todo), (sums) => {
        for (const sum of sums) summaries.set(sum.sessionId, sum)
      })
    }

    let selected: ReadonlyArray<SessionView> = query.sessions
    const retriever = pipeline.retriever
    if (retriever !== undefined) {
      if (retriever.service.needsSummaries) {
        if (pipeline.summarizer === undefined) {
          return yield* new StageError({
            stage: "retrieve",
            plugin: retriever.plugin,
            reason: "ranks session summaries but no summarizer is configured"
          })
        }
        yield* summarizeMissing(pipeline.summarizer, query.sessions)
      }
      const retrieval = yield* retrieve(
        r,
        retriever,
        retriever.service.needsSummaries ? { query, summaries } : { query },
        gold
      )
      const checked = checkRetrieval(retriever.plugin, retrieval, query.sessions)
      if (checked instanceof StageError) return yield* checked
      trace.retrieval = checked.retrieval
      selected = checked.selected
    }

    let evidence: Evidence = { sessions: selected }
    if (pipeline.summarizer !== undefined) {
      yield* summarizeMissing(pipeline.summarizer, selected)
      const used = selected.map((s) => summaries.get(s.id)!)
      trace.summaries = used
      evidence = { sessions: selected, summaries: used }
    }

    // Scorers that reproduce the authors' scoring of the inference run in their evaluate()'s order:
    // right after the inferrer, which then reads as their code does; a failure there ends the pair.
    const early =
      pipeline.inferrer === undefined ? [] : pipeline.scorers.filter((s) => s.service.reference === "inference")
    const scored: Array<Scored> = []
    if (pipeline.inferrer !== undefined) {
      trace.inference = yield* infer(r, pipeline.inferrer, {
        request: query.request,
        evidence,
        ...(early.length > 0 ? { reading: "reference" as const } : {})
      })
      if (early.length > 0) {
        scored.push(
          yield* Effect.mapError(
            scoreAll(r, early, instance, trace),
            (e) => new StageError({ stage: e.stage, plugin: e.plugin, reason: `${e.reason}${stoppedEarly}` })
          )
        )
      }
    }

    if (pipeline.generator !== undefined) {
      const preference = pipeline.generator.service.usesGoldPreference ? gold.preference : trace.inference?.preference
      trace.generation = yield* generate(r, pipeline.generator, {
        request: query.request,
        evidence,
        ...(preference === undefined ? {} : { preference }),
        ...(query.date === undefined ? {} : { date: query.date })
      })
    }

    const rest = pipeline.scorers.filter((s) => !early.includes(s))
    scored.push(yield* scoreAll(r, rest, instance, trace))
    // The scores in the order the scorers are listed, whichever ran first.
    const scores: Record<string, Scorer.Value> = {}
    const repeats: Record<string, ReadonlyArray<number>> = {}
    for (const scorer of pipeline.scorers) for (const s of scored) Object.assign(scores, s.scores.get(scorer))
    for (const s of scored) Object.assign(repeats, s.repeats)
    trace.scores = scores
    const ratings = scored.flatMap((s) => s.ratings)
    if (ratings.length > 0) trace.ratings = ratings
    if (Object.keys(repeats).length > 0) trace.repeats = repeats
  })

/**
 * A retrieval as the trace keeps it: every id must be in the history; the selection without
 * repeats and chronological, as the contract states it, whatever the plugin returned (scorers read
 * it from the trace).
 */
const checkRetrieval = (
  plugin: string,
  retrieval: Retriever.Retrieval,
  sessions: ReadonlyArray<SessionView>
): { readonly retrieval: Retriever.Retrieval; readonly selected: ReadonlyArray<SessionView> } | StageError => {
  const byId = new Map(sessions.map((s) => [s.id, s]))
  const unknown = new Set<string>()
  for (const id of retrieval.selected) if (!byId.has(id)) unknown.add(id)
  for (const { sessionId } of retrieval.ranking) if (!byId.has(sessionId)) unknown.add(sessionId)
  for (const { sessionId } of retrieval.turns ?? []) if (!byId.has(sessionId)) unknown.add(sessionId)
  if (unknown.size > 0) {
    return new StageError({
      stage: "retrieve",
      plugin,
      reason: `returned session ids that are not in the history: ${[...unknown].join(", ")}`
    })
  }
  const selected = [...new Set(retrieval.selected)].map((id) => byId.get(id)!).sort((a, b) => a.index - b.index)
  return {
    retrieval: {
      ranking: retrieval.ranking,
      selected: selected.map((s) => s.id),
      ...(retrieval.turns === undefined ? {} : { turns: retrieval.turns })
    },
    selected
  }
}

/** Whether every stage of `pipeline` has a plain function (`now`): {@link runNow} runs it without Effect. */
export const isPlain = (pipeline: CellPipeline): boolean =>
  pipeline.summarizer === undefined &&
  pipeline.inferrer === undefined &&
  pipeline.generator === undefined &&
  (pipeline.retriever === undefined ||
    (pipeline.retriever.service.now !== undefined && !pipeline.retriever.service.needsSummaries)) &&
  pipeline.scorers.every((s) => s.service.now !== undefined)

/**
 * {@link run} for a pipeline whose every stage is plain ({@link isPlain}; undefined otherwise): the
 * same trace, computed by plain calls. Its timings are wall-clock milliseconds; it opens no span.
 * A sweep of retrieval cells runs its pairs through it, in batches, between its effects.
 */
export const runNow = (pipeline: CellPipeline, instance: Instance): Trace | undefined => {
  if (!isPlain(pipeline)) return undefined
  const trace = emptyTrace(instance)
  const timings: Record<string, number> = {}
  const timed = <A>(step: Stage.Step, now: () => A): A => {
    const start = performance.now()
    try {
      return now()
    } finally {
      timings[step] = (timings[step] ?? 0) + (performance.now() - start)
    }
  }
  try {
    const { query, gold } = instance
    const retriever = pipeline.retriever
    if (retriever !== undefined) {
      const step = Stage.info.retriever.step
      const retrieval = retriever.needsGold
        ? timed(step, () => retriever.service.now!({ query }, gold))
        : timed(step, () => retriever.service.now!({ query }))
      const checked = checkRetrieval(retriever.plugin, retrieval, query.sessions)
      if (checked instanceof StageError) throw checked
      trace.retrieval = checked.retrieval
    }
    trace.usage = []
    const input = { instance, trace: trace as Trace }
    const scores: Record<string, Scorer.Value> = {}
    for (const scorer of pipeline.scorers)
      Object.assign(
        scores,
        timed(Stage.info.scorer.step, () => scorer.service.now!(input))
      )
    trace.scores = scores
  } catch (e) {
    trace.error =
      e instanceof StageError ? { stage: e.stage, plugin: e.plugin, tag: e._tag, message: e.message } : defectError(e)
  }
  trace.usage = []
  trace.timings = timings
  return trace as Trace
}

/** A defect (a bug in a plugin) as the trace records it: one bad instance must not stop a sweep. */
const defectError = (defect: unknown): TraceError => ({
  stage: "pipeline",
  plugin: "",
  tag: "Defect",
  message: defect instanceof Error ? defect.message : String(defect)
})

const stoppedEarly =
  " (scored before generation, in the order of the CUPID authors' evaluate(): the pair stops here, no response is generated or judged)"

/** What some of a pair's scorers produced: each one's scores, and the item ratings and repeats they recorded. */
interface Scored {
  readonly scores: ReadonlyMap<Built<Scorer.Service>, Readonly<Record<string, Scorer.Value>>>
  readonly ratings: ReadonlyArray<Scorer.ItemRating>
  readonly repeats: Scorer.Repeats
}

/** Run `scorers` in turn on the trace so far; they see the stages' outputs and the calls made until now (for cost metrics). */
const scoreAll = (
  r: Run,
  scorers: ReadonlyArray<Built<Scorer.Service>>,
  instance: Instance,
  trace: Mutable<Trace>
): Effect.Effect<Scored, StageError> =>
  Effect.suspend(() => {
    trace.usage = [...r.ledger.entries]
    const input = { instance, trace: trace as Trace }
    const scores = new Map<Built<Scorer.Service>, Readonly<Record<string, Scorer.Value>>>()
    return Effect.map(
      Scorer.collectRepeats(
        Scorer.collectRatings(
          Effect.forEach(scorers, (scorer) => Effect.map(score(r, scorer, input), (s) => void scores.set(scorer, s)), {
            discard: true
          })
        )
      ),
      ([[, ratings], repeats]) => ({ scores, ratings, repeats })
    )
  })
