/** Argument parsing and the `sweep`, `report` and `compare` commands of the CLI, returning exit codes. */
import { Domain } from "@cupid-lab/core"
import { Effect } from "effect"
import * as path from "node:path"
import * as Compare from "../compare/Compare.js"
import * as Config from "../Config.js"
import * as Progress from "../Progress.js"
import * as Report from "../report/Report.js"
import type { Summary } from "../ResultLine.js"
import * as Runner from "../Runner.js"

export const usage = `usage:
  cli sweep --config <file | name in configs/> [--data <source>] [--out <dir>] [--limit <n>]
            [--concurrency <n>] [--types consistent,contrastive,changing] [--dry-run]
  cli report --run <run directory> [--baseline <cell name or id>]
  cli compare --runs <first run>,<second run> [--out <dir>]

  --config        a YAML config (see docs/config.md); a bare name is looked up in configs/
  --data          override data.source (sample, a .parquet/.jsonl/.json file, a directory,
                  hf:kixlab/CUPID, synthetic:personas=100,seed=1)
  --out           override out (default runs/<name>)
  --limit         only the first n instances
  --concurrency   pairs in flight at once
  --types         only these instance types
  --dry-run       print the grid and the model calls the sweep would make; send and write nothing
  --run           a run directory (the out of a sweep); report rewrites its report.md,
                  report.html and results.csv
  --baseline      the cell the report's differences are measured against (default: the run's)
  --runs          two run directories, compared cell by cell on their shared instances
`

export class UsageError extends Error {}

interface Flag {
  readonly kind: "string" | "int" | "boolean"
}

const commands: Record<string, Record<string, Flag>> = {
  sweep: {
    config: { kind: "string" },
    data: { kind: "string" },
    out: { kind: "string" },
    limit: { kind: "int" },
    concurrency: { kind: "int" },
    types: { kind: "string" },
    "dry-run": { kind: "boolean" }
  },
  report: { run: { kind: "string" }, baseline: { kind: "string" } },
  compare: { runs: { kind: "string" }, out: { kind: "string" } }
}

export interface Parsed {
  readonly command: string
  readonly flags: Readonly<Record<string, string | number | boolean>>
}

