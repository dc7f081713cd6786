import * as path from "node:path"
import { parseArgs } from "node:util"
import { Effect, Either, ParseResult, Schema, Stream } from "effect"
import * as Dataset from "../../Dataset.js"
import { InstanceType, instanceTypes } from "../../Domain.js"
import { DatasetError } from "../../Errors.js"
import * as Synthetic from "../../Synthetic.js"
import * as Hf from "./huggingFace.js"
import { accumulator, format } from "./inspect.js"
import { fileSha256 } from "./readers.js"

export interface Output {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

export const usage = `usage: data <command> [options]

commands:
  inspect   counts, lengths, token and label statistics, positions of relevant sessions
            --data <source>            default: sample
            --types <t,...>            consistent, contrastive, changing (default: all)
            --on-invalid <fail|skip>   default: fail
            --limit <n>                first n instances after the type filter
            --cache-dir <dir>          for hf: sources (default: $CUPID_CACHE_DIR or .cache/cupid)
            --hf-endpoint <url>        default: https://huggingface.co
  download  fetch an hf: dataset into the cache; prints the path and SHA-256
            --data <hf:owner/name>     e.g. hf:kixlab/CUPID, hf:kixlab/CUPID-Unverified
            --cache-dir <dir>, --hf-endpoint <url> as above
  generate  write a synthetic CUPID-shaped dataset as JSON lines
            --out <file.jsonl>         required
            --personas <n>             default 10 (one row per persona and type)
            --sessions <n>             prior sessions per instance, 8 to 10000 (default 8)
            --seed <n>                 default 0
            --position <p>             spread, early, late or recent (default spread)
            --contrastive-share <x>    0 to 0.75 (default 0.1)
            --stale-share <x>          0 to 0.75 (default 0.1)
            --types <t,...>            default: all
            --difficulty <d>           hard (default: realistic) or easy (the artifact-rich version-1 text)
            --spec <k=v,...>           any other generator key, as in a synthetic: source (e.g. relevant=2,topic=0.5)

data sources: sample (dev split), sample-test (test split), a .parquet/.jsonl/.json file, a directory of .json files,
hf:kixlab/CUPID, hf:kixlab/CUPID-Unverified, synthetic:personas=100,sessions=50,seed=3`

class UsageError extends Error {}

const flags = {
  data: { type: "string" },
  types: { type: "string" },
  "on-invalid": { type: "string" },
  limit: { type: "string" },
  "cache-dir": { type: "string" },
  "hf-endpoint": { type: "string" },
  out: { type: "string" },
  personas: { type: "string" },
  sessions: { type: "string" },
  seed: { type: "string" },
  position: { type: "string" },
  "contrastive-share": { type: "string" },
  "stale-share": { type: "string" },
  difficulty: { type: "string" },
  spec: { type: "string" },
  help: { type: "boolean", short: "h" }
} as const

type Flags = Partial<Record<Exclude<keyof typeof flags, "help">, string>> & { help?: boolean }

const allowed: Record<string, ReadonlyArray<string>> = {
  inspect: ["data", "types", "on-invalid", "limit", "cache-dir", "hf-endpoint"],
  download: ["data", "cache-dir", "hf-endpoint"],
  generate: ["out", "personas", "sessions", "seed", "position", "contrastive-share", "stale-share", "types", "difficulty", "spec"]
}

const parseTypes = (raw: string | undefined) => {
  if (raw === undefined) return undefined
  const types = raw.split(",").map((t) => t.trim()).filter((t) => t !== "")
  const bad = types.find((t) => !Schema.is(InstanceType)(t))
  if (bad !== undefined || types.length === 0) {
    throw new UsageError(`--types: expected one or more of ${instanceTypes.join(", ")}, found "${bad ?? raw}"`)
  }
  return types as Array<InstanceType>
}

const number = (flag: string, raw: string | undefined): number | undefined => {
  if (raw === undefined) return undefined
  const n = Number(raw)
  if (raw.trim() === "" || !Number.isFinite(n)) throw new UsageError(`--${flag}: expected a number, found "${raw}"`)
  return n
}

const loadOptions = (f: Flags): Dataset.LoadOptions => {
  const onInvalid = f["on-invalid"]
  if (onInvalid !== undefined && onInvalid !== "fail" && onInvalid !== "skip") {
    throw new UsageError(`--on-invalid: expected fail or skip, found "${onInvalid}"`)
  }
  const types = parseTypes(f.types)
  const limit = number("limit", f.limit)
  return {
    ...(onInvalid !== undefined ? { onInvalid } : {}),
    ...(types !== undefined ? { types } : {}),
    ...(limit !== undefined ? { limit } : {}),
    ...(f["cache-dir"] !== undefined ? { cacheDir: f["cache-dir"] } : {}),
    ...(f["hf-endpoint"] !== undefined ? { hfEndpoint: f["hf-endpoint"] } : {})
  }
}

/** Flag validation throws UsageError; this turns it into a typed failure. */
const checked = <A>(f: () => A): Effect.Effect<A, UsageError> =>
  Effect.try({ try: f, catch: (e) => e instanceof UsageError ? e : new UsageError(String(e)) })

const inspect = (f: Flags, io: Output) =>
  Effect.gen(function*() {
    const source = f.data ?? "sample"
    const opened = yield* Dataset.open(source, yield* checked(() => loadOptions(f)))
    const acc = accumulator()
    yield* Stream.runForEach(opened.instances, (i) => Effect.sync(() => acc.add(i)))
    io.out(`source: ${source}${opened.resolved !== source ? ` (${opened.resolved})` : ""}`)
    io.out(`fingerprint: ${opened.fingerprint}`)
    io.out(format(acc.result()))
    const skipped = opened.skipped()
    io.out(`skipped rows: ${skipped.length}`)
    const shown = 20
    for (const s of skipped.slice(0, shown)) io.out(`  row ${s.row}${s.id !== undefined ? ` (${s.id})` : ""}: ${s.reason}`)
    if (skipped.length > shown) io.out(`  ... and ${skipped.length - shown} more`)
  })

const download = (f: Flags, io: Output) =>
  Effect.gen(function*() {
    const source = f.data
    if (source === undefined || !source.startsWith("hf:")) {
      return yield* Effect.fail(new UsageError(`--data: expected an hf: source such as hf:kixlab/CUPID, found ${source === undefined ? "nothing" : `"${source}"`}`))
    }
    const parsed = Hf.parseHfSource(source)
    if (parsed instanceof DatasetError) return yield* parsed
    const options = yield* checked(() => loadOptions(f))
    const cached = yield* Effect.tryPromise({
      try: () => Hf.ensureCached(parsed, options.cacheDir ?? Dataset.defaultCacheDir(), options.hfEndpoint ?? Hf.defaultEndpoint),
      catch: (e) => e instanceof DatasetError ? e : new DatasetError({ source, reason: String(e) })
    })
    io.out(`${cached.downloaded ? "downloaded" : "already cached"}: ${cached.path}`)
    io.out(`sha256: ${cached.sha256}`)
  })

const generate = (f: Flags, io: Output) =>
  Effect.gen(function*() {
    if (f.out === undefined) return yield* Effect.fail(new UsageError("--out: required (the .jsonl file to write)"))
    const extra = f.spec === undefined ? {} : yield* Either.match(Synthetic.parseSpec(`synthetic:${f.spec}`), {
      onLeft: (e) => Effect.fail(new UsageError(`--spec: ${e.reason}`)),
      onRight: (o) => Effect.succeed(Object.fromEntries(Object.entries(o).filter(([k]) => Synthetic.knobKeys.includes(k))))
    })
    const raw = yield* checked(() => ({
      ...extra,
      difficulty: f.difficulty,
      personas: number("personas", f.personas),
      sessionsPerHistory: number("sessions", f.sessions),
      seed: number("seed", f.seed),
      relevantPosition: f.position,
      contrastiveShare: number("contrastive-share", f["contrastive-share"]),
      staleShare: number("stale-share", f["stale-share"]),
      types: parseTypes(f.types)
    }))
    const decoded = Schema.decodeUnknownEither(Synthetic.Options)(
      Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined))
    )
    if (Either.isLeft(decoded)) {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]!
      const flag = { sessionsPerHistory: "sessions", relevantPosition: "position", contrastiveShare: "contrastive-share", staleShare: "stale-share" }[
        String(issue.path[0])
      ] ?? String(issue.path[0])
      return yield* Effect.fail(new UsageError(`--${flag}: ${issue.message}`))
    }
    const options = decoded.right
    const file = path.resolve(f.out)
    const rows = yield* Synthetic.writeJsonl(file, Synthetic.generate(options))
    const sha = yield* Effect.promise(() => fileSha256(file))
    io.out(`wrote ${rows} rows to ${file}`)
    io.out(`source: ${Synthetic.toSpec(options)}`)
    io.out(`sha256: ${sha}`)
  })

