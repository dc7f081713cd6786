/**
 * A growable typed array for per-line data: numbers in 8, 4 or 1 bytes each instead of a JS array
 * of boxed values, allocated from the first value on (an unused column costs nothing). Reading past
 * the end gives the column's `pad`, so a column filled only up to the last line that had a value
 * reads the same as one padded to the end.
 *
 * @example
 * const c = Growable.doubles() // pad NaN
 * c.fill(3) // lines 0..2 have none
 * c.push(0.5) // line 3
 * c.at(3) // 0.5; c.at(9) // NaN
 */
export class Column<T extends Float64Array | Int32Array | Uint8Array> {
  data: T
  length = 0
  constructor(private readonly make: (n: number) => T, readonly pad: number) {
    this.data = make(0)
  }
  push(x: number): void {
    if (this.length === this.data.length) {
      const next = this.make(Math.max(1024, this.data.length * 2))
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = x
  }
  /** Pad with `pad` up to n values. */
  fill(n: number): void {
    while (this.length < n) this.push(this.pad)
  }
  at(i: number): number {
    return i < this.length ? this.data[i]! : this.pad
  }
  /** The values pushed so far, as a view (no copy; a later push may move the data). */
  filled(this: Column<Float64Array>): Float64Array
  filled(this: Column<Int32Array>): Int32Array
  filled(this: Column<Uint8Array>): Uint8Array
  filled(): Float64Array | Int32Array | Uint8Array {
    return this.data.subarray(0, this.length)
  }
}

/** Doubles; `pad` NaN unless given. */
export const doubles = (pad = NaN): Column<Float64Array> => new Column((n) => new Float64Array(n), pad)
/** 32-bit integers; `pad` -1 unless given. */
export const ints = (pad = -1): Column<Int32Array> => new Column((n) => new Int32Array(n), pad)
/** Bytes (flags, small codes); `pad` 0 unless given. */
export const bytes = (pad = 0): Column<Uint8Array> => new Column((n) => new Uint8Array(n), pad)
