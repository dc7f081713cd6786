/**
 * The `http` stages against loopback services: the retriever conformance suite on a service that
 * ranks by position; what a body holds; answers that break the protocol (a stage failure naming
 * the url, the field and what was expected, never cached); retries on 429 and 5xx honouring
 * Retry-After; the cache; headers from the environment, whose values never reach a message or a
 * transcript; ingest once per history however many pairs ask at once; a dry run sends nothing.
 */
import { Corpus, Domain, type Errors, ModelCache, Models, Plugin, Usage } from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { HttpSystem } from "@cupid-lab/providers"
import { LoopbackServer } from "@cupid-lab/providers/testing"
import { Conformance } from "@cupid-lab/retrievers/testing"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Exit, Layer, Schema, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

const decodeQuery = Schema.decodeUnknownSync(HttpSystem.Query)

/** Scores each session by its position: the most recent first, as `recency` ranks. */
const byPosition = (body: unknown) => ({
  ranking: decodeQuery(body).sessions.map((s) => ({ id: s.id, score: s.position }))
})

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
const shared = await Effect.runPromise(
  Scope.extend(LoopbackServer.make({ routes: { "POST /rank": byPosition, "POST /rank/ingest": () => ({}) } }), scope)
)

Conformance.suite({ plugin: HttpSystem.retriever, options: { url: `${shared.url}/rank` } })
Conformance.suite({
  plugin: HttpSystem.retriever,
  options: { url: `${shared.url}/rank`, representation: "user-turns", ingest: true },
  largeHistory: 2_000
})
Conformance.suite({
  plugin: HttpSystem.retriever,
  options: { url: `${shared.url}/rank`, representation: "summary" },
  largeHistory: 500
})

const instance = (persona: string, sessions = 3): Domain.Instance =>
  Domain.fromRow({
    persona_id: persona,
    instance_type: "changing",
    current_request: `Write the agenda for ${persona}.`,
    current_context_factor: "GOLD-FACTOR",
    current_contextual_preference: "GOLD-PREFERENCE",
    current_checklist: ["GOLD-CHECK"],
    prior_interactions: Array.from({ length: sessions }, (_, i) => ({
      context_factor: `GOLD-F${i}`,
      contextual_preference: `GOLD-P${i}`,
      dialogue: [
        { role: "user" as const, content: `${persona} asks for item ${i}.` },
        { role: "assistant" as const, content: `Here is item ${i}.` },
        { role: "user" as const, content: `Shorter next time, ${i}.` }
      ]
    }))
  })

const fast = { retryBaseMs: 1, retryMaxMs: 5, timeoutMs: 10_000 }

/** Build a stage the way the runner does: decode, then make, with headers read from `env` only. */
const build = <S extends Plugin.PipelineStage>(
  plugin: Plugin.Of<S>,
  raw: Record<string, unknown>,
  env: Record<string, string> = {}
) =>
  Effect.gen(function* () {
    const decoded = plugin.decode(raw)
    if (Either.isLeft(decoded)) return yield* Effect.die(new Error(JSON.stringify(decoded.left.issues)))
    return yield* decoded.right.make
  }).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))

/** What a plugin's make may use: no models, and a cache in memory shared by everything a test builds. */
const models = (dryRun = false) =>
  Layer.mergeAll(
    Models.layer({}, { dryRun }),
    Corpus.layerFromQueries([], "none"),
    Layer.succeed(Plugin.Plugins, Plugin.makeRegistry([])),
    NodeContext.layer
  ).pipe(Layer.provideMerge(ModelCache.layerMemory))

const retrieverOf = (raw: Record<string, unknown>, env?: Record<string, string>) =>
  Effect.map(build(HttpSystem.retriever, raw, env), (b) => {
    if (b.needsGold) throw new Error("the http retriever reads no gold")
    return b.service
  })

const failureOf = <A>(effect: Effect.Effect<A, Errors.StageError>) =>
  Effect.flip(effect).pipe(Effect.map((e) => e.message))