/** Runs the `data` command line; succeeds with the process exit code (0 ok, 1 data error, 2 usage error). */
export const run = (argv: ReadonlyArray<string>, io: Output): Effect.Effect<number> =>
  Effect.suspend(() => {
    let parsed: { values: Flags; positionals: Array<string> }
    try {
      parsed = parseArgs({ args: [...argv], options: flags, allowPositionals: true, strict: true }) as typeof parsed
    } catch (e) {
      io.err(`error: ${e instanceof Error ? e.message : String(e)}\n\n${usage}`)
      return Effect.succeed(2)
    }
    const [command, ...extra] = parsed.positionals
    if (parsed.values.help === true || command === "help") {
      io.out(usage)
      return Effect.succeed(0)
    }
    if (command === undefined) {
      io.err(usage)
      return Effect.succeed(2)
    }
    const permitted = allowed[command]
    if (permitted === undefined) {
      io.err(`error: unknown command "${command}"; expected inspect, download or generate\n\n${usage}`)
      return Effect.succeed(2)
    }
    const misplaced = Object.keys(parsed.values).find((k) => k !== "help" && !permitted.includes(k))
    if (extra.length > 0 || misplaced !== undefined) {
      const what = misplaced !== undefined ? `--${misplaced} does not apply to ${command}` : `unexpected argument "${extra[0]}"`
      io.err(`error: ${what}\n\n${usage}`)
      return Effect.succeed(2)
    }
    const body = command === "inspect" ? inspect : command === "download" ? download : generate
    return body(parsed.values, io).pipe(
      Effect.as(0),
      Effect.catchAll((e) => {
        if (e instanceof UsageError) {
          io.err(`error: ${e.message}\n\n${usage}`)
          return Effect.succeed(2)
        }
        io.err(`error: ${e.message}`)
        return Effect.succeed(1)
      })
    )
  })
