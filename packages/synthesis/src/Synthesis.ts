/**
 * Generating CUPID-style data with models: personas, context factors, sessions, checklists and
 * simulated dialogues, then the three instances of each persona, validated, written as JSONL and
 * parquet in the released row format (so `Dataset.open(<out>/instances.parquet)` and
 * `sweep` with `data.source` set to it read them).
 *
 * Every model call goes through the project's model plumbing: the configured providers (with their
 * rate limits and retries), the content-addressed model cache, usage accounting, list prices of
 * the `cost` scorer. A run is resumable at every stage: each finished unit (a persona, its factors,
 * a session, a checklist, a dialogue) is appended to `<out>/raw.jsonl` at once, and the calls of
 * an unfinished dialogue are in the model cache, so a killed run, rerun, repeats no answered call.
 * A unit that fails (model error, unparseable answer, a request that leaks its preference, a user
 * simulator that never ends) is recorded with its stage and persona, never cached, and retried on
 * the next run.
 *
 * @example
 * import { Synthesis, SynthConfig } from "@cupid-lab/synthesis"
 * const config = yield* SynthConfig.load("configs/synth.yaml")
 * const plan = yield* Synthesis.dryRun(config)        // calls, tokens, USD; nothing sent
 * const outcome = yield* Synthesis.run(config)
 * outcome.files.parquet // "<out>/instances.parquet"
 */
import {
  Domain,
  Hash,
  type LanguageModel,
  ModelCache,
  Models,
  Plugin,
  type PromptTemplate,
  Usage
} from "@cupid-lab/core"
import { Builtins as ProviderBuiltins } from "@cupid-lab/providers"
import { Cost } from "@cupid-lab/scorers"
import { Clock, Data, Effect, Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SynthConfigError, type SynthesisError, SynthesisRunError } from "./Errors.js"
import * as Instances from "./Instances.js"
import { seeds as bundledSeeds } from "./internal/Seeds.js"
import { toParquet } from "./internal/parquet.js"
import * as RawStore from "./internal/RawStore.js"
import * as Progress from "./Progress.js"
import type * as Records from "./Records.js"
import * as Stages from "./Stages.js"
import type { Config, Role } from "./SynthConfig.js"
import * as Template from "./Template.js"

export interface Options {
  readonly progress?: Progress.Progress
  /** Notices (resume counts, cache warnings); default none. */
  readonly log?: (line: string) => void
  /** Provider plugins; default the providers package's built-ins. */
  readonly providers?: ReadonlyArray<Plugin.AnyPlugin>
}

export interface StageUsage {
  readonly calls: number
  /** Calls answered by the model cache (no request sent). */
  readonly cachedCalls: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** List-price dollars of the calls sent (cached calls cost nothing); NaN when a model has no price. */
  readonly usd: number
  /** Calls sent times their role's `maxTokens`: the most answer tokens they could cost. */
  readonly maxCompletionTokens: number
  /** `usd` with every sent call answering `maxTokens` tokens. */
  readonly maxUsd: number
}

export interface Excluded {
  readonly id: string
  readonly problems: ReadonlyArray<string>
}

export interface Outcome {
  readonly out: string
  readonly files: {
    readonly raw: string
    readonly jsonl: string | undefined
    readonly parquet: string | undefined
    readonly validation: string
    readonly failures: string
  }
  readonly personas: { readonly total: number; readonly complete: number; readonly incomplete: number }
  readonly instances: { readonly built: number; readonly valid: number; readonly excluded: number }
  readonly failures: ReadonlyArray<Records.Failure>
  readonly excluded: ReadonlyArray<Excluded>
  /** Per stage and in total. */
  readonly usage: Readonly<Record<string, StageUsage>>
}

export interface DryRun {
  readonly personas: number
  /** Calls a real run would make, by stage and in total (`total`); calls the cache already answers are counted as cached. */
  readonly usage: Readonly<Record<string, StageUsage>>
  readonly dialogueTurns: number
  /** Units that failed even on example answers (e.g. `maxTurns` below `dryRunTurns`). */
  readonly failures: ReadonlyArray<Records.Failure>
}

