#!/usr/bin/env node
// The `cupid-lab` command: runs the compiled CLI, which `npm install` builds (tools/build-cli.mjs).
import * as fs from "node:fs"

const cli = new URL("../dist/cli.mjs", import.meta.url)
if (!fs.existsSync(cli)) {
  process.stderr.write(
    "error: the CLI is not built yet; run `npm install` (or `node tools/build-cli.mjs`) in the repository\n"
  )
  process.exit(1)
}
await import(cli.href)
