/**
 * The viewer's HTTP server (`cupid-lab view`): the JSON API of docs/viewer.md over a {@link Catalog},
 * the page and its browser code, on the loopback interface by default. Dataset text stays inert: a
 * strict Content-Security-Policy on every response, and requests for another Host are refused (DNS
 * rebinding).
 *
 * @example
 * const { url } = yield* Server.start({ root: "runs", port: 0 }) // in a Scope
 */
import { FileSystem, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, type Scope } from "effect"
import * as http from "node:http"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ViewError, ViewerNotBuilt } from "./Errors.js"

import * as Catalog from "./Catalog.js"
import { type SortKey, sortKeys } from "./Instances.js"

export const contentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const securityHeaders = {
  "content-security-policy": contentSecurityPolicy,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/** Where tools/build-cli.mjs writes the browser code and style. */
const assetDir: string = fileURLToPath(new URL("../dist/", import.meta.url))

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cupid-lab results</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header><a href="#/" class="home">cupid-lab results</a><span id="where"></span></header>
<main id="main"><p>Loading…</p></main>
</body>
</html>
`

export interface Options {
  readonly root: string
  /** 0 picks a free port. */
  readonly port: number
  /** Default 127.0.0.1. */
  readonly host?: string
  readonly catalog?: Catalog.CatalogOptions
}

type Params = Readonly<Record<string, string | ReadonlyArray<string>>>

/** A query parameter; an empty one is not given. */
const param = (params: Params, key: string): string | undefined => {
  const v = params[key]
  const given = v === undefined || typeof v === "string" ? v : v[0]
  return given === "" ? undefined : given
}

const required = (params: Params, key: string): Effect.Effect<string, ViewError> => {
  const v = param(params, key)
  return v === undefined
    ? Effect.fail(new ViewError({ status: 400, message: `missing query parameter "${key}"` }))
    : Effect.succeed(v)
}

const whole = (params: Params, name: string): Effect.Effect<number | undefined, ViewError> => {
  const text = param(params, name)
  if (text === undefined) return Effect.succeed(undefined)
  const n = Number(text)
  return Number.isInteger(n) && n >= 0
    ? Effect.succeed(n)
    : Effect.fail(new ViewError({ status: 400, message: `${name} must be a whole number >= 0, got "${text}"` }))
}

const isSortKey = (s: string): s is SortKey => (sortKeys as ReadonlyArray<string>).includes(s)

const json = (body: unknown, status = 200) => HttpServerResponse.unsafeJson(body, { status })

const answer = <A, R>(effect: Effect.Effect<A, ViewError, R>) =>
  effect.pipe(
    Effect.map((body) => json(body)),
    Effect.catchTag("ViewError", (e) => Effect.succeed(json({ error: e.message }, e.status)))
  )

const router = (catalog: Catalog.Catalog, assets: { readonly js: string; readonly css: string }) => {
  const withQuery = <A>(f: (p: Params) => Effect.Effect<A, ViewError>) =>
    answer(Effect.flatMap(HttpServerRequest.ParsedSearchParams, f))
  const ofRun = <A>(f: (run: string) => Effect.Effect<A, ViewError>) =>
    withQuery((p) => Effect.flatMap(required(p, "run"), f))
  const ofInstance = <A>(f: (run: string, id: string) => Effect.Effect<A, ViewError>) =>
    withQuery((p) => Effect.flatMap(required(p, "run"), (run) => Effect.flatMap(required(p, "id"), (id) => f(run, id))))
  const file = (body: string, contentType: string) => Effect.succeed(HttpServerResponse.text(body, { contentType }))
  return HttpRouter.empty.pipe(
    HttpRouter.get("/", Effect.succeed(HttpServerResponse.html(page))),
    HttpRouter.get("/app.js", file(assets.js, "text/javascript; charset=utf-8")),
    HttpRouter.get("/app.css", file(assets.css, "text/css; charset=utf-8")),
    // Browsers ask for it on their own; there is none.
    HttpRouter.get("/favicon.ico", Effect.succeed(HttpServerResponse.empty({ status: 204 }))),
    HttpRouter.get("/api/runs", answer(catalog.list)),
    HttpRouter.get("/api/run", ofRun(catalog.detail)),
    HttpRouter.get("/api/verdict", ofRun(catalog.verdict)),
    HttpRouter.get("/api/figures", ofRun(catalog.figures)),
    HttpRouter.get("/api/pairwise", ofRun(catalog.pairwise)),
    HttpRouter.get(
      "/api/instances",
      withQuery((p) =>
        Effect.gen(function* () {
          const run = yield* required(p, "run")
          const sort = param(p, "sort")
          if (sort !== undefined && !isSortKey(sort)) {
            return yield* new ViewError({
              status: 400,
              message: `sort must be one of ${sortKeys.join(", ")}; got "${sort}"`
            })
          }
          return yield* catalog.instances(run, {
            type: param(p, "type"),
            cell: param(p, "cell"),
            failed: param(p, "failed") === "1",
            a: param(p, "a"),
            b: param(p, "b"),
            q: param(p, "q"),
            sort,
            desc: param(p, "desc") === "1",
            offset: yield* whole(p, "offset"),
            limit: yield* whole(p, "limit")
          })
        })
      )
    ),
    HttpRouter.get("/api/instance", ofInstance(catalog.instance)),
    HttpRouter.get("/api/calls", ofInstance(catalog.calls)),
    HttpRouter.get(
      "/api/compare",
      withQuery((p) =>
        Effect.gen(function* () {
          return yield* catalog.compare(
            { run: yield* required(p, "a"), cell: yield* required(p, "ca") },
            { run: yield* required(p, "b"), cell: yield* required(p, "cb") }
          )
        })
      )
    )
  )
}

const bracketed = (host: string) => (host.includes(":") ? `[${host}]` : host)

/** The names a browser may use for the server; any when it listens on every interface (0.0.0.0 or ::). */
const allowedHosts = (host: string, port: number): Set<string> | undefined => {
  if (host === "0.0.0.0" || host === "::") return undefined
  const names = new Set([`${bracketed(host)}:${port}`])
  if (host === "127.0.0.1" || host === "::1" || host === "localhost") {
    for (const h of ["127.0.0.1", "localhost", "[::1]"]) names.add(`${h}:${port}`)
  }
  return names
}

/** Start the viewer in the current scope; it stops when the scope closes. */
export const start = Effect.fn("Server.start")(function* (
  options: Options
): Effect.fn.Return<
  { readonly url: string; readonly root: string },
  ViewerNotBuilt | Error,
  Scope.Scope | FileSystem.FileSystem
> {
  const fileSystem = yield* FileSystem.FileSystem
  const read = (name: string) =>
    fileSystem
      .readFileString(path.join(assetDir, name))
      .pipe(Effect.mapError(() => new ViewerNotBuilt({ path: path.join(assetDir, name) })))
  const assets = { js: yield* read("app.js"), css: yield* read("app.css") }
  const catalog = yield* Catalog.make(options.root, options.catalog)
  const host = options.host ?? "127.0.0.1"
  const server = yield* NodeHttpServer.make(() => http.createServer(), { port: options.port, host }).pipe(
    Effect.mapError((e) => new Error(`cannot listen on ${host}:${options.port}: ${String(e.cause ?? e)}`))
  )
  const address = server.address
  const port = address._tag === "TcpAddress" ? address.port : options.port
  const hosts = allowedHosts(host, port)
  const app = yield* HttpRouter.toHttpApp(router(catalog, assets))
  const guarded = Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const hostHeader = request.headers["host"]
    if (hosts !== undefined && (hostHeader === undefined || !hosts.has(hostHeader))) {
      return HttpServerResponse.text(`refused: this viewer answers requests for ${[...hosts].join(", ")} only`, {
        status: 421
      })
    }
    return yield* app.pipe(
      Effect.catchTag("RouteNotFound", () => Effect.succeed(json({ error: `no such page: ${request.url}` }, 404)))
    )
  })
  yield* server.serve(Effect.map(guarded, HttpServerResponse.setHeaders(securityHeaders)))
  return { url: `http://${bracketed(host)}:${port}/`, root: catalog.root }
})
