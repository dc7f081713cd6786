// Models wrap JSON in code fences, preface it with prose or add a remark after it; these helpers
// find the JSON value in such an answer.

const tryParse = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

const fence = /```[A-Za-z]*[ \t]*\n?([\s\S]*?)```/g

/** The first JSON value found in a model's answer, or undefined when there is none. */
export const extract = (answer: string): { readonly value: unknown } | undefined => {
  const whole = tryParse(answer.trim())
  if (whole !== undefined) return whole
  for (const m of answer.matchAll(fence)) {
    const inner = tryParse(m[1]!.trim())
    if (inner !== undefined) return inner
  }
  // Outermost brackets: try whichever kind opens first, then the other.
  const spans = (
    [
      ["{", "}"],
      ["[", "]"]
    ] as const
  )
    .map(([open, close]) => [answer.indexOf(open), answer.lastIndexOf(close)] as const)
    .filter(([a, b]) => a >= 0 && b > a)
    .sort((x, y) => x[0] - y[0])
  for (const [a, b] of spans) {
    const inner = tryParse(answer.slice(a, b + 1))
    if (inner !== undefined) return inner
  }
  return undefined
}

/** A short, single-line excerpt of an answer for error messages. */
export const excerpt = (answer: string, max = 160): string => {
  const flat = answer.replace(/\s+/g, " ").trim()
  return flat.length <= max ? JSON.stringify(flat) : `${JSON.stringify(flat.slice(0, max))}...`
}
