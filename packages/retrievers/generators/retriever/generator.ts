/**
 * Nx generator: `npx nx g @cupid-lab/retrievers:retriever my-retriever`. Writes a ranker
 * (`Ranker.plugin`: name, description, options, score) and its conformance test, adds it to the
 * plugin list in `Builtins.ts` and to the `index.ts` barrel (edits made on the syntax tree, see
 * Registration.ts), and formats every file it wrote. Nx loads it through `index.cjs`.
 *
 * @example
 * await retrieverGenerator(tree, { name: "title-match", description: "Sessions whose first message shares the request's words." })
 */
import { generateFiles, names, readProjectConfiguration, type Tree } from "@nx/devkit"
import * as path from "node:path"
import { format } from "./Format.js"
import { addToBuiltins, addToIndex, definedNames } from "./Registration.js"

export interface Options {
  /** As configs write it after `use:` (kebab-case). */
  readonly name: string
  readonly description?: string
  /** The project that holds the retriever plugins. */
  readonly project?: string
}

export const defaultDescription = "Sessions ranked by the share of the request's content words they use."

const kebab = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/

const read = (tree: Tree, file: string): string => {
  const text = tree.read(file, "utf-8")
  if (text === null) throw new Error(`${file} does not exist`)
  return text
}

/** The `.ts` files under `dir` (not recursing into `testing/` or `internal/`, which hold no plugins). */
const sources = (tree: Tree, dir: string): Array<string> =>
  tree
    .children(dir)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.posix.join(dir, f))

export const retrieverGenerator = async (tree: Tree, options: Options): Promise<void> => {
  const name = String(options.name ?? "").trim()
  if (!kebab.test(name)) throw new Error(`"${name}" is not a kebab-case plugin name (e.g. my-retriever)`)
  const project = readProjectConfiguration(tree, options.project ?? "retrievers")
  const sourceRoot = project.sourceRoot ?? path.posix.join(project.root, "src")
  const n = names(name)
  const source = path.posix.join(sourceRoot, `${n.className}.ts`)
  if (tree.exists(source)) throw new Error(`${source} already exists; pick another name or edit that file`)
  const taken = sources(tree, sourceRoot).find((f) => definedNames(f, read(tree, f)).includes(name))
  if (taken !== undefined) throw new Error(`a retriever named "${name}" is already defined in ${taken}`)
  const description = options.description ?? defaultDescription
  generateFiles(tree, path.join(__dirname, "files"), project.root, {
    name,
    className: n.className,
    fileName: n.fileName,
    description,
    descriptionLiteral: JSON.stringify(description),
    tmpl: ""
  })
  const builtins = path.posix.join(sourceRoot, "Builtins.ts")
  tree.write(builtins, addToBuiltins(builtins, read(tree, builtins), n.className))
  const index = path.posix.join(sourceRoot, "index.ts")
  if (tree.exists(index)) tree.write(index, addToIndex(index, read(tree, index), n.className))
  for (const change of tree.listChanges()) {
    if (change.type !== "DELETE" && change.path.endsWith(".ts") && change.content !== null) {
      tree.write(change.path, format(change.path, change.content.toString("utf-8")))
    }
  }
}

export default retrieverGenerator
