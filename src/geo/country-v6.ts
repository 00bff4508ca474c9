// The country of an IPv6 address, from the GeoLite2 IPv6 table of @ip-location-db/geolite2-country (the same package
// as IPv4). The table (about 255,000 ranges, 15 MB of text) is embedded as a file and read and parsed on the first
// IPv6 lookup only, so start-up stays cheap. Addresses are kept as four 32-bit words, ranges sorted by start.
import { readFileSync } from 'node:fs'
import tablePath from '@ip-location-db/geolite2-country/geolite2-country-ipv6.csv' with { type: 'file' }

type Table = { starts: Uint32Array; ends: Uint32Array; codes: Uint16Array; names: string[]; size: number }
let table: Table | undefined

/** An IPv6 address as four 32-bit words (big-endian order), or null if it is not one. Zone ids (%eth0) are dropped. */
export function ipv6Words(address: string): Uint32Array | null {
  let ip = address
  const zone = ip.indexOf('%')
  if (zone >= 0) ip = ip.slice(0, zone)
  if (ip.length < 2 || ip.length > 45 || !ip.includes(':')) return null
  const halves = ip.split('::')
  if (halves.length > 2) return null
  const parse = (part: string): number[] | null => {
    if (part === '') return []
    const groups: number[] = []
    const pieces = part.split(':')
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]
      // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4).
      if (i === pieces.length - 1 && piece.includes('.')) {
        const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(piece)
        if (!m) return null
        const b = m.slice(1).map(Number)
        if (b.some((x) => x > 255)) return null
        groups.push((b[0] << 8) | b[1], (b[2] << 8) | b[3])
        continue
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(piece)) return null
      groups.push(parseInt(piece, 16))
    }
    return groups
  }
  const head = parse(halves[0])
  const tail = halves.length === 2 ? parse(halves[1]) : []
  if (!head || !tail) return null
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill(0), ...tail]
  const words = new Uint32Array(4)
  for (let i = 0; i < 4; i++) words[i] = ((groups[2 * i] << 16) | groups[2 * i + 1]) >>> 0
  return words
}

const groups = new Uint16Array(8)

/**
 * Parse the address in `text` from `pos` up to `stop` (a char code) into 4 words at `out[at..at+3]`; returns the
 * position after the stop character, or -1. A plain scanner: 255,000 lines parse in a fraction of a second.
 */
function scanAddress(text: string, pos: number, stop: number, out: Uint32Array, at: number): number {
  let count = 0
  let gap = -1
  let value = 0
  let digits = 0
  let i = pos
  while (i < text.length) {
    const ch = text.charCodeAt(i)
    if (ch === stop) break
    if (ch === 58 /* : */) {
      if (text.charCodeAt(i + 1) === 58) {
        if (gap >= 0) return -1
        if (digits > 0) groups[count++] = value
        value = 0
        digits = 0
        gap = count
        i += 2
        continue
      }
      if (digits === 0 || count >= 7) return -1
      groups[count++] = value
      value = 0
      digits = 0
      i += 1
      continue
    }
    const d = ch >= 48 && ch <= 57 ? ch - 48 : ch >= 97 && ch <= 102 ? ch - 87 : ch >= 65 && ch <= 70 ? ch - 55 : -1
    if (d < 0 || digits === 4) return -1
    value = (value << 4) | d
    digits += 1
    i += 1
  }
  if (digits > 0) groups[count++] = value
  else if (gap !== count) return -1
  if (gap < 0 ? count !== 8 : count > 7) return -1
  if (gap >= 0) {
    const shift = 8 - count
    for (let g = count - 1; g >= gap; g--) groups[g + shift] = groups[g]
    for (let g = gap; g < gap + shift; g++) groups[g] = 0
  }
  for (let w = 0; w < 4; w++) out[at + w] = ((groups[2 * w] << 16) | groups[2 * w + 1]) >>> 0
  return i + 1
}

function load(): Table {
  const text = readFileSync(tablePath, 'utf8')
  let lines = 0
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines += 1
  lines += 1
  const starts = new Uint32Array(lines * 4)
  const ends = new Uint32Array(lines * 4)
  const codes = new Uint16Array(lines)
  const names: string[] = []
  const index = new Map<string, number>()
  let size = 0
  let pos = 0
  while (pos < text.length) {
    const newline = text.indexOf('\n', pos)
    const lineEnd = newline < 0 ? text.length : newline
    const afterStart = scanAddress(text, pos, 44 /* , */, starts, size * 4)
    const afterEnd = afterStart > 0 ? scanAddress(text, afterStart, 44, ends, size * 4) : -1
    if (afterEnd > 0 && afterEnd < lineEnd) {
      const code = text.slice(afterEnd, lineEnd).trim()
      let n = index.get(code)
      if (n === undefined) index.set(code, (n = names.push(code) - 1))
      codes[size] = n
      size += 1
    }
    pos = lineEnd + 1
  }
  return { starts, ends, codes, names, size }
}

/** -1, 0 or 1: the address against the 4 words at `at` of `list`. */
function compare(ip: Uint32Array, list: Uint32Array, at: number): number {
  for (let i = 0; i < 4; i++) {
    const a = ip[i]
    const b = list[at * 4 + i]
    if (a !== b) return a < b ? -1 : 1
  }
  return 0
}

/** ISO 3166-1 alpha-2 code of an IPv6 address's country, or null (not IPv6, private, unassigned, unknown). */
export function countryOfIpv6(address: string): string | null {
  const ip = ipv6Words(address)
  if (!ip) return null
  const t = (table ??= load())
  // The last range starting at or before the address, if the address is within it.
  let lo = 0
  let hi = t.size - 1
  let found = -1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (compare(ip, t.starts, mid) >= 0) {
      found = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  if (found < 0 || compare(ip, t.ends, found) > 0) return null
  return t.names[t.codes[found]]
}
