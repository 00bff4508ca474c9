// The client's IP: from the socket, or from X-Forwarded-For only when TRUST_PROXY is set.
import { config } from '../config'

type IpSource = { requestIP(request: Request): { address: string } | null }

export function clientIp(request: Request, server: IpSource | null | undefined): string {
  if (config().trustProxy) {
    const forwarded = request.headers.get('x-forwarded-for')?.split(',')[0]?.trim()
    if (forwarded) return normalize(forwarded)
  }
  return normalize(server?.requestIP(request)?.address ?? '0.0.0.0')
}

function normalize(ip: string): string {
  return ip.startsWith('::ffff:') ? ip.slice(7) : ip
}

/**
 * The key a per-IP limit counts under: the address itself for IPv4, its /64 network for IPv6 (one subscriber usually
 * holds a whole /64, so counting single IPv6 addresses would not limit anybody).
 */
export function rateSubject(ip: string): string {
  if (!ip.includes(':')) return ip
  const [head, tail = ''] = ip.split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups = ip.includes('::') ? [...left, ...Array(Math.max(8 - left.length - right.length, 0)).fill('0'), ...right] : left
  return `${groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16)).join(':')}::/64`
}
