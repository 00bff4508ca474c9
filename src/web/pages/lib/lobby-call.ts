// A lobby's call from the browser (README "Lobby voice calls (Gateway)"): op 17 joins (and carries self_mute) on the
// page's own Gateway connection; each LOBBY_VOICE_SERVER_OFFER is answered from one RTCPeerConnection (the first
// one attaches the microphone to the offer's `mic_mid`), the answer goes out at once with op 100 and this side's
// candidates follow with op 101; every other m-section is a member's audio (`slots` maps mids to user ids).
// LOBBY_VOICE_SERVER_CLOSE ends it. Who speaks is read from the connection's statistics (audio levels).
import type { GatewayConnection } from './gateway'

export type CallState = 'idle' | 'joining' | 'connected' | 'ended'

export type CallView = {
  state: (state: CallState, message?: string) => void
  /** The members whose audio the latest offer carries (everyone else in the call). */
  inCall: (userIds: string[]) => void
  speaking: (userId: string, speaking: boolean) => void
}

type Offer = {
  lobby_id: string
  revision: number
  sdp: string
  mic_mid: string
  slots: { mid: string; user_id: string }[]
  ice_servers?: RTCIceServer[]
}

/** The server takes this many candidates per connection (src/voice/limits.ts MAX_CANDIDATES). */
const MAX_CANDIDATES = 20
/** An audio level (0..1, from the statistics) above this counts as speaking. */
const SPEAKING_LEVEL = 0.02
const METER_EVERY_MS = 250
/** Speaking stays on this long after the last loud sample, so the indicator does not flicker between words. */
const SPEAKING_HOLD_MS = 600

export class LobbyCall {
  private pc?: RTCPeerConnection
  private mic?: MediaStream
  private slots = new Map<string, string>()
  private chain: Promise<void> = Promise.resolve()
  private candidates = 0
  private meter?: ReturnType<typeof setInterval>
  private readonly players = new Map<string, HTMLAudioElement>()
  private readonly speakers = new Set<string>()
  private readonly loudAt = new Map<string, number>()
  private joined = false
  /** Op 100's data for the latest offer. */
  private lastAnswer?: { lobby_id: string; revision: number; sdp: string }
  muted = false

  constructor(
    private readonly gateway: GatewayConnection,
    readonly lobbyId: string,
    readonly me: string,
    private readonly view: CallView,
    /** Where the (hidden) audio elements of the other members go. */
    private readonly audioRoot: HTMLElement,
  ) {}

  get active(): boolean {
    return this.joined
  }

