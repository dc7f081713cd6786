// Reading a persona's data back from the raw file, and the placeholder values whose keys name its
// session and dialogue records.
import * as Instances from "../Instances.js"
import type * as Records from "../Records.js"
import type { Config } from "../SynthConfig.js"
import * as Template from "../Template.js"
import { keyOf } from "./RawStore.js"

export const placeholderSession: Records.SessionText = {
  task_type: "",
  story: "",
  request_with_preference: "",
  request: "",
  resource_kind: "none",
  resource: null
}
export const placeholderDialogue: Records.Dialogue = { messages: [], judgements: [], hinted: [] }

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
