/**
 * A bounded map for memoizing pure functions of text. Reads cost one lookup (hits do not reorder
 * anything); when full, the oldest insertions are dropped first. For a sweep, where the same texts
 * come back for every cell, insertion order is as good as recency and much cheaper.
 */
export class Memo<V> {
  private readonly map = new Map<string, V>()
  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.map.size
  }

  get(key: string): V | undefined {
    return this.map.get(key)
  }

  set(key: string, value: V): void {
    if (!this.map.has(key) && this.map.size >= this.capacity) {
      const oldest = this.map.keys().next()
      if (oldest.done !== true) this.map.delete(oldest.value)
    }
    this.map.set(key, value)
  }

  getOrSet(key: string, compute: () => V): V {
    const hit = this.map.get(key)
    if (hit !== undefined) return hit
    const v = compute()
    this.set(key, v)
    return v
  }
}
