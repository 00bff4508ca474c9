// A bounded map in use order: a hit moves its key to the back, an insert past the bound drops the front (least
// recently used). For the in-memory caches of hot answers (tokens, rows, experiment assignments).
export class Lru<K, V> {
  private readonly map = new Map<K, V>()
  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const hit = this.map.get(key)
    if (hit !== undefined) {
      this.map.delete(key)
      this.map.set(key, hit)
    }
    return hit
  }

  set(key: K, value: V): void {
    if (this.map.size >= this.max && !this.map.has(key)) this.map.delete(this.map.keys().next().value as K)
    this.map.set(key, value)
  }

  delete(key: K): void {
    this.map.delete(key)
  }

  clear(): void {
    this.map.clear()
  }

  get size(): number {
    return this.map.size
  }
}
