/**
 * Combining the directories of a sharded sweep (`sweep --shard i/N`) into one run directory with
 * the bytes one machine would have written, once the shards are checked: one run's, a complete
 * set, each finished and holding exactly its share. The run's data is read again for the order.
 *
 * @example
 * const merged = yield* Merge.merge({ out: "runs/contextual/merged", shards: ["a", "b", "c"] })
 */
import { Dataset } from "@cupid-lab/data"
import { type Domain, Files, Hash } from "@cupid-lab/core"
import { Errors, RunId, RunInfo, Shard, Calls, Columns, type ResultLine, RunDir, Summary } from "@cupid-lab/results"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import * as path from "node:path"

import type { OpenDataset } from "./Prepare.js"

import * as Finish from "./Finish.js"
import * as ResultLog from "./ResultLog.js"

export interface Options<P = never> {
  /** Writes the merged run's reports (the command line passes the report's). */
  readonly publish?: Finish.Publish<P>
  /** The merged run's directory (created; refused when it holds another run or is one of the shards). */
  readonly out: string
  /** The shard directories, in any order. */
  readonly shards: ReadonlyArray<string>
  /** The run's data where the recorded source does not open from here (another path on this machine). */
  readonly data?: string
  /** Default core's `Dataset.open`. */
  readonly openDataset?: OpenDataset
  readonly log?: (line: string) => void
}

export interface Merged<P = never> {
  readonly out: string
  readonly identity: RunId.Identity
  readonly shards: number
  readonly pairs: number
  readonly instances: number
  readonly files: { readonly results: string; readonly summary: string; readonly report: string; readonly run: string }
  readonly published: P | undefined
}

interface Line {
  readonly text: Buffer
  readonly row: ResultLine.Row
}

const fail = (file: string, reason: string) => Effect.fail(new Errors.RunError({ path: file, reason }))

const unfinished =
  "the shard has not finished: rerun its sweep command (the same --shard i/N) to complete it, then merge again"

/** One shard directory: its identity, summary, run record and result lines (raw text kept). */
const readShard = (fileSystem: FileSystem.FileSystem, dir: string) =>
  Effect.gen(function* () {
    const idFile = path.join(dir, RunId.fileName)
    if (!(yield* Files.exists(fileSystem, idFile))) {
      return yield* fail(
        dir,
        `not a shard directory: no ${RunId.fileName} (expected the directory of a \`sweep --shard i/N\`)`
      )
    }
    const text = yield* fileSystem
      .readFileString(idFile)
      .pipe(Effect.mapError((e) => new Errors.RunError({ path: idFile, reason: `cannot read: ${Files.describe(e)}` })))
    const identity = RunId.decode(text)
    if (Either.isLeft(identity)) return yield* fail(idFile, "is not a run identity")
    const shard = identity.right.shard
    if (shard === undefined)
      return yield* fail(
        dir,
        `holds a whole ${RunId.describe(identity.right)}, not a shard; merge combines the directories of \`sweep --shard i/N\``
      )
    for (const file of [path.join(dir, "summary.json"), path.join(dir, "run.json")]) {
      if (!(yield* Files.exists(fileSystem, file))) return yield* fail(file, `missing; ${unfinished}`)
    }
    const lines: Array<Line> = []
    const run = yield* RunDir.read(dir, { also: (row, raw) => void lines.push({ text: Buffer.from(raw), row }) })
    const info = run.info ?? {}
    if (info.interrupted === true)
      return yield* fail(dir, `its sweep was interrupted before the end (run.json); ${unfinished}`)
    return { dir, identity: identity.right, shard, summary: run.summary, info, lines }
  })

type ShardDir = Effect.Effect.Success<ReturnType<typeof readShard>>

/** What every shard's summary must say alike: everything but the numbers computed from its lines. */
const facts = ({ cells, metrics, modelCalls: _, ...rest }: ResultLine.Summary) => ({
  ...rest,
  metrics: Summary.declaredOf(metrics),
  cells: cells.map(({ slices: _s, types: _t, ...info }) => info)
})

const whole = ({ shard: _, ...identity }: RunId.Identity): RunId.Identity => identity

