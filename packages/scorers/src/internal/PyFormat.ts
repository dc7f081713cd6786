// Python's `str.format` on the authors' templates: their fields read once into pieces, then filled.
// Fields are `{}` (numbered in turn), `{0}`, or a name the caller lists (`{question}`, its place
// in `names`); `{{` and `}}` are braces; anything else is refused with its offset.

/** Literal text, or the index of a `str.format` argument. */
export type Piece = string | number

export const pieces = (template: string, names: ReadonlyArray<string> = []): ReadonlyArray<Piece> | string => {
  const out: Array<Piece> = []
  let buf = ""
  let auto = 0
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!
    const next = template[i + 1]
    if ((c === "{" && next === "{") || (c === "}" && next === "}")) {
      buf += c
      i++
    } else if (c === "{") {
      const end = template.indexOf("}", i)
      const field = end < 0 ? undefined : template.slice(i + 1, end)
      const index =
        field === undefined ? -1 : /^\d*$/.test(field) ? (field === "" ? auto++ : Number(field)) : names.indexOf(field)
      if (index < 0) return `unsupported format field at offset ${i}`
      if (buf !== "") out.push(buf)
      buf = ""
      out.push(index)
      i = end
    } else if (c === "}") return `single '}' at offset ${i}`
    else buf += c
  }
  if (buf !== "") out.push(buf)
  return out
}

/** `template.format(*args)` (or with the named arguments in the order `pieces` was given their names). */
export const fill = (template: ReadonlyArray<Piece>, args: ReadonlyArray<string>): string =>
  template.map((p) => (typeof p === "number" ? (args[p] ?? "") : p)).join("")
