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
    // A worker's calls to this process wait up to 10 minutes for an answer, not vitest 3.2's fixed
    // 60 s ("Timeout calling onTaskUpdate", vitest#11082): a test that computes for a minute on a
    // loaded machine (a 10,000-session history) blocks its worker's event loop with a call in
    // flight. No option sets it; patches/vitest+3.2.7.patch does (applied by `npm ci`/`npm install`
    // through patch-package). Long child processes still belong in async spawns (`Subprocess.run`
    // and `CompiledCli.build` of @cupid-lab/core/testing).
    globalSetup: ["./vitest.setup.ts"]
  }
})