/** The shards are one run's and one complete set: same identity and facts, 1..N each once. */
const checkSet = (shards: ReadonlyArray<ShardDir>): Effect.Effect<void, Errors.RunError> =>
  Effect.gen(function* () {
    const first = shards[0]!
    const count = first.shard.count
    for (const s of shards) {
      if (s.identity.id !== first.identity.id) {
        return yield* fail(
          s.dir,
          `is ${RunId.describe(s.identity)}, but ${first.dir} is ${RunId.describe(first.identity)}: ${RunId.differences(whole(s.identity), whole(first.identity))}; the shards of one run share the config and the data`
        )
      }
      if (s.shard.count !== count)
        return yield* fail(
          s.dir,
          `is ${Shard.describe(s.shard)}, but ${first.dir} is ${Shard.describe(first.shard)}; every shard of a run is split in the same N`
        )
      const mine = facts(s.summary),
        theirs = facts(first.summary)
      const keys = [...new Set([...Object.keys(mine), ...Object.keys(theirs)])] as Array<keyof typeof mine>
      const differs = keys.find((k) => Hash.canonicalJson(mine[k] ?? null) !== Hash.canonicalJson(theirs[k] ?? null))
      if (differs !== undefined) {
        return yield* fail(
          path.join(s.dir, "summary.json"),
          `its ${differs} differs from ${path.join(first.dir, "summary.json")}'s; were the shards run by different versions of cupid-lab or its plugins?`
        )
      }
    }
    const byIndex = new Map<number, ShardDir>()
    for (const s of shards) {
      const twin = byIndex.get(s.shard.index)
      if (twin !== undefined)
        return yield* fail(s.dir, `is ${Shard.describe(s.shard)}, and so is ${twin.dir}: each shard is given once`)
      byIndex.set(s.shard.index, s)
    }
    const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i))
    if (missing.length > 0) {
      return yield* fail(
        shards.map((s) => s.dir).join(", "),
        `the run is split in ${count} shards and shard${missing.length > 1 ? "s" : ""} ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} missing (given: ${[...byIndex.keys()].sort((a, b) => a - b).join(", ")}); run the missing shards with --shard i/${count} and give every shard directory`
      )
    }
  })

/** Read the run's data: each instance's rank in dataset order and the report's examples (the first present instance of each type). */
const readData = (options: Options, summary: ResultLine.Summary, present: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const source = options.data ?? summary.dataset.source
    const why = (e: unknown) =>
      new Errors.RunError({
        path: source,
        reason: `cannot read the run's data, which orders the merged results and gives the report's examples: ${e instanceof Error ? e.message : String(e)}; pass --data <source> where it is on this machine`
      })
    const open = options.openDataset ?? Dataset.open
    const opened = yield* open(source, { onInvalid: "skip" }).pipe(Effect.mapError(why))
    if (opened.fingerprint !== summary.dataset.hash) {
      return yield* fail(
        source,
        `is not the data the shards ran on (fingerprint ${opened.fingerprint.slice(0, 16)}, the shards' ${summary.dataset.hash.slice(0, 16)}); pass --data <source> with the run's data`
      )
    }
    const rank = new Map<string, number>()
    const examples = new Map<Domain.InstanceType, Domain.Instance>()
    yield* Stream.runForEach(opened.instances, (i) =>
      Effect.sync(() => {
        if (!rank.has(i.id)) rank.set(i.id, rank.size)
        if (present.has(i.id) && !examples.has(i.type)) examples.set(i.type, i)
      })
    ).pipe(Effect.mapError(why))
    return { rank, examples: [...examples.values()], source }
  })

