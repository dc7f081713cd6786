/**
 * The process that started the CLI with an IPC channel (the Nx executor): the channel closes when it
 * ends, even on a SIGKILL, and the CLI then stops as on SIGTERM instead of holding the run's lock.
 *
 * @example
 * if (ParentProcess.linked()) yield* ParentProcess.gone // then stop
 */
import { Effect } from "effect"

/** Whether this process was started with an IPC channel. */
export const linked = (): boolean => process.channel !== undefined

/** Completes when the IPC channel closes; never without one. Interrupted, it lets go of the channel, which would keep the process up. */
export const gone: Effect.Effect<void> = Effect.async<void>((resume) => {
  if (process.channel === undefined) return
  if (!process.connected) return resume(Effect.void)
  const onDisconnect = () => resume(Effect.void)
  process.once("disconnect", onDisconnect)
  return Effect.sync(() => void process.off("disconnect", onDisconnect))
})
