// The text of the first element named `name`, as BeautifulSoup(text, "html.parser").find(name).text
// gives it, or undefined when there is none. Enough of Python's html.parser and bs4's tree builder
// for judge replies: tag names are case-insensitive; an end tag closes the innermost open element of
// its name and every element inside it, and one with no open element of its name is ignored; an
// element never closed runs to the end; void elements (br, img, ...) hold nothing; comments,
// declarations and processing instructions are not text; script and style hold raw text; character
// references are decoded (named ones: the common few; an unknown `&name;` reads "&name", as bs4's).
// A `<` that starts no tag is text.
import { Python } from "@cupid-lab/core"

const voids = new Set(
  "area base br col embed hr img input keygen link menuitem meta param source track wbr basefont bgsound command frame image isindex nextid spacer".split(
    " "
  )
)
const raw = new Set(["script", "style"])
const named: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" }

const decode = (text: string): string =>
  text.replace(/&(#[0-9]+|#[xX][0-9a-fA-F]+|[a-zA-Z][-.a-zA-Z0-9]*);?/g, (_, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "\ufffd"
    }
    return named[ref] ?? `&${ref}`
  })

interface Node {
  readonly name: string
  readonly parts: Array<string | Node>
}

const startTag =
  /^<([a-zA-Z][^\t\n\r\f />\x00]*)(?:[\s/]+(?:[^\s/>][^\s/=>]*)(?:\s*=+\s*(?:'[^']*'|"[^"]*"|(?!['"])[^>\s]*))?)*\s*\/?\s*>/
const endTag = /^<\/([a-zA-Z][^\t\n\r\f />\x00]*)[^>]*>/

const parse = (text: string): Node => {
  const root: Node = { name: "", parts: [] }
  const open: Array<Node> = [root]
  const top = () => open[open.length - 1]!
  let i = 0
  let buf = ""
  const flush = () => {
    if (buf !== "") top().parts.push(decode(buf))
    buf = ""
  }
  while (i < text.length) {
    const lt = text.indexOf("<", i)
    if (lt < 0) {
      buf += text.slice(i)
      break
    }
    buf += text.slice(i, lt)
    i = lt
    const rest = text.slice(i)
    const start = startTag.exec(rest)
    const end = start === null ? endTag.exec(rest) : null
    if (start !== null) {
      flush()
      const name = start[1]!.toLowerCase()
      i += start[0].length
      if (voids.has(name)) continue
      const node: Node = { name, parts: [] }
      top().parts.push(node)
      if (raw.has(name)) {
        const close = text.toLowerCase().indexOf(`</${name}`, i)
        const stop = close < 0 ? text.length : close
        node.parts.push(text.slice(i, stop))
        i = stop
        continue
      }
      if (!start[0].endsWith("/>")) open.push(node)
    } else if (end !== null) {
      flush()
      const name = end[1]!.toLowerCase()
      const at = open.map((n) => n.name).lastIndexOf(name)
      if (at > 0) open.length = at
      i += end[0].length
    } else if (rest.startsWith("<!--")) {
      flush()
      const close = text.indexOf("-->", i + 4)
      i = close < 0 ? text.length : close + 3
    } else if (/^<[!?]/.test(rest)) {
      flush()
      const close = text.indexOf(">", i)
      i = close < 0 ? text.length : close + 1
    } else {
      buf += "<"
      i++
    }
  }
  flush()
  return root
}

const textOf = (node: Node): string => node.parts.map((p) => (typeof p === "string" ? p : textOf(p))).join("")

const find = (node: Node, name: string): Node | undefined => {
  for (const p of node.parts) {
    if (typeof p === "string") continue
    if (p.name === name) return p
    const inner = find(p, name)
    if (inner !== undefined) return inner
  }
  return undefined
}

/** `tag.text` of `soup.find(name)`, or undefined when no element has that name. */
export const findText = (text: string, name: string): string | undefined => {
  const node = find(parse(text), name.toLowerCase())
  return node === undefined ? undefined : textOf(node)
}

/** Their `tag.text.strip() if tag else ""`. */
export const strippedText = (text: string, name: string): string => Python.strip(findText(text, name) ?? "")
