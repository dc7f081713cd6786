/**
 * The sweep's batch queue: batched models hand it their calls, and it sends them as provider
 * batch jobs in waves. A wave is submitted when every pair in flight is waiting on a batch (the
 * inference calls of every pending pair, then the calls those lead to, and so on), when no call
 * has come for `quietMs`, or when a file would pass the provider's limits.
 *
 * Each batch is recorded in the run's batches.jsonl (BatchJournal) before the sweep waits on it. A
 * call whose key a recorded batch holds waits on that batch instead of being sent again; a key the
 * batch did not answer (expired, cancelled, failed) goes into a new wave. A line that failed in a
 * batch this run submitted fails its call with the provider's error. An interrupted sweep leaves
 * its batches running: the pairs waiting on them are not written, and a rerun collects them.
 *
 * @example
 * const engine = yield* Batches.make({ log })  // in the sweep's scope
 * yield* engine.open(dir)                        // before the first pair
 * context.batch = engine.queue                   // what batched providers call
 */
import { type Batch, Errors, ProgressLine } from "@cupid-lab/core"
import type { Errors as ResultErrors } from "@cupid-lab/results"
import type { FileSystem } from "@effect/platform"
import { Clock, Deferred, Duration, Effect, Queue, type Scope } from "effect"
import * as BatchJournal from "./BatchJournal.js"

export interface Options {
  readonly log?: (line: string) => void
  /** Submit what is queued after this long without a new call (default 2 s). */
  readonly quietMs?: number
  /** Asked before a wave is submitted: a failure refuses it (the budget). */
  readonly admit?: (
    endpoint: Batch.Endpoint,
    requests: ReadonlyArray<Batch.Request>
  ) => Effect.Effect<void, Errors.ModelError>
}

/** A batch this run waits on, for progress and for the message after an interruption. */
export interface Live {
  readonly id: string
  readonly model: string
  readonly status: Batch.Status | undefined
  /** Milliseconds since it was submitted. */
  readonly waitedMs: number
}

/** One batch on the progress line: its state, lines done, time since submission, and when it expires. */
export const describe = (b: Live): string => {
  const s = b.status
  const lines =
    s === undefined ? "" : ` ${s.completed + s.failed}/${s.total} lines${s.failed > 0 ? ` (${s.failed} failed)` : ""}`
  const left =
    s?.expiresAt === undefined ? "" : `, expires in ${ProgressLine.duration(s.expiresAt * 1000 - Date.now())}`
  return `batch ${b.id} ${s?.state ?? "submitted"}${lines}, ${ProgressLine.duration(b.waitedMs)} since submitted${left}`
}

/** What to do about the batches an interrupted sweep leaves running. */
export const stillRunning = (pending: ReadonlyArray<Live>, dir: string): string =>
  `${pending.length} provider batch job${pending.length === 1 ? " is" : "s are"} still running (${pending.map((b) => b.id).join(", ")}), recorded in ${BatchJournal.fileName}: ` +
  `run the same command again to collect their answers (nothing is submitted twice), or cancel them with \`npx cupid-lab batches --run ${dir} --cancel\``

export interface Engine {
  readonly queue: Batch.Queue
  /** Read the run's journal; until then no wave is submitted. */
  readonly open: (dir: string) => Effect.Effect<void, ResultErrors.RunError, FileSystem.FileSystem>
  /** Pairs in flight: the pair loop counts them, so that a wave goes as soon as all of them wait. */
  readonly pairStarted: () => void
  readonly pairEnded: () => void
  /** Batches this run is waiting on that have not ended. */
  readonly live: () => ReadonlyArray<Live>
}

/** At most this many resubmissions of a key a batch this run submitted did not answer (expired, cancelled). */
const maxResubmits = 2
/** Failed polls in a row before the calls waiting on a batch fail (the batch stays recorded). */
const maxPollFailures = 8

type Results = { readonly status: Batch.Status; readonly outcomes: ReadonlyMap<string, Batch.Outcome> }
interface Queued {
  readonly request: Batch.Request
  readonly done: Deferred.Deferred<Batch.Answer, Errors.ModelError>
  readonly attempt: number
}

