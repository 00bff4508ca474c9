// core/lru.ts: the bound of every in-memory cache (tokens, rows, experiment assignments).
import { describe, expect, test } from 'bun:test'
import { Lru } from '../../src/core/lru'

describe('Lru', () => {
  test('never holds more than its bound, whatever is inserted', () => {
    const lru = new Lru<number, number>(100)
    for (let i = 0; i < 10_000; i++) {
      lru.set(i, i * 2)
      expect(lru.size).toBeLessThanOrEqual(100)
    }
    expect(lru.get(9_999)).toBe(19_998)
    expect(lru.get(0)).toBeUndefined()
  })

  test('an entry used all along survives a flood of new ones; unused old ones go', () => {
    const lru = new Lru<string, string>(10)
    lru.set('hot', 'kept')
    for (let i = 0; i < 1000; i++) {
      lru.set(`cold${i}`, 'x')
      expect(lru.get('hot')).toBe('kept')
    }
    expect(lru.get('cold0')).toBeUndefined()
    expect(lru.get('cold999')).toBe('x')
  })

  test('set replaces, delete and clear remove', () => {
    const lru = new Lru<string, number>(4)
    lru.set('a', 1)
    lru.set('b', 2)
    lru.set('c', 3) // the young generation (2) rotates: a and b are old now
    lru.set('a', 10)
    expect(lru.get('a')).toBe(10)
    expect(lru.size).toBe(3)
    lru.delete('a')
    expect(lru.get('a')).toBeUndefined()
    lru.clear()
    expect(lru.size).toBe(0)
    expect(lru.get('b')).toBeUndefined()
  })
})
