// `lobby.voice`: the lobby's call as the app sees it (state, who is in it, who speaks, mute, deafen, volumes). The
// WebRTC side (voice.ts) is loaded by join() only, so the core stays small and runs where there is no WebRTC.
import type { Client } from './client'
import { Emitter } from './emitter'
import type { Lobby } from './lobbies'

export type VoiceState = 'idle' | 'joining' | 'connected' | 'ended'

export type JoinOptions = {
  /** The microphone to send, a MediaStream (default: getUserMedia with echo cancellation, noise suppression, AGC). */
  microphone?: MediaStreamLike
  /** Where the (hidden) audio elements of the other members go, an element; default document.body. */
  audioRoot?: { append(node: unknown): void }
}

/**
 * The browser objects voice uses, by their shape: the SDK's types compile without the DOM library (Bun and Node
 * projects), and a page passes its real MediaStream.
 */
export type MediaStreamLike = {
  getAudioTracks(): { enabled: boolean; stop(): void }[]
  getTracks(): { stop(): void }[]
}

export type VoiceEvents = {
  /** idle → joining → connected; ended (with why) when the server or the network ended it. */
  state: (state: VoiceState, message?: string) => void
  /** The members whose audio this call receives (everyone else in it). */
  participants: (userIds: string[]) => void
  speaking: (userId: string, speaking: boolean) => void
}

export class LobbyVoice extends Emitter<VoiceEvents> {
  state: VoiceState = 'idle'
  muted = false
  deafened = false
  /** The other members in the call. */
  participants: string[] = []
  /** Who speaks now (this user included). */
  readonly speaking = new Set<string>()
  /** Per-participant volume, 0..1, by user id. */
  readonly volumes = new Map<string, number>()
  private session?: {
    readonly active: boolean
    readonly peer: unknown
    join(options: JoinOptions): Promise<void>
    leave(): void
    update(): void
  }

  constructor(
    readonly lobby: Lobby,
    readonly client: Client,
  ) {
    super()
  }

  /** The call's RTCPeerConnection while connected (its statistics: getStats()). */
  get peerConnection(): unknown {
    return this.session?.peer
  }

  /** Open the microphone and join the call (op 17 on the Gateway, then WebRTC to the server). */
  async join(options: JoinOptions = {}): Promise<void> {
    if (this.session?.active) return
    const { VoiceSession } = await import('./voice')
    this.session ??= new VoiceSession(this, {
      state: (state, message) => {
        this.state = state
        this.emit('state', state, message)
      },
      participants: (ids) => {
        this.participants = ids
        this.emit('participants', ids)
      },
      speaking: (userId, speaking) => {
        if (speaking) this.speaking.add(userId)
        else this.speaking.delete(userId)
        this.emit('speaking', userId, speaking)
      },
    })
    await this.session.join(options)
  }

  leave(): void {
    this.session?.leave()
  }

  /** Mute: the server stops forwarding this member, and the microphone sends silence. */
  setMuted(muted: boolean): void {
    this.muted = muted
    this.session?.update()
  }

  /** Deafen: nothing is played, and the call knows (self_deaf); deafening mutes too, as Discord's clients do. */
  setDeafened(deafened: boolean): void {
    this.deafened = deafened
    if (deafened) this.muted = true
    this.session?.update()
  }

  /** One participant's volume, 0 (silent) to 1 (as sent). */
  setVolume(userId: string, volume: number): void {
    this.volumes.set(userId, Math.min(1, Math.max(0, volume)))
    this.session?.update()
  }
}
