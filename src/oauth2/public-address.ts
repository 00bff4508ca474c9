// Whether an IP address is one this server may call on a client's say-so (the event webhooks' SSRF guard): a public
// unicast address. Refused: IPv4 "this network" 0/8, private 10/8, 172.16/12, 192.168/16, CGNAT 100.64/10, loopback
// 127/8, link-local 169.254/16, IETF 192.0.0/24, documentation (192.0.2/24, 198.51.100/24, 203.0.113/24), the old
// 6to4 relay 192.88.99/24, benchmarking 198.18/15, multicast 224/4, reserved 240/4 with broadcast. IPv6: the whole
// ::/96 (unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d, which ::7f00:1 is), discard-only 100::
// (its first 64 bits), documentation 2001:db8::/32 and 3fff::/20, ORCHID 2001:10::/28 and 2001:20::/28, unique-local
// fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast ff00::/8. An IPv6 address that carries an IPv4 one
// is judged by it: IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96 and 6to4
// 2002::/16; the rest of 64:ff9b::/32 (local-use NAT64 64:ff9b:1::/48 embeds where its operator chose) and Teredo
// 2001::/32 (a tunnel whose far end is an IPv4 host behind a NAT, possibly a private one) are refused whole: no
// webhook needs them.

/** An IPv4 address as a 32-bit number, or undefined. Dotted decimal only: the URL parser has already turned hex,
 * octal and short forms (0x7f.1, 0177.0.0.1, 2130706433) into it, and resolvers answer in it. */
function ipv4Number(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let n = 0
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined
    n = n * 256 + Number(part)
  }
  return n
}

const V4_REFUSED: [base: string, bits: number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
]
const V4_RANGES = V4_REFUSED.map(([base, bits]) => {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0
  return { network: (ipv4Number(base)! & mask) >>> 0, mask }
})

function publicV4(n: number): boolean {
  return !V4_RANGES.some(({ network, mask }) => (n & mask) >>> 0 === network)
}

/** An IPv6 address as 8 16-bit words (a trailing dotted IPv4 part allowed), or undefined. */
function ipv6Words(text: string): number[] | undefined {
  const halves = text.toLowerCase().split('::')
  if (halves.length > 2) return undefined
  const group = (s: string): number[] | undefined => {
    if (s === '') return []
    const out: number[] = []
    const pieces = s.split(':')
    for (const [i, piece] of pieces.entries()) {
      if (i === pieces.length - 1 && piece.includes('.')) {
        const v4 = ipv4Number(piece)
        if (v4 === undefined) return undefined
        out.push(v4 >>> 16, v4 & 0xffff)
      } else if (/^[0-9a-f]{1,4}$/.test(piece)) out.push(Number.parseInt(piece, 16))
      else return undefined
    }
    return out
  }
  const head = group(halves[0])
  const tail = halves.length === 2 ? group(halves[1]) : []
  if (!head || !tail) return undefined
  if (halves.length === 1) return head.length === 8 ? head : undefined
  if (head.length + tail.length > 7) return undefined
  return [...head, ...new Array(8 - head.length - tail.length).fill(0), ...tail]
}

/** The words' prefix of `bits` equals that of `prefix`. */
function within(words: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff
    if ((words[i] & mask) !== ((prefix[i] ?? 0) & mask)) return false
  }
  return true
}

const V6_REFUSED: [prefix: number[], bits: number][] = [
  [[0, 0, 0, 0, 0, 0], 96], // ::/96: unspecified, loopback, IPv4-compatible
  [[0x100, 0, 0, 0], 64], // discard-only
  [[0x2001, 0], 32], // Teredo
  [[0x2001, 0x10], 28], // ORCHID
  [[0x2001, 0x20], 28], // ORCHIDv2
  [[0x2001, 0xdb8], 32], // documentation
  [[0x3fff, 0], 20], // documentation
  [[0xfc00], 7], // unique-local
  [[0xfe80], 10], // link-local
  [[0xfec0], 10], // site-local (deprecated)
  [[0xff00], 8], // multicast
]

function publicV6(w: number[]): boolean {
  const v4 = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo
  // IPv4-mapped ::ffff:0:0/96 and IPv4-translated ::ffff:0:0:0/96: the IPv4 address decides.
  if (within(w, [0, 0, 0, 0, 0, 0xffff], 96) || within(w, [0, 0, 0, 0, 0xffff, 0], 96)) return publicV4(v4(w[6], w[7]))
  // NAT64's well-known prefix 64:ff9b::/96 carries the IPv4 address in its last 32 bits; the rest of 64:ff9b::/32
  // (local-use 64:ff9b:1::/48 included) is the operator's own translation: refused.
  if (within(w, [0x64, 0xff9b, 0, 0, 0, 0], 96)) return publicV4(v4(w[6], w[7]))
  if (within(w, [0x64, 0xff9b], 32)) return false
  // 6to4 2002:a.b.c.d::/48 routes to the IPv4 address a.b.c.d.
  if (within(w, [0x2002], 16)) return publicV4(v4(w[1], w[2]))
  return !V6_REFUSED.some(([prefix, bits]) => within(w, prefix, bits))
}

/**
 * Whether `address` (an IP literal, as a resolver answers or a URL's host without brackets; an IPv6 zone is ignored)
 * is a public unicast address. Not an IP address: false.
 */
export function isPublicAddress(address: string): boolean {
  const text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')
  if (text.includes(':')) {
    const words = ipv6Words(text)
    return words !== undefined && publicV6(words)
  }
  const v4 = ipv4Number(text)
  return v4 !== undefined && publicV4(v4)
}
