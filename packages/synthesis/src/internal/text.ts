// Word runs, as the sample validator counts them (docs/sample-data.md): lowercase letter and digit
// runs, apostrophes inside words dropped.

export const words = (text: string): ReadonlyArray<string> =>
  text
    .toLowerCase()
    .replace(/['\u2019]/g, "")
    .match(/[\p{L}\p{N}]+/gu) ?? []

export const runs = (tokens: ReadonlyArray<string>, n: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i + n <= tokens.length; i++) out.push(tokens.slice(i, i + n).join(" "))
  return out
}

/** The first `n`-word run of `phrase` that `text` contains, if any. */
export const sharedRun = (text: string, phrase: string, n: number): string | undefined => {
  const inText = new Set(runs(words(text), n))
  return runs(words(phrase), n).find((run) => inText.has(run))
}

/** Whether `text` names `name` (case and spacing ignored). */
export const names = (text: string, name: string): boolean => {
  const t = ` ${words(text).join(" ")} `
  const n = words(name).join(" ")
  return n !== "" && t.includes(` ${n} `)
}

export const excerpt = (text: string, max = 120): string => {
  const t = text.replace(/\s+/g, " ").trim()
  return t.length > max ? `${t.slice(0, max)}...` : t
}

/** Sentences of a text (a rough split on terminal punctuation). */
export const sentences = (text: string): number => (text.trim().match(/[^.!?]+[.!?]+(\s|$)|[^.!?]+$/g) ?? []).length
