/**
 * Reading CSV text (RFC 4180): quoted fields may hold commas, quotes (doubled) and line breaks;
 * records end with CRLF or LF; a leading byte-order mark is dropped. Each record keeps the 1-based
 * line it starts on, so errors can point at the line a spreadsheet or editor shows.
 */

export interface CsvRecord {
  readonly line: number
  readonly fields: ReadonlyArray<string>
}

export type Parsed =
  | { readonly _tag: "Records"; readonly records: ReadonlyArray<CsvRecord> }
  | { readonly _tag: "Unclosed"; readonly line: number }

/** The records of `text`, or where a quoted field is never closed. */
export const parse = (text: string): Parsed => {
  const s = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  const records: Array<CsvRecord> = []
  let fields: Array<string> = []
  let field = ""
  let line = 1
  let start = 1
  let i = 0
  const endRecord = () => {
    fields.push(field)
    records.push({ line: start, fields })
    fields = []
    field = ""
  }
  while (i < s.length) {
    const c = s[i]!
    if (c === '"' && field === "") {
      const opened = line
      i++
      for (;;) {
        if (i >= s.length) return { _tag: "Unclosed", line: opened }
        const d = s[i]!
        if (d === '"') {
          if (s[i + 1] === '"') {
            field += '"'
            i += 2
            continue
          }
          i++
          break
        }
        if (d === "\n") line++
        field += d
        i++
      }
      continue
    }
    if (c === ",") {
      fields.push(field)
      field = ""
      i++
    } else if (c === "\r" && s[i + 1] === "\n") {
      endRecord()
      i += 2
      start = ++line
    } else if (c === "\n") {
      endRecord()
      i++
      start = ++line
    } else {
      field += c
      i++
    }
  }
  if (field !== "" || fields.length > 0) endRecord()
  return { _tag: "Records", records }
}

const formula = /^'[=+\-@\t\r]/

/** A field as written before the writer's spreadsheet guard (`'=x` was `=x`; see Exports.field). */
export const unguard = (field: string): string => (formula.test(field) ? field.slice(1) : field)
