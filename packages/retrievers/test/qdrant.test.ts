import { Domain, Hash } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Embedding from "../src/Embedding.js"
import * as RetrieverOptions from "../src/RetrieverOptions.js"
import * as Selector from "../src/Selector.js"
import * as VectorStore from "../src/VectorStore.js"
import { countingEmbedder, env as testEnv } from "./support.js"

interface Call {
  readonly method: string
  readonly path: string
  readonly body: any
}

/**
 * A loopback stand-in for the parts of Qdrant's REST API the store uses: it records every call,
 * keeps points in memory and answers `points/query` with cosine scores under the payload filter.
 */
const fakeQdrant = () => {
  const calls: Array<Call> = []
  const collections = new Map<string, Map<string, { vector: Array<number>; payload: Record<string, unknown> }>>()
  const ok = (result: unknown) => JSON.stringify({ result, status: "ok", time: 0 })
  const server = http.createServer((req, res) => {
    let raw = ""
    req.on("data", (c) => (raw += c))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const body = raw.length > 0 ? JSON.parse(raw) : undefined
      calls.push({ method: req.method ?? "", path: url.pathname, body })
      const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(url.pathname)
      res.setHeader("content-type", "application/json")
      if (m === null) return res.writeHead(404).end(JSON.stringify({ status: { error: "not found" } }))
      const name = decodeURIComponent(m[1]!)
      const rest = m[2] ?? ""
      if (req.method === "PUT" && rest === "") {
        collections.set(name, new Map())
        return res.end(ok(true))
      }
      const points = collections.get(name)
      if (points === undefined)
        return res.writeHead(404).end(JSON.stringify({ status: { error: `Collection ${name} not found` } }))
      if (req.method === "DELETE" && rest === "") {
        collections.delete(name)
        return res.end(ok(true))
      }
      if (req.method === "PUT" && rest === "/index") return res.end(ok({ operation_id: 1, status: "completed" }))
      if (req.method === "PUT" && rest === "/points") {
        for (const p of body.points) points.set(String(p.id), { vector: p.vector, payload: p.payload })
        return res.end(ok({ operation_id: 2, status: "completed" }))
      }
      if (req.method === "POST" && rest === "/points/query") {
        const q: Array<number> = body.query
        const must = body.filter?.must ?? []
        const norm = (v: Array<number>) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
        const found = [...points.entries()]
          .filter(([, p]) => must.every((c: any) => p.payload[c.key] === c.match.value))
          .map(([id, p]) => ({
            id,
            version: 0,
            score: p.vector.reduce((s, x, i) => s + x * q[i]!, 0) / (norm(p.vector) * norm(q)),
            payload: p.payload
          }))
          .sort((a, b) => b.score - a.score)
          .slice(0, body.limit)
        return res.end(ok({ points: found }))
      }
      res.writeHead(400).end(JSON.stringify({ status: { error: `unexpected ${req.method} ${url.pathname}` } }))
    })
  })
  return { server, calls, collections }
}

const session = (index: number, user: string): Domain.SessionView => {
  const dialogue: ReadonlyArray<Domain.Message> = [{ role: "user", content: user }]
  return { id: Domain.sessionId(index), index, hash: Hash.contentHash(dialogue), dialogue }
}

/** Two histories of one persona (one query key); variant 1 differs in its last session. */
const queryFor = (variant: 0 | 1): Domain.Query => ({
  key: Domain.queryKey("p1"),
  request: "garden travel",
  sessions: [
    session(0, "invoice"),
    session(1, "garden"),
    session(2, "garden travel"),
    session(3, variant === 0 ? "recipe" : "recipe card")
  ]
})
const historyOf = (q: Domain.Query) =>
  RetrieverOptions.historyKey(
    q.sessions.map((s) => ({ id: s.id, index: s.index, key: `${s.hash}:dialogue`, text: "" }))
  )

const env = testEnv({ models: { topics: { embeddingModel: countingEmbedder("qdrant").service } } })