describe("http retriever: the body", () => {
  it.scoped("holds the request, the sessions' positions and messages, and opaque ids; no label, no dataset id", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({ routes: { "POST /rank": byPosition } })
      const service = yield* retrieverOf({ url: `${server.url}/rank`, representation: "user-turns" })
      const i = instance("persona-canary")
      const r = yield* service.retrieve({ query: i.query })
      expect(r.ranking.map((x) => x.sessionId)).toEqual(["s3", "s2", "s1"])
      const body = decodeQuery(server.requests[0]!.body)
      expect(body.request).toBe(i.query.request)
      expect(body.sessions.map((s) => [s.id, s.position])).toEqual([
        ["s1", 1],
        ["s2", 2],
        ["s3", 3]
      ])
      expect(body.sessions[0]!.dialogue).toEqual([
        { role: "user", content: "persona-canary asks for item 0." },
        { role: "user", content: "Shorter next time, 0." }
      ])
      expect(body.instance).toMatch(/^i[0-9a-f]{24}$/)
      expect(body.history).toMatch(/^h[0-9a-f]{24}$/)
      const raw = server.requests[0]!.rawBody
      for (const gold of ["GOLD", "changing", i.id, i.query.key]) expect(raw).not.toContain(gold)
      expect(server.requests[0]!.headers["content-type"]).toBe("application/json")
    }).pipe(Effect.provide(models()))
  )
})

describe("http retriever: answers that break the protocol", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ["not JSON", "oops", "the body is not JSON"],
    ["no ranking", { results: [] }, "field ranking: is missing"],
    [
      "a score that is no number",
      { ranking: [{ id: "s1", score: "high" }] },
      "field ranking[0].score: Expected number"
    ],
    [
      "an unknown id",
      { ranking: [{ id: "s9", score: 1 }] },
      'field ranking[0].id: "s9" is not a session that was sent'
    ],
    [
      "an id twice",
      {
        ranking: [
          { id: "s1", score: 1 },
          { id: "s1", score: 0 }
        ]
      },
      'field ranking[1].id: "s1" is ranked twice'
    ]
  ]
  for (const [name, answer, expected] of cases) {
    it.scoped(`${name}: a stage failure naming the url, the field and what was expected; not cached`, () =>
      Effect.gen(function* () {
        const server = yield* LoopbackServer.make({
          routes: { "POST /rank": () => (typeof answer === "string" ? new Response(answer) : answer) }
        })
        const service = yield* retrieverOf({ url: `${server.url}/rank` })
        const query = instance("p").query
        const message = yield* failureOf(service.retrieve({ query }))
        expect(message).toContain(`retrieve (http): ${server.url}/rank answered with a body that does not follow`)
        expect(message).toContain(expected)
        if (!expected.includes(".id:"))
          expect(message).toContain('expected {"ranking": [{"id": "s1", "score": 0.9}, ...]}')
        yield* failureOf(service.retrieve({ query }))
        expect(server.requests).toHaveLength(2)
      }).pipe(Effect.provide(models()))
    )
  }
})

