/**
 * The `data` command of the cupid-lab command line: inspect a data source, download the Hugging
 * Face dataset into the cache, or generate a synthetic dataset. Its options are declared here with
 * `@effect/cli` (every one documented in `--help`); the work runs in `@cupid-lab/data`'s `Tasks`,
 * loaded only when a subcommand runs.
 *
 * @example
 * npx cupid-lab data inspect --data sample
 * npx cupid-lab data download --data hf:kixlab/CUPID
 * npx cupid-lab data generate --out /tmp/syn.jsonl --personas 100 --sessions 50 --seed 3
 */
import { Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Console, Effect, Either, Option } from "effect"
import { Domain } from "@cupid-lab/core"

/** Show a usage problem the parser could not catch, and fail as the parser does. */
const usage = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.zipRight(Console.error(`${message}\n`), Effect.fail(ValidationError.invalidArgument(HelpDoc.p(message))))

const invalid = (message: string) => Effect.fail(ValidationError.invalidValue(HelpDoc.p(message)))

const work = Effect.promise(() => import("@cupid-lab/data").then((m) => m.Tasks))

const number = (flag: string) => (raw: string) => {
  const n = Number(raw)
  return raw.trim() === "" || !Number.isFinite(n)
    ? invalid(`--${flag}: expected a number, found "${raw}"`)
    : Effect.succeed(n)
}

const numberOption = (flag: string, description: string) =>
  Options.text(flag).pipe(
    Options.withPseudoName("n"),
    Options.mapEffect(number(flag)),
    Options.optional,
    Options.withDescription(description)
  )

const textOption = (flag: string, pseudo: string, description: string) =>
  Options.text(flag).pipe(Options.withPseudoName(pseudo), Options.optional, Options.withDescription(description))

// Which of these the source has is checked when it is opened (Dataset.benchmarkTypes); loading
// Dataset here would load every reader before --help.
const parseTypes = (raw: string): Effect.Effect<ReadonlyArray<string>, ValidationError.ValidationError> => {
  const given = raw
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
  return given.length === 0
    ? invalid(`--types: expected one or more instance types, found "${raw}"`)
    : Effect.succeed(given)
}

const types = Options.text("types").pipe(
  Options.withPseudoName("t,..."),
  Options.mapEffect(parseTypes),
  Options.optional,
  Options.withDescription(
    `only these instance types, comma-separated: CUPID's ${Domain.cupidTypes.join(", ")}, or the source's benchmark's (docs/data.md) (default: all)`
  )
)
const cacheDir = textOption(
  "cache-dir",
  "dir",
  "where hf: sources are cached (default: $CUPID_CACHE_DIR or .cache/cupid)"
)
const hfEndpoint = textOption(
  "hf-endpoint",
  "url",
  "the Hugging Face hub to download from (default: https://huggingface.co)"
)

const sources =
  "sample (dev split), sample-test (test split), a .parquet/.jsonl/.json file, a directory of .json files, " +
  "hf:kixlab/CUPID, hf:kixlab/CUPID-Unverified, synthetic:personas=100,sessions=50,seed=3, " +
  "longmemeval:<file>, locomo:<file>, prefeval:<dir>"

const print = (lines: ReadonlyArray<string>) => Console.log(lines.join("\n"))

// Object.fromEntries forgets the keys' types; the filter only drops undefined values.
const defined = <A extends Record<string, unknown>>(record: A): { [K in keyof A]?: Exclude<A[K], undefined> } =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as {
    [K in keyof A]?: Exclude<A[K], undefined>
  }