// ------------------------------------------------------------------------------------------------

interface Tally {
  readonly byStage: Map<string, { calls: number; cachedCalls: number; promptTokens: number; completionTokens: number; micro: number; maxCompletion: number; maxMicro: number }>
}

const addUsage = (tally: Tally, prices: Readonly<Record<string, Cost.Price>>, entries: ReadonlyArray<Usage.UsageEntry>, maxTokens: number) => {
  for (const e of entries) {
    for (const key of [e.stage, "total"]) {
      const t = tally.byStage.get(key) ?? { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, micro: 0, maxCompletion: 0, maxMicro: 0 }
      t.calls++
      if (e.cached) t.cachedCalls++
      t.promptTokens += e.promptTokens
      t.completionTokens += e.completionTokens
      const price = prices[`${e.provider}/${e.model}`]
      if (!e.cached) {
        t.micro += price === undefined ? NaN : Cost.microUsd(e.promptTokens, e.completionTokens, price)
        t.maxCompletion += maxTokens
        t.maxMicro += price === undefined ? NaN : Cost.microUsd(e.promptTokens, maxTokens, price)
      }
      tally.byStage.set(key, t)
    }
  }
}

const usageOf = (tally: Tally): Record<string, StageUsage> => {
  const out: Record<string, StageUsage> = {}
  for (const stage of ["persona", "factors", "sessions", "checklists", "assistant", "user", "validator", "total"]) {
    const t = tally.byStage.get(stage)
    if (t !== undefined) out[stage] = { calls: t.calls, cachedCalls: t.cachedCalls, promptTokens: t.promptTokens, completionTokens: t.completionTokens, usd: t.micro / 1e6, maxCompletionTokens: t.maxCompletion, maxUsd: t.maxMicro / 1e6 }
  }
  return out
}

/** Provider options that change how calls are sent, not what they answer: left out of the fingerprint. */
const transportOptions = new Set(["concurrency", "rpm", "timeoutMs", "maxRetries", "retryBaseMs", "retryMaxMs", "baseURL", "apiKeyEnv", "batchSize"])

const fingerprintOf = (config: Config, prompts: ReadonlyArray<PromptTemplate.Template>): string =>
  Hash.sha256Hex(
    Hash.canonicalJson({
      seed: config.seed,
      seeds: config.personas.seeds ?? bundledSeeds,
      factors: config.factors,
      sessions: config.sessions,
      maxTurns: config.dialogue.maxTurns,
      roles: config.roles,
      modelCheck: config.validation.modelCheck,
      models: Object.fromEntries(
        Object.entries(config.models).map(([name, m]) => [
          name,
          { provider: m.provider, model: m.model, options: Object.fromEntries(Object.entries(m.options).filter(([k]) => !transportOptions.has(k))) }
        ])
      ),
      prompts: prompts.map((p) => p.text)
    })
  ).slice(0, 16)

const buildModels = (config: Config, providers: ReadonlyArray<Plugin.AnyPlugin>, dryRun: boolean) =>
  Effect.gen(function*() {
    const registry = Plugin.makeRegistry(providers)
    const bundles: Record<string, Models.ModelBundle> = {}
    const used = new Set(Object.values(config.roles).map((r) => r.model))
    for (const [name, spec] of Object.entries(config.models)) {
      if (!used.has(name)) continue
      const at = `models.${name}`
      const fail = (p: string, reason: string) => new SynthConfigError({ file: config.file, path: p, reason })
      const plugin = yield* registry.provider(spec.provider).pipe(Effect.mapError((e) => fail(`${at}.provider`, e.reason)))
      const decoded = plugin.decode(spec.options)
      if (Either.isLeft(decoded)) {
        const issue = decoded.left.issues[0]
        return yield* fail([at, ...(issue?.path ?? []).map(String)].join("."), issue?.message ?? "invalid options")
      }
      bundles[name] = yield* decoded.right.make(spec.model, { dryRun }).pipe(
        Effect.mapError((e) => fail(at, `cannot build the model: ${e.reason}`)),
        Effect.catchAllDefect((d) => fail(at, `cannot build the model: ${d instanceof Error ? d.message : String(d)}`))
      )
    }
    return bundles
  })

