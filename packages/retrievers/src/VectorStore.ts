/**
 * Where the dense retrievers keep session vectors, chosen by the `store` option:
 *
 * - `memory` (the default): exact cosine similarity against every session of the instance. Right
 *   for per-user histories, which are small.
 * - `{ use: qdrant, url, collection? }`: a Qdrant server (through @qdrant/js-client-rest). One
 *   collection per run, created when the retriever is built and deleted when its scope closes.
 *   Each point carries its instance and session id as payload; every query filters on the
 *   instance, so a query only ever sees its own history. An API key, when the server needs one, is
 *   read from `QDRANT_API_KEY`. Start a local server with `docker run -p 6333:6333 qdrant/qdrant`.
 *
 * @example
 * // config: retriever: { use: embedding, store: { use: qdrant, url: "http://localhost:6333" } }
 * import { VectorStore } from "@cupid-lab/retrievers"
 * const store = yield* VectorStore.make("memory", Effect.succeed(128), "embedding")
 * const scores = yield* store.rank("p1:consistent", [{ id: "s1", vector }], queryVector)
 */
import { Errors, Hash } from "@cupid-lab/core"
import type { QdrantClient } from "@qdrant/js-client-rest"
import { Config, Effect, Option, Redacted, Schema, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { cosine } from "./Embedder.js"

export const QdrantSpec = Schema.Struct({
  use: Schema.Literal("qdrant"),
  /** e.g. `http://localhost:6333`. */
  url: Schema.String,
  /** Collection name; default: a fresh `cupid-lab-<random>` name per run. Dropped at the end either way. */
  collection: Schema.optional(Schema.String)
})

export const Spec = Schema.Union(Schema.Literal("memory"), QdrantSpec)
export type Spec = typeof Spec.Type

export const option = Schema.optionalWith(Spec, { default: () => "memory" as const })

export interface SessionVector {
  readonly id: string
  readonly vector: Float32Array
}

export interface Store {
  readonly name: string
  /**
   * Cosine similarity of every session of one history to the query vector. `history` identifies
   * the history's content ({@link RetrieverOptions.historyKey}): equal keys mean the same sessions,
   * so a store may keep the vectors of a history it has seen.
   */
  readonly rank: (
    history: string,
    sessions: ReadonlyArray<SessionVector>,
    query: Float32Array
  ) => Effect.Effect<ReadonlyArray<readonly [string, number]>, Errors.StageError>
}

export const memory: Store = {
  name: "memory",
  rank: (_history, sessions, query) => Effect.succeed(sessions.map((s) => [s.id, cosine(s.vector, query)] as const))
}

/** Qdrant point ids are unsigned integers or UUIDs: a UUID-shaped digest of (history, session). */
export const pointId = (history: string, sessionId: string): string => {
  const h = Hash.sha256Hex(`${history}\u0000${sessionId}`)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`
}

const isZero = (v: Float32Array) => v.every((x) => x === 0)

const UPSERT_BATCH = 256

/** A store backed by a Qdrant collection that lives as long as the enclosing scope. */
export const qdrant = (
  spec: typeof QdrantSpec.Type,
  dimensions: number,
  plugin: string
): Effect.Effect<Store, Errors.PluginError, Scope.Scope> =>
  Effect.gen(function* () {
    const apiKey = yield* Config.option(Config.redacted("QDRANT_API_KEY")).pipe(
      Effect.orElseSucceed(() => Option.none())
    )
    // The client (and its HTTP stack) loads only when a Qdrant store is configured.
    const { QdrantClient: Client } = yield* Effect.promise(() => import("@qdrant/js-client-rest"))
    const client: QdrantClient = new Client({
      url: spec.url,
      checkCompatibility: false,
      ...(Option.isSome(apiKey) ? { apiKey: Redacted.value(apiKey.value) } : {})
    })
    const collection = spec.collection ?? `cupid-lab-${randomUUID().slice(0, 8)}`
    const call = <A>(what: string, f: () => Promise<A>) =>
      Effect.tryPromise({
        try: f,
        catch: (e) =>
          `qdrant ${spec.url} (${collection}): ${what} failed: ${e instanceof Error ? e.message : String(e)}`
      })

    yield* Effect.acquireRelease(
      Effect.gen(function* () {
        yield* call("create collection", () =>
          client.createCollection(collection, { vectors: { size: dimensions, distance: "Cosine" } })
        )
        yield* call("create payload index", () =>
          client.createPayloadIndex(collection, { field_name: "history", field_schema: "keyword", wait: true })
        )
      }).pipe(Effect.mapError((reason) => new Errors.PluginError({ plugin, reason }))),
      () =>
        call("delete collection", () => client.deleteCollection(collection)).pipe(
          Effect.catchAll((reason) => Effect.logWarning(reason))
        )
    )

    const stored = new Set<string>()
    const upsert = (history: string, sessions: ReadonlyArray<SessionVector>) =>
      Effect.suspend(() => {
        if (stored.has(history)) return Effect.void
        const batches: Array<ReadonlyArray<SessionVector>> = []
        for (let i = 0; i < sessions.length; i += UPSERT_BATCH) batches.push(sessions.slice(i, i + UPSERT_BATCH))
        return Effect.zipRight(
          Effect.forEach(
            batches,
            (batch) =>
              call("upsert", () =>
                client.upsert(collection, {
                  wait: true,
                  points: batch.map((s) => ({
                    id: pointId(history, s.id),
                    vector: Array.from(s.vector),
                    payload: { history, session: s.id }
                  }))
                })
              ),
            { discard: true }
          ),
          Effect.sync(() => stored.add(history))
        )
      })

    const rank: Store["rank"] = (history, sessions, query) =>
      Effect.gen(function* () {
        if (sessions.length === 0) return []
        // Cosine against a zero vector is undefined; the memory store calls it 0, and so do we.
        if (isZero(query)) return sessions.map((s) => [s.id, 0] as const)
        yield* upsert(history, sessions)
        const found = yield* call("query", () =>
          client.query(collection, {
            query: Array.from(query),
            filter: { must: [{ key: "history", match: { value: history } }] },
            limit: sessions.length,
            with_payload: true
          })
        )
        const scores = new Map<string, number>()
        for (const p of found.points) {
          const session = (p.payload as { session?: unknown } | null | undefined)?.session
          if (typeof session === "string") scores.set(session, Number.isFinite(p.score) ? p.score : 0)
        }
        // A session the server did not return (e.g. a zero vector) ranks last: cosine's lower bound.
        return sessions.map((s) => [s.id, scores.get(s.id) ?? -1] as const)
      }).pipe(Effect.mapError((reason) => new Errors.StageError({ stage: "retrieve", plugin, reason })))

    return { name: `qdrant(${spec.url}/${collection})`, rank }
  })

/** Build the store a spec describes; `dimensions` is only evaluated for stores that need it. */
export const make = (
  spec: Spec,
  dimensions: Effect.Effect<number, Errors.ModelError>,
  plugin: string
): Effect.Effect<Store, Errors.PluginError, Scope.Scope> =>
  spec === "memory"
    ? Effect.succeed(memory)
    : Effect.flatMap(
        Effect.mapError(
          dimensions,
          (e) => new Errors.PluginError({ plugin, reason: `could not learn the embedding width: ${e.message}` })
        ),
        (d) => qdrant(spec, d, plugin)
      )
