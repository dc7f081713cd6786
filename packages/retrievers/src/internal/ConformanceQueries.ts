// The queries and instances the conformance suite hands a retriever: bare, deeply frozen copies of
// the visible query, deterministic session summaries, the twin of an instance (same visible text,
// other type and labels) and forged queries (dialogues swapped between sessions).
import { Domain } from "@cupid-lab/core"

export const deepFreeze = <A>(value: A): A => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}

/** The visible query as a fresh plain object: nothing else reachable from it. */
export const bareQuery = (q: Domain.Query): Domain.Query =>
  deepFreeze({
    key: q.key,
    request: q.request,
    sessions: q.sessions.map((s) => ({
      id: s.id,
      index: s.index,
      hash: s.hash,
      dialogue: s.dialogue.map((m) => ({ role: m.role, content: m.content }))
    }))
  })

/** Deterministic summaries built from the sessions, for retrievers that rank summaries. */
export const summariesOf = (q: Domain.Query): ReadonlyMap<string, Domain.SessionSummary> =>
  new Map(
    q.sessions.map((s) => [
      s.id,
      {
        sessionId: s.id,
        context: [Domain.sessionText(s, "first-user-message")],
        preferences: s.dialogue
          .filter((m) => m.role === "user")
          .slice(1, 2)
          .map((m) => m.content)
      }
    ])
  )

/**
 * The same visible history and request under another instance type, target and labels, built
 * through `Domain.fromRow` like every loaded instance: whatever the data path lets through to a
 * query, the twin differs in it only if that is gold- or type-derived.
 */
export const twin = (instance: Domain.Instance): Domain.Instance => {
  const row = Domain.toRow(instance)
  const other: Domain.CupidType = instance.type === "changing" ? "consistent" : "changing"
  return Domain.fromRow({
    ...row,
    instance_type: other,
    current_contextual_preference: `${row.current_contextual_preference} (twin)`,
    current_checklist: ["A twin checklist item?"],
    prior_interactions: row.prior_interactions.map((p, i) =>
      i % 2 === 0
        ? {
            ...p,
            context_factor: row.current_context_factor,
            contextual_preference: `${row.current_contextual_preference} (twin)`
          }
        : p
    )
  })
}

/**
 * The query with each session's dialogue replaced by another's, ids kept: the distinct dialogues in
 * reverse order (so repeated sessions stay repeats). `hashes: "honest"` gives each session the hash
 * of the dialogue it now carries; `"stale"` keeps the hash of the dialogue it had, which only a
 * build that has seen the original can mistake.
 */
export const forged = (query: Domain.Query, hashes: "honest" | "stale"): Domain.Query => {
  const distinct = [...new Map(query.sessions.map((s) => [s.hash, s])).values()]
  const donor = new Map(distinct.map((s, k) => [s.hash, distinct[distinct.length - 1 - k]!]))
  return deepFreeze({
    ...bareQuery(query),
    sessions: query.sessions.map((s) => {
      const d = donor.get(s.hash)!
      return {
        id: s.id,
        index: s.index,
        hash: hashes === "honest" ? d.hash : s.hash,
        dialogue: d.dialogue.map((m) => ({ ...m }))
      }
    })
  })
}
