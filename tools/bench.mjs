// Runs every benchmark (packages/*/bench/*.bench.ts) one after another, each in its own process so
// that peak-memory figures are not shared. `npm run bench -- <filter>` runs those whose path
// contains the filter.
import { spawnSync } from "node:child_process"
import { readdirSync, existsSync } from "node:fs"
import { join } from "node:path"

const filter = process.argv[2] ?? ""
const files = readdirSync("packages")
  .map((p) => join("packages", p, "bench"))
  .filter((d) => existsSync(d))
  .flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith(".bench.ts"))
      .map((f) => join(d, f))
  )
  .filter((f) => f.includes(filter))
  .sort()
let failed = 0
for (const file of files) {
  console.log(`\n=== ${file}`)
  const r = spawnSync("npx", ["tsx", "--expose-gc", file], { stdio: "inherit" })
  if (r.status !== 0) failed++
}
if (files.length === 0) console.log(`no benchmark matches "${filter}"`)
process.exit(failed === 0 ? 0 : 1)
