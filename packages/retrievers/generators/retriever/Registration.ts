/**
 * The generator's edits of the package's source, made on its syntax tree (TypeScript's parser) and
 * applied with `@nx/devkit`'s `applyChangesToString`: the plugin list in `Builtins.ts` gets an
 * import and an entry, the `index.ts` barrel an export. Both are idempotent.
 *
 * @example
 * addToBuiltins("src/Builtins.ts", text, "TitleMatch") // text with `import * as TitleMatch ...` and `TitleMatch.plugin`
 * definedNames("src/Bm25.ts", text)                    // ["bm25"]
 */
import { applyChangesToString, ChangeType, type StringChange } from "@nx/devkit"
import ts from "typescript"

const parse = (file: string, text: string) => ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)

const moduleOf = (statement: ts.Statement): string | undefined =>
  (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
  statement.moduleSpecifier !== undefined &&
  ts.isStringLiteral(statement.moduleSpecifier)
    ? statement.moduleSpecifier.text
    : undefined

/** The array literal of `export const plugins = [...]`, if the file has one. */
const pluginList = (source: ts.SourceFile): ts.ArrayLiteralExpression | undefined => {
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue
    for (const d of statement.declarationList.declarations) {
      if (
        ts.isIdentifier(d.name) &&
        d.name.text === "plugins" &&
        d.initializer !== undefined &&
        ts.isArrayLiteralExpression(d.initializer)
      ) {
        return d.initializer
      }
    }
  }
  return undefined
}

/**
 * `Builtins.ts` with `import * as <module> from "./<module>.js"` among its relative imports (in
 * order of module path) and `<module>.plugin` at the end of its `plugins` list.
 */
export const addToBuiltins = (file: string, text: string, module: string): string => {
  const source = parse(file, text)
  const list = pluginList(source)
  if (list === undefined)
    throw new Error(`${file} has no \`export const plugins = [...]\` list to add ${module}.plugin to`)
  const specifier = `./${module}.js`
  const changes: Array<StringChange> = []
  const imports = source.statements.filter(ts.isImportDeclaration)
  if (!imports.some((i) => moduleOf(i) === specifier)) {
    const line = `import * as ${module} from "${specifier}"`
    const next = imports.find((i) => (moduleOf(i) ?? "").startsWith("./") && (moduleOf(i) ?? "") > specifier)
    const last = imports.at(-1)
    changes.push(
      next !== undefined
        ? { type: ChangeType.Insert, index: next.getStart(source), text: `${line}\n` }
        : last !== undefined
          ? { type: ChangeType.Insert, index: last.getEnd(), text: `\n${line}` }
          : { type: ChangeType.Insert, index: source.statements[0]?.getStart(source) ?? text.length, text: `${line}\n` }
    )
  }
  const entry = `${module}.plugin`
  if (!list.elements.some((e) => e.getText(source) === entry)) {
    const elements = [...list.elements.map((e) => e.getText(source)), entry]
    changes.push(
      { type: ChangeType.Delete, start: list.getStart(source), length: list.getWidth(source) },
      { type: ChangeType.Insert, index: list.getStart(source), text: `[\n  ${elements.join(",\n  ")}\n]` }
    )
  }
  return applyChangesToString(text, changes)
}

/** The barrel with `export * as <module> from "./<module>.js"` after its last statement, unless it has it. */
export const addToIndex = (file: string, text: string, module: string): string => {
  const source = parse(file, text)
  const specifier = `./${module}.js`
  if (source.statements.some((s) => ts.isExportDeclaration(s) && moduleOf(s) === specifier)) return text
  const last = source.statements.at(-1)
  const at = last === undefined ? 0 : last.getEnd()
  const line = `export * as ${module} from "${specifier}"`
  return applyChangesToString(text, [
    { type: ChangeType.Insert, index: at, text: last === undefined ? `${line}\n` : `\n${line}` }
  ])
}

const pluginHelpers = new Set(["retriever", "goldRetriever", "plugin"])

/** Names given to `Plugin.retriever({ name })`, `Plugin.goldRetriever(...)` and `Ranker.plugin(...)` calls in a file. */
export const definedNames = (file: string, text: string): Array<string> => {
  const names: Array<string> = []
  const visit = (node: ts.Node): void => {
    if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      pluginHelpers.has(node.expression.name.text) &&
      node.arguments[0] !== undefined &&
      ts.isObjectLiteralExpression(node.arguments[0])
    ) {
      for (const p of node.arguments[0].properties) {
        if (
          ts.isPropertyAssignment(p) &&
          ts.isIdentifier(p.name) &&
          p.name.text === "name" &&
          ts.isStringLiteralLike(p.initializer)
        )
          names.push(p.initializer.text)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(parse(file, text))
  return names
}