type Prompts = Readonly<Record<"persona" | "factors" | "session" | "checklist" | "user" | "assistant" | "hintCheck", PromptTemplate.Template>>

const loadPrompts = (config: Config) =>
  Effect.gen(function*() {
    const load = (s: Pick<Stages.Stage<unknown, never>, "name" | "file" | "required" | "optional">) => Stages.loadPrompt(s, config.prompts, config.file)
    const p: Prompts = {
      persona: yield* load(Stages.persona),
      factors: yield* load(Stages.factors),
      session: yield* load(Stages.session),
      checklist: yield* load(Stages.checklist),
      user: yield* load(Stages.user),
      assistant: yield* load(Stages.assistant),
      hintCheck: yield* load(Stages.hintCheck)
    }
    return p
  })

const render = (t: PromptTemplate.Template, values: Readonly<Record<string, string>>): string =>
  t.text.replace(/\{\{\s*([^{}]*?)\s*\}\}/g, (_w, name: string) => values[name] ?? "").trim()

const numbered = (items: ReadonlyArray<string>) => items.map((x, i) => `${i + 1}. ${x}`).join("\n")

interface Engine {
  readonly config: Config
  readonly dryRun: boolean
  readonly store: RawStore.RawStore
  readonly prompts: Prompts
  readonly lms: Readonly<Record<Role, LanguageModel.Service>>
  readonly failures: Array<Records.Failure>
  readonly tally: Tally
  readonly prices: Readonly<Record<string, Cost.Price>>
  readonly onCall: () => void
  turns: number
}

/** A failure of one unit; the run records it and goes on. */
class UnitFailed extends Data.TaggedError("UnitFailed")<{ readonly failure: Records.Failure }> {}

const seedsOf = (config: Config) => config.personas.seeds ?? bundledSeeds

/** One model call of a stage: usage tallied, the answer parsed; any problem is a `UnitFailed`. */
const call = <A, C>(
  engine: Engine,
  role: Role,
  stage: Stages.Stage<A, C>,
  context: C,
  messages: ReadonlyArray<LanguageModel.ChatMessage>,
  where: Omit<Records.Failure, "reason">
): Effect.Effect<A, UnitFailed> => {
  const settings = engine.config.roles[role]
  const tag = Hash.sha256Hex(messages.map((m) => m.content).join("\u0000")).slice(0, 8)
  const request: LanguageModel.CompletionRequest = {
    messages,
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
    dryRunAnswer: stage.dryRunAnswer(tag, context),
    accept: (text) => Either.isRight(stage.parse(text, context))
  }
  const fail = (reason: string) => new UnitFailed({ failure: { ...where, reason } })
  return Usage.trackExit(Usage.withStage(role === "checklist" ? "checklists" : role, engine.lms[role].complete(request))).pipe(
    Effect.tap(({ usage }) =>
      Effect.sync(() => {
        addUsage(engine.tally, engine.prices, usage, settings.maxTokens)
        engine.onCall()
      })
    ),
    Effect.flatMap(({ exit }) => exit),
    Effect.mapError((e) => fail(`${role} model: ${e.message}`)),
    Effect.flatMap((c) => Either.match(stage.parse(c.text, context), { onLeft: (r) => Effect.fail(fail(r)), onRight: Effect.succeed })),
    Effect.catchAllDefect((d) => Effect.fail(fail(`${role} call failed unexpectedly: ${d instanceof Error ? d.message : String(d)}`)))
  )
}