const listen = (server: http.Server) =>
  Effect.acquireRelease(
    Effect.async<string>((resume) => {
      server.listen(0, "127.0.0.1", () =>
        resume(Effect.succeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
      )
    }),
    () => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
  )

describe("Qdrant store (loopback server speaking Qdrant's REST API)", () => {
  it.effect("creates a collection, upserts with history payloads, queries with a filter, deletes at the end", () => {
    const fake = fakeQdrant()
    return Effect.gen(function* () {
      const url = yield* listen(fake.server)
      const options = {
        representation: "dialogue" as const,
        embedder: { use: "model" as const, model: "topics" },
        store: { use: "qdrant" as const, url, collection: "cupid-test" }
      }
      const memory = yield* Effect.scoped(
        Effect.flatMap(Embedding.plugin.make({ ...options, store: "memory" }), (s) =>
          s.retrieve({ query: queryFor(0) })
        )
      )
      const [first, second, again] = yield* Effect.scoped(
        Effect.gen(function* () {
          const service = yield* Embedding.plugin.make(options)
          expect(fake.collections.has("cupid-test")).toBe(true)
          return [
            yield* service.retrieve({ query: queryFor(0) }),
            yield* service.retrieve({ query: queryFor(1) }),
            yield* service.retrieve({ query: queryFor(0) })
          ] as const
        })
      )
      expect(first).toEqual(memory)
      expect(Selector.apply({ top: 2 }, first, queryFor(0)).selected).toEqual(["s2", "s3"])
      expect(again).toEqual(first)
      expect(Selector.apply({ top: 2 }, second, queryFor(1)).selected).toEqual(["s2", "s3"])
      const routes = fake.calls.map((c) => `${c.method} ${c.path}`)
      expect(routes).toEqual([
        "PUT /collections/cupid-test",
        "PUT /collections/cupid-test/index",
        "PUT /collections/cupid-test/points",
        "POST /collections/cupid-test/points/query",
        "PUT /collections/cupid-test/points",
        "POST /collections/cupid-test/points/query",
        "POST /collections/cupid-test/points/query",
        "DELETE /collections/cupid-test"
      ])
      expect(fake.calls[0]!.body.vectors).toEqual({ size: 5, distance: "Cosine" })
      expect(fake.calls[1]!.body).toMatchObject({ field_name: "history", field_schema: "keyword" })
      const upsert = fake.calls[2]!.body.points
      expect(upsert.map((p: any) => p.payload)).toEqual(
        ["s1", "s2", "s3", "s4"].map((session) => ({ history: historyOf(queryFor(0)), session }))
      )
      expect(upsert[0].id).toBe(VectorStore.pointId(historyOf(queryFor(0)), "s1"))
      expect(fake.calls[5]!.body.filter).toEqual({
        must: [{ key: "history", match: { value: historyOf(queryFor(1)) } }]
      })
      expect(fake.calls[5]!.body.limit).toBe(4)
      expect(fake.collections.has("cupid-test")).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(env))
  })

  it.effect("reports a server that refuses the collection as a plugin error naming the server", () => {
    const server = http.createServer((_req, res) =>
      res.writeHead(500).end(JSON.stringify({ status: { error: "disk full" } }))
    )
    return Effect.gen(function* () {
      const url = yield* listen(server)
      const error = yield* Effect.flip(
        Effect.scoped(
          Embedding.plugin.make({
            representation: "dialogue",
            embedder: { use: "model", model: "topics" },
            store: { use: "qdrant", url }
          })
        )
      )
      expect(error._tag).toBe("PluginError")
      expect(error.message).toContain(`qdrant ${url}`)
      expect(error.message).toContain("create collection failed")
    }).pipe(Effect.scoped, Effect.provide(env))
  })

  it("gives UUID-shaped, stable point ids", () => {
    expect(VectorStore.pointId("a:consistent", "s1")).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
    )
    expect(VectorStore.pointId("a:consistent", "s1")).toBe(VectorStore.pointId("a:consistent", "s1"))
    expect(VectorStore.pointId("history:a", "s1")).not.toBe(VectorStore.pointId("history:b", "s1"))
  })
})

const realUrl = process.env.QDRANT_URL
describe("Qdrant store against a real server", () => {
  it.skipIf(realUrl === undefined)(
    "ranks like the memory store (set QDRANT_URL, e.g. after `docker run -p 6333:6333 qdrant/qdrant`, to run)",
    async () => {
      const program = Effect.gen(function* () {
        const base = { representation: "dialogue" as const, embedder: { use: "model" as const, model: "topics" } }
        const memory = yield* Effect.scoped(
          Effect.flatMap(Embedding.plugin.make({ ...base, store: "memory" }), (s) => s.retrieve({ query: queryFor(0) }))
        )
        const viaQdrant = yield* Effect.scoped(
          Effect.flatMap(Embedding.plugin.make({ ...base, store: { use: "qdrant", url: realUrl! } }), (s) =>
            s.retrieve({ query: queryFor(0) })
          )
        )
        expect(viaQdrant.selected).toEqual(memory.selected)
        viaQdrant.ranking.forEach((r, i) => expect(r.score).toBeCloseTo(memory.ranking[i]!.score, 4))
      })
      await Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(env)))
    }
  )
})
