/**
 * A growable column of 32-bit integers: 4 bytes a value instead of a JS array of numbers, grown
 * by doubling. `data` holds the values in [0, length) (a push may replace it with a larger array).
 *
 * @example
 * const c = Growable.ints()
 * c.push(7)
 * c.data[0] // 7; c.length // 1
 */
export class Ints {
  data = new Int32Array(0)
  length = 0
  push(x: number): void {
    if (this.length === this.data.length) {
      const next = new Int32Array(Math.max(1024, this.data.length * 2))
      next.set(this.data)
      this.data = next
    }
    this.data[this.length++] = x
  }
}

export const ints = (): Ints => new Ints()