const failure = (endpoint: Batch.Endpoint, reason: string, status?: number) =>
  new Errors.ModelError({
    provider: endpoint.provider,
    model: endpoint.model,
    reason,
    retryable: false,
    ...(status !== undefined ? { status } : {})
  })

export const make = (options: Options = {}): Effect.Effect<Engine, never, Scope.Scope | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const quietMs = options.quietMs ?? 2_000
    const log = options.log ?? (() => {})
    const context = yield* Effect.context<FileSystem.FileSystem>()
    const scope = yield* Effect.scope
    const kick = yield* Queue.sliding<void>(1)
    let dir: string | undefined
    const recorded = new Map<string, BatchJournal.Entry>() // by key
    const watchers = new Map<string, Deferred.Deferred<Results, Errors.ModelError>>() // by batch or file id
    const waiting = new Map<string, Deferred.Deferred<Batch.Answer, Errors.ModelError>>() // by key
    const queued = new Map<string, { endpoint: Batch.Endpoint; items: Array<Queued> }>() // by endpoint
    const lookups = new Map<string, Deferred.Deferred<string | undefined, Errors.ModelError>>() // by file
    let resolving = 0
    const live = new Map<string, { id: string; model: string; status: Batch.Status | undefined; submittedAt: number }>()
    let lastQueued = 0,
      callers = 0,
      pairs = 0

    const fork = <A, E>(effect: Effect.Effect<A, E, FileSystem.FileSystem>) =>
      Effect.asVoid(Effect.forkIn(Effect.provide(effect, context), scope))

    const enqueue = (endpoint: Batch.Endpoint, item: Queued) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const group = queued.get(endpoint.at) ?? { endpoint, items: [] }
        group.items.push(item)
        queued.set(endpoint.at, group)
        lastQueued = now
        return Queue.offer(kick, undefined)
      })

    const settle = (
      key: string,
      done: Deferred.Deferred<Batch.Answer, Errors.ModelError>,
      outcome: Effect.Effect<Batch.Answer, Errors.ModelError>
    ) =>
      Effect.zipRight(
        Effect.sync(() => waiting.delete(key)),
        Deferred.complete(done, outcome)
      )

    /** Poll a batch until it ends, then read every line's outcome. */
    const poll = (
      endpoint: Batch.Endpoint,
      id: string,
      submittedAt: number
    ): Effect.Effect<Results, Errors.ModelError> =>
      Effect.gen(function* () {
        let wait = endpoint.pollMs,
          failures = 0
        const model = `${endpoint.provider}/${endpoint.model}`
        live.set(id, { id, model, status: undefined, submittedAt })
        while (true) {
          const got = yield* Effect.either(endpoint.status(id))
          if (got._tag === "Left") {
            if (++failures >= maxPollFailures) {
              live.delete(id)
              return yield* failure(
                endpoint,
                `could not poll batch ${id} (${failures} tries): ${got.left.reason}; it is recorded in ${BatchJournal.fileName}, and a rerun polls it again`
              )
            }
          } else {
            failures = 0
            const status = got.right
            live.set(id, { id, model, status, submittedAt })
            if (status.terminal) {
              const outcomes = yield* endpoint
                .results(id)
                .pipe(Effect.retry({ times: 3 }), Effect.ensuring(Effect.sync(() => live.delete(id))))
              return { status, outcomes }
            }
          }
          yield* Effect.sleep(Duration.millis(wait))
          wait = Math.min(endpoint.pollMaxMs, Math.ceil(wait * 1.5))
        }
      })

    /** The results of a batch, polled once however many calls wait on it. */
    const watch = (endpoint: Batch.Endpoint, id: string, submittedAt: number) =>
      Effect.gen(function* () {
        const known = watchers.get(id)
        if (known !== undefined) return known
        const d = yield* Deferred.make<Results, Errors.ModelError>()
        watchers.set(id, d)
        yield* fork(Effect.flatMap(Effect.exit(poll(endpoint, id, submittedAt)), (exit) => Deferred.done(d, exit)))
        return d
      })

    /** A batch this run submitted has ended: hand each line's outcome to its call. */
    const deliver = (endpoint: Batch.Endpoint, id: string, items: ReadonlyArray<Queued>, results: Results) =>
      Effect.forEach(
        items,
        (item) => {
          const outcome = results.outcomes.get(item.request.key)
          if (outcome?.ok === true)
            return settle(item.request.key, item.done, Effect.succeed({ body: outcome.body, batch: id }))
          if (outcome !== undefined) {
            return settle(
              item.request.key,
              item.done,
              Effect.fail(
                failure(endpoint, `batch ${id}: the provider failed this line: ${outcome.error}`, outcome.status)
              )
            )
          }
          const why =
            results.status.error !== undefined
              ? `batch ${id} ${results.status.state}: ${results.status.error}`
              : `batch ${id} ended ${results.status.state} without answering this line`
          if (results.status.error === undefined && item.attempt < maxResubmits) {
            log(`${why}; it goes into the next wave`)
            return enqueue(endpoint, { ...item, attempt: item.attempt + 1 })
          }
          return settle(item.request.key, item.done, Effect.fail(failure(endpoint, why)))
        },
        { discard: true }
      )

    /** Upload, record, create and record one file's lines; then wait on it. */
    const submitFile = (endpoint: Batch.Endpoint, items: ReadonlyArray<Queued>, lines: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        const at = dir!
        const file = yield* endpoint.upload(`${lines.join("\n")}\n`)
        const time = () => Effect.map(Clock.currentTimeMillis, (t) => new Date(t).toISOString())
        yield* BatchJournal.append(at, {
          event: "uploaded",
          at: endpoint.at,
          provider: endpoint.provider,
          model: endpoint.model,
          file,
          keys: items.map((i) => i.request.key),
          time: yield* time()
        })
        const id = yield* endpoint.create(file)
        // Live from its creation: an interruption before its first poll still names it.
        live.set(id, {
          id,
          model: `${endpoint.provider}/${endpoint.model}`,
          status: undefined,
          submittedAt: yield* Clock.currentTimeMillis
        })
        yield* BatchJournal.append(at, { event: "submitted", file, batch: id, time: yield* time() })
        log(`submitted batch ${id}: ${items.length} ${endpoint.provider}/${endpoint.model} calls`)
        return { id, submittedAt: yield* Clock.currentTimeMillis }
      }).pipe(
        // A submission is not cut between its steps by an interruption (each step has its deadline).
        Effect.uninterruptible,
        Effect.mapError((e) =>
          e instanceof Errors.ModelError ? e : failure(endpoint, `could not submit a batch: ${e.message}`)
        ),
        Effect.flatMap(({ id, submittedAt }) => Effect.flatMap(watch(endpoint, id, submittedAt), Deferred.await)),
        Effect.matchCauseEffect({
          onFailure: (cause) =>
            Effect.forEach(items, (i) => settle(i.request.key, i.done, Effect.failCause(cause)), { discard: true }),
          onSuccess: (results) =>
            Effect.void.pipe(Effect.zipRight(deliver(endpoint, results.status.id, items, results)))
        })
      )

    /** One wave of one endpoint: asked of the budget, cut to the provider's limits, each file submitted. */
    const submitWave = (endpoint: Batch.Endpoint, items: ReadonlyArray<Queued>) =>
      Effect.gen(function* () {
        const admitted = yield* Effect.either(
          options.admit?.(
            endpoint,
            items.map((i) => i.request)
          ) ?? Effect.void
        )
        if (admitted._tag === "Left") {
          return yield* Effect.forEach(items, (i) => settle(i.request.key, i.done, Effect.fail(admitted.left)), {
            discard: true
          })
        }
        const files: Array<{ items: Array<Queued>; lines: Array<string>; bytes: number }> = []
        for (const item of items) {
          const line = endpoint.line(item.request)
          const bytes = Buffer.byteLength(line) + 1
          const last = files.at(-1)
          if (last === undefined || last.items.length >= endpoint.maxLines || last.bytes + bytes > endpoint.maxBytes) {
            files.push({ items: [item], lines: [line], bytes })
          } else {
            last.items.push(item)
            last.lines.push(line)
            last.bytes += bytes
          }
        }
        yield* Effect.forEach(files, (f) => fork(submitFile(endpoint, f.items, f.lines)), { discard: true })
      })

    /** Submits each endpoint's queue when its wave is complete (see the module's comment). */
    const coordinator = Effect.gen(function* () {
      while (true) {
        yield* Effect.ignore(Effect.timeout(Queue.take(kick), Duration.millis(quietMs)))
        if (dir === undefined) continue
        const now = yield* Clock.currentTimeMillis
        const all = pairs > 0 && callers >= pairs && resolving === 0
        for (const [at, group] of queued) {
          if (all || now - lastQueued >= quietMs || group.items.length >= group.endpoint.maxLines) {
            queued.delete(at)
            yield* submitWave(group.endpoint, group.items)
          }
        }
      }
    })
    yield* fork(coordinator)

    /**
     * The batch recorded for a file, or found through the provider's list when the journal lost
     * its creation (looked up once per file). While lookups run, no wave is complete.
     */
    const batchOf = (endpoint: Batch.Endpoint, entry: BatchJournal.Entry) =>
      Effect.gen(function* () {
        if (entry.batch !== undefined) return entry.batch
        let found = lookups.get(entry.file)
        if (found === undefined) {
          const d = yield* Deferred.make<string | undefined, Errors.ModelError>()
          lookups.set(entry.file, d)
          resolving++
          yield* fork(
            Effect.flatMap(Effect.exit(endpoint.findByFile(entry.file)), (exit) =>
              Effect.zipRight(
                Effect.sync(() => resolving--),
                Deferred.done(d, exit)
              )
            )
          )
          found = d
        }
        return yield* Deferred.await(found)
      })

    /** A call whose key a recorded batch holds: that batch's answer, or a new wave when it has none. */
    const adopt = (endpoint: Batch.Endpoint, entry: BatchJournal.Entry, item: Queued) =>
      Effect.gen(function* () {
        const id = yield* batchOf(endpoint, entry)
        if (id === undefined) return yield* enqueue(endpoint, item)
        const results = yield* Effect.flatMap(
          watch(endpoint, id, Date.parse(entry.submittedAt ?? entry.uploadedAt)),
          Deferred.await
        )
        const outcome = results.outcomes.get(item.request.key)
        if (outcome?.ok === true) {
          return yield* settle(item.request.key, item.done, Effect.succeed({ body: outcome.body, batch: id }))
        }
        return yield* enqueue(endpoint, item)
      }).pipe(Effect.catchAll((e) => settle(item.request.key, item.done, Effect.fail(e))))

    const call = (endpoint: Batch.Endpoint, request: Batch.Request): Effect.Effect<Batch.Answer, Errors.ModelError> =>
      Effect.gen(function* () {
        // Counted before it is queued, so that the wave it completes sees it waiting.
        callers++
        let done = waiting.get(request.key)
        if (done === undefined) {
          done = yield* Deferred.make<Batch.Answer, Errors.ModelError>()
          waiting.set(request.key, done)
          const item: Queued = { request, done, attempt: 0 }
          const entry = recorded.get(request.key)
          // Each recorded key is looked up once: a second call after a failure goes into a wave.
          recorded.delete(request.key)
          if (entry !== undefined && entry.at === endpoint.at && entry.cancelled !== true)
            yield* fork(adopt(endpoint, entry, item))
          else yield* enqueue(endpoint, item)
        }
        return yield* Effect.interruptible(Deferred.await(done)).pipe(
          Effect.ensuring(
            Effect.suspend(() => {
              callers--
              return Queue.offer(kick, undefined)
            })
          )
        )
      })

    return {
      queue: { call },
      open: (at: string) =>
        Effect.map(BatchJournal.read(at), (entries) => {
          for (const entry of entries) for (const key of entry.keys) recorded.set(key, entry)
          dir = at
        }),
      pairStarted: () => {
        pairs++
      },
      pairEnded: () => {
        pairs--
        Effect.runSync(Queue.offer(kick, undefined))
      },
      live: () =>
        [...live.values()].map(({ submittedAt, ...b }) => ({ ...b, waitedMs: Math.max(0, Date.now() - submittedAt) }))
    }
  })