describe("http retriever: retries, cache and headers", () => {
  it.scoped("honours Retry-After on a 429", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({
        routes: { "POST /rank": byPosition },
        faults: [LoopbackServer.Faults.rateLimit({ retryAfterSeconds: 0 })]
      })
      // Without Retry-After the backoff would wait up to ten minutes: honouring it is what ends this test.
      const options = { url: `${server.url}/rank`, maxRetries: 1, retryBaseMs: 600_000, retryMaxMs: 600_000 }
      const service = yield* retrieverOf(options)
      expect((yield* service.retrieve({ query: instance("p").query })).ranking).toHaveLength(3)
      expect(server.requests.map((r) => r.fault ?? "answered")).toEqual(["rate-limit", "answered"])
    }).pipe(Effect.provide(models()))
  )

  it.scoped("retries a 5xx, records the call with its body and answer, and caches the answer", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({
        routes: { "POST /rank": byPosition },
        faults: [LoopbackServer.Faults.serverError(503)]
      })
      const service = yield* retrieverOf({ url: `${server.url}/rank`, maxRetries: 2, ...fast })
      const query = instance("p").query
      const [first, calls] = yield* Usage.track(service.retrieve({ query }))
      expect(first.ranking).toHaveLength(3)
      expect(server.requests).toHaveLength(2)
      expect(calls.map((c) => [c.kind, c.provider, c.model, c.cached, c.requests])).toEqual([
        ["service", "http", `${server.url}/rank`, false, 2]
      ])
      expect(calls[0]!.detail?.wire).toEqual({ url: `${server.url}/rank`, body: server.requests[1]!.body })
      expect(calls[0]!.detail?.answer?.text).toBe(JSON.stringify(byPosition(server.requests[1]!.body)))
      expect(calls[0]!.detail?.reading).toMatchObject({ ok: true })
      const [again, cached] = yield* Usage.track(service.retrieve({ query }))
      expect(again).toEqual(first)
      expect(server.requests).toHaveLength(2)
      expect(cached.map((c) => [c.cached, c.requests])).toEqual([[true, 0]])
      // Another revision of the service is another cache key.
      const revised = yield* retrieverOf({ url: `${server.url}/rank`, revision: "v2", ...fast })
      yield* revised.retrieve({ query })
      expect(server.requests).toHaveLength(3)
    }).pipe(Effect.provide(models()))
  )

  it.scoped("a server error after the retries names the url and the status", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({
        routes: { "POST /rank": byPosition },
        faultFor: () => LoopbackServer.Faults.serverError(502, "upstream down")
      })
      const service = yield* retrieverOf({ url: `${server.url}/rank`, maxRetries: 1, ...fast })
      const message = yield* failureOf(service.retrieve({ query: instance("p").query }))
      expect(message).toContain(`POST ${server.url}/rank: server error`)
      expect(message).toContain("gave up after 2 attempts (HTTP 502)")
    }).pipe(Effect.provide(models()))
  )

  it.scoped("sends headers from the environment; their values are in no message and no transcript", () =>
    Effect.gen(function* () {
      const secret = "canary-secret-9f3Kq7Zp2Lx"
      const server = yield* LoopbackServer.make({
        routes: { "POST /rank": byPosition },
        faults: [LoopbackServer.Faults.status(400, { error: `bad token Bearer ${secret}` })]
      })
      const options = {
        url: `${server.url}/rank`,
        headers: { Authorization: { env: "MEMORY_TOKEN", prefix: "Bearer " } },
        maxRetries: 0
      }
      const service = yield* retrieverOf(options, { MEMORY_TOKEN: secret })
      const query = instance("p").query
      const [message, calls] = yield* Usage.track(failureOf(service.retrieve({ query })))
      expect(server.requests[0]!.headers["authorization"]).toBe(`Bearer ${secret}`)
      expect(message).toContain("request rejected")
      expect(message).toContain("[redacted]")
      expect(message).not.toContain(secret.slice(0, 12))
      expect(JSON.stringify(calls)).not.toContain(secret.slice(0, 12))
      const missing = yield* Effect.flip(retrieverOf(options, {}))
      expect(missing.message).toContain("headers.Authorization: environment variable MEMORY_TOKEN is not set")
      const pasted = HttpSystem.retriever.decode({ ...options, headers: { Authorization: `Bearer ${secret}` } })
      expect(Either.isLeft(pasted) && JSON.stringify(pasted.left)).not.toContain(secret)
    }).pipe(Effect.provide(models()))
  )
})