  /** Open the microphone, then ask to join with op 17. Throws when the microphone is refused or the Gateway is down. */
  async join(): Promise<void> {
    if (this.joined) return
    if (!this.gateway.open) throw new Error('Not connected to the server. Wait a moment and try again.')
    let mic: MediaStream
    try {
      mic = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
        video: false,
      })
    } catch (error) {
      throw new Error(`The microphone is not available: ${error instanceof Error ? error.message : String(error)}`)
    }
    this.mic = mic
    for (const track of mic.getAudioTracks()) track.enabled = !this.muted
    this.joined = true
    this.view.state('joining')
    if (!this.sendState()) this.end('Not connected to the server.')
  }

  /** Mute: the server stops forwarding this member (self_mute), and the track sends silence. */
  setMuted(muted: boolean): void {
    this.muted = muted
    for (const track of this.mic?.getAudioTracks() ?? []) track.enabled = !muted
    if (this.joined) this.sendState()
    if (muted) {
      this.loudAt.delete(this.me)
      this.setSpeaking(this.me, false)
    }
  }

  leave(): void {
    if (!this.joined) return
    this.gateway.send(17, [])
    this.end('You left the call.', 'idle')
  }

  /**
   * The Gateway session resumed on a new socket. The latest answer goes again: sent on a socket that was dying, the
   * server may never have read it (it ignores an answer to an offer it no longer awaits).
   */
  resumed(): void {
    if (this.joined && this.lastAnswer) this.gateway.send(100, this.lastAnswer)
  }

  /**
   * The Gateway session is gone (a new one began, or the token was refused), and the call with it. A connection that
   * dropped and resumed its session keeps the call: the peer connection never depended on the socket.
   */
  dropped(): void {
    if (this.joined) this.end('The connection to the server dropped. Join again when it is back.')
  }

  onOffer(offer: Offer): void {
    if (!this.joined || offer.lobby_id !== this.lobbyId) return
    this.chain = this.chain
      .then(() => this.answer(offer))
      .catch((error) => {
        if (this.joined)
          this.end(`The call could not be set up: ${error instanceof Error ? error.message : String(error)}`)
      })
  }

  onClose(data: { lobby_id: string; reason: string; message?: string }): void {
    if (data.lobby_id !== this.lobbyId || !this.joined) return
    this.end(data.message || `The call ended (${data.reason}).`)
  }

  private sendState(): boolean {
    return this.gateway.send(17, [{ lobby_id: this.lobbyId, self_mute: this.muted, self_deaf: false }])
  }

  private connection(offer: Offer): RTCPeerConnection {
    if (this.pc) return this.pc
    const pc = new RTCPeerConnection({ iceServers: offer.ice_servers ?? [] })
    this.pc = pc
    this.candidates = 0
    pc.addEventListener('icecandidate', (event) => {
      if (pc !== this.pc) return
      const c = event.candidate
      if (c && (!c.candidate || this.candidates >= MAX_CANDIDATES)) return
      if (c) this.candidates += 1
      this.gateway.send(101, {
        lobby_id: this.lobbyId,
        candidate: c
          ? {
              candidate: c.candidate,
              sdpMid: c.sdpMid,
              sdpMLineIndex: c.sdpMLineIndex,
              usernameFragment: c.usernameFragment,
            }
          : null,
      })
    })
    pc.addEventListener('track', (event) => {
      const mid = event.transceiver.mid
      if (!mid) return
      let player = this.players.get(mid)
      if (!player) {
        player = document.createElement('audio')
        player.autoplay = true
        player.dataset.mid = mid
        this.audioRoot.append(player)
        this.players.set(mid, player)
      }
      player.srcObject = new MediaStream([event.track])
      void player.play().catch(() => undefined)
    })
    pc.addEventListener('connectionstatechange', () => {
      if (pc !== this.pc) return
      if (pc.connectionState === 'connected') this.view.state('connected')
      // 'failed' is reported by the server too (LOBBY_VOICE_SERVER_CLOSE "failed"), which ends the call here.
    })
    this.meter = setInterval(() => void this.measure(pc), METER_EVERY_MS)
    return pc
  }

  private async answer(offer: Offer): Promise<void> {
    const pc = this.connection(offer)
    await pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp })
    if (pc !== this.pc) return
    const micTransceiver = pc.getTransceivers().find((t) => t.mid === offer.mic_mid)
    if (micTransceiver && this.mic && !micTransceiver.sender.track) {
      const [track] = this.mic.getAudioTracks()
      micTransceiver.direction = 'sendonly'
      await micTransceiver.sender.replaceTrack(track ?? null)
      micTransceiver.sender.setStreams?.(this.mic)
    }
    await pc.setLocalDescription(await pc.createAnswer())
    if (pc !== this.pc) return
    // Right away, without waiting for ICE gathering: the candidates follow with op 101.
    this.lastAnswer = { lobby_id: this.lobbyId, revision: offer.revision, sdp: pc.localDescription!.sdp }
    this.gateway.send(100, this.lastAnswer)
    this.slots = new Map(offer.slots.map((s) => [s.mid, s.user_id]))
    for (const user of this.speakers)
      if (user !== this.me && ![...this.slots.values()].includes(user)) this.setSpeaking(user, false)
    this.view.inCall([...this.slots.values()])
  }

  /** Audio levels: this member's microphone (media-source) and each received member (inbound-rtp by mid). */
  private async measure(pc: RTCPeerConnection): Promise<void> {
    if (pc !== this.pc || pc.connectionState === 'closed') return
    let stats: RTCStatsReport
    try {
      stats = await pc.getStats()
    } catch {
      return
    }
    if (pc !== this.pc) return
    const now = performance.now()
    const midOfTrack = new Map(pc.getTransceivers().map((t) => [t.receiver.track.id, t.mid]))
    stats.forEach((report: any) => {
      if (report.kind !== 'audio' || typeof report.audioLevel !== 'number' || report.audioLevel <= SPEAKING_LEVEL)
        return
      if (report.type === 'media-source' && !this.muted) this.loudAt.set(this.me, now)
      else if (report.type === 'inbound-rtp') {
        const user = this.slots.get(report.mid ?? midOfTrack.get(report.trackIdentifier) ?? '')
        if (user) this.loudAt.set(user, now)
      }
    })
    for (const [user, at] of this.loudAt) {
      const speaking = now - at < SPEAKING_HOLD_MS && (user === this.me || [...this.slots.values()].includes(user))
      if (!speaking) this.loudAt.delete(user)
      this.setSpeaking(user, speaking)
    }
  }

  private setSpeaking(userId: string, speaking: boolean): void {
    if (this.speakers.has(userId) === speaking) return
    if (speaking) this.speakers.add(userId)
    else this.speakers.delete(userId)
    this.view.speaking(userId, speaking)
  }

  private end(message: string, state: CallState = 'ended'): void {
    this.joined = false
    this.lastAnswer = undefined
    clearInterval(this.meter)
    this.pc?.close()
    this.pc = undefined
    for (const track of this.mic?.getTracks() ?? []) track.stop()
    this.mic = undefined
    for (const player of this.players.values()) player.remove()
    this.players.clear()
    this.slots.clear()
    this.loudAt.clear()
    for (const user of [...this.speakers]) this.setSpeaking(user, false)
    this.chain = Promise.resolve()
    this.view.inCall([])
    this.view.state(state, message)
  }
}
