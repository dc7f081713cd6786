/**
 * The `errors` command: an error analysis as in the CUPID paper's Table 2. `sample` draws a
 * seeded coding sheet of one model's low-F1 inferences from a run (CSV, its codes, an HTML page);
 * `tabulate` reads coded sheets and gives each code's share per model with a Wilson 95% interval.
 * The work is the results package's `ErrorSheet` and `ErrorTable`, loaded when a subcommand runs.
 *
 * @example
 * npx cupid-lab errors sample --run runs/paper-ablations/latest --model subject --n 50 --below 0.2 --seed 1
 * npx cupid-lab errors tabulate --sheet coded.csv --sheet more.csv --out table.md
 */
import { Command, Options } from "@effect/cli"
import { Files } from "@cupid-lab/core"
import { Effect, Option } from "effect"
import { CommandIo, dataOption, invalid, positive, runDirectory, runOption, usage } from "./Io.js"

const results = Effect.promise(() => import("@cupid-lab/results"))

const sample = Command.make(
  "sample",
  {
    run: runOption,
    model: Options.text("model").pipe(
      Options.withPseudoName("entry | model id"),
      Options.withDescription(
        "the model whose inferences to sample: a models: entry the run's cells are bound to (summary.json's cells[].models), or its model id"
      )
    ),
    n: Options.integer("n").pipe(
      Options.withPseudoName("n"),
      Options.mapEffect(positive("n")),
      Options.withDefault(50),
      Options.withDescription("at most this many instances (default 50; `--n` works too)")
    ),
    below: Options.float("below").pipe(
      Options.withPseudoName("f1"),
      Options.mapEffect((b) =>
        b > 0 && b <= 1 ? Effect.succeed(b) : invalid(`--below expects an F1 in (0, 1], got "${b}"`)
      ),
      Options.withDefault(0.2),
      Options.withDescription("only inferences whose per-instance F1 (inference.f1) is below this (default 0.2)")
    ),
    seed: Options.integer("seed").pipe(
      Options.withPseudoName("s"),
      Options.withDescription(
        "the sample's seed: the same run, model, --below, --n and seed give the same rows and bytes"
      )
    ),
    out: Options.text("out").pipe(
      Options.withPseudoName("file.csv"),
      Options.optional,
      Options.withDescription(
        "the sheet's CSV; its codes go beside it as <name>.codes.csv and its page as <name>.html (default <run>/errors/<model>-below<f1>-seed<s>.csv). A file with other content is never overwritten"
      )
    ),
    data: dataOption(
      "the dataset to read requests and gold preferences from, when the source the run recorded does not open from here (its fingerprint must be the run's)"
    ),
    viewerUrl: Options.text("viewer-url").pipe(
      Options.withPseudoName("url"),
      Options.mapEffect((u) =>
        /^https?:\/\//.test(u) ? Effect.succeed(u) : invalid(`--viewer-url expects an http(s) URL, got "${u}"`)
      ),
      Options.withDefault("http://127.0.0.1:8377/"),
      Options.withDescription("where `cupid-lab view` serves, for the links to each instance")
    ),
    viewerRoot: Options.text("viewer-root").pipe(
      Options.withPseudoName("dir"),
      Options.withDefault("runs"),
      Options.withDescription(
        "the directory `cupid-lab view --root` serves, which names the run in the links (default runs)"
      )
    )
  },
  Effect.fn("Errors.sample")(function* (a) {
    const io = yield* CommandIo
    const { ErrorSheet } = yield* results
    const open = io.runner?.openDataset
    const sheet = yield* ErrorSheet.sample(yield* runDirectory(a.run), {
      model: a.model,
      n: a.n,
      below: a.below,
      seed: a.seed,
      viewerUrl: a.viewerUrl,
      viewerRoot: a.viewerRoot,
      ...(Option.isSome(a.data) ? { data: a.data.value } : {}),
      ...(open === undefined ? {} : { openDataset: (source: string) => open(source, { onInvalid: "skip" }) })
    })
    const files = yield* ErrorSheet.write(sheet, Option.getOrUndefined(a.out))
    const c = sheet.counts
    io.stdout(
      `sheet: ${files.csv}\ncodes: ${files.codes}\npage: ${files.html}\n` +
        `${sheet.rows.length} of ${c.eligible} inferences of ${a.model} with F1 below ${a.below} (seed ${a.seed}); ` +
        `its ${c.cells} cell${c.cells === 1 ? "" : "s"} have ${c.lines} lines: ${c.failed} failed, ${c.unscored} without an F1, ${c.above} at or above ${a.below}\n` +
        (sheet.heuristic ? "the F1 is heuristic (an offline matcher), not the paper's metric\n" : "") +
        (sheet.viewer.note === undefined ? "" : `${sheet.viewer.note}\n`)
    )
  })
).pipe(
  Command.withDescription(
    "write a coding sheet of one model's low-F1 inferences (a seeded sample): CSV with empty code and note columns, the allowed codes, and an HTML page"
  )
)

const tabulate = Command.make(
  "tabulate",
  {
    sheets: Options.text("sheet").pipe(
      Options.withPseudoName("file.csv"),
      Options.repeated,
      Options.withDescription("a coded sheet (from errors sample); repeat for more")
    ),
    out: Options.text("out").pipe(
      Options.withPseudoName("file.md"),
      Options.optional,
      Options.withDescription("also write the table as Markdown here")
    )
  },
  Effect.fn("Errors.tabulate")(function* (a) {
    const io = yield* CommandIo
    if (a.sheets.length === 0) return yield* usage("tabulate needs at least one --sheet <coded csv>")
    const { ErrorTable, Errors } = yield* results
    const read = yield* Effect.forEach(a.sheets, (s) => ErrorTable.read(s))
    const text = ErrorTable.markdown(yield* ErrorTable.tabulate(read))
    io.stdout(text)
    if (Option.isSome(a.out)) {
      const file = a.out.value
      yield* Files.writeFileAtomic(file, text).pipe(
        Effect.mapError((e) => new Errors.SheetError({ path: file, reason: `cannot write: ${Files.describe(e)}` }))
      )
      io.stdout(`table: ${file}\n`)
    }
  })
).pipe(
  Command.withDescription(
    "read coded sheets and give the share of each error code per model with a Wilson 95% interval, the number coded and the rows not coded yet"
  )
)

/**
 * `errors sample --n 50` as the docs write it: @effect/cli spells a one-letter option with one dash
 * (`-n`), so in `errors sample` a `--n` (or `--n=50`) is read as `-n`.
 */
export const spelledArgs = (argv: ReadonlyArray<string>): ReadonlyArray<string> =>
  argv[0] === "errors" && argv[1] === "sample"
    ? argv.map((a) => (a === "--n" ? "-n" : a.startsWith("--n=") ? `-n=${a.slice(4)}` : a))
    : argv

/** `errors sample | tabulate`. */
export const command = Command.make("errors", {}, () => usage("errors needs a subcommand: sample or tabulate")).pipe(
  Command.withDescription(
    "error analysis as in the CUPID paper's Table 2: sample low-F1 inferences into a coding sheet, then tabulate the coded sheets"
  ),
  Command.withSubcommands([sample, tabulate])
)
