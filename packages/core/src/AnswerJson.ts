/**
 * JSON in a model's answer, read one way everywhere (stages, scorers, synthesis). Models wrap JSON
 * in code fences, preface it with prose or add a remark after it: {@link extract} finds the value
 * in such an answer; {@link wholeObject} accepts only an answer that is one JSON object, for the
 * stages whose answer format is a strict contract.
 *
 * @example
 * AnswerJson.extract('Here it is:\n```json\n{"a": 1}\n```') // { value: { a: 1 } }
 * AnswerJson.wholeObject(' {"a": 1} ') // { a: 1 }
 */

const tryParse = (text: string): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

const fence = /```[A-Za-z]*[ \t]*\n?([\s\S]*?)```/g

/**
 * The first JSON value found in an answer: the whole answer, else each fenced block in order, else
 * the outermost brackets (whichever of `{` and `[` opens first, then the other); undefined when none parses.
 */
export const extract = (answer: string): { readonly value: unknown } | undefined => {
  const whole = tryParse(answer.trim())
  if (whole !== undefined) return whole
  for (const m of answer.matchAll(fence)) {
    const inner = tryParse(m[1]!.trim())
    if (inner !== undefined) return inner
  }
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

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/** The answer as a JSON object when the whole of it (trimmed) is one; otherwise undefined. */
export const wholeObject = (answer: string): Record<string, unknown> | undefined => {
  const t = answer.trim()
  if (!t.startsWith("{")) return undefined
  const parsed = tryParse(t)
  return parsed !== undefined && isObject(parsed.value) ? parsed.value : undefined
}

/** A short, single-line excerpt of an answer for error messages, quoted as JSON. */
export const excerpt = (answer: string, max = 160): string => {
  const flat = answer.replace(/\s+/g, " ").trim()
  return flat.length <= max ? JSON.stringify(flat) : `${JSON.stringify(flat.slice(0, max))}...`
}
