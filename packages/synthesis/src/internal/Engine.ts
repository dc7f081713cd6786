// How a synthesis generates one persona: each unit (persona, factors, session, checklist, dialogue)
// is read from the raw file or made with one or more model calls and appended to it at once; a unit
// that fails becomes a recorded failure and the persona goes on with what it can.
import { Hash, LanguageModel, Plugin, PromptTemplate, Usage, type Models } from "@cupid-lab/core"
import { Cost } from "@cupid-lab/scorers"

import { Data, Effect, Either } from "effect"
import { SynthConfigError } from "../Errors.js"
import * as Instances from "../Instances.js"
import type * as Records from "../Records.js"
import * as Stages from "../Stages.js"
import type { StageUsage } from "../Synthesis.js"
import type { Config, Role } from "../SynthConfig.js"
import * as Template from "../Template.js"
import type * as RawStore from "./RawStore.js"
import { keyOf } from "./RawStore.js"
import { seeds as bundledSeeds } from "./Seeds.js"

export interface Tally {
  readonly byStage: Map<
    string,
    {
      calls: number
      cachedCalls: number
      promptTokens: number
      completionTokens: number
      micro: number
      maxCompletion: number
      maxMicro: number
    }
  >
}

export const addUsage = (
  tally: Tally,
  prices: Readonly<Record<string, Cost.Price>>,
  entries: ReadonlyArray<Usage.UsageEntry>,
  maxTokens: number
) => {
  for (const e of entries) {
    for (const key of [e.stage, "total"]) {
      const t = tally.byStage.get(key) ?? {
        calls: 0,
        cachedCalls: 0,
        promptTokens: 0,
        completionTokens: 0,
        micro: 0,
        maxCompletion: 0,
        maxMicro: 0
      }
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

export const usageOf = (tally: Tally): Record<string, StageUsage> => {
  const out: Record<string, StageUsage> = {}
  for (const stage of ["persona", "factors", "sessions", "checklists", "assistant", "user", "validator", "total"]) {
    const t = tally.byStage.get(stage)
    if (t !== undefined)
      out[stage] = {
        calls: t.calls,
        cachedCalls: t.cachedCalls,
        promptTokens: t.promptTokens,
        completionTokens: t.completionTokens,
        usd: t.micro / 1e6,
        maxCompletionTokens: t.maxCompletion,
        maxUsd: t.maxMicro / 1e6
      }
  }
  return out
}

/** Provider options that change how calls are sent, not what they answer: left out of the fingerprint. */
const transportOptions = new Set([
  "concurrency",
  "rpm",
  "timeoutMs",
  "maxRetries",
  "retryBaseMs",
  "retryMaxMs",
  "baseURL",
  "apiKeyEnv",
  "batchSize"
])

export const fingerprintOf = (config: Config, prompts: ReadonlyArray<PromptTemplate.Template>): string =>
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
          {
            provider: m.provider,
            model: m.model,
            options: Object.fromEntries(Object.entries(m.options).filter(([k]) => !transportOptions.has(k)))
          }
        ])
      ),
      prompts: prompts.map((p) => p.text)
    })
  ).slice(0, 16)

export const buildModels = (config: Config, providers: ReadonlyArray<Plugin.AnyPlugin>, dryRun: boolean) =>
  Effect.gen(function* () {
    const registry = Plugin.makeRegistry(providers)
    const bundles: Record<string, Models.ModelBundle> = {}
    const used = new Set(Object.values(config.roles).map((r) => r.model))
    // Every model's key variable: no model's messages may show another's key either (providers add their own).
    const secretVariables = [
      ...new Set(
        Object.values(config.models).flatMap((m) =>
          typeof m.options["apiKeyEnv"] === "string" ? [m.options["apiKeyEnv"]] : []
        )
      )
    ]
    for (const [name, spec] of Object.entries(config.models)) {
      if (!used.has(name)) continue
      const at = `models.${name}`
      const fail = (p: string, reason: string) => new SynthConfigError({ file: config.file, path: p, reason })
      const plugin = yield* registry
        .provider(spec.provider)
        .pipe(Effect.mapError((e) => fail(`${at}.provider`, e.reason)))
      const decoded = plugin.decode(spec.options)
      if (Either.isLeft(decoded)) {
        const issue = decoded.left.issues[0]
        return yield* fail([at, ...(issue?.path ?? []).map(String)].join("."), issue?.message ?? "invalid options")
      }
      bundles[name] = yield* decoded.right.make(spec.model, { dryRun, secretVariables }).pipe(
        Effect.mapError((e) => fail(at, `cannot build the model: ${e.reason}`)),
        Effect.catchAllDefect((d) => fail(at, `cannot build the model: ${d instanceof Error ? d.message : String(d)}`))
      )
    }
    return bundles
  })

export type Prompts = Readonly<
  Record<"persona" | "factors" | "session" | "checklist" | "user" | "assistant" | "hintCheck", PromptTemplate.Template>
>

