import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { CommandIo, positive } from "./Io.js"

export const command = Command.make(
  "view",
  {
    root: Options.text("root").pipe(
      Options.withPseudoName("dir"),
      Options.withDefault("runs"),
      Options.withDescription(
        "the directory of runs to serve (every directory below it holding a summary.json is a run)"
      )
    ),
    port: Options.integer("port").pipe(
      Options.withDefault(8377),
      Options.mapEffect((n) => (n === 0 ? Effect.succeed(0) : positive("port")(n))),
      Options.withDescription("the port to listen on; 0 picks a free one")
    ),
    host: Options.text("host").pipe(
      Options.withDefault("127.0.0.1"),
      Options.withDescription(
        "the address to listen on; the default serves this machine only (runs hold dataset text: think before serving them wider)"
      )
    )
  },
  Effect.fn("View.command")(
    function* (a) {
      const io = yield* CommandIo
      const Server = yield* Effect.promise(() => import("@cupid-lab/viewer").then((m) => m.Server))
      const started = yield* Server.start({ root: a.root, port: a.port, host: a.host })
      io.stdout(`viewer: ${started.url} (runs under ${started.root}; Ctrl-C stops it)\n`)
      return yield* Effect.never
    },
    (effect) => Effect.scoped(effect)
  )
).pipe(
  Command.withDescription(
    "serve a local results viewer over a directory of runs: run list, tables, instance browser, instance pages, two cells side by side"
  )
)