/** `--name value` and `--name=value`; booleans take no value (or `=true` / `=false`). */
export const parse = (argv: ReadonlyArray<string>): Parsed => {
  const [command, ...rest] = argv
  if (command === undefined || command === "--help" || command === "-h" || command === "help") throw new UsageError("")
  const spec = commands[command]
  if (spec === undefined) throw new UsageError(`unknown command "${command}"; valid commands: ${Object.keys(commands).join(", ")}`)
  const flags: Record<string, string | number | boolean> = {}
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!
    if (arg === "--help" || arg === "-h") throw new UsageError("")
    if (!arg.startsWith("--")) throw new UsageError(`unexpected argument "${arg}" (flags start with --)`)
    const eq = arg.indexOf("=")
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    const flag = spec[name]
    if (flag === undefined) {
      throw new UsageError(`unknown flag --${name} for ${command}; valid flags: ${Object.keys(spec).map((f) => `--${f}`).join(", ")}`)
    }
    let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1)
    if (flag.kind === "boolean") {
      if (value !== undefined && value !== "true" && value !== "false") throw new UsageError(`--${name} takes no value (or true/false)`)
      flags[name] = value !== "false"
      continue
    }
    if (value === undefined) {
      value = rest[++i]
      if (value === undefined || value.startsWith("--")) throw new UsageError(`--${name} needs a value`)
    }
    if (flag.kind === "int") {
      const n = Number(value)
      if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} expects a whole number >= 1, got "${value}"`)
      flags[name] = n
    } else flags[name] = value
  }
  return { command, flags }
}

export interface Io {
  readonly stop: Runner.StopSignal
  readonly configDirs: ReadonlyArray<string>
  readonly stdout: (text: string) => void
  readonly stderr: Progress.Sink
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Test seam: default `Runner` with every package's built-ins. */
  readonly runner?: Runner.Options
}

const parseTypes = (value: string): ReadonlyArray<Domain.InstanceType> => {
  const types = value.split(",").map((t) => t.trim()).filter((t) => t !== "")
  const bad = types.filter((t) => !(Domain.instanceTypes as ReadonlyArray<string>).includes(t))
  if (bad.length > 0 || types.length === 0) {
    throw new UsageError(`--types: unknown instance type ${bad.map((b) => `"${b}"`).join(", ") || "(none given)"}; valid choices: ${Domain.instanceTypes.join(", ")}`)
  }
  return types as ReadonlyArray<Domain.InstanceType>
}

const formatNumber = (x: number | null): string => {
  if (x === null) return "-"
  const a = Math.abs(x)
  return a >= 1000 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(3)
}

/** The metrics a reader looks at first, in family order, where the run has them. */
const headline = [
  "retrieval.precision",
  "retrieval.recall_all",
  "inference.f1",
  "inference.f1_micro",
  "generation.score",
  "cost.model_calls",
  "cost.prompt_tokens"
]

const mainMetrics = (summary: Summary): Array<string> => {
  const present = new Set(summary.metrics.map((m) => m.name))
  return headline.filter((n) => present.has(n))
}

/**
 * A plain-text table of the main metrics on all instances. Heuristic metrics (computed without a
 * model) carry a `*` and a footnote, so nobody mistakes them for the paper's LLM procedure.
 */
export const table = (summary: Summary, models: ReadonlyArray<string> = []): string => {
  const metrics = mainMetrics(summary)
  const heuristic = new Set(summary.metrics.filter((m) => m.heuristic).map((m) => m.name))
  const header = ["cell", "n", "failed", ...metrics.map((m) => (heuristic.has(m) ? `${m}*` : m))]
  const rows = summary.cells.map((c) => [
    `${c.name}${c.usesGold ? " (gold)" : ""}`,
    String(c.slices.all.n),
    String(c.slices.all.failed),
    ...metrics.map((m) => formatNumber(c.slices.all.metrics[m]?.mean ?? null))
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ")
  const notes: Array<string> = []
  if (metrics.some((m) => heuristic.has(m))) {
    notes.push("* heuristic: computed without a model (e.g. extractive inferrer, lexical matcher), not the paper's LLM metric")
  }
  notes.push(models.length === 0
    ? "models: none; every stage ran offline with methods that need no weights"
    : `models: ${models.join(", ")}`)
  notes.push("(gold) cells read gold labels; n = instances scored, over all instance types")
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line), "", ...notes].join("\n") + "\n"
}

const sweep = (flags: Parsed["flags"], io: Io): Effect.Effect<number, unknown> =>
  Effect.gen(function*() {
    const given = flags.config
    if (typeof given !== "string") return yield* Effect.fail(new UsageError("sweep needs --config <file or name>"))
    const resolved = io.configDirs.reduce((found, dir) => (found === given ? Config.resolveFile(given, dir) : found), given)
    // Messages name the file as a path from the working directory when it is under it.
    const relative = path.relative(process.cwd(), resolved)
    const file = path.isAbsolute(resolved) && !relative.startsWith("..") && relative !== "" ? relative : resolved
    const loaded = yield* Config.load(file, io.env ?? process.env)
    const config = Config.withOverrides(loaded, {
      ...(typeof flags.data === "string" ? { data: flags.data } : {}),
      ...(typeof flags.out === "string" ? { out: flags.out } : {}),
      ...(typeof flags.limit === "number" ? { limit: flags.limit } : {}),
      ...(typeof flags.concurrency === "number" ? { concurrency: flags.concurrency } : {}),
      ...(typeof flags.types === "string" ? { types: parseTypes(flags.types) } : {})
    })
    const log = (text: string) => void io.stderr.write(`${text}\n`)
    if (flags["dry-run"] === true) {
      const d = yield* Runner.dryRun(config, { ...io.runner, log })
      const out: Array<string> = [`dry run of ${config.file}: nothing is sent and nothing is written`, `grid: ${d.grid.cells.length} cells`]
      for (const c of d.grid.cells) out.push(`  ${c.id}  ${c.name}${c.id === d.grid.baseline.id ? "  (baseline)" : ""}`)
      out.push(`instances: ${d.instances}`)
      out.push(`pairs: ${d.pairs.total} (${d.pairs.done} already done in ${config.out}, ${d.pairs.toRun} to run)`)
      out.push(`model calls: ${d.calls.total} (${d.calls.toSend} would be sent, ${d.calls.cached} answered by the cache)`)
      for (const [stage, s] of Object.entries(d.byStage)) {
        out.push(`  ${stage}: ${s.total} calls (${s.toSend} would be sent, ${s.cached} answered by the cache)`)
      }
      out.push(`estimated tokens to send: ${d.tokens.prompt} prompt, ${d.tokens.completion} completion`)
      for (const [model, m] of Object.entries(d.byModel)) {
        out.push(`  ${model}: ${m.toSend} to send (${m.promptTokens} prompt + ${m.completionTokens} completion tokens), ${m.cached} cached`)
      }
      out.push(`estimated tokens of all calls (if the cache shared nothing): ${d.allTokens.prompt} prompt, ${d.allTokens.completion} completion`)
      if (d.failed > 0) out.push(`warning: ${d.failed} pairs failed even in the dry run (see a real run's results for the errors)`)
      io.stdout(`${out.join("\n")}\n`)
      return 0
    }
    log(`sweep ${config.name}: ${config.file} -> ${config.out}`)
    const outcome = yield* Runner.sweep(config, { ...io.runner, stop: io.stop, log, progress: Progress.make(io.stderr) })
    io.stdout(table(outcome.summary, Object.entries(config.models).map(([n, m]) => `${n} = ${m.provider}/${m.model}`)))
    io.stdout(`\n${outcome.pairs.done}/${outcome.pairs.total} pairs done (${outcome.pairs.ran} this run), ${outcome.pairs.failed} failed this run\n`)
    io.stdout(`report: ${outcome.files.report}\nreport: ${path.join(outcome.out, "report.html")}\nresults: ${path.join(outcome.out, "results.csv")}\n`)
    if (outcome.pairs.failed > 0) log(`${outcome.pairs.failed} pairs failed (status "failed" in ${outcome.files.results}); rerun the same command to retry them`)
    if (outcome.interrupted) {
      log(`interrupted: ${outcome.pairs.done} of ${outcome.pairs.total} pairs are done and written; rerun the same command to resume`)
      return 130
    }
    return 0
  })