export const loadPrompts = (config: Config) =>
  Effect.gen(function* () {
    const load = (s: Pick<Stages.Stage<unknown, never>, "name" | "file" | "required" | "optional">) =>
      Stages.loadPrompt(s, config.prompts, config.file)
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
  PromptTemplate.renderText(t, values)

const numbered = (items: ReadonlyArray<string>) => items.map((x, i) => `${i + 1}. ${x}`).join("\n")

export interface Engine {
  readonly config: Config
  readonly dryRun: boolean
  readonly store: RawStore.RawStore
  readonly prompts: Prompts
  readonly lms: Readonly<Record<Role, LanguageModel.Service>>
  readonly failures: Array<Records.Failure>
  readonly tally: Tally
  readonly prices: Readonly<Record<string, Cost.Price>>
  /** Runs after every call (progress). */
  readonly onCall: Effect.Effect<void>
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
    accept: (text) => Either.isRight(stage.parse(text, context)),
    read: (text) => LanguageModel.reading(stage.parse(text, context))
  }
  const fail = (reason: string) => new UnitFailed({ failure: { ...where, reason } })
  return Usage.trackExit(
    Usage.withStage(role === "checklist" ? "checklists" : role, engine.lms[role].complete(request))
  ).pipe(
    Effect.tap(({ usage }) =>
      Effect.zipRight(
        Effect.sync(() => addUsage(engine.tally, engine.prices, usage, settings.maxTokens)),
        engine.onCall
      )
    ),
    Effect.flatMap(({ exit }) => exit),
    Effect.mapError((e) => fail(`${role} model: ${e.message}`)),
    Effect.flatMap((c) =>
      Either.match(stage.parse(c.text, context), { onLeft: (r) => Effect.fail(fail(r)), onRight: Effect.succeed })
    ),
    Effect.catchAllDefect((d) =>
      Effect.fail(fail(`${role} call failed unexpectedly: ${d instanceof Error ? d.message : String(d)}`))
    )
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
  Effect.gen(function* () {
    const { maxTurns, dryRunTurns } = engine.config.dialogue
    const messages: Array<{ role: "user" | "assistant"; content: string }> = [{ role: "user", content: opening }]
    const judgements: Array<{ score: number; hints: ReadonlyArray<number> }> = []
    const system = render(engine.prompts.assistant, {})
    let last = 0
    for (let turn = 1; turn <= maxTurns; turn++) {
      const answer = yield* call(
        engine,
        "assistant",
        Stages.assistant,
        undefined,
        [{ role: "system", content: system }, ...messages],
        where
      )
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
          const userTurns = messages
            .filter((m) => m.role === "user")
            .map((m, i) => `${i + 1}. ${m.content}`)
            .join("\n")
          modelHinted = yield* call(
            engine,
            "validator",
            Stages.hintCheck,
            { items: checklist.length },
            [
              {
                role: "user",
                content: render(engine.prompts.hintCheck, { checklist: numbered(checklist), user_turns: userTurns })
              }
            ],
            where
          )
        }
        return {
          messages,
          judgements,
          hinted,
          ...(modelHinted === undefined ? {} : { modelHinted: [...modelHinted].sort((a, b) => a - b) })
        }
      }
    }
    return yield* new UnitFailed({
      failure: {
        ...where,
        reason: `the user simulator did not end the dialogue within maxTurns (${maxTurns}); its last score was ${last}`
      }
    })
  })

/** Generate (or find in the raw file) every record of persona `index`; failures are recorded, never raised. */
export const generatePersona = (engine: Engine, index: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    const { config } = engine
    const id = Instances.personaId(index)
    const template = Template.persona(config.seed, seedsOf(config), index)
    const personaRecord = yield* stored(
      engine,
      `${index}\u0000persona`,
      Effect.gen(function* () {
        const prompt = render(engine.prompts.persona, {
          seed: template.seed,
          career_level: template.careerLevel,
          traits: template.traits.map((t) => `${t.level} ${t.trait}`).join(", "),
          values: template.values.join(", "),
          decision_style: template.decisionStyle
        })
        const value = yield* call(engine, "persona", Stages.persona, undefined, [{ role: "user", content: prompt }], {
          stage: "persona",
          persona: id
        })
        return { _tag: "persona" as const, persona: index, template, value }
      })
    )
    const persona = personaRecord.value
    const personaText = `${persona.name}. ${persona.description}`
    const factors = (yield* stored(
      engine,
      `${index}\u0000factors`,
      Effect.gen(function* () {
        const prompt = render(engine.prompts.factors, { persona: personaText, count: String(config.factors.count) })
        const value = yield* call(
          engine,
          "factors",
          Stages.factors,
          { count: config.factors.count },
          [{ role: "user", content: prompt }],
          {
            stage: "factors",
            persona: id
          }
        )
        return { _tag: "factors" as const, persona: index, value }
      })
    )).value
    const plan = Template.sessions(config.seed, index, config.sessions, factors.length)
    const data = { index, id, persona, factors, plan, sessions: [], checklists: new Map(), dialogues: [] }
    const a = factors[plan.current]!
    const total = plan.slots.length
    // Sessions, each on its own: one failing does not stop the others.
    const sessions = yield* Effect.forEach(
      plan.slots,
      (slot, s) => {
        const factor = factors[slot.factor]!
        const preference = Instances.preferenceOf(data, slot)
        const last = s === total - 1
        const where = { stage: "sessions" as const, persona: id, session: s + 1 }
        return stored(
          engine,
          keyOf({ _tag: "session", persona: index, session: s, value: placeholderSession }),
          Effect.gen(function* () {
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
            const context = {
              preference,
              factor: factor.name,
              alsoForbidden: last ? [a.preference, a.changed_preference ?? a.preference] : []
            }
            const value = yield* call(
              engine,
              "sessions",
              Stages.session,
              context,
              [{ role: "user", content: prompt }],
              where
            )
            return { _tag: "session" as const, persona: index, session: s, value }
          })
        ).pipe(
          Effect.map((r) => r.value),
          Effect.tapError(recordFailure(engine)),
          Effect.option
        )
      },
      { concurrency: config.concurrency.sessions }
    )
    // Checklists of every preference the instances use.
    const preferences = [
      ...new Set([
        ...plan.slots.slice(0, -1).map((slot) => Instances.preferenceOf(data, slot)),
        a.preference,
        a.changed_preference ?? a.preference
      ])
    ]
    const checklists = new Map<string, ReadonlyArray<string>>()
    yield* Effect.forEach(
      preferences,
      (preference) =>
        stored(
          engine,
          `${index}\u0000checklist\u0000${preference}`,
          Effect.gen(function* () {
            const prompt = render(engine.prompts.checklist, { preference })
            const value = yield* call(
              engine,
              "checklist",
              Stages.checklist,
              undefined,
              [{ role: "user", content: prompt }],
              {
                stage: "checklists",
                persona: id
              }
            )
            return { _tag: "checklist" as const, persona: index, preference, value }
          })
        ).pipe(
          Effect.tap((r) => Effect.sync(() => checklists.set(preference, r.value))),
          Effect.tapError(recordFailure(engine)),
          Effect.ignore
        ),
      { concurrency: config.concurrency.sessions }
    )
    // Dialogues of the prior sessions whose texts and checklists exist.
    yield* Effect.forEach(
      plan.slots.slice(0, -1),
      (slot, s) => {
        const text = sessions[s]!
        const preference = Instances.preferenceOf(data, slot)
        const checklist = checklists.get(preference)
        if (text._tag === "None" || checklist === undefined) return Effect.void
        const where = { stage: "dialogues" as const, persona: id, session: s + 1 }
        return stored(
          engine,
          keyOf({ _tag: "dialogue", persona: index, session: s, value: placeholderDialogue }),
          Effect.map(
            makeDialogue(
              engine,
              persona,
              factors[slot.factor]!,
              preference,
              checklist,
              Stages.fillResource(text.value),
              where
            ),
            (value) => ({ _tag: "dialogue" as const, persona: index, session: s, value })
          )
        ).pipe(Effect.tapError(recordFailure(engine)), Effect.ignore)
      },
      { concurrency: config.concurrency.sessions }
    )
  }).pipe(Effect.catchAll(recordFailure(engine)))

