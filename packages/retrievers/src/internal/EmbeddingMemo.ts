import { Memo } from "@cupid-lab/core"
import { Deferred, Effect, Exit, FiberId } from "effect"

export interface Item {
  readonly key: string
  readonly text: string
}

/** Vectors already computed, and those being computed right now by some fiber. */
export interface State<E> {
  readonly done: Memo.Store<Float32Array>
  readonly pending: Map<string, Deferred.Deferred<Float32Array, E>>
}

export const state = <E>(capacity = 200_000): State<E> => ({ done: new Memo.Store(capacity), pending: new Map() })

/**
 * Embed items through `compute`, sending each key at most once: keys already done come from the
 * memo, keys another fiber is computing are awaited, and the rest go out in one batch.
 */
export const embed = <E>(
  memo: State<E>,
  compute: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, E>,
  items: ReadonlyArray<Item>
): Effect.Effect<ReadonlyArray<Float32Array>, E> =>
  Effect.suspend(() => {
    const out = new Array<Float32Array | undefined>(items.length)
    const waits: Array<readonly [number, Deferred.Deferred<Float32Array, E>]> = []
    const mine = new Map<string, { readonly text: string; readonly deferred: Deferred.Deferred<Float32Array, E> }>()
    items.forEach((item, i) => {
      const hit = memo.done.get(item.key)
      if (hit !== undefined) {
        out[i] = hit
        return
      }
      const waiting = memo.pending.get(item.key) ?? mine.get(item.key)?.deferred
      if (waiting !== undefined) {
        waits.push([i, waiting])
        return
      }
      const deferred = Deferred.unsafeMake<Float32Array, E>(FiberId.none)
      memo.pending.set(item.key, deferred)
      mine.set(item.key, { text: item.text, deferred })
      waits.push([i, deferred])
    })
    const own = [...mine.entries()]
    const settle = (exit: Exit.Exit<ReadonlyArray<Float32Array>, E>) =>
      Effect.sync(() => {
        own.forEach(([key, { deferred }], j) => {
          memo.pending.delete(key)
          if (Exit.isSuccess(exit)) {
            const v = exit.value[j]!
            memo.done.set(key, v)
            Deferred.unsafeDone(deferred, Exit.succeed(v))
          } else Deferred.unsafeDone(deferred, exit as Exit.Exit<never, E>)
        })
      })
    const computeOwn =
      own.length === 0 ? Effect.void : compute(own.map(([, e]) => e.text)).pipe(Effect.onExit(settle), Effect.asVoid)
    return Effect.zipRight(
      computeOwn,
      Effect.map(
        Effect.forEach(waits, ([i, d]) => Effect.map(Deferred.await(d), (v) => (out[i] = v)), { discard: true }),
        () => out as Array<Float32Array>
      )
    )
  })
