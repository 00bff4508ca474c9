// The in-memory caches are bounded by what they hold, not only by their entry count (db/cache.ts): a client asking
// many big pages, or big lobbies, must not grow the server's memory without end. Every read stays correct.
import { describe, expect, test } from 'bun:test'
import { PageCache, rowCache } from '../../src/db/cache'

describe('RowCache with a budget', () => {
  test('past its total it starts over empty; a value over an eighth of it is never kept', () => {
    const cache = rowCache<string, string>('test-bounded', 1000, { weigh: (v) => v.length, total: 100 })
    let loads = 0
    const read = (key: string, value: string) =>
      cache.read(key, () => {
        loads++
        return value
      })
    expect(read('a', 'x'.repeat(10))).toBe('x'.repeat(10))
    expect(read('a', 'unused')).toBe('x'.repeat(10)) // kept
    expect(loads).toBe(1)
    for (let i = 0; i < 9; i++) read(`k${i}`, 'y'.repeat(10)) // 100 in all: still within
    expect(read('a', 'unused')).toBe('x'.repeat(10))
    expect(loads).toBe(10)
    read('over', 'z'.repeat(10)) // 110: the cache starts over with this one
    expect(read('a', 'again')).toBe('again')
    expect(loads).toBe(12)
    const big = 'b'.repeat(13) // over 100 / 8
    read('big', big)
    read('big', big)
    expect(loads).toBe(14)
  })
})

describe('PageCache', () => {
  test('pages past the character budget are dropped, pages over a sixteenth are never kept; answers stay right', async () => {
    const pages = new PageCache('test-pages-a', 100, 100, 1600)
    let builds = 0
    const page = (owner: string, query: string, text: string) =>
      pages.read(owner, query, 0, () => {
        builds++
        return text
      })
    expect(await page('c1', 'q', 'a'.repeat(100))).toBe('a'.repeat(100))
    expect(await page('c1', 'q', 'unused')).toBe('a'.repeat(100))
    expect(builds).toBe(1)
    for (let i = 0; i < 15; i++) await page('c2', `q${i}`, 'p'.repeat(100)) // 1600 in all
    expect(await page('c1', 'q', 'unused')).toBe('a'.repeat(100))
    expect(builds).toBe(16)
    await page('c3', 'q', 'n'.repeat(100)) // 1700: everything dropped
    expect(await page('c1', 'q', 'rebuilt')).toBe('rebuilt')
    expect(builds).toBe(18)
    await page('c4', 'q', 'h'.repeat(101)) // over 1600 / 16
    expect(await page('c4', 'q', 'fresh')).toBe('fresh')
    expect(builds).toBe(20)
  })

  test('a newer version of the rows it shows makes the page again', async () => {
    const pages = new PageCache('test-pages-b', 10, 10, 10_000)
    expect(await pages.read('c', 'q', 1, () => 'v1')).toBe('v1')
    expect(await pages.read('c', 'q', 1, () => 'unused')).toBe('v1')
    expect(await pages.read('c', 'q', 2, () => 'v2')).toBe('v2')
  })
})
