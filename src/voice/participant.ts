// One member in one lobby call: the server's end of their peer connection. The first m-section receives their
// microphone (recvonly); every other member in the call has a sendonly "slot" m-section here. The server is always
// the offerer: a slot added, reassigned or freed means a new offer, one at a time, each answered before the next.
// A freed slot goes inactive and is reused for the next member who joins: the sender keeps its SSRC and werift
// rewrites sequence numbers and timestamps so the stream stays continuous across the change of speaker.
import { RTCPeerConnection, RtpHeader, RtpPacket, type RTCRtpTransceiver } from 'werift'
import { config } from '../config'
import { clock } from '../core/clock'
import { guardPeer, RateCap, type GuardStats } from './guard'
import { MAX_CANDIDATES } from './limits'
import { announce, clientIceServers, serverPeerConfig } from './network'
import { VoiceDispatch, type Candidate } from './protocol'

type Slot = { transceiver: RTCRtpTransceiver; userId: string | null; resync: boolean; lastSentAt: number }

export type ParticipantEvents = {
  /** ICE and DTLS are up (first time, or again after a consent loss). */
  connected(p: Participant): void
  /** The peer connection failed or closed under us, or an offer could not be made. */
  failed(p: Participant, reason: 'failed' | 'unavailable'): void
  /** An RTP packet from this member's microphone. */
  rtp(p: Participant, packet: RtpPacket): void
}

export type Send = (type: string, data: unknown) => void

let gathering: Promise<unknown> = Promise.resolve()

function oneAtATime(work: () => Promise<void>): Promise<void> {
  const run = gathering.then(work, work)
  gathering = run.catch(() => {})
  return run
}

export class Participant {
  readonly pc: RTCPeerConnection
  private readonly mic: RTCRtpTransceiver
  private readonly slots: Slot[] = []
  private readonly slotOf = new Map<string, Slot>()
  /** The peer connection reached `connected` (ICE + DTLS): the member is `connected` in the lobby. */
  connected = false
  closed = false
  revision = 0
  awaitingAnswer = false
  private offering = false
  private dirty = false
  readonly createdAt = clock.now()
  offerSentAt = 0
  disconnectedAt: number | null = null
  private candidates = 0
  private readonly cap: RateCap
  readonly stats: GuardStats & { packetsIn: number; forwarded: number } = {
    packetsIn: 0,
    forwarded: 0,
    droppedUnverified: 0,
    droppedRate: 0,
  }

  constructor(
    readonly lobbyId: string,
    readonly userId: string,
    readonly sessionId: string,
    readonly send: Send,
    public selfMute: boolean,
    public selfDeaf: boolean,
    private readonly events: ParticipantEvents,
  ) {
    this.cap = new RateCap(config().voiceMaxPacketsPerSecond)
    this.pc = new RTCPeerConnection(serverPeerConfig())
    this.mic = this.pc.addTransceiver('audio', { direction: 'recvonly' })
    this.mic.onTrack.subscribe((track) => {
      track.onReceiveRtp.subscribe((packet) => {
        if (!this.closed) this.events.rtp(this, packet)
      })
    })
    this.pc.connectionStateChange.subscribe((state) => {
      if (this.closed) return
      if (state === 'connected') this.checkUp()
      else if (state === 'disconnected') this.disconnectedAt ??= clock.now()
      else if (state === 'failed' || state === 'closed') this.events.failed(this, 'failed')
    })
    this.watchDtls()
  }

  private readonly watched = new WeakSet<object>()

  private watchDtls(): void {
    const dtls = this.mic.dtlsTransport
    if (!dtls || this.watched.has(dtls)) return
    this.watched.add(dtls)
    dtls.onStateChange.subscribe(() => this.checkUp())
  }

  /**
   * Up means the peer connection says `connected` and the microphone's DTLS transport is connected: werift also
   * says `connected` while a renegotiation overtakes the first DTLS handshake, and when an answer left it no
   * transport at all.
   */
  private checkUp(): void {
    if (this.closed || this.pc.connectionState !== 'connected' || this.mic.dtlsTransport?.state !== 'connected') return
    this.disconnectedAt = null
    this.events.connected(this)
  }

  /** Slots for the members already connected, then the first offer. */
  async start(others: string[]): Promise<void> {
    for (const userId of others) this.attach(userId, false)
    this.dirty = true
    await this.offer()
  }

  /** Receive `userId`'s audio here: a free slot if any, else a new m-section. Renegotiates. */
  attach(userId: string, renegotiate = true): void {
    if (this.closed || this.slotOf.has(userId)) return
    let slot = this.slots.find((s) => s.userId === null)
    if (slot) slot.transceiver.setDirection('sendonly')
    else {
      slot = {
        transceiver: this.pc.addTransceiver('audio', { direction: 'sendonly' }),
        userId: null,
        resync: false,
        lastSentAt: 0,
      }
      this.slots.push(slot)
    }
    slot.userId = userId
    slot.resync = true
    // msid names the member: a browser's track event carries a stream whose id is the user id.
    slot.transceiver.sender.streamId = userId
    this.slotOf.set(userId, slot)
    if (renegotiate) this.negotiate()
  }

