/**
 * A child process run to its end without blocking the test worker. vitest 3.2's worker RPC gives up
 * after a fixed 60 s (`Timeout calling "onTaskUpdate"`) when the worker's event loop is blocked with a
 * call in flight, which a `spawnSync` or `execFileSync` of a minute-long sweep does on a loaded
 * machine; a test awaits {@link run} instead, and its loopback servers keep answering meanwhile.
 * The result has the fields a test read from `spawnSync` (`code` is its `status`).
 *
 * @example
 * import { Subprocess } from "@cupid-lab/core/testing"
 * const r = await Subprocess.run(process.execPath, [cli, "sweep", "--config", file], { cwd: dir })
 * expect(r.code, r.stderr).toBe(0)
 */
import { spawn } from "node:child_process"

/** How a child process ended, with everything it printed. */
export interface Exit {
  /** The exit code, or null when a signal ended the process. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Options {
  readonly cwd?: string
  /** The child's whole environment (default: this process's). */
  readonly env?: NodeJS.ProcessEnv
  /** Written to the child's stdin, which is then closed (default: an empty stdin). */
  readonly input?: string
  /** After this many milliseconds the child is sent SIGTERM: a ceiling that ends a hung child. */
  readonly timeout?: number
}

/**
 * Run `command` with `args` to its end and collect its stdout and stderr (decoded as UTF-8 once
 * whole, so a character split between two reads stays whole). Rejects only when the process could
 * not be started (e.g. ENOENT); a nonzero exit is a result.
 */
export const run = (command: string, args: ReadonlyArray<string>, options: Options = {}): Promise<Exit> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      timeout: options.timeout
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout!.on("data", (d: Buffer) => stdout.push(d))
    child.stderr!.on("data", (d: Buffer) => stderr.push(d))
    child.on("error", reject)
    child.on("close", (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8")
      })
    )
    if (options.input !== undefined && child.stdin !== null) {
      // A child that exits without reading all of its input is judged by its exit, not by EPIPE here.
      child.stdin.on("error", () => {})
      child.stdin.end(options.input)
    }
  })
