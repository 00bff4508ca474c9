// A bounded map that keeps what is used (an approximate LRU, as cheap on a hit as a Map lookup): entries live in a
// young and an old generation of at most max/2 each. A hit in the young one changes nothing; a hit in the old one
// moves the entry to the young one; when the young one is full it becomes the old one and the old one is dropped.
// For the in-memory caches of hot answers (tokens, rows, experiment assignments): a strict LRU's delete-and-reinsert
// on every hit cost ~5 % of a cached request.
export class Lru<K, V> {
  private young = new Map<K, V>()
  private old = new Map<K, V>()
  private readonly half: number

  constructor(max: number) {
    this.half = Math.max(1, Math.ceil(max / 2))
  }

  get(key: K): V | undefined {
    const hit = this.young.get(key)
    if (hit !== undefined) return hit
    const aged = this.old.get(key)
    if (aged !== undefined) {
      this.old.delete(key)
      this.keep(key, aged)
    }
    return aged
  }

  set(key: K, value: V): void {
    this.old.delete(key)
    this.keep(key, value)
  }

  delete(key: K): void {
    this.young.delete(key)
    this.old.delete(key)
  }

  clear(): void {
    this.young.clear()
    this.old.clear()
  }

  get size(): number {
    return this.young.size + this.old.size
  }

  private keep(key: K, value: V): void {
    if (this.young.size >= this.half && !this.young.has(key)) {
      this.old = this.young
      this.young = new Map()
    }
    this.young.set(key, value)
  }
}
