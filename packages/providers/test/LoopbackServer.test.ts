import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as LoopbackServer from "../src/testing/LoopbackServer.js"

const post = (url: string, body: unknown) =>
  Effect.promise(async () => {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    return { status: res.status, headers: res.headers, text: await res.text() }
  })

describe("LoopbackServer", () => {
  it.live("answers routes, scripted faults in order, records requests, and closes with its scope", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const server = yield* LoopbackServer.make({
        routes: {
          "POST /double": (body) => ({ value: (body as { value: number }).value * 2 }),
          "POST /broken": () => {
            throw new Error("handler bug")
          }
        },
        faults: [LoopbackServer.Faults.rateLimit({ retryAfterSeconds: 3, retryAfterMs: 2500 })]
      }).pipe(Scope.extend(scope))
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)

      const limited = yield* post(`${server.url}/double`, { value: 2 })
      expect([limited.status, limited.headers.get("retry-after"), limited.headers.get("retry-after-ms")]).toStrictEqual(
        [429, "3", "2500"]
      )
      expect(JSON.parse(limited.text)).toStrictEqual({ error: { message: "rate limit reached, slow down" } })

      expect(yield* post(`${server.url}/double?x=1`, { value: 21 })).toMatchObject({
        status: 200,
        text: '{"value":42}'
      })
      server.scriptFaults(LoopbackServer.Faults.serverError(503, "busy"), LoopbackServer.Faults.malformed())
      expect(yield* post(`${server.url}/double`, { value: 1 })).toMatchObject({
        status: 503,
        text: '{"error":{"message":"busy"}}'
      })
      const malformed = yield* post(`${server.url}/double`, { value: 1 })
      expect(malformed.status).toBe(200)
      expect(() => JSON.parse(malformed.text)).toThrow()
      expect(yield* post(`${server.url}/broken`, {})).toMatchObject({
        status: 500,
        text: '{"error":{"message":"handler failed: handler bug"}}'
      })
      expect(yield* post(`${server.url}/nowhere`, {})).toMatchObject({ status: 404 })

      server.scriptFaults(LoopbackServer.Faults.reset())
      const reset = yield* Effect.exit(post(`${server.url}/double`, { value: 1 }).pipe(Effect.orDie))
      expect(Exit.isFailure(reset)).toBe(true)

      expect(server.requests.map((r) => [r.index, r.path, r.fault])).toStrictEqual([
        [0, "/double", "rate-limit"],
        [1, "/double", undefined],
        [2, "/double", "server-error"],
        [3, "/double", "malformed"],
        [4, "/broken", undefined],
        [5, "/nowhere", undefined],
        [6, "/double", "reset"]
      ])
      expect(server.requests[1]!.body).toStrictEqual({ value: 21 })
      expect(server.requests[1]!.headers["content-type"]).toBe("application/json")

      yield* Scope.close(scope, Exit.void)
      const afterClose = yield* Effect.exit(
        Effect.tryPromise(() => fetch(`${server.url}/double`, { method: "POST", body: "{}" }))
      )
      expect(Exit.isFailure(afterClose)).toBe(true)
    })
  )

  it.scopedLive("matches :name segments and queries, sends Response answers as they are, keeps body bytes", () =>
    Effect.gen(function* () {
      const server = yield* LoopbackServer.make({
        routes: {
          "GET /items/special": () => ({ exact: true }),
          "GET /items/:id": (_body, request, params) => ({ params, query: request.query }),
          "GET /items/:id/raw": (_body, _request, { id }) =>
            new Response(`raw ${id}`, { status: 202, headers: { "content-type": "text/plain", "x-kind": "raw" } }),
          "PUT /blob": (_body, request) => ({ bytes: [...request.rawBytes] })
        }
      })
      const get = (path: string) =>
        Effect.promise(async () => {
          const res = await fetch(`${server.url}${path}`)
          return { status: res.status, type: res.headers.get("content-type"), text: await res.text() }
        })
      expect(JSON.parse((yield* get("/items/a%20b?limit=2&after=x&limit=3")).text)).toStrictEqual({
        params: { id: "a b" },
        query: { limit: "3", after: "x" }
      })
      expect(JSON.parse((yield* get("/items/special")).text)).toStrictEqual({ exact: true })
      expect(yield* get("/items/7/raw")).toStrictEqual({ status: 202, type: "text/plain", text: "raw 7" })
      expect((yield* get("/items/7/raw/more")).status).toBe(404)
      expect((yield* get("/items/")).status).toBe(404)
      const put = yield* Effect.promise(() =>
        fetch(`${server.url}/blob`, { method: "PUT", body: new Uint8Array([0, 255, 10]) }).then((r) => r.json())
      )
      expect(put).toStrictEqual({ bytes: [0, 255, 10] })
      expect(server.requests.map((r) => [r.path, r.body])).toContainEqual(["/blob", undefined])
    })
  )

  it.live("a slow answer that the client abandons is dropped, and closing does not wait for it", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const server = yield* LoopbackServer.make({
        routes: { "POST /x": () => ({}) },
        faults: [LoopbackServer.Faults.slow(60_000)]
      }).pipe(Scope.extend(scope))
      // Abandoned once the server holds the request (never on a timer: a busy machine may be slow to deliver it).
      const controller = new AbortController()
      const sent = fetch(`${server.url}/x`, { method: "POST", body: "{}", signal: controller.signal })
      yield* Effect.promise(async () => {
        while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10))
      })
      controller.abort()
      const aborted = yield* Effect.exit(Effect.tryPromise(() => sent))
      expect(Exit.isFailure(aborted)).toBe(true)
      expect(server.requests.map((r) => r.fault)).toStrictEqual(["slow"])
      yield* Scope.close(scope, Exit.void)
    })
  )
})
