// A lobby call client for tests: a Gateway connection (tests/gateway-client.ts) and a werift RTCPeerConnection that
// answers the server's offers, trickles its candidates with op 101, sends a fake microphone (synthetic Opus-sized
// RTP at 50 packets a second) and counts what it receives per member (slots map mids to user ids).
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket, type RTCRtpTransceiver } from 'werift'
import { opus } from '../../src/voice/network'
import { GatewayClient, type Frame } from '../gateway-client'

export type Received = { count: number; ssrc: number; firstSeq: number; lastSeq: number; lastTimestamp: number }

export class VoicePeer {
  readonly pc = new RTCPeerConnection({ codecs: { audio: [opus()], video: [] }, iceUseIpv6: false })
  readonly mic = new MediaStreamTrack({ kind: 'audio' })
  /** Per member: packets received from them, and the stream details of the last run. */
  readonly received = new Map<string, Received>()
  /** mid → user id, from the latest offer. */
  slots = new Map<string, string>()
  /** Per mid, the packets received in arrival order (ssrc, seq, timestamp), for continuity checks. */
  readonly byMid = new Map<string, { user: string; ssrc: number; seq: number; timestamp: number }[]>()
  offers: any[] = []
  answered = 0
  private sending?: Timer
  private seq = Math.floor(Math.random() * 60000)
  private timestamp = Math.floor(Math.random() * 1e9)
  private readonly ssrc = Math.floor(Math.random() * 0xffffffff)
  private micTransceiver?: RTCRtpTransceiver
  private trickled = false
  private chain = Promise.resolve()

  constructor(
    readonly gateway: GatewayClient,
    readonly userId: string,
    readonly options: { answer?: boolean } = {},
  ) {
    // Tracks fire during setRemoteDescription; the mid is looked up when packets come.
    this.pc.onTrack.subscribe((track) => {
      let transceiver: RTCRtpTransceiver | undefined
      track.onReceiveRtp.subscribe((rtp) => {
        transceiver ??= this.pc.getTransceivers().find((t) => t.receiver.tracks.includes(track))
        if (transceiver?.mid) this.count(transceiver.mid, rtp)
      })
    })
    const previous = gateway.ws.onmessage
    gateway.ws.onmessage = (event) => {
      previous?.call(gateway.ws, event)
      const frame = JSON.parse(String(event.data)) as Frame
      if (frame.op === 0 && frame.t === 'LOBBY_VOICE_SERVER_OFFER') {
        this.offers.push(frame.d)
        if (options.answer !== false)
          this.chain = this.chain.then(() => this.onOffer(frame.d)).catch((e) => console.error('peer offer failed', e))
      }
    }
  }

  static async connect(token: string, userId: string, options: { answer?: boolean } = {}): Promise<VoicePeer> {
    const { client } = await GatewayClient.identified(token)
    return new VoicePeer(client, userId, options)
  }

  /** Op 17 with this one lobby (or none: leave). */
  voiceStates(lobbyId: string | null, flags: { self_mute?: boolean; self_deaf?: boolean } = {}) {
    this.gateway.send(
      17,
      lobbyId ? [{ lobby_id: lobbyId, self_mute: flags.self_mute ?? false, self_deaf: flags.self_deaf ?? false }] : [],
    )
  }

  private async onOffer(d: any) {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: d.sdp })
    this.slots = new Map(d.slots.map((s: any) => [s.mid, s.user_id]))
    for (const t of this.pc.getTransceivers()) {
      if (t.mid === d.mic_mid && !this.micTransceiver) {
        this.micTransceiver = t
        t.setDirection('sendonly')
        await t.sender.replaceTrack(this.mic)
      }
    }
    const answer = await this.pc.createAnswer()
    await this.pc.setLocalDescription(answer)
    // As on the server (src/voice/guard.ts): Bun reports ICMP unreachable as a socket 'error' werift does not catch.
    for (const t of this.pc.iceTransports)
      for (const proto of (t.connection as any).protocols ?? []) proto.transport?.socket?.on?.('error', () => {})
    const sdp = this.pc.localDescription!.sdp
    // Send the answer without candidates (as a browser does right after createAnswer) and trickle them.
    const lines = sdp.split('\r\n')
    const bare = lines.filter((l) => !l.startsWith('a=candidate') && !l.startsWith('a=end-of-candidates')).join('\r\n')
    this.gateway.send(100, { lobby_id: d.lobby_id, revision: d.revision, sdp: bare })
    this.answered += 1
    if (!this.trickled) {
      this.trickled = true
      const seen = new Set<string>()
      for (const l of lines) {
        if (!l.startsWith('a=candidate') || seen.has(l)) continue
        seen.add(l)
        this.gateway.send(101, {
          lobby_id: d.lobby_id,
          candidate: { candidate: l.slice(2), sdpMid: d.mic_mid, sdpMLineIndex: 0 },
        })
      }
      this.gateway.send(101, { lobby_id: d.lobby_id, candidate: null })
    }
  }

  private count(mid: string, rtp: RtpPacket) {
    const user = this.slots.get(mid)
    if (!user) return
    const r = this.received.get(user) ?? {
      count: 0,
      ssrc: 0,
      firstSeq: rtp.header.sequenceNumber,
      lastSeq: 0,
      lastTimestamp: 0,
    }
    r.count += 1
    r.ssrc = rtp.header.ssrc
    r.lastSeq = rtp.header.sequenceNumber
    r.lastTimestamp = rtp.header.timestamp
    this.received.set(user, r)
    const list = this.byMid.get(mid) ?? []
    list.push({ user, ssrc: rtp.header.ssrc, seq: rtp.header.sequenceNumber, timestamp: rtp.header.timestamp })
    this.byMid.set(mid, list)
  }

  from(userId: string): number {
    return this.received.get(userId)?.count ?? 0
  }

  /** One synthetic Opus packet (20 ms of "audio"). */
  sendOne() {
    this.seq = (this.seq + 1) & 0xffff
    this.timestamp = (this.timestamp + 960) >>> 0
    const header = new RtpHeader({
      payloadType: 111,
      sequenceNumber: this.seq,
      timestamp: this.timestamp,
      ssrc: this.ssrc,
      marker: false,
    })
    this.mic.writeRtp(new RtpPacket(header, Buffer.alloc(80, 0x5a)))
  }

  /** 50 packets a second until stopped. */
  startSending() {
    this.stopSending()
    this.sending = setInterval(() => this.sendOne(), 20)
  }

  stopSending() {
    clearInterval(this.sending)
    this.sending = undefined
  }

  async close() {
    this.stopSending()
    this.gateway.close()
    await this.pc.close().catch(() => {})
  }
}

/** Wait until `check` holds (polling every 20 ms); throws with `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}
