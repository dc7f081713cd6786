/**
 * The sweep's work loop: one fiber reads the dataset and turns each instance into pairs, a fixed
 * number of workers run them, and a tick (flushing, progress) runs on its own fiber. Interrupting
 * it stops the reader at once and each worker after its pair (a pair is never cut in half); a
 * refused pair (`admit`) stops it the same way, and the loop then ends normally.
 *
 * An item's pairs that `now` can run (plain code, no effect) go to one worker together, which runs
 * them one after another as one step (an interruption does not cut it either); the others go one by
 * one, as effects, so that they run `concurrency` at a time. After each step a worker ticks if a
 * tick is due, so that pairs that never wait do not starve the ticker's timer.
 */
import { Cause, Deferred, Duration, Effect, Exit, Fiber, Queue, Schedule, Stream } from "effect"

export interface Options<I, P, E, TE = never> {
  readonly items: Stream.Stream<I, E>
  /** The pairs of one item (may be none); called in dataset order. */
  readonly expand: (item: I) => ReadonlyArray<P>
  /** Run one pair and record its result; must not fail. Runs uninterruptibly. */
  readonly work: (pair: P) => Effect.Effect<void>
  /** Pairs that need no effect (`can`), run at once as plain code and recorded by `run`, which must not throw. */
  readonly now?: { readonly can: (pair: P) => boolean; readonly run: (pair: P) => void }
  readonly concurrency: number
  /** Asked before a pair starts: false stops the loop after the pairs in flight (default: every pair starts). */
  readonly admit?: (pair: P) => boolean
  /** Flushing and progress; a failure (a write error) ends the loop after the pairs in flight. */
  readonly tick: { readonly every: Duration.DurationInput; readonly run: Effect.Effect<void, TE> }
}

export const run = <I, P, E, TE = never>(o: Options<I, P, E, TE>): Effect.Effect<void, E | TE> =>
  Effect.gen(function* () {
    // A unit of work: pairs one worker runs in turn (an item's plain pairs, run `now`, or one pair).
    type Unit = { readonly now: boolean; readonly pairs: ReadonlyArray<P> }
    const queue = yield* Queue.bounded<Unit | null>(Math.max(64, o.concurrency * 8))
    const units = (pairs: ReadonlyArray<P>): Array<Unit> => {
      const plain: Array<P> = [],
        rest: Array<Unit> = []
      for (const p of pairs) {
        if (o.now?.can(p) === true) plain.push(p)
        else rest.push({ now: false, pairs: [p] })
      }
      return plain.length === 0 ? rest : [{ now: true, pairs: plain }, ...rest]
    }
    // One item per chunk, so an interruption stops the reader before the next item is read.
    const producer = Stream.runForEach(o.items.pipe(Stream.rechunk(1)), (item) =>
      Queue.offerAll(queue, units(o.expand(item)))
    ).pipe(
      // Workers stop at the first null each; offered after every pair, so no pair is left behind.
      Effect.zipRight(
        Queue.offerAll(
          queue,
          Array.from({ length: o.concurrency }, () => null)
        )
      )
    )
    const refused = yield* Deferred.make<void>()
    const clock = yield* Effect.clock
    const every = Duration.toMillis(o.tick.every)
    let lastTick = Number.NEGATIVE_INFINITY
    const tick = Effect.suspend(() => {
      lastTick = clock.unsafeCurrentTimeMillis()
      return o.tick.run
    })
    const worker = Effect.gen(function* () {
      while (true) {
        const unit = yield* Queue.take(queue)
        if (unit === null) return
        for (const pair of unit.pairs) {
          if (o.admit !== undefined && !o.admit(pair)) {
            yield* Deferred.succeed(refused, undefined)
            return
          }
          if (unit.now) o.now!.run(pair)
          else yield* Effect.uninterruptible(o.work(pair))
        }
        if (clock.unsafeCurrentTimeMillis() - lastTick >= every) yield* Effect.ignore(tick)
      }
    })
    // Forked by hand: an interruption must wait for the pairs in flight before the loop ends.
    const workers = yield* Effect.forEach(Array.from({ length: o.concurrency }), () => Effect.fork(worker))
    // A failed read (a bad row) stops the workers, after the pairs they are running.
    const reader = yield* Effect.fork(
      Effect.asVoid(producer).pipe(Effect.tapErrorCause(() => Fiber.interruptAll(workers)))
    )
    const fibers = [reader, ...workers]
    // A refusal stops the others as an interruption would: after the pairs in flight.
    const stopper = yield* Effect.fork(Effect.zipRight(Deferred.await(refused), Fiber.interruptAll(fibers)))
    // A failed tick (a write error) stops the work like an interruption.
    const ticker = yield* Effect.fork(
      Effect.repeat(tick, Schedule.spaced(o.tick.every)).pipe(Effect.tapErrorCause(() => Fiber.interruptAll(fibers)))
    )
    // Awaited, not joined: the reader's failure (a bad row) is told apart from the workers it stopped.
    const awaited = yield* Effect.all([Fiber.await(reader), Fiber.awaitAll(workers)]).pipe(
      Effect.onInterrupt(() => Fiber.interruptAll(fibers)),
      Effect.exit
    )
    yield* Fiber.interrupt(stopper)
    const ticked = yield* Fiber.interrupt(ticker)
    // The last tick flushes what the last pairs wrote; its failure is the store's to report again.
    yield* Effect.ignore(o.tick.run)
    if (Exit.isFailure(ticked) && !Exit.isInterrupted(ticked)) return yield* Effect.failCause(ticked.cause)
    if (Exit.isFailure(awaited)) return yield* awaited
    const [read, work] = awaited.value
    // After a refusal, the fibers it stopped ended interrupted: that is the loop's normal end.
    const refusal = yield* Deferred.isDone(refused)
    const failed = (e: Exit.Exit<void, unknown>) => Exit.isFailure(e) && !(refusal && Cause.isInterruptedOnly(e.cause))
    if (failed(read)) return yield* read
    for (const w of work) if (failed(w)) return yield* w
  })
