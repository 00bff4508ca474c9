// The one key every per-IP limit counts a client under (core/ratelimit.ts perIp, the Gateway's and the remote-auth
// socket counts, the per-route limits of anonymous callers): an IPv4 address as it is; an IPv6 address by its /64,
// since one subscriber (every home line, every VPS) holds a whole /64 and counting single addresses would hand each
// of them 2^64 budgets; an IPv4-mapped IPv6 address (::ffff:192.0.2.1, ::ffff:c000:201) as its IPv4 address.
// scripts/check-structure.ts fails a limit or a per-IP map that keys by the raw address instead.

declare const brand: unique symbol
/** A client address as a limit counts it: only ipKey() makes one, so a Map<IpKey, ...> cannot take a raw address. */
export type IpKey = string & { readonly [brand]: 'IpKey' }

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail included), or null if it is not one. */
function groupsOf(address: string): number[] | null {
  let text = address
  const tail = text.lastIndexOf(':')
  if (text.indexOf('.', tail) !== -1) {
    const quad = text.slice(tail + 1).split('.')
    if (quad.length !== 4 || quad.some((q) => !/^\d{1,3}$/.test(q) || Number(q) > 255)) return null
    const [a, b, c, d] = quad.map(Number)
    text = `${text.slice(0, tail + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const parse = (part: string) => (part ? part.split(':') : [])
  const head = parse(halves[0])
  const rest = halves.length === 2 ? parse(halves[1]) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const all = [...head, ...Array<string>(Math.max(missing, 0)).fill('0'), ...rest]
  const groups: number[] = []
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null
    groups.push(parseInt(g, 16))
  }
  return groups
}

/** The key a per-IP limit counts `ip` under (see above). Something that is not an address is kept as it is. */
export function ipKey(ip: string): IpKey {
  if (!ip.includes(':')) return ip as IpKey
  let address = ip.trim().toLowerCase()
  if (address.startsWith('[') && address.endsWith(']')) address = address.slice(1, -1)
  const zone = address.indexOf('%')
  if (zone !== -1) address = address.slice(0, zone)
  const g = groupsOf(address)
  if (!g) return address as IpKey
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff)
    return `${g[6] >> 8}.${g[6] & 255}.${g[7] >> 8}.${g[7] & 255}` as IpKey
  return `${g[0].toString(16)}:${g[1].toString(16)}:${g[2].toString(16)}:${g[3].toString(16)}::/64` as IpKey
}
