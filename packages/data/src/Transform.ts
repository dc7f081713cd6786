/**
 * Controlled history transforms: the paper's observational analyses (score against the position of
 * the relevant sessions, against history length) as interventions. A transform rewrites an
 * instance's prior sessions deterministically (seeded) without changing which sessions are relevant,
 * so the same instance can be run with its relevant sessions early or late, or buried in 120
 * distractors, or without its hard negatives.
 *
 * The parts of a {@link Spec} apply in a fixed order: `drop`, then `pad`, then `position`.
 * - `drop: contrastive | stale` (or a list): remove the hard negatives. Contrastive sessions are the
 *   sessions of factors that the persona's contrastive instance has and its consistent instance does
 *   not (CUPID's factor B); stale sessions are those labelled `stale`.
 * - `pad: N`: insert N distractor sessions drawn from *other* personas' histories (never the same
 *   persona's, never one whose factor is the current factor or whose text names it) at seeded
 *   positions. When the pool has fewer than N eligible sessions, it is drawn again in a new order.
 * - `position: early | middle | late | <1-based index>`: move the relevant sessions, as one block in
 *   their own order, to the start, middle or end of the history, or to start at that index; every
 *   other session keeps its relative order. Stale sessions never end up after a relevant one (a
 *   preference changes after it was held): those that would are placed just before the block.
 *
 * Session ids are renumbered by the new positions (`s1` ... `sN`); content hashes stay, so caches
 * keyed by session content still hit. `pad` and `drop: contrastive` need a {@link Pool} built in a
 * first pass over the dataset.
 *
 * @example
 * import { Transform } from "@cupid-lab/core"
 * const spec = { pad: 24, position: "early" } as const
 * const pool = Transform.pool(instances)                 // when Transform.needsPool(spec)
 * const moved = Transform.apply(instance, spec, { seed: 7, pool })  // Either<Instance, DatasetError>
 * Transform.label(spec) // "pad=24,position=early"
 */
import { Either, Schema } from "effect"
import { Domain, Errors, Hash, Random } from "@cupid-lab/core"

export const Dropped = Schema.Literal("contrastive", "stale")
export type Dropped = typeof Dropped.Type

export const Position = Schema.Union(
  Schema.Literal("early", "middle", "late"),
  Schema.Int.pipe(
    Schema.greaterThanOrEqualTo(1, { message: () => "expected early, middle, late or a 1-based position (>= 1)" })
  )
)
export type Position = typeof Position.Type

export const Spec = Schema.Struct({
  drop: Schema.optionalWith(Schema.Union(Dropped, Schema.Array(Dropped)), { exact: true }),
  pad: Schema.optionalWith(
    Schema.Int.pipe(Schema.between(0, 100_000, { message: () => "expected a whole number of sessions, 0 to 100000" })),
    { exact: true }
  ),
  position: Schema.optionalWith(Position, { exact: true })
})
export type Spec = typeof Spec.Type

/** The keys of a spec, in the order they apply. */
export const keys = ["drop", "pad", "position"] as const

const droppedOf = (spec: Spec): ReadonlyArray<Dropped> =>
  spec.drop === undefined ? [] : typeof spec.drop === "string" ? [spec.drop] : [...new Set(spec.drop)].sort()

/** The spec in canonical form: keys in application order, `drop` as a sorted list, `pad: 0` left out. */
export const normalize = (spec: Spec): Spec => {
  const drop = droppedOf(spec)
  return {
    ...(drop.length > 0 ? { drop } : {}),
    ...(spec.pad !== undefined && spec.pad > 0 ? { pad: spec.pad } : {}),
    ...(spec.position !== undefined ? { position: spec.position } : {})
  }
}

/** A spec that changes nothing. */
export const isIdentity = (spec: Spec): boolean => Object.keys(normalize(spec)).length === 0

/** `drop=contrastive+stale,pad=24,position=early`; `none` for the identity. */
export const label = (spec: Spec): string => {
  const n = normalize(spec)
  const parts = [
    ...(n.drop !== undefined ? [`drop=${droppedOf(n).join("+")}`] : []),
    ...(n.pad !== undefined ? [`pad=${n.pad}`] : []),
    ...(n.position !== undefined ? [`position=${n.position}`] : [])
  ]
  return parts.length === 0 ? "none" : parts.join(",")
}

