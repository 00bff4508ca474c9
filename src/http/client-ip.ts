// The client's IP: the socket's address, or, when TRUST_PROXY says the peer is a proxy of ours, the right-most
// X-Forwarded-For entry that no trusted proxy wrote (Express's `trust proxy`, nginx's `real_ip_recursive on`).
//
// Each proxy appends the address it received the request from, so the entries are read from the right, starting
// with the socket's peer: with a hop count N the client is the N-th address from the right of [X-Forwarded-For...,
// socket] (N = 1: the last entry, written by the one proxy in front); with a list, addresses are skipped while they
// are trusted proxies and the first one that is not is the client (when the socket's peer is not trusted, the header
// is ignored). Entries left of the client are whatever the client claimed and are never used. An entry that is not
// an IP address stops the walk at the last address read.
import { BlockList, isIP } from 'node:net'
import { config, TRUST_PROXY_RANGES, type TrustProxy } from '../config'

type IpSource = { requestIP(request: Request): { address: string } | null }
type Rule = { hops: number } | { proxies: BlockList }

let ruleFor: TrustProxy | undefined
let rule: Rule | null = null

function compile(spec: TrustProxy): Rule | null {
  if (spec === false || spec === 0) return null
  if (spec === true) return { hops: 1 }
  if (typeof spec === 'number') return { hops: spec }
  const proxies = new BlockList()
  const add = (entry: string) => {
    const [address, prefix] = entry.split('/')
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4'
    if (prefix === undefined) proxies.addAddress(address, family)
    else proxies.addSubnet(address, Number(prefix), family)
  }
  for (const entry of spec) {
    const name = entry.toLowerCase()
    if (Object.hasOwn(TRUST_PROXY_RANGES, name)) TRUST_PROXY_RANGES[name].forEach(add)
    else add(entry)
  }
  return { proxies }
}

function currentRule(): Rule | null {
  const spec = config().trustProxy
  if (spec !== ruleFor) {
    ruleFor = spec
    rule = compile(spec)
  }
  return rule
}

function isTrusted(proxies: BlockList, ip: string): boolean {
  return proxies.check(ip, ip.includes(':') ? 'ipv6' : 'ipv4')
}

/** An X-Forwarded-For entry as an address ("1.2.3.4", "1.2.3.4:5678", "[::1]:80", "::1"), or null. */
function parseHop(entry: string): string | null {
  let value = entry.trim()
  if (value.startsWith('[')) value = value.slice(1, value.includes(']') ? value.indexOf(']') : undefined)
  else if (value.indexOf(':') === value.lastIndexOf(':') && value.includes('.')) value = value.split(':')[0]
  return isIP(value) ? normalize(value) : null
}

/** The client address under `trust` for a request from `socket` carrying `forwardedFor` (exported for tests). */
export function pickClient(socket: string, forwardedFor: string | null, trust: TrustProxy): string {
  const r = trust === config().trustProxy ? currentRule() : compile(trust)
  if (!r || !forwardedFor) return socket
  if ('proxies' in r && !isTrusted(r.proxies, socket)) return socket
  const hops = forwardedFor.split(',')
  let client = socket
  for (let i = hops.length - 1, depth = 1; i >= 0; i--, depth++) {
    const address = parseHop(hops[i])
    if (!address) return client
    client = address
    if ('hops' in r ? depth >= r.hops : !isTrusted(r.proxies, address)) return client
  }
  return client
}

export function clientIp(request: Request, server: IpSource | null | undefined): string {
  const socket = normalize(server?.requestIP(request)?.address ?? '0.0.0.0')
  if (!currentRule()) return socket
  return pickClient(socket, request.headers.get('x-forwarded-for'), config().trustProxy)
}

function normalize(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip.toLowerCase()
}