const report = (flags: Parsed["flags"], io: Io): Effect.Effect<number, unknown> =>
  Effect.gen(function*() {
    if (typeof flags.run !== "string") return yield* Effect.fail(new UsageError("report needs --run <run directory>"))
    const files = yield* Report.write(flags.run, typeof flags.baseline === "string" ? { baseline: flags.baseline } : {})
    io.stdout(`report: ${files.markdown}\nreport: ${files.html}\nresults: ${files.csv}\n`)
    return 0
  })

const compare = (flags: Parsed["flags"], io: Io): Effect.Effect<number, unknown> =>
  Effect.gen(function*() {
    const runs = typeof flags.runs === "string" ? flags.runs.split(",").map((r) => r.trim()).filter((r) => r !== "") : []
    if (runs.length !== 2) return yield* Effect.fail(new UsageError("compare needs --runs <first run>,<second run> (two run directories)"))
    const files = yield* Compare.write(runs[0]!, runs[1]!, typeof flags.out === "string" ? flags.out : undefined)
    io.stdout(`compare: ${files.markdown}\ncompare: ${files.html}\n`)
    return 0
  })

/** Run a command line; every failure becomes a message on stderr and an exit code. */
export const main = (argv: ReadonlyArray<string>, io: Io): Effect.Effect<number> =>
  Effect.suspend(() => {
    const parsed = parse(argv)
    return parsed.command === "sweep" ? sweep(parsed.flags, io) : parsed.command === "compare" ? compare(parsed.flags, io) : report(parsed.flags, io)
  }).pipe(
    Effect.catchAllDefect((e) => Effect.fail(e)),
    Effect.catchAll((e) =>
      Effect.sync(() => {
        if (e instanceof UsageError) {
          io.stderr.write(e.message === "" ? usage : `error: ${e.message}\n\n${usage}`)
          return e.message === "" ? 0 : 2
        }
        io.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`)
        return 1
      })
    )
  )