/** Whether {@link apply} needs a {@link Pool} for this spec. */
export const needsPool = (spec: Spec): boolean => (spec.pad ?? 0) > 0 || droppedOf(spec).includes("contrastive")

interface Donor {
  readonly personaId: string
  readonly hash: string
  readonly factor: string
  readonly preference: string
  readonly dialogue: ReadonlyArray<Domain.Message>
  /** Lowercased dialogue text, to check that a donor never names the current factor. */
  readonly text: string
}

/** What `pad` and `drop: contrastive` need to know about the whole dataset. */
export interface Pool {
  /** Distinct sessions (by content hash) in first-seen order, at most `maxDonors`. */
  readonly donors: ReadonlyArray<Donor>
  /** Factors of each persona's consistent instance. */
  readonly consistentFactors: ReadonlyMap<string, ReadonlySet<string>>
}

/** How many distinct sessions a pool keeps at most (memory stays bounded on large datasets). */
export const maxDonors = 20_000

/** Builds a {@link Pool} incrementally, one instance at a time (a streaming first pass). */
export const poolBuilder = () => {
  const donors: Array<Donor> = []
  const seen = new Set<string>()
  const consistentFactors = new Map<string, Set<string>>()
  return {
    add: (instance: Domain.Instance): void => {
      if (instance.type === "consistent") {
        const set = consistentFactors.get(instance.personaId) ?? new Set<string>()
        for (const g of instance.gold.sessions) set.add(g.factor)
        consistentFactors.set(instance.personaId, set)
      }
      instance.query.sessions.forEach((s, i) => {
        if (donors.length >= maxDonors || seen.has(s.hash)) return
        seen.add(s.hash)
        const g = instance.gold.sessions[i]!
        donors.push({
          personaId: instance.personaId,
          hash: s.hash,
          factor: g.factor,
          preference: g.preference,
          dialogue: s.dialogue,
          text: s.dialogue
            .map((m) => m.content)
            .join("\n")
            .toLowerCase()
        })
      })
    },
    result: (): Pool => ({ donors, consistentFactors })
  }
}

/** A pool from instances in memory. */
export const pool = (instances: Iterable<Domain.Instance>): Pool => {
  const b = poolBuilder()
  for (const i of instances) b.add(i)
  return b.result()
}

interface Slot {
  readonly view: Omit<Domain.SessionView, "id" | "index">
  readonly gold: Omit<Domain.GoldSession, "id">
}

/** The seeded generator of one (transform, instance): the same for every cell that uses the transform. */
export const rngFor = (seed: number, instanceId: string, spec: Spec): (() => number) =>
  Random.mulberry32(
    Number.parseInt(Hash.sha256Hex(`${seed}\0${instanceId}\0${Hash.canonicalJson(normalize(spec))}`).slice(0, 8), 16)
  )