const placeholderSession: Records.SessionText = {
  task_type: "",
  story: "",
  request_with_preference: "",
  request: "",
  resource_kind: "none",
  resource: null
}
const placeholderDialogue: Records.Dialogue = { messages: [], judgements: [], hinted: [] }

/** A persona's data from the raw file, when every record of it is there. */
export const assemble = (
  config: Config,
  store: { readonly get: (key: string) => Records.RawRecord | undefined },
  index: number
): Instances.PersonaData | undefined => {
  const persona = store.get(`${index}\u0000persona`)
  const factors = store.get(`${index}\u0000factors`)
  if (persona?._tag !== "persona" || factors?._tag !== "factors") return undefined
  const plan = Template.sessions(config.seed, index, config.sessions, factors.value.length)
  const base = { index, id: Instances.personaId(index), persona: persona.value, factors: factors.value, plan }
  const sessions: Array<Records.SessionText> = []
  const dialogues: Array<Records.Dialogue> = []
  const checklists = new Map<string, ReadonlyArray<string>>()
  for (let s = 0; s < plan.slots.length; s++) {
    const r = store.get(keyOf({ _tag: "session", persona: index, session: s, value: placeholderSession }))
    if (r?._tag !== "session") return undefined
    sessions.push(r.value)
    if (s < plan.slots.length - 1) {
      const d = store.get(keyOf({ _tag: "dialogue", persona: index, session: s, value: placeholderDialogue }))
      if (d?._tag !== "dialogue") return undefined
      dialogues.push(d.value)
    }
  }
  const data: Instances.PersonaData = { ...base, sessions, dialogues, checklists }
  const a = factors.value[plan.current]!
  const used = new Set([
    ...plan.slots.map((slot) => Instances.preferenceOf(data, slot)),
    a.preference,
    a.changed_preference ?? a.preference
  ])
  for (const preference of used) {
    const c = store.get(`${index}\u0000checklist\u0000${preference}`)
    if (c?._tag !== "checklist") return undefined
    checklists.set(preference, c.value)
  }
  return data
}
