// Nx generator: `npx nx g @cupid-lab/retrievers:retriever my-retriever`.
// Plain CommonJS so that Nx loads it with the toolchain as installed (no transpiler needed).
"use strict"
const path = require("node:path")
const { generateFiles, names, readProjectConfiguration } = require("@nx/devkit")

const kebab = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/

/**
 * Adds the plugin to `src/Builtins.ts` (import + list entry) and to the `src/index.ts` barrel.
 * Both edits are textual and idempotent; a Builtins.ts without a `plugins` array is an error.
 */
function register(tree, sourceRoot, className) {
  const builtinsPath = path.posix.join(sourceRoot, "Builtins.ts")
  const builtins = tree.read(builtinsPath, "utf-8")
  if (builtins === null) throw new Error(`${builtinsPath} does not exist`)
  const importLine = `import * as ${className} from "./${className}.js"`
  let next = builtins
  if (!next.includes(importLine)) {
    const imports = [...next.matchAll(/^import .*$/gm)]
    const last = imports[imports.length - 1]
    const at = last === undefined ? 0 : last.index + last[0].length + 1
    next = `${next.slice(0, at)}${importLine}\n${next.slice(at)}`
  }
  const list = /export const plugins(?::[^=]*)?=\s*\[([\s\S]*?)\]/m.exec(next)
  if (list === null) throw new Error(`${builtinsPath} has no \`export const plugins = [...]\` list to add ${className}.plugin to`)
  if (!list[1].includes(`${className}.plugin`)) {
    const body = list[1].replace(/\s+$/, "")
    const entry = body.trim().length === 0 ? `\n  ${className}.plugin\n` : `${body.replace(/,?$/, ",")}\n  ${className}.plugin\n`
    const start = list.index + list[0].indexOf("[") + 1
    next = `${next.slice(0, start)}${entry}${next.slice(start + list[1].length)}`
  }
  tree.write(builtinsPath, next)

  const indexPath = path.posix.join(sourceRoot, "index.ts")
  const index = tree.read(indexPath, "utf-8")
  const exportLine = `export * as ${className} from "./${className}.js"`
  if (index !== null && !index.includes(exportLine)) tree.write(indexPath, `${index.replace(/\n*$/, "\n")}${exportLine}\n`)
}

async function retrieverGenerator(tree, options) {
  const name = String(options.name ?? "").trim()
  if (!kebab.test(name)) throw new Error(`"${name}" is not a kebab-case plugin name (e.g. my-retriever)`)
  const project = readProjectConfiguration(tree, options.project ?? "retrievers")
  const sourceRoot = project.sourceRoot ?? path.posix.join(project.root, "src")
  const n = names(name)
  const source = path.posix.join(sourceRoot, `${n.className}.ts`)
  if (tree.exists(source)) throw new Error(`${source} already exists; pick another name or edit that file`)
  const builtins = tree.read(path.posix.join(sourceRoot, "Builtins.ts"), "utf-8") ?? ""
  if (new RegExp(`name:\\s*"${name}"`).test(builtins)) throw new Error(`a retriever named "${name}" is already registered`)
  const description = String(options.description ?? "Sessions ranked by how many of the request's content words they contain.")
  generateFiles(tree, path.join(__dirname, "files"), project.root, {
    name,
    className: n.className,
    fileName: n.fileName,
    description,
    descriptionLiteral: JSON.stringify(description),
    tmpl: ""
  })
  register(tree, sourceRoot, n.className)
}

module.exports = retrieverGenerator
module.exports.default = retrieverGenerator
module.exports.register = register
