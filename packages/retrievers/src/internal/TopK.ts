/**
 * The first `k` items in the order `compare` gives, exactly as `[...items].sort(compare).slice(0, k)`
 * (a stable sort: equal items keep their input order), in O(n log k) instead of O(n log n): a heap
 * of the k best seen so far, whose root is the worst of them.
 *
 * @example
 * topK([5, 1, 4, 2], 2, (a, b) => a - b) // [1, 2]
 */
export const topK = <A>(items: ReadonlyArray<A>, k: number, compare: (a: A, b: A) => number): Array<A> => {
  const n = items.length
  if (k <= 0 || n === 0) return []
  // Item i comes after item j in the stable order.
  const after = (i: number, j: number): boolean => {
    const c = compare(items[i]!, items[j]!)
    return c > 0 || (c === 0 && i > j)
  }
  const size = Math.min(k, n)
  const heap = Array.from({ length: size }, (_, i) => i)
  const down = (from: number) => {
    let at = from
    for (;;) {
      const l = 2 * at + 1,
        r = l + 1
      let worst = at
      if (l < size && after(heap[l]!, heap[worst]!)) worst = l
      if (r < size && after(heap[r]!, heap[worst]!)) worst = r
      if (worst === at) return
      const t = heap[at]!
      heap[at] = heap[worst]!
      heap[worst] = t
      at = worst
    }
  }
  for (let i = (size >> 1) - 1; i >= 0; i--) down(i)
  for (let i = size; i < n; i++) {
    if (after(heap[0]!, i)) {
      heap[0] = i
      down(0)
    }
  }
  return heap.sort((i, j) => (after(i, j) ? 1 : -1)).map((i) => items[i]!)
}
