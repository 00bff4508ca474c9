// The WebRTC side of a lobby call (loaded by lobby.voice.join(); also the `lobby-client/voice` entry), as the lobby
// page did it: op 17 joins (with self_mute / self_deaf) on the client's Gateway session; each LOBBY_VOICE_SERVER_OFFER
// is answered from one RTCPeerConnection (the first attaches the microphone to the offer's `mic_mid`), the answer goes
// out at once with op 100 and this side's candidates follow with op 101; every other m-section is a member's audio
// (`slots` maps mids to user ids). LOBBY_VOICE_SERVER_CLOSE ends it. Who speaks is read from the connection's
// statistics (audio levels). A resumed Gateway session keeps the call (the latest answer is sent again); a new
// session (the old one lost) ends it.
import type { VoiceOffer } from './events'
import type { JoinOptions, LobbyVoice, MediaStreamLike, VoiceState } from './voice-handle'

export type { JoinOptions, LobbyVoice, VoiceEvents, VoiceState } from './voice-handle'

// The browser's WebRTC and media objects, untyped here: the SDK compiles without the DOM library (Bun and Node
// projects type-check it too), and this module only runs in a browser.
type Browser = any
const browser = (): Browser => globalThis

export type CallView = {
  state: (state: VoiceState, message?: string) => void
  participants: (userIds: string[]) => void
  speaking: (userId: string, speaking: boolean) => void
}

/** The server takes this many candidates per connection (src/voice/limits.ts MAX_CANDIDATES). */
const MAX_CANDIDATES = 20
/** An audio level (0..1, from the statistics) above this counts as speaking. */
const SPEAKING_LEVEL = 0.02
const METER_EVERY_MS = 250
/** Speaking stays on this long after the last loud sample, so the indicator does not flicker between words. */
const SPEAKING_HOLD_MS = 600

export class VoiceSession {
  private pc?: Browser
  private mic?: MediaStreamLike
  private ownMic = false
  private slots = new Map<string, string>()
  private chain: Promise<void> = Promise.resolve()
  private candidates = 0
  private meter?: ReturnType<typeof setInterval>
  private readonly players = new Map<string, Browser>()
  private readonly speakers = new Set<string>()
  private readonly loudAt = new Map<string, number>()
  private joined = false
  private audioRoot?: JoinOptions['audioRoot']
  /** Op 100's data for the latest offer. */
  private lastAnswer?: { lobby_id: string; revision: number; sdp: string }
  private readonly unsubscribe: (() => void)[] = []

  constructor(
    private readonly voice: LobbyVoice,
    private readonly view: CallView,
  ) {}

  private get gateway() {
    return this.voice.client.gateway
  }
  private get lobbyId(): string {
    return this.voice.lobby.id
  }
  private get me(): string | undefined {
    return this.gateway.ready?.user.id
  }

  get active(): boolean {
    return this.joined
  }

  /** The RTCPeerConnection of the call, while there is one. */
  get peer(): unknown {
    return this.pc
  }

  /** Open the microphone, then ask to join with op 17. Throws when the microphone is refused or the Gateway is down. */
  async join(options: JoinOptions): Promise<void> {
    if (this.joined) return
    if (!this.gateway.connected) throw new Error('The Gateway is not connected: await client.gateway.connect() first.')
    if (typeof browser().RTCPeerConnection !== 'function') throw new Error('Voice needs WebRTC (a browser).')
    let mic = options.microphone
    if (!mic) {
      try {
        mic = await browser().navigator.mediaDevices.getUserMedia({
          audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
          video: false,
        })
      } catch (error) {
        throw new Error(`The microphone is not available: ${error instanceof Error ? error.message : String(error)}`)
      }
      this.ownMic = true
    }
    this.mic = mic
    this.audioRoot = options.audioRoot ?? browser().document.body
    this.joined = true
    this.listen()
    this.update()
    this.view.state('joining')
  }

  leave(): void {
    if (!this.joined) return
    this.gateway.send(17, [])
    this.end('You left the call.', 'idle')
  }

  /** Mute, deafen and volumes as the LobbyVoice holds them now, here and (op 17) on the server. */
  update(): void {
    this.applyLocal()
    if (this.joined && !this.sendState()) this.end('Not connected to the server.')
  }

  private applyLocal(): void {
    for (const track of this.mic?.getAudioTracks() ?? []) track.enabled = !this.voice.muted
    for (const [mid, player] of this.players) {
      player.muted = this.voice.deafened
      player.volume = this.voice.volumes.get(this.slots.get(mid) ?? '') ?? 1
    }
    if (this.voice.muted && this.me) {
      this.loudAt.delete(this.me)
      this.setSpeaking(this.me, false)
    }
  }

