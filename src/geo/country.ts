// Approximate location: the country of an IP address, from the GeoLite2 country tables shipped by
// @ip-location-db/geolite2-country (embedded in the binary as files; each read and parsed on its first lookup, so the
// tables cost nothing at start-up). IPv6: country-v6.ts. Private, reserved and unlisted addresses are "Unknown".
import { readFileSync } from 'node:fs'
import tablePath from '@ip-location-db/geolite2-country/geolite2-country-ipv4-num.csv' with { type: 'file' }
import { countryOfIpv6 } from './country-v6'

let starts: Uint32Array | undefined
let ends: Uint32Array
let codes: string[]

function load() {
  const lines = readFileSync(tablePath, 'utf8').split('\n').filter(Boolean)
  starts = new Uint32Array(lines.length)
  ends = new Uint32Array(lines.length)
  codes = new Array(lines.length)
  lines.forEach((line, i) => {
    const [s, e, c] = line.split(',')
    starts![i] = Number(s)
    ends[i] = Number(e)
    codes[i] = c.trim()
  })
}

function ipv4ToNumber(ip: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip.startsWith('::ffff:') ? ip.slice(7) : ip)
  if (!m) return null
  const parts = m.slice(1).map(Number)
  if (parts.some((p) => p > 255)) return null
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3]
}

/** ISO 3166-1 alpha-2 code of an IP's country, or null. */
export function countryOf(ip: string): string | null {
  const n = ipv4ToNumber(ip)
  if (n === null) return ip.includes(':') ? countryOfIpv6(ip) : null
  if (!starts) load()
  let lo = 0
  let hi = starts!.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if (starts![mid] > n) hi = mid - 1
    else if (ends[mid] < n) lo = mid + 1
    else return codes[mid]
  }
  return null
}

// Built on first use: constructing it loads ICU's region names (~7 ms), too much for every start.
let names: Intl.DisplayNames | undefined

/** A human-readable approximate location ("Germany"), or "Unknown". */
export function locationOf(ip: string): string {
  const code = countryOf(ip)
  if (!code) return 'Unknown'
  names ??= new Intl.DisplayNames(['en'], { type: 'region' })
  return names.of(code) ?? code
}
