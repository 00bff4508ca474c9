// Network settings of the call peers (VOICE_* in config.ts): the server's own ICE gathering (host candidates only,
// UDP over IPv4, an optional port range), the address it announces, and the TURN servers handed to clients.
import { createHmac } from 'node:crypto'
import { RTCRtpCodecParameters, type PeerConfig, type RTCIceServer } from 'werift'
import { config } from '../config'
import { clock } from '../core/clock'

/** Opus as browsers offer it; the only codec of a call, forwarded as is. */
const OPUS_PAYLOAD_TYPE = 111

export function opus(): RTCRtpCodecParameters {
  return new RTCRtpCodecParameters({
    mimeType: 'audio/opus',
    clockRate: 48000,
    channels: 2,
    payloadType: OPUS_PAYLOAD_TYPE,
    parameters: 'minptime=10;useinbandfec=1',
  })
}

/** The server side of one member's peer connection. DTLS-SRTP is always on (werift has no way to turn it off). */
export function serverPeerConfig(): Partial<PeerConfig> {
  const cfg = config()
  return {
    codecs: { audio: [opus()], video: [] },
    // No header extensions: clients then send none, and nothing of one sender's is forwarded to another.
    headerExtensions: { audio: [], video: [] },
    bundlePolicy: 'max-bundle',
    iceUseIpv4: true,
    iceUseIpv6: false,
    iceUseTcp: false,
    iceTcpPassive: false,
    icePortRange: cfg.voicePortRange,
    // Loopback is not gathered by default; add it so a client on the same machine connects with no setting. With a
    // public address announced, every host candidate is rewritten to it and loopback would only waste a port.
    iceAdditionalHostAddresses: cfg.voicePublicIp ? undefined : ['127.0.0.1'],
  }
}

/**
 * With VOICE_PUBLIC_IP set (a server behind 1:1 NAT, e.g. a cloud VM), host candidates announce that address with
 * their own port; duplicate lines are dropped. Without it the SDP is unchanged.
 */
export function announce(sdp: string): string {
  const ip = config().voicePublicIp
  if (!ip) return sdp
  const seen = new Set<string>()
  const out: string[] = []
  for (const line of sdp.split('\r\n')) {
    const m = /^(a=candidate:\S+ \d+ udp \d+ )(\S+)( \d+ typ host.*)$/i.exec(line)
    if (!m) {
      if (line.startsWith('m=')) seen.clear()
      out.push(line)
      continue
    }
    const rewritten = `${m[1]}${ip}${m[3]}`
    if (seen.has(rewritten)) continue
    seen.add(rewritten)
    out.push(rewritten)
  }
  return out.join('\r\n')
}

const TURN_CREDENTIAL_LIFETIME_S = 24 * 3600

/**
 * ICE servers for a client's RTCPeerConnection: VOICE_TURN_URLS with either static credentials or, with
 * VOICE_TURN_SECRET, coturn's time-limited ones (username `<expiry>:<user id>`, credential HMAC-SHA1 of it, base64).
 */
export function clientIceServers(userId: string): RTCIceServer[] {
  const cfg = config()
  if (cfg.voiceTurnUrls.length === 0) return []
  if (cfg.voiceTurnSecret) {
    const username = `${clock.seconds() + TURN_CREDENTIAL_LIFETIME_S}:${userId}`
    const credential = createHmac('sha1', cfg.voiceTurnSecret).update(username).digest('base64')
    return [{ urls: cfg.voiceTurnUrls, username, credential }]
  }
  const server: RTCIceServer = { urls: cfg.voiceTurnUrls }
  if (cfg.voiceTurnUsername) server.username = cfg.voiceTurnUsername
  if (cfg.voiceTurnCredential) server.credential = cfg.voiceTurnCredential
  return [server]
}