  private listen(): void {
    const g = this.gateway
    this.unsubscribe.push(
      g.on('LOBBY_VOICE_SERVER_OFFER', (offer) => this.onOffer(offer)),
      g.on('LOBBY_VOICE_SERVER_CLOSE', (data) => {
        if (data.lobby_id === this.lobbyId && this.joined) this.end(data.message || `The call ended (${data.reason}).`)
      }),
      // Sent on a socket that was dying, the answer may never have been read (the server ignores a stale one).
      g.on('resumed', () => {
        if (this.joined && this.lastAnswer) g.send(100, this.lastAnswer)
      }),
      // A new session: the call was the old session's.
      g.on('ready', () => {
        if (this.joined) this.end('The connection to the server dropped. Join again when it is back.')
      }),
      g.on('closed', () => {
        if (this.joined) this.end('The connection to the server closed.')
      }),
    )
  }

  private sendState(): boolean {
    return this.gateway.send(17, [
      { lobby_id: this.lobbyId, self_mute: this.voice.muted, self_deaf: this.voice.deafened },
    ])
  }

  private onOffer(offer: VoiceOffer): void {
    if (!this.joined || offer.lobby_id !== this.lobbyId) return
    this.chain = this.chain
      .then(() => this.answer(offer))
      .catch((error) => {
        if (this.joined)
          this.end(`The call could not be set up: ${error instanceof Error ? error.message : String(error)}`)
      })
  }

  private connection(offer: VoiceOffer): Browser {
    if (this.pc) return this.pc
    const pc = new (browser().RTCPeerConnection)({ iceServers: offer.ice_servers ?? [] })
    this.pc = pc
    this.candidates = 0
    pc.addEventListener('icecandidate', (event: Browser) => {
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
    pc.addEventListener('track', (event: Browser) => {
      const mid = event.transceiver.mid
      if (!mid) return
      let player = this.players.get(mid)
      if (!player) {
        player = browser().document.createElement('audio')
        player.autoplay = true
        player.dataset.mid = mid
        this.audioRoot?.append(player)
        this.players.set(mid, player)
      }
      player.srcObject = new (browser().MediaStream)([event.track])
      player.muted = this.voice.deafened
      void player.play().catch(() => undefined)
    })
    pc.addEventListener('connectionstatechange', () => {
      if (pc === this.pc && pc.connectionState === 'connected') this.view.state('connected')
      // 'failed' is reported by the server too (LOBBY_VOICE_SERVER_CLOSE "failed"), which ends the call here.
    })
    this.meter = setInterval(() => void this.measure(pc), METER_EVERY_MS)
    return pc
  }

  private async answer(offer: VoiceOffer): Promise<void> {
    const pc = this.connection(offer)
    await pc.setRemoteDescription({ type: 'offer', sdp: offer.sdp })
    if (pc !== this.pc) return
    const micTransceiver = pc.getTransceivers().find((t: Browser) => t.mid === offer.mic_mid)
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
    const inCall = [...this.slots.values()]
    for (const user of this.speakers) if (user !== this.me && !inCall.includes(user)) this.setSpeaking(user, false)
    this.applyLocal()
    this.view.participants(inCall)
  }

  /** Audio levels: this member's microphone (media-source) and each received member (inbound-rtp by mid). */
  private async measure(pc: Browser): Promise<void> {
    if (pc !== this.pc || pc.connectionState === 'closed') return
    let stats: Browser
    try {
      stats = await pc.getStats()
    } catch {
      return
    }
    if (pc !== this.pc) return
    const now = performance.now()
    const me = this.me
    const midOfTrack = new Map<string, string>(pc.getTransceivers().map((t: Browser) => [t.receiver.track.id, t.mid]))
    stats.forEach((report: Browser) => {
      if (report.kind !== 'audio' || typeof report.audioLevel !== 'number' || report.audioLevel <= SPEAKING_LEVEL)
        return
      if (report.type === 'media-source' && !this.voice.muted && me) this.loudAt.set(me, now)
      else if (report.type === 'inbound-rtp') {
        const user = this.slots.get(report.mid ?? midOfTrack.get(report.trackIdentifier) ?? '')
        if (user) this.loudAt.set(user, now)
      }
    })
    const inCall = [...this.slots.values()]
    for (const [user, at] of this.loudAt) {
      const speaking = now - at < SPEAKING_HOLD_MS && (user === me || inCall.includes(user))
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

  private end(message: string, state: VoiceState = 'ended'): void {
    this.joined = false
    this.lastAnswer = undefined
    for (const off of this.unsubscribe.splice(0)) off()
    clearInterval(this.meter)
    this.pc?.close()
    this.pc = undefined
    // A microphone the app gave stays the app's.
    if (this.ownMic) for (const track of this.mic?.getTracks() ?? []) track.stop()
    this.mic = undefined
    this.ownMic = false
    for (const player of this.players.values()) player.remove()
    this.players.clear()
    this.slots.clear()
    this.loudAt.clear()
    for (const user of [...this.speakers]) this.setSpeaking(user, false)
    this.chain = Promise.resolve()
    this.view.participants([])
    this.view.state(state, message)
  }
}
