/**
 * Sentence vectors from token vectors: `mean` averages the tokens the attention mask keeps
 * (padding excluded), `cls` takes the first token; `normalize` scales to unit length.
 */
export type Pooling = "mean" | "cls"

export const pool = (
  hidden: ArrayLike<number>,
  dims: readonly [batch: number, sequence: number, width: number],
  mask: ArrayLike<number | bigint>,
  pooling: Pooling,
  normalize: boolean
): Array<Float32Array> => {
  const [batch, sequence, width] = dims
  const out: Array<Float32Array> = []
  for (let b = 0; b < batch; b++) {
    const v = new Float64Array(width)
    if (pooling === "cls") {
      for (let d = 0; d < width; d++) v[d] = hidden[b * sequence * width + d]!
    } else {
      let kept = 0
      for (let t = 0; t < sequence; t++) {
        if (Number(mask[b * sequence + t]) === 0) continue
        kept++
        const at = (b * sequence + t) * width
        for (let d = 0; d < width; d++) v[d]! += hidden[at + d]!
      }
      if (kept > 0) for (let d = 0; d < width; d++) v[d]! /= kept
    }
    if (normalize) {
      let norm = 0
      for (let d = 0; d < width; d++) norm += v[d]! * v[d]!
      norm = Math.sqrt(norm)
      if (norm > 0) for (let d = 0; d < width; d++) v[d]! /= norm
    }
    out.push(Float32Array.from(v))
  }
  return out
}

/** One relevance score per row of classifier logits: the logit itself, or the positive-minus-negative margin. */
export const relevance = (logits: ArrayLike<number>, rows: number, labels: number): Array<number> | string => {
  if (labels !== 1 && labels !== 2) return `expected 1 or 2 logits per pair, got ${labels}`
  return Array.from({ length: rows }, (_, r) => (labels === 1 ? logits[r]! : logits[r * 2 + 1]! - logits[r * 2]!))
}