  /** Stop receiving `userId`'s audio; the slot goes inactive until reused. Renegotiates. */
  detach(userId: string): void {
    const slot = this.slotOf.get(userId)
    if (this.closed || !slot) return
    this.slotOf.delete(userId)
    slot.userId = null
    slot.transceiver.setDirection('inactive')
    this.negotiate()
  }

  /** Forward one packet of `userId` to this member, if they have a slot for it and are not deafened. */
  forward(userId: string, packet: RtpPacket): void {
    if (this.selfDeaf) return
    const slot = this.slotOf.get(userId)
    if (!slot) return
    const now = performance.now()
    if (slot.resync) {
      // After a gap (new speaker, unmute, undeafen): sequence numbers continue, timestamps advance by the time passed.
      const step = slot.lastSentAt ? Math.max(1, Math.round((now - slot.lastSentAt) * 48)) : 1
      slot.transceiver.sender.replaceRTP(packet.header, false, step)
      slot.resync = false
    }
    slot.lastSentAt = now
    this.stats.forwarded += 1
    slot.transceiver.sender.sendRtp(packet).catch(() => {})
  }

  /** The next packet sent for `userId` (or, with no argument, on every slot) starts a new continuous run. */
  resync(userId?: string): void {
    for (const slot of userId === undefined ? this.slots : [this.slotOf.get(userId)]) if (slot) slot.resync = true
  }

  negotiate(): void {
    this.dirty = true
    void this.offer()
  }

  private async offer(): Promise<void> {
    if (this.closed || this.offering || this.awaitingAnswer || !this.dirty) return
    this.offering = true
    try {
      this.dirty = false
      const describe = async () => {
        await this.pc.setLocalDescription(await this.pc.createOffer())
      }
      // The first offer gathers, binding the sockets. werift probes a port of VOICE_PORT_MIN..MAX free, closes the
      // probe, then binds it: two peer connections gathering at once could pick the same port. One at a time.
      if (this.revision === 0 && config().voicePortRange) await oneAtATime(describe)
      else await describe()
      if (this.closed) return
      // Gathering happened in setLocalDescription: the sockets exist now. werift does not fail when it could bind
      // none (no free port in VOICE_PORT_MIN..MAX): an offer without a candidate reaches nobody.
      guardPeer(this.pc, this.cap, this.stats)
      if (!/^a=candidate:/m.test(this.pc.localDescription!.sdp)) throw new Error('no ICE candidate gathered')
      this.revision += 1
      this.awaitingAnswer = true
      this.offerSentAt = clock.now()
      this.send(VoiceDispatch.Offer, {
        lobby_id: this.lobbyId,
        revision: this.revision,
        sdp: announce(this.pc.localDescription!.sdp),
        mic_mid: this.mic.mid,
        slots: this.slots.filter((s) => s.userId !== null).map((s) => ({ mid: s.transceiver.mid, user_id: s.userId })),
        ice_servers: clientIceServers(this.userId),
      })
    } catch {
      // No port left in VOICE_PORT_MIN..MAX, or werift refused: this member's call cannot go on.
      if (!this.closed) this.events.failed(this, 'unavailable')
    } finally {
      this.offering = false
    }
  }

  /** Apply the client's answer to the outstanding offer. False when it cannot be applied. */
  async answer(sdp: string, revision: number | undefined): Promise<boolean> {
    if (this.closed || !this.awaitingAnswer) return true
    if (revision !== undefined && revision !== this.revision) return true // an answer to an older offer
    // An answer has the offer's m-sections, in order, and does not reject the microphone's.
    const offered = this.pc.localDescription!.sdp.match(/^m=.*$/gm) ?? []
    const answered = sdp.match(/^m=.*$/gm) ?? []
    if (answered.length !== offered.length || /^m=\S+ 0 /.test(answered[0] ?? '')) return false
    try {
      await this.pc.setRemoteDescription({ type: 'answer', sdp })
    } catch {
      return false
    }
    this.awaitingAnswer = false
    this.watchDtls()
    if (this.dirty) await this.offer()
    return true
  }

  async addCandidate(candidate: NonNullable<Candidate['candidate']>): Promise<void> {
    if (this.closed || this.candidates >= MAX_CANDIDATES) return
    this.candidates += 1
    try {
      await this.pc.addIceCandidate(candidate)
    } catch {
      // A malformed or unusable candidate is the client's problem; the others may still work.
    }
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    this.awaitingAnswer = false
    this.pc.close().catch(() => {})
  }
}

/** A copy of an inbound packet with only what the receivers need (no header extensions, no CSRCs). */
export function cleanPacket(packet: RtpPacket): RtpPacket {
  const h = packet.header
  return new RtpPacket(
    new RtpHeader({
      payloadType: h.payloadType,
      sequenceNumber: h.sequenceNumber,
      timestamp: h.timestamp,
      ssrc: h.ssrc,
      marker: h.marker,
    }),
    packet.payload,
  )
}
