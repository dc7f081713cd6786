// The Nx executor of the cupid-lab targets (experiments:sweep, report, compare, synthesize, data and
// core:data). It starts `node packages/experiments/dist/cli.mjs <command> <arguments>` with the
// arguments given after the target exactly as the user's shell delivered them, as an argument vector:
// no shell reads them again, so a cell name such as `bm25(k=2,b=0.75)` arrives whole (nx:run-commands
// joins them into one /bin/sh command line, where the parenthesis is a syntax error).
//
// Before that it rebuilds the CLI when a source is newer than the build (`build-cli.mjs --if-stale`),
// so a target is one Nx task: no dependency header, and no terminal UI for two tasks.
//
// Signals: the CLI runs in a session of its own, as nx:run-commands runs its commands, so a Ctrl-C
// reaches it only as the SIGTERM Nx sends the task's process tree (the CLI then finishes the pairs in
// flight and writes its outputs). This process stays until the CLI has exited.
//
// The CLI gets an IPC channel to this process, which closes when this process ends, however it ends:
// the caller's session SIGKILLed, a closed terminal, a CI step's timeout. The CLI then stops as on
// SIGTERM, so it never goes on writing a run directory (and holding its lock) as an orphan.
"use strict"
const { spawn } = require("node:child_process")
const os = require("node:os")
const path = require("node:path")

/**
 * Run `node <script> <args>` in `cwd`; resolves with its exit code (128 + n for a signal). `linked`:
 * with an IPC channel, which tells the child when this process is gone.
 */
const node = (script, args, cwd, { linked = false } = {}) =>
  new Promise((resolve) => {
    const stdio = linked ? ["inherit", "inherit", "inherit", "ipc"] : "inherit"
    const child = spawn(process.execPath, [script, ...args], { cwd, stdio, detached: process.platform !== "win32" })
    const running = () => child.exitCode === null && child.signalCode === null
    // A Ctrl-C reaches the CLI as Nx's SIGTERM to the task's processes; a SIGTERM or SIGHUP sent to
    // this process alone is passed on. Either way this process waits for the CLI to exit.
    const pass = () => {
      if (running()) child.kill("SIGTERM")
    }
    const handlers = [
      ["SIGINT", () => {}],
      ["SIGTERM", pass],
      ["SIGHUP", pass]
    ]
    const lastResort = () => {
      if (running()) child.kill("SIGKILL")
    }
    for (const [signal, handler] of handlers) process.on(signal, handler)
    process.on("exit", lastResort)
    const done = (code) => {
      for (const [signal, handler] of handlers) process.off(signal, handler)
      process.off("exit", lastResort)
      resolve(code)
    }
    child.on("error", (e) => {
      process.stderr.write(`error: cannot start ${process.execPath} ${script}: ${e.message}\n`)
      done(1)
    })
    child.on("exit", (code, signal) => done(code ?? 128 + (os.constants.signals[signal] ?? 0)))
  })

module.exports = async function cli(options, context) {
  const root = context.root
  const built = await node(path.join(root, "tools", "build-cli.mjs"), ["--if-stale", "--quiet"], root)
  if (built !== 0) return { success: false }
  const code = await node(
    path.join(root, "packages", "experiments", "dist", "cli.mjs"),
    [...options.command, ...(options.__unparsed__ ?? [])],
    root,
    {
      linked: true
    }
  )
  return { success: code === 0 }
}
