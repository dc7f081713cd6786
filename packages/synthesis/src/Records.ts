/**
 * The records a synthesis keeps: one Effect Schema each, used by the raw file's writer and reader.
 * `raw.jsonl` holds a header (the fingerprint of everything that shapes model calls) and one
 * record per finished unit: a persona, its factors, a session's texts, a preference's checklist, a
 * session's dialogue. Instances are rebuilt from these without any model call.
 *
 * @example
 * import { Records } from "@cupid-lab/synthesis"
 * Schema.decodeUnknownSync(Records.RawRecord)(JSON.parse(line))
 */
import { Schema } from "effect"

export const CareerLevel = Schema.Literal("entry", "mid", "senior")
export const TraitName = Schema.Literal("openness", "conscientiousness", "agreeableness", "neuroticism")
export const ValueName = Schema.Literal(
  "self-direction",
  "achievement",
  "universalism",
  "power",
  "stimulation",
  "benevolence",
  "security",
  "tradition",
  "conformity",
  "hedonism"
)
export const DecisionStyle = Schema.Literal("analytical", "directive", "conceptual", "behavioral")
export const Trait = Schema.Struct({ trait: TraitName, level: Schema.Literal("high", "low") })

/** What balanced sampling draws for one persona before the model expands it. */
export const PersonaTemplate = Schema.Struct({
  seed: Schema.String,
  careerLevel: CareerLevel,
  traits: Schema.Array(Trait),
  values: Schema.Array(ValueName),
  decisionStyle: DecisionStyle
})
export type PersonaTemplate = typeof PersonaTemplate.Type

const Text = Schema.String.pipe(Schema.nonEmptyString({ message: () => "expected a non-empty string" }))

export const Persona = Schema.Struct({ name: Text, description: Text })
export type Persona = typeof Persona.Type

/** One context factor as the factors stage returns it (snake_case, as the prompt asks). */
export const Factor = Schema.Struct({
  background: Text,
  factor_type: Text,
  task_types: Schema.Array(Text),
  name: Text,
  preference_type: Text,
  preference: Text,
  /** Only the last two factors (the contrastive pair): a preference that conflicts with `preference`. */
  changed_preference: Schema.optional(Text)
})
export type Factor = typeof Factor.Type

export const ResourceKind = Schema.Literal("code", "document", "data", "none")

/** What the sessions stage writes for one session (the request with its resource filled in). */
export const SessionText = Schema.Struct({
  task_type: Text,
  story: Text,
  request_with_preference: Text,
  request: Text,
  resource_kind: ResourceKind,
  resource: Schema.NullOr(Schema.String)
})
export type SessionText = typeof SessionText.Type

export const Message = Schema.Struct({ role: Schema.Literal("user", "assistant"), content: Schema.String })

/** One user-simulator turn: its score of the assistant's last answer and the items it hinted at (1-based). */
export const Judgement = Schema.Struct({ score: Schema.Number, hints: Schema.Array(Schema.Number) })

export const Dialogue = Schema.Struct({
  messages: Schema.Array(Message),
  judgements: Schema.Array(Judgement),
  /** The union of the items the user simulator said it hinted at, 1-based, ascending. */
  hinted: Schema.Array(Schema.Number),
  /** The items the validator model found hinted at, when `validation.modelCheck` is on. */
  modelHinted: Schema.optional(Schema.Array(Schema.Number))
})
export type Dialogue = typeof Dialogue.Type

export const RawRecord = Schema.Union(
  Schema.TaggedStruct("header", { fingerprint: Schema.String }),
  Schema.TaggedStruct("persona", { persona: Schema.Number, template: PersonaTemplate, value: Persona }),
  Schema.TaggedStruct("factors", { persona: Schema.Number, value: Schema.Array(Factor) }),
  Schema.TaggedStruct("session", { persona: Schema.Number, session: Schema.Number, value: SessionText }),
  Schema.TaggedStruct("checklist", {
    persona: Schema.Number,
    preference: Schema.String,
    value: Schema.Array(Schema.String)
  }),
  Schema.TaggedStruct("dialogue", { persona: Schema.Number, session: Schema.Number, value: Dialogue })
)
export type RawRecord = typeof RawRecord.Type

/** The stages of a synthesis, in order. */
export const StageName = Schema.Literal("persona", "factors", "sessions", "checklists", "dialogues", "instances")
export type StageName = typeof StageName.Type

/** A unit of work that did not finish this run: never cached, never stored in the raw file, retried on rerun. */
export const Failure = Schema.Struct({
  stage: StageName,
  persona: Schema.String,
  /** 1-based session position, for session and dialogue failures. */
  session: Schema.optional(Schema.Number),
  reason: Schema.String
})
export type Failure = typeof Failure.Type
