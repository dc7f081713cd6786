import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    // Ceilings that only end a hung test: a busy machine (other suites on the same two cores) can
    // make a test that takes seconds alone take minutes. No test sets a shorter one of its own.
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: "forks",
    // Both cores: many test files spend their time waiting on the processes and loopback servers
    // they start. Files share a worker's module cache (no per-file re-import of Effect and the
    // packages), so a test must not depend on module state another file may leave behind.
    maxWorkers: 2,
    minWorkers: 2,
    isolate: false,
    // No option here raises the worker's RPC timeout ("Timeout calling onTaskUpdate"): in vitest 3.2 it
    // is birpc's fixed 60 s (vitest#11082). It fires when a worker's event loop is blocked for longer
    // with a call in flight (a long spawnSync/execFileSync in a test on a loaded machine), so long
    // child processes belong in async spawns (`Subprocess.run` and `CompiledCli.build` of
    // @cupid-lab/core/testing), not in a bigger timeout.
    globalSetup: ["./vitest.setup.ts"]
  }
})
