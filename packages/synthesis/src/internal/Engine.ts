// How a synthesis generates one persona: each unit (persona, factors, session, checklist, dialogue)
// is read from the raw file or made with one or more model calls and appended to it at once; a unit
// that fails becomes a recorded failure and the persona goes on with what it can.
import { Hash, LanguageModel, PromptTemplate, Usage } from "@cupid-lab/core"
import type { Cost } from "@cupid-lab/scorers"

import { Data, Effect, Either } from "effect"
import * as Instances from "../Instances.js"
import type * as Records from "../Records.js"
import * as Stages from "../Stages.js"
import type { Config, Role } from "../SynthConfig.js"
import * as Template from "../Template.js"
import { placeholderDialogue, placeholderSession } from "./Assemble.js"
import type * as RawStore from "./RawStore.js"
import { keyOf } from "./RawStore.js"
import { seeds as bundledSeeds } from "./Seeds.js"
import { addUsage, type Prompts, type Tally } from "./Setup.js"

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