/** Every pair once, each in its own shard, none missing; the lines in final order. */
const combine = (options: Omit<Options<unknown>, "publish">, shards: ReadonlyArray<ShardDir>) =>
  Effect.gen(function* () {
    const summary = shards[0]!.summary
    const count = shards[0]!.shard.count
    const cellIndex = new Map(summary.cells.map((c, i) => [c.id, i]))
    const cellName = (id: string) => `cell ${summary.cells[cellIndex.get(id)!]?.name ?? id} (${id})`
    const seen = new Map<string, { readonly dir: string; readonly line: number }>()
    const present = new Set<string>()
    for (const s of shards) {
      const file = path.join(s.dir, ResultLog.fileName)
      for (const [n, { row }] of s.lines.entries()) {
        const at = `${file} line ${n + 1}`
        if (!cellIndex.has(row.cell))
          return yield* fail(
            at,
            `cell ${row.cell} is not one of the run's cells (its summary.json lists ${summary.cells.length})`
          )
        const key = ResultLog.pairKey(row.cell, row.instance)
        const twin = seen.get(key)
        if (twin !== undefined) {
          return yield* fail(
            at,
            `the pair (${cellName(row.cell)}, instance ${row.instance}) is also in ${path.join(twin.dir, ResultLog.fileName)} line ${twin.line}; a pair belongs to one shard only`
          )
        }
        seen.set(key, { dir: s.dir, line: n + 1 })
        const owner = Shard.owner(count, row.instance)
        if (owner !== s.shard.index) {
          return yield* fail(
            at,
            `the pair (${cellName(row.cell)}, instance ${row.instance}) belongs to shard ${owner} of ${count}, not to this ${Shard.describe(s.shard)}; was the file written by another --shard?`
          )
        }
        present.add(row.instance)
      }
    }
    const data = yield* readData(options, summary, present)
    const notInData = [...present].find((i) => !data.rank.has(i))
    if (notInData !== undefined)
      return yield* fail(data.source, `has no instance ${notInData}, which the shards' results hold`)
    if (present.size !== summary.dataset.instances) {
      return yield* fail(
        shards.map((s) => s.dir).join(", "),
        `the shards hold results of ${present.size} instances, but the run has ${summary.dataset.instances}; a shard stopped before the end? rerun each shard's sweep command to complete it`
      )
    }
    const instances = [...present].sort((a, b) => data.rank.get(a)! - data.rank.get(b)!)
    for (const s of shards) {
      let missing = 0,
        example = ""
      for (const instance of instances) {
        for (const cell of summary.cells) {
          if (Shard.owner(count, instance) !== s.shard.index || seen.has(ResultLog.pairKey(cell.id, instance))) continue
          if (missing++ === 0) example = `${cellName(cell.id)} on instance ${instance}`
        }
      }
      if (missing > 0)
        return yield* fail(
          s.dir,
          `${missing} pair${missing > 1 ? "s" : ""} of its share ${missing > 1 ? "are" : "is"} missing (first: ${example}); ${unfinished}`
        )
    }
    const key = (l: Line) => [data.rank.get(l.row.instance)!, cellIndex.get(l.row.cell)!] as const
    const lines = shards.flatMap((s) => s.lines).sort((a, b) => key(a)[0] - key(b)[0] || key(a)[1] - key(b)[1])
    return { lines, examples: data.examples }
  })

/** Per key (by default every key of the records, sorted), the sum over the shards' records. */
const sum = <K extends string>(
  records: ReadonlyArray<Partial<Record<K, number | null>> | undefined>,
  keys: ReadonlyArray<K> = [...new Set(records.flatMap((r) => Object.keys(r ?? {}) as Array<K>))].sort((a, b) =>
    a.localeCompare(b)
  )
): Record<K, number> =>
  Object.fromEntries(keys.map((k) => [k, records.reduce((t, r) => t + (r?.[k] ?? 0), 0)])) as Record<K, number>

/** A record without `key` when it is 0 (a field written only when something happened). */
const withoutZero = <K extends string>(r: Record<K, number>, key: K): Record<K, number> => {
  if (r[key] !== 0) return r
  const { [key]: _, ...rest } = r
  return rest as Record<K, number>
}

/** The merged run's run.json: the earliest start and latest end of the shards, their counts and times summed. */
const mergedInfo = (shards: ReadonlyArray<ShardDir>, summary: ResultLine.Summary, lines: number): RunInfo.RunInfo => {
  const infos = shards.map((s) => s.info)
  const first = infos[0]!
  const startedAt =
    infos
      .map((i) => i.startedAt ?? "")
      .filter((t) => t !== "")
      .sort()[0] ?? new Date(0).toISOString()
  const endedAt =
    infos
      .map((i) => i.endedAt ?? "")
      .sort()
      .at(-1) || startedAt
  const durationMs = Date.parse(endedAt) - Date.parse(startedAt)
  const pairs = sum(
    infos.map((i) => i.pairs),
    ["resumed", "ran", "failed"]
  )
  return {
    stageTimeMs: sum(infos.map((i) => i.stageTimeMs)),
    modelCalls: withoutZero(
      sum(
        infos.map((i) => i.modelCalls as Partial<Record<string, number>> | undefined),
        ["made", "cached", "requestsSent", "retries", "limiterMs"]
      ),
      "limiterMs"
    ) as RunInfo.RunInfo["modelCalls"],
    tokens: sum(
      infos.map((i) => i.tokens),
      ["prompt", "completion"]
    ),
    failuresByStage: sum(infos.map((i) => i.failuresByStage)),
    startedAt,
    endedAt,
    durationMs,
    interrupted: false,
    config: first.config ?? { file: "" },
    dataset: first.dataset ?? { resolved: summary.dataset.source },
    pairs: { total: lines, ...pairs, lines },
    pairsPerSecond: durationMs > 0 ? (pairs.ran * 1000) / durationMs : null,
    phasesMs: sum(
      infos.map((i) => i.phasesMs),
      ["prepare", "pairs", "write"]
    ),
    cache: sum(infos.map((i) => i.cache)),
    ...(first.fits !== undefined ? { fits: first.fits } : {}),
    versions: first.versions ?? {}
  }
}

