/** A bounded map: when full, the entries touched least recently are dropped first. */
export class Memo<V> {
  private readonly map = new Map<string, V>()
  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.map.size
  }

  get(key: string): V | undefined {
    const v = this.map.get(key)
    if (v !== undefined) {
      this.map.delete(key)
      this.map.set(key, v)
    }
    return v
  }

  set(key: string, value: V): void {
    this.map.delete(key)
    this.map.set(key, value)
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next()
      if (oldest.done !== true) this.map.delete(oldest.value)
    }
  }

  getOrSet(key: string, compute: () => V): V {
    const hit = this.get(key)
    if (hit !== undefined) return hit
    const v = compute()
    this.set(key, v)
    return v
  }
}
