import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Both cores: many test files spend their time waiting on the processes and loopback servers
    // they start. Files share a worker's module cache (no per-file re-import of Effect and the
    // packages), so a test must not depend on module state another file may leave behind.
    maxWorkers: 2,
    minWorkers: 2,
    isolate: false,
    globalSetup: ["./vitest.setup.ts"]
  }
})
