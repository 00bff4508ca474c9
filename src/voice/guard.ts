// What reaches a member's peer connection. werift hands every non-STUN datagram of its sockets to DTLS/SRTP,
// whatever address it came from; here, per socket, a datagram that is not STUN passes only from an address whose
// ICE connectivity check succeeded, and only within the member's packet-rate cap. Before DTLS completes nothing
// decrypts, so RTP is dropped either way; this also keeps strangers from costing us decryption attempts.
import type { RTCPeerConnection } from 'werift'

/** werift's candidate pair state SUCCEEDED (ice/src/iceBase.ts). */
const PAIR_SUCCEEDED = 3

type Address = [string, number]
type Protocol = {
  datagramReceived(data: Buffer, addr: Address): void
  __guarded?: boolean
  transport?: { socket?: { on(event: 'error', listener: (e: Error) => void): unknown } }
}
type Pair = { protocol: unknown; state: number; remoteAddr: Address }
type IceConnection = { protocols?: Protocol[]; checkList?: Pair[] }

export type GuardStats = { droppedUnverified: number; droppedRate: number }

/** A token bucket: `perSecond` tokens a second, at most one second's worth banked. */
export class RateCap {
  private tokens: number
  private last = performance.now()

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond
  }

  take(): boolean {
    const now = performance.now()
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) / 1000) * this.perSecond)
    this.last = now
    if (this.tokens < 1) return false
    this.tokens -= 1
    return true
  }
}

function verified(connection: IceConnection, protocol: Protocol, addr: Address): boolean {
  for (const pair of connection.checkList ?? []) {
    if (
      pair.protocol === protocol &&
      pair.state === PAIR_SUCCEEDED &&
      pair.remoteAddr[0] === addr[0] &&
      pair.remoteAddr[1] === addr[1]
    )
      return true
  }
  return false
}

/** Wrap every socket of the peer connection's ICE transports (call after the first setLocalDescription: gathered). */
export function guardPeer(pc: RTCPeerConnection, cap: RateCap, stats: GuardStats): number {
  let wrapped = 0
  for (const transport of pc.iceTransports) {
    const connection = transport.connection as unknown as IceConnection
    for (const protocol of connection.protocols ?? []) {
      if (protocol.__guarded || typeof protocol.datagramReceived !== 'function') continue
      protocol.__guarded = true
      // werift sets no 'error' listener on its UDP sockets; under Bun an ICMP port-unreachable (a peer that went
      // away) surfaces as an ECONNREFUSED 'error' event, which would otherwise be thrown and end the process.
      protocol.transport?.socket?.on('error', () => {})
      const inner = protocol.datagramReceived.bind(protocol)
      protocol.datagramReceived = (data: Buffer, addr: Address) => {
        // RFC 7983: a first byte of 0-3 is STUN, which werift authenticates itself (MESSAGE-INTEGRITY).
        if (data.length > 0 && data[0]! <= 3) return inner(data, addr)
        if (!verified(connection, protocol, addr)) {
          stats.droppedUnverified += 1
          return
        }
        if (!cap.take()) {
          stats.droppedRate += 1
          return
        }
        inner(data, addr)
      }
      wrapped += 1
    }
  }
  return wrapped
}