const inspect = Command.make(
  "inspect",
  {
    data: Options.text("data").pipe(
      Options.withPseudoName("source"),
      Options.withDefault("sample"),
      Options.withDescription(`the data source: ${sources}`)
    ),
    types,
    onInvalid: Options.text("on-invalid").pipe(
      Options.withPseudoName("fail | skip"),
      Options.mapEffect((s) =>
        s === "fail" || s === "skip"
          ? Effect.succeed<"fail" | "skip">(s)
          : invalid(`--on-invalid: expected fail or skip, found "${s}"`)
      ),
      Options.withDefault("fail" as const),
      Options.withDescription(
        "what a row that breaks the schema does: stop with its file, row and field (fail, the default), or get skipped and listed (skip)"
      )
    ),
    limit: numberOption("limit", "only the first n instances after the type filter"),
    cacheDir,
    hfEndpoint
  },
  (a) =>
    Effect.flatMap(work, (w) =>
      w.inspect(a.data, {
        onInvalid: a.onInvalid,
        ...defined({
          types: Option.getOrUndefined(a.types),
          limit: Option.getOrUndefined(a.limit),
          cacheDir: Option.getOrUndefined(a.cacheDir),
          hfEndpoint: Option.getOrUndefined(a.hfEndpoint)
        })
      })
    ).pipe(Effect.flatMap(print))
).pipe(
  Command.withDescription(
    "counts, lengths, token and label statistics of a data source, and where its relevant sessions sit"
  )
)

const download = Command.make(
  "download",
  {
    data: Options.text("data").pipe(
      Options.withPseudoName("hf:owner/name"),
      Options.mapEffect((s) =>
        s.startsWith("hf:")
          ? Effect.succeed(s)
          : invalid(`--data: expected an hf: source such as hf:kixlab/CUPID, found "${s}"`)
      ),
      Options.withDescription(
        "the dataset to fetch: hf:kixlab/CUPID, hf:kixlab/CUPID-Unverified (the test split, or the only split, its card or file list names) or hf:<owner>/<name>/<path in repo>"
      )
    ),
    cacheDir,
    hfEndpoint
  },
  (a) =>
    Effect.flatMap(work, (w) =>
      w.download(
        a.data,
        defined({ cacheDir: Option.getOrUndefined(a.cacheDir), hfEndpoint: Option.getOrUndefined(a.hfEndpoint) })
      )
    ).pipe(Effect.flatMap(print))
).pipe(
  Command.withDescription(
    "fetch an hf: dataset into the cache; prints which files were chosen and why, each cached file and its SHA-256"
  )
)

const generate = Command.make(
  "generate",
  {
    out: Options.text("out").pipe(
      Options.withPseudoName("file.jsonl"),
      Options.withDescription("the JSON-lines file to write (required)")
    ),
    personas: numberOption("personas", "personas, one row per persona and instance type (default 10)"),
    sessions: numberOption("sessions", "prior sessions per instance, 8 to 10000 (default 8)"),
    seed: numberOption("seed", "the generator's seed (default 0)"),
    position: textOption(
      "position",
      "p",
      "where relevant sessions sit: spread, early, late or recent (default spread)"
    ),
    contrastiveShare: numberOption("contrastive-share", "share of contrastive sessions, 0 to 0.75 (default 0.1)"),
    staleShare: numberOption("stale-share", "share of stale sessions, 0 to 0.75 (default 0.1)"),
    types,
    difficulty: textOption(
      "difficulty",
      "d",
      "hard (default: realistic text) or easy (the artifact-rich version-1 text)"
    ),
    spec: textOption(
      "spec",
      "k=v,...",
      "any other generator key, as in a synthetic: source (e.g. relevant=2,topic=0.5)"
    )
  },
  Effect.fn("Data.generate")(function* (a) {
    const w = yield* work
    const decoded = w.generateOptions(
      defined({
        spec: Option.getOrUndefined(a.spec),
        difficulty: Option.getOrUndefined(a.difficulty),
        personas: Option.getOrUndefined(a.personas),
        sessions: Option.getOrUndefined(a.sessions),
        seed: Option.getOrUndefined(a.seed),
        position: Option.getOrUndefined(a.position),
        contrastiveShare: Option.getOrUndefined(a.contrastiveShare),
        staleShare: Option.getOrUndefined(a.staleShare),
        types: Option.getOrUndefined(a.types)
      })
    )
    if (Either.isLeft(decoded)) return yield* usage(decoded.left)
    yield* print(yield* w.generate(a.out, decoded.right))
  })
).pipe(
  Command.withDescription("write a synthetic CUPID-shaped dataset as JSON lines; prints its source spec and SHA-256")
)

/** `data inspect | download | generate`. */
export const command = Command.make("data", {}, () =>
  usage("data needs a subcommand: inspect, download or generate")
).pipe(
  Command.withDescription(`inspect, download or generate datasets. Data sources: ${sources}`),
  Command.withSubcommands([inspect, download, generate])
)