/** The record under `key`, or the one `make` produces (appended to the raw file as soon as it exists). */
const stored = <R extends Records.RawRecord>(
  engine: Engine,
  key: string,
  make: Effect.Effect<R, UnitFailed>
): Effect.Effect<R, UnitFailed> =>
  Effect.suspend(() => {
    const found = engine.store.get(key)
    // The key fixes the record's kind: each key is written by one kind of record only.
    if (found !== undefined) return Effect.succeed(found as R)
    return Effect.tap(make, (r) => Effect.sync(() => engine.store.add(r)))
  })

const recordFailure = (engine: Engine) => (e: UnitFailed) =>
  Effect.sync(() => {
    engine.failures.push(e.failure)
  })

const dialogueText = (messages: ReadonlyArray<Records.Dialogue["messages"][number]>) =>
  messages.map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${m.content}`).join("\n\n")

const makeDialogue = (
  engine: Engine,
  persona: Records.Persona,
  factor: Records.Factor,
  preference: string,
  checklist: ReadonlyArray<string>,
  opening: string,
  where: Omit<Records.Failure, "reason">
): Effect.Effect<Records.Dialogue, UnitFailed> =>
  Effect.gen(function*() {
    const { maxTurns, dryRunTurns } = engine.config.dialogue
    const messages: Array<{ role: "user" | "assistant"; content: string }> = [{ role: "user", content: opening }]
    const judgements: Array<{ score: number; hints: ReadonlyArray<number> }> = []
    const system = render(engine.prompts.assistant, {})
    let last = 0
    for (let turn = 1; turn <= maxTurns; turn++) {
      const answer = yield* call(engine, "assistant", Stages.assistant, undefined, [{ role: "system", content: system }, ...messages], where)
      messages.push({ role: "assistant", content: answer })
      const prompt = render(engine.prompts.user, {
        persona: `${persona.name}. ${persona.description}`,
        factor: factor.name,
        preference,
        checklist: numbered(checklist),
        dialogue: dialogueText(messages),
        turn: String(turn),
        max_turns: String(maxTurns)
      })
      const reply = yield* call(
        engine,
        "user",
        Stages.user,
        { items: checklist.length, dryRunEnd: turn >= dryRunTurns },
        [{ role: "user", content: prompt }],
        where
      )
      messages.push({ role: "user", content: reply.message })
      judgements.push({ score: reply.score, hints: reply.hints })
      last = reply.score
      if (reply.end) {
        if (engine.dryRun) engine.turns += turn
        const hinted = [...new Set(judgements.flatMap((j) => j.hints))].sort((a, b) => a - b)
        let modelHinted: ReadonlyArray<number> | undefined
        if (engine.config.validation.modelCheck) {
          const userTurns = messages.filter((m) => m.role === "user").map((m, i) => `${i + 1}. ${m.content}`).join("\n")
          modelHinted = yield* call(
            engine,
            "validator",
            Stages.hintCheck,
            { items: checklist.length },
            [{ role: "user", content: render(engine.prompts.hintCheck, { checklist: numbered(checklist), user_turns: userTurns }) }],
            where
          )
        }
        return { messages, judgements, hinted, ...(modelHinted === undefined ? {} : { modelHinted: [...modelHinted].sort((a, b) => a - b) }) }
      }
    }
    return yield* new UnitFailed({
      failure: { ...where, reason: `the user simulator did not end the dialogue within maxTurns (${maxTurns}); its last score was ${last}` }
    })
  })

/** Generate (or find in the raw file) every record of persona `index`; failures are recorded, never raised. */
const generatePersona = (engine: Engine, index: number): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { config } = engine
    const id = Instances.personaId(index)
    const template = Template.persona(config.seed, seedsOf(config), index)
    const personaRecord = yield* stored(engine, `${index}\u0000persona`, Effect.gen(function*() {
      const prompt = render(engine.prompts.persona, {
        seed: template.seed,
        career_level: template.careerLevel,
        traits: template.traits.map((t) => `${t.level} ${t.trait}`).join(", "),
        values: template.values.join(", "),
        decision_style: template.decisionStyle
      })
      const value = yield* call(engine, "persona", Stages.persona, undefined, [{ role: "user", content: prompt }], { stage: "persona", persona: id })
      return { _tag: "persona" as const, persona: index, template, value }
    }))
    const persona = personaRecord.value
    const personaText = `${persona.name}. ${persona.description}`
    const factors = (yield* stored(engine, `${index}\u0000factors`, Effect.gen(function*() {
      const prompt = render(engine.prompts.factors, { persona: personaText, count: String(config.factors.count) })
      const value = yield* call(engine, "factors", Stages.factors, { count: config.factors.count }, [{ role: "user", content: prompt }], {
        stage: "factors",
        persona: id
      })
      return { _tag: "factors" as const, persona: index, value }
    }))).value
    const plan = Template.sessions(config.seed, index, config.sessions, factors.length)
    const data = { index, id, persona, factors, plan, sessions: [], checklists: new Map(), dialogues: [] }
    const a = factors[plan.current]!
    const total = plan.slots.length
    // Sessions, each on its own: one failing does not stop the others.
    const sessions = yield* Effect.forEach(plan.slots, (slot, s) => {
      const factor = factors[slot.factor]!
      const preference = Instances.preferenceOf(data, slot)
      const last = s === total - 1
      const where = { stage: "sessions" as const, persona: id, session: s + 1 }
      return stored(engine, RawStore.keyOf({ _tag: "session", persona: index, session: s, value: placeholderSession }), Effect.gen(function*() {
        const prompt = render(engine.prompts.session, {
          persona: personaText,
          factor: factor.name,
          factor_type: factor.factor_type,
          background: factor.background,
          preference,
          task_types: factor.task_types.join(", "),
          position: String(s + 1),
          total: String(total)
        })
        const context = { preference, factor: factor.name, alsoForbidden: last ? [a.preference, a.changed_preference ?? a.preference] : [] }
        const value = yield* call(engine, "sessions", Stages.session, context, [{ role: "user", content: prompt }], where)
        return { _tag: "session" as const, persona: index, session: s, value }
      })).pipe(Effect.map((r) => r.value), Effect.tapError(recordFailure(engine)), Effect.option)
    }, { concurrency: config.concurrency.sessions })
    // Checklists of every preference the instances use.
    const preferences = [...new Set([...plan.slots.slice(0, -1).map((slot) => Instances.preferenceOf(data, slot)), a.preference, a.changed_preference ?? a.preference])]
    const checklists = new Map<string, ReadonlyArray<string>>()
    yield* Effect.forEach(preferences, (preference) =>
      stored(engine, `${index}\u0000checklist\u0000${preference}`, Effect.gen(function*() {
        const prompt = render(engine.prompts.checklist, { preference })
        const value = yield* call(engine, "checklist", Stages.checklist, undefined, [{ role: "user", content: prompt }], { stage: "checklists", persona: id })
        return { _tag: "checklist" as const, persona: index, preference, value }
      })).pipe(
        Effect.tap((r) => Effect.sync(() => checklists.set(preference, r.value))),
        Effect.tapError(recordFailure(engine)),
        Effect.ignore
      ), { concurrency: config.concurrency.sessions })
    // Dialogues of the prior sessions whose texts and checklists exist.
    yield* Effect.forEach(plan.slots.slice(0, -1), (slot, s) => {
      const text = sessions[s]!
      const preference = Instances.preferenceOf(data, slot)
      const checklist = checklists.get(preference)
      if (text._tag === "None" || checklist === undefined) return Effect.void
      const where = { stage: "dialogues" as const, persona: id, session: s + 1 }
      return stored(engine, RawStore.keyOf({ _tag: "dialogue", persona: index, session: s, value: placeholderDialogue }), Effect.map(
        makeDialogue(engine, persona, factors[slot.factor]!, preference, checklist, Stages.fillResource(text.value), where),
        (value) => ({ _tag: "dialogue" as const, persona: index, session: s, value })
      )).pipe(Effect.tapError(recordFailure(engine)), Effect.ignore)
    }, { concurrency: config.concurrency.sessions })
  }).pipe(
    Effect.catchAll(recordFailure(engine))
  )

const placeholderSession: Records.SessionText = { task_type: "", story: "", request_with_preference: "", request: "", resource_kind: "none", resource: null }
const placeholderDialogue: Records.Dialogue = { messages: [], judgements: [], hinted: [] }

/** A persona's data from the raw file, when every record of it is there. */
export const assemble = (config: Config, store: { readonly get: (key: string) => Records.RawRecord | undefined }, index: number): Instances.PersonaData | undefined => {
  const persona = store.get(`${index}\u0000persona`)
  const factors = store.get(`${index}\u0000factors`)
  if (persona?._tag !== "persona" || factors?._tag !== "factors") return undefined
  const plan = Template.sessions(config.seed, index, config.sessions, factors.value.length)
  const base = { index, id: Instances.personaId(index), persona: persona.value, factors: factors.value, plan }
  const sessions: Array<Records.SessionText> = []
  const dialogues: Array<Records.Dialogue> = []
  const checklists = new Map<string, ReadonlyArray<string>>()
  for (let s = 0; s < plan.slots.length; s++) {
    const r = store.get(RawStore.keyOf({ _tag: "session", persona: index, session: s, value: placeholderSession }))
    if (r?._tag !== "session") return undefined
    sessions.push(r.value)
    if (s < plan.slots.length - 1) {
      const d = store.get(RawStore.keyOf({ _tag: "dialogue", persona: index, session: s, value: placeholderDialogue }))
      if (d?._tag !== "dialogue") return undefined
      dialogues.push(d.value)
    }
  }
  const data: Instances.PersonaData = { ...base, sessions, dialogues, checklists }
  const a = factors.value[plan.current]!
  const used = new Set([...plan.slots.map((slot) => Instances.preferenceOf(data, slot)), a.preference, a.changed_preference ?? a.preference])
  for (const preference of used) {
    const c = store.get(`${index}\u0000checklist\u0000${preference}`)
    if (c?._tag !== "checklist") return undefined
    checklists.set(preference, c.value)
  }
  return data
}

const ioError = (file: string) => (e: unknown) => new SynthesisRunError({ path: file, reason: e instanceof Error ? e.message : String(e) })

const writeAtomic = (file: string, data: string | Uint8Array) => {
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, data)
  fs.renameSync(tmp, file)
}

/** Build, validate and write the instances of every complete persona in the raw file. */
const writeOutputs = (config: Config, store: RawStore.RawStore, failures: ReadonlyArray<Records.Failure>, usage: Record<string, StageUsage>) =>
  Effect.try({
    try: () => {
      const out = config.out
      const rows: Array<Domain.CupidRow> = []
      const excluded: Array<Excluded> = []
      const byType: Record<string, { valid: number; excluded: number }> = {}
      const byRule: Record<string, number> = {}
      let complete = 0
      for (let i = 0; i < config.personas.count; i++) {
        const data = assemble(config, store, i)
        if (data === undefined) continue
        complete++
        for (const built of Instances.build(data, config.sessions, config.seed)) {
          const t = (byType[built.row.instance_type] ??= { valid: 0, excluded: 0 })
          if (built.problems.length === 0) {
            rows.push(built.row)
            t.valid++
          } else {
            t.excluded++
            excluded.push({ id: Domain.instanceId(built.row.persona_id, built.row.instance_type), problems: built.problems })
            for (const p of built.problems) {
              const rule = ruleOf(p)
              byRule[rule] = (byRule[rule] ?? 0) + 1
            }
          }
        }
      }
      fs.mkdirSync(out, { recursive: true })
      const files = {
        raw: store.file,
        jsonl: config.output.jsonl ? path.join(out, "instances.jsonl") : undefined,
        parquet: config.output.parquet ? path.join(out, "instances.parquet") : undefined,
        validation: path.join(out, "validation.json"),
        failures: path.join(out, "failures.json")
      }
      if (files.jsonl !== undefined) writeAtomic(files.jsonl, rows.map((r) => `${JSON.stringify(r)}\n`).join(""))
      if (files.parquet !== undefined) writeAtomic(files.parquet, toParquet(rows))
      const summary = {
        personas: config.personas.count,
        complete,
        instances: complete * Domain.instanceTypes.length,
        valid: rows.length,
        excluded: excluded.length,
        byType,
        byRule
      }
      writeAtomic(files.validation, `${JSON.stringify({ summary, excluded }, null, 2)}\n`)
      writeAtomic(files.failures, `${JSON.stringify({ failures, usage }, null, 2)}\n`)
      store.compact()
      const outcome: Outcome = {
        out,
        files,
        personas: { total: config.personas.count, complete, incomplete: config.personas.count - complete },
        instances: { built: summary.instances, valid: rows.length, excluded: excluded.length },
        failures,
        excluded,
        usage
      }
      return outcome
    },
    catch: ioError(config.out)
  })

/** The rule a validation problem breaks, for the summary counts. */
const ruleOf = (problem: string): string =>
  problem.startsWith("composition") ? "composition"
  : problem.includes("word run") ? "preference leaked"
  : problem.includes("does not name") ? "factor not named"
  : problem.includes("validator model") ? "checklist item not hinted (model check)"
  : problem.includes("never hinted") ? "checklist item not hinted"
  : "other"

const sortFailures = (failures: Array<Records.Failure>) =>
  failures.sort((x, y) => x.persona < y.persona ? -1 : x.persona > y.persona ? 1 : (x.session ?? 0) - (y.session ?? 0) || (x.stage < y.stage ? -1 : x.stage > y.stage ? 1 : 0))

const generate = (config: Config, options: Options, dryRun: boolean) =>
  Effect.gen(function*() {
    const startedAt = yield* Clock.currentTimeMillis
    const prompts = yield* loadPrompts(config)
    const fingerprint = fingerprintOf(config, Object.values(prompts))
    const store = yield* RawStore.open(config.out, fingerprint, !dryRun)
    if (store.dropped > 0) options.log?.(`${store.file}: dropped ${store.dropped} line(s) cut short by an earlier kill`)
    const bundles = yield* buildModels(config, options.providers ?? ProviderBuiltins.plugins, dryRun)
    const cache = yield* Effect.provide(
      ModelCache.ModelCache,
      ModelCache.layerFile(config.cacheDir, options.log === undefined ? {} : { onWarning: options.log })
    )
    const models = Models.make(bundles, cache, { dryRun })
    const lms = {} as Record<Role, LanguageModel.Service>
    for (const [role, settings] of Object.entries(config.roles) as Array<[Role, Config["roles"][Role]]>) {
      lms[role] = yield* models.languageModel(settings.model).pipe(
        Effect.mapError((e) => new SynthConfigError({ file: config.file, path: `roles.${role}`, reason: e.message }))
      )
    }
    const done = new Set<number>()
    for (let i = 0; i < config.personas.count; i++) if (assemble(config, store, i) !== undefined) done.add(i)
    if (done.size > 0 && !dryRun) options.log?.(`resuming in ${config.out}: ${done.size} of ${config.personas.count} personas are complete`)
    const progress = options.progress ?? Progress.silent
    const resumed = done.size
    let run = 0
    const engine: Engine = {
      config,
      dryRun,
      store,
      prompts,
      lms,
      failures: [],
      tally: { byStage: new Map() },
      prices: { ...Cost.defaultPrices, ...config.prices },
      onCall: () => {},
      turns: 0
    }
    const snapshot = (now: number): Progress.Snapshot => {
      const t = engine.tally.byStage.get("total")
      return {
        personasDone: resumed + run,
        personasTotal: config.personas.count,
        personasRun: run,
        personasToRun: config.personas.count - resumed,
        calls: t?.calls ?? 0,
        cachedCalls: t?.cachedCalls ?? 0,
        tokens: (t?.promptTokens ?? 0) + (t?.completionTokens ?? 0),
        usd: (t?.micro ?? 0) / 1e6,
        failures: engine.failures.length,
        elapsedMs: now - startedAt
      }
    }
    const tick = Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => progress.update(snapshot(now))))
    const todo = Array.from({ length: config.personas.count }, (_, i) => i).filter((i) => !done.has(i))
    yield* Effect.forEach(todo, (i) =>
      generatePersona(engine, i).pipe(
        Effect.zipRight(Effect.sync(() => void run++)),
        Effect.zipRight(tick)
      ), { concurrency: config.concurrency.personas, discard: true })
    const now = yield* Clock.currentTimeMillis
    progress.done(snapshot(now))
    return { engine, store, usage: usageOf(engine.tally), failures: sortFailures(engine.failures) }
  })

/**
 * Run a synthesis to the end and write every output into `config.out`: `raw.jsonl`,
 * `instances.jsonl`, `instances.parquet`, `validation.json` (summary counts and every excluded
 * instance with its reasons) and `failures.json` (this run's failed units and its usage).
 */
export const run = (config: Config, options: Options = {}): Effect.Effect<Outcome, SynthesisError> =>
  Effect.scoped(
    Effect.gen(function*() {
      const g = yield* generate(config, options, false)
      return yield* writeOutputs(config, g.store, g.failures, g.usage)
    })
  ).pipe(Effect.withSpan("Synthesis.run"))

/**
 * What a run would do, with nothing sent and nothing written: every stage runs on example answers
 * (the user simulator ends each dialogue after `dialogue.dryRunTurns` turns), calls already in the
 * model cache or units already in the raw file count as done. Prompt tokens are estimated with
 * core's `Tokens.count` on the real prompts; answer tokens with the example answers' length (a low
 * estimate) and, as an upper bound, `maxCompletionTokens` (every call using its role's `maxTokens`).
 */
export const dryRun = (config: Config, options: Options = {}): Effect.Effect<DryRun, SynthesisError> =>
  Effect.scoped(
    Effect.map(generate(config, { ...options, progress: options.progress ?? Progress.silent }, true), (g) => ({
      personas: config.personas.count,
      usage: g.usage,
      dialogueTurns: g.engine.turns,
      failures: g.failures
    }))
  ).pipe(Effect.withSpan("Synthesis.dryRun"))

/** Rebuild and revalidate the instances from the raw file alone (no model is built or called). */
export const rebuild = (config: Config): Effect.Effect<Outcome, SynthesisError> =>
  Effect.gen(function*() {
    const prompts = yield* loadPrompts(config)
    const store = yield* RawStore.open(config.out, fingerprintOf(config, Object.values(prompts)), true)
    return yield* writeOutputs(config, store, [], {})
  })

/** The dry run as the lines the CLI prints. */
export const describeDryRun = (d: DryRun): string => {
  const rows = Object.entries(d.usage).map(([stage, u]) =>
    `${stage.padEnd(11)} ${String(u.calls - u.cachedCalls).padStart(9)} ${String(u.cachedCalls).padStart(8)} ${String(u.promptTokens).padStart(12)} ${String(u.completionTokens).padStart(12)} ${String(u.maxCompletionTokens).padStart(12)}  ${Progress.usd(u.usd)} (at most ${Progress.usd(u.maxUsd)})`
  )
  return [
    `dry run: ${d.personas} personas, nothing sent`,
    `${"stage".padEnd(11)} ${"calls".padStart(9)} ${"cached".padStart(8)} ${"prompt tok".padStart(12)} ${"answer tok".padStart(12)} ${"max answer".padStart(12)}  usd`,
    ...rows,
    `dialogues assumed to end after the dry-run number of turns (${d.dialogueTurns} turns in all); tokens are estimates (answers: the example answers' length)`,
    ...(d.failures.length > 0 ? [`warning: ${d.failures.length} units fail even on example answers, e.g. ${d.failures[0]!.stage} of ${d.failures[0]!.persona}: ${d.failures[0]!.reason}`] : [])
  ].join("\n")
}