const shuffled = <A>(items: ReadonlyArray<A>, next: () => number): Array<A> => {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

const fail = (instance: Domain.Instance, field: string, reason: string) =>
  Either.left(new Errors.DatasetError({ source: `transform of ${instance.id}`, field, reason }))

const dropSlots = (
  instance: Domain.Instance,
  slots: ReadonlyArray<Slot>,
  drop: ReadonlyArray<Dropped>,
  pool: Pool | undefined
): Either.Either<ReadonlyArray<Slot>, Errors.DatasetError> => {
  let kept = slots
  if (drop.includes("stale")) kept = kept.filter((s) => s.gold.label !== "stale")
  if (drop.includes("contrastive") && instance.type === "contrastive") {
    const consistent = pool?.consistentFactors.get(instance.personaId)
    if (consistent === undefined) {
      return fail(
        instance,
        "drop",
        `"contrastive" needs the consistent instance of persona "${instance.personaId}" to tell its contrastive factor apart, and the dataset has none`
      )
    }
    kept = kept.filter((s) => s.gold.factor === instance.gold.factor || consistent.has(s.gold.factor))
  }
  return Either.right(kept)
}

const padSlots = (
  instance: Domain.Instance,
  slots: ReadonlyArray<Slot>,
  n: number,
  pool: Pool | undefined,
  next: () => number
): Either.Either<ReadonlyArray<Slot>, Errors.DatasetError> => {
  if (n === 0) return Either.right(slots)
  const names = new RegExp(
    `(^|[^\\p{L}\\p{N}])${instance.gold.factor.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\p{L}\\p{N}])`,
    "u"
  )
  const present = new Set(slots.map((s) => s.view.hash))
  const eligible = (pool?.donors ?? []).filter(
    (d) =>
      d.personaId !== instance.personaId &&
      d.factor !== instance.gold.factor &&
      !present.has(d.hash) &&
      !names.test(d.text)
  )
  if (eligible.length === 0) {
    return fail(
      instance,
      "pad",
      `no session of another persona is available to pad with (the dataset has ${new Set(pool?.donors.map((d) => d.personaId)).size} persona(s))`
    )
  }
  const drawn: Array<Donor> = []
  while (drawn.length < n) drawn.push(...shuffled(eligible, next).slice(0, n - drawn.length))
  const total = slots.length + n
  const donorAt = new Set(
    shuffled(
      Array.from({ length: total }, (_, i) => i),
      next
    ).slice(0, n)
  )
  const out: Array<Slot> = []
  let o = 0,
    d = 0
  for (let i = 0; i < total; i++) {
    if (donorAt.has(i)) {
      const donor = drawn[d++]!
      out.push({
        view: { hash: donor.hash, dialogue: donor.dialogue },
        gold: { factor: donor.factor, preference: donor.preference, label: "other" }
      })
    } else out.push(slots[o++]!)
  }
  return Either.right(out)
}

const positionSlots = (slots: ReadonlyArray<Slot>, position: Position): ReadonlyArray<Slot> => {
  const relevant = slots.filter((s) => s.gold.label === "relevant")
  if (relevant.length === 0) return slots
  const rest = slots.filter((s) => s.gold.label !== "relevant")
  const room = slots.length - relevant.length
  const start =
    position === "early"
      ? 0
      : position === "late"
        ? room
        : position === "middle"
          ? Math.floor(room / 2)
          : Math.min(position - 1, room)
  const before = rest.slice(0, start)
  const after = rest.slice(start)
  return [
    ...before,
    ...after.filter((s) => s.gold.label === "stale"),
    ...relevant,
    ...after.filter((s) => s.gold.label !== "stale")
  ]
}

/** The instance with its history rewritten; labels and the request are unchanged. */
export const apply = (
  instance: Domain.Instance,
  spec: Spec,
  context: { readonly seed: number; readonly pool?: Pool }
): Either.Either<Domain.Instance, Errors.DatasetError> => {
  const n = normalize(spec)
  if (isIdentity(n)) return Either.right(instance)
  if (needsPool(n) && context.pool === undefined)
    return fail(instance, label(n), "this transform needs a pool of the dataset's sessions (Transform.pool)")
  const next = rngFor(context.seed, instance.id, n)
  const slots: Array<Slot> = instance.query.sessions.map((s, i) => {
    const { id: _gid, ...gold } = instance.gold.sessions[i]!
    return { view: { hash: s.hash, dialogue: s.dialogue }, gold }
  })
  return Either.map(
    Either.flatMap(dropSlots(instance, slots, droppedOf(n), context.pool), (kept) =>
      padSlots(instance, kept, n.pad ?? 0, context.pool, next)
    ),
    (padded) => {
      const final = n.position === undefined ? padded : positionSlots(padded, n.position)
      const sessions = final.map((s, index) => ({ id: Domain.sessionId(index), index, ...s.view }))
      const gold = final.map((s, index) => ({ id: Domain.sessionId(index), ...s.gold }))
      return {
        ...instance,
        query: { ...instance.query, sessions },
        gold: { ...instance.gold, sessions: gold }
      }
    }
  )
}
