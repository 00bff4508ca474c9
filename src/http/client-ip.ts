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