describe("http retriever: ingest", () => {
  it.scoped("posts each history to url/ingest once, before its first query, however many pairs ask at once", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const server = yield* LoopbackServer.make({
        routes: {
          "POST /rank": (body) => {
            order.push(`query ${decodeQuery(body).history}`)
            return byPosition(body)
          },
          "POST /rank/ingest": (body) => {
            order.push(`ingest ${(body as { history: string }).history}`)
            return {}
          }
        },
        faults: [LoopbackServer.Faults.slow(200)]
      })
      const service = yield* retrieverOf({ url: `${server.url}/rank`, ingest: true, concurrency: 8 })
      // Three requests over one history (a persona's instances), and one over another.
      const base = instance("p").query
      const queries = [0, 1, 2].map((n) => ({ ...base, request: `${base.request} ${n}` }))
      yield* Effect.forEach([...queries, instance("q").query], (query) => service.retrieve({ query }), {
        concurrency: "unbounded"
      })
      const ingests = server.requests.filter((r) => r.path === "/rank/ingest")
      expect(ingests).toHaveLength(2)
      for (const r of ingests) {
        const history = (r.body as { history: string }).history
        expect(order.indexOf(`ingest ${history}`)).toBeLessThan(order.indexOf(`query ${history}`))
        expect((r.body as { sessions: ReadonlyArray<unknown> }).sessions).toHaveLength(3)
      }
      expect(server.requests.filter((r) => r.path === "/rank")).toHaveLength(4)
    }).pipe(Effect.provide(models()))
  )
})

describe("http inferrer and generator", () => {
  it.scoped("send the request and the evidence; the generator sends the inferred preference only when asked", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({
        routes: {
          "POST /infer": () => ({ preference: "  Short agendas.  ", analysis: "they said so" }),
          "POST /generate": () => ({ response: "An agenda." })
        }
      })
      const evidence = { sessions: instance("p").query.sessions.slice(1) }
      const inferrer = yield* build(HttpSystem.inferrer, { url: `${server.url}/infer` })
      expect(yield* inferrer.infer({ request: "Write it.", evidence })).toEqual({
        preference: "Short agendas.",
        analysis: "they said so"
      })
      const sent = decodeQuery(server.requests[0]!.body)
      expect(sent.sessions.map((s) => s.position)).toEqual([2, 3])
      const withPreference = yield* build(HttpSystem.generator, {
        url: `${server.url}/generate`,
        preference: "inferred"
      })
      expect(withPreference.usesGoldPreference).toBe(false)
      expect(yield* withPreference.generate({ request: "Write it.", evidence, preference: "Short." })).toEqual({
        text: "An agenda."
      })
      expect(decodeQuery(server.requests[1]!.body).preference).toBe("Short.")
      const without = yield* build(HttpSystem.generator, { url: `${server.url}/generate` })
      yield* without.generate({ request: "Write it.", evidence, preference: "Short." })
      expect(decodeQuery(server.requests[2]!.body).preference).toBeUndefined()
      const message = yield* failureOf(withPreference.generate({ request: "Write it.", evidence }))
      expect(message).toContain("no inferred preference was passed")
    }).pipe(Effect.provide(models()))
  )

  it.scoped("an empty preference is a failure naming the field", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({ routes: { "POST /infer": () => ({ preference: " " }) } })
      const inferrer = yield* build(HttpSystem.inferrer, { url: `${server.url}/infer` })
      const message = yield* failureOf(inferrer.infer({ request: "r", evidence: { sessions: [] } }))
      expect(message).toContain(`infer (http): ${server.url}/infer answered with a body that does not follow`)
      expect(message).toContain("field preference: expected a non-empty text")
    }).pipe(Effect.provide(models()))
  )

  it.scoped("a dry run sends nothing, and needs no header variable", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({ routes: { "POST /rank": byPosition } })
      const options = { url: `${server.url}/rank`, headers: { "X-Key": { env: "UNSET_VARIABLE" } }, ingest: true }
      const service = yield* retrieverOf(options, {})
      const [r, calls] = yield* Usage.track(service.retrieve({ query: instance("p").query }))
      expect(r.ranking.map((x) => x.sessionId)).toEqual(["s3", "s2", "s1"])
      expect(server.requests).toHaveLength(0)
      expect(calls.map((c) => [c.kind, c.cached])).toEqual([["service", false]])
    }).pipe(Effect.provide(models(true)))
  )
})

describe("the protocol's JSON Schema", () => {
  it("docs/schemas/http-system.schema.json is the one the schemas make", () => {
    const file = path.join(import.meta.dirname, "..", "..", "..", "docs", "schemas", "http-system.schema.json")
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(HttpSystem.jsonSchema())
  })
})