/** Check the shard directories and write the merged run into `options.out`. */
export const merge = <P = never>(
  options: Options<P>
): Effect.Effect<Merged<P>, Errors.RunError, FileSystem.FileSystem> =>
  Effect.scoped(
    Effect.gen(function* () {
      const fileSystem = yield* FileSystem.FileSystem
      if (options.shards.length === 0) return yield* fail(options.out, "no shard directories given")
      const out = options.out
      const clash = options.shards.find((d) => path.resolve(d) === path.resolve(out))
      if (clash !== undefined)
        return yield* fail(out, "is one of the shard directories; give the merged run a directory of its own")
      const shards = yield* Effect.forEach(options.shards, (dir) => readShard(fileSystem, dir))
      yield* checkSet(shards)
      const { examples, lines } = yield* combine(options, shards)
      const sorted = [...shards].sort((a, b) => a.shard.index - b.shard.index)
      const identity = whole(sorted[0]!.identity)
      // Versions shape report.md: shards run by different versions are merged, and that is said.
      const versions = Hash.canonicalJson(sorted[0]!.info.versions ?? {})
      for (const s of sorted)
        if (Hash.canonicalJson(s.info.versions ?? {}) !== versions)
          options.log?.(
            `note: ${s.dir} ran other versions (run.json versions) than ${sorted[0]!.dir}; the merged report names the first shard's`
          )

      yield* RunDir.makeDirectory(out)
      yield* RunId.check(out, identity)
      yield* RunId.lock(out)
      yield* RunId.claim(out, identity)
      const files = {
        results: path.join(out, ResultLog.fileName),
        summary: path.join(out, RunDir.summaryFileName),
        report: path.join(out, "report.md"),
        run: path.join(out, RunDir.infoFileName)
      }
      yield* RunDir.write(files.results, Buffer.concat(lines.map((l) => l.text)))
      // The shards' transcripts one after another, shard 1 first; a call that an earlier
      // shard recorded in full refers to that record (each shard's own references point back into it).
      const relinking = Calls.relinking()
      const callTexts: Array<string> = []
      for (const s of sorted)
        yield* RunDir.scanIfPresent(path.join(s.dir, Calls.fileName), "call transcripts", (raw) => {
          callTexts.push(Calls.relink(raw.toString("utf8"), relinking))
        })
      const callsFile = path.join(out, Calls.fileName)
      if (callTexts.length > 0) yield* RunDir.write(callsFile, callTexts.join(""))
      else yield* fileSystem.remove(callsFile, { force: true }).pipe(Effect.ignore)
      const calls = yield* Calls.tally(callsFile)

      const index = Columns.index(lines.map((l) => l.row))
      const { cells, metrics, ...rest } = facts(sorted[0]!.summary)
      const summary: ResultLine.Summary = {
        ...rest,
        ...(calls.calls > 0 ? { modelCalls: calls } : {}),
        ...Summary.of(
          index,
          { metrics, seed: rest.seed, resamples: rest.resamples, largeSample: rest.largeSample },
          cells
        )
      }
      const info = mergedInfo(sorted, summary, lines.length)
      const published = yield* Finish.write({ dir: out, summary, index, examples }, () => info, options.publish)
      return {
        out,
        identity,
        shards: sorted.length,
        pairs: lines.length,
        instances: summary.dataset.instances,
        files,
        published
      }
    })
  )
