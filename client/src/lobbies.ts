// Lobbies as live objects: createOrJoin (PUT /lobbies), get, leave, send with an enforced nonce (a retried send posts
// once), history, linked-channel invites; each Lobby keeps its members and metadata current from the Gateway's
// LOBBY_* dispatches and emits message / memberAdd / memberUpdate / memberRemove / update / delete.
import type { LobbyMessage } from './api.gen'
import type { Client } from './client'
import { Emitter } from './emitter'
import { ApiError, ConnectionError } from './errors'
import { LobbyVoice } from './voice-handle'
import type { GatewayLobby, LobbyMember, LobbyMemberEvent, LobbyVoiceState, Metadata } from './events'

export type CreateOrJoin = {
  /** The lobby's secret: everyone who puts the same one (through the same application) is in the same lobby. */
  secret: string
  lobbyMetadata?: Metadata | null
  memberMetadata?: Metadata | null
  idleTimeoutSeconds?: number
  flags?: number
}

/** A lobby as a REST answer or LOBBY_CREATE / LOBBY_UPDATE gives it. */
export type LobbyData = {
  id: string
  application_id: string
  metadata: Metadata | null
  members: LobbyMember[]
  flags: number
  linked_channel?: unknown
  voice_states?: LobbyVoiceState[]
}

export type SendOptions = {
  metadata?: Metadata | null
  /** The nonce (made for you when absent): the server posts a nonce once within 5 minutes, however often sent. */
  nonce?: string
  tts?: boolean
  flags?: number
}

export type HistoryOptions = { limit?: number; before?: string; after?: string }

export type LobbyEvents = {
  message: (message: LobbyMessage) => void
  messageUpdate: (message: LobbyMessage) => void
  memberAdd: (member: LobbyMember) => void
  memberUpdate: (member: LobbyMember, before: LobbyMember | undefined) => void
  memberRemove: (member: LobbyMember) => void
  /** The lobby changed (metadata, flags, linked channel, the member list as a whole). */
  update: (lobby: Lobby) => void
  /** The lobby is gone for this user: `deleted` (deleted or idle) or `removed` (this member was removed). */
  delete: (reason: string) => void
  voiceState: (state: LobbyVoiceState) => void
}

const SEND_ATTEMPTS = 3
const ECHO_WAIT_MS = 1000
let nonceCounter = 0

/** A nonce (at most 25 characters, as the server takes): time, a counter and randomness. */
export function makeNonce(): string {
  nonceCounter = (nonceCounter + 1) % 1296
  return `${Date.now().toString(36)}${nonceCounter.toString(36).padStart(2, '0')}${Math.random().toString(36).slice(2, 10)}`
}

export class Lobby extends Emitter<LobbyEvents> {
  readonly id: string
  applicationId: string
  metadata: Metadata | null
  flags: number
  linkedChannel?: unknown
  /** The members by id, current with the Gateway's events. */
  readonly members = new Map<string, LobbyMember>()
  /** Voice states of the members in the call, by user id. */
  readonly voiceStates = new Map<string, LobbyVoiceState>()
  /** False once left, deleted, or removed. */
  active = true
  private voiceHandle?: LobbyVoice
  /** Ids of the latest messages the Gateway delivered, and the sends waiting for theirs. */
  private readonly seen = new Set<string>()
  private readonly echoes = new Map<string, () => void>()

  constructor(
    private readonly lobbies: Lobbies,
    private readonly client: Client,
    data: LobbyData,
  ) {
    super()
    this.id = data.id
    this.applicationId = data.application_id
    this.metadata = data.metadata
    this.flags = data.flags
    this.apply(data)
  }

  /** The lobby's voice call (in a browser: WebRTC; its code loads on join()). */
  get voice(): LobbyVoice {
    this.voiceHandle ??= new LobbyVoice(this, this.client)
    return this.voiceHandle
  }

  /**
   * Send a message; a retry after a lost answer posts it once (the enforced nonce). While the Gateway is up it
   * resolves once this client's own `message` event for it has been emitted (1 s at most), so a chat's events and
   * answers come in one order, and closing right after a send loses nothing.
   */
  async send(content: string, options: SendOptions = {}): Promise<LobbyMessage> {
    const message = await this.post(content, options)
    if (this.client.gateway.connected && this.active && !this.seen.has(message.id))
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, ECHO_WAIT_MS)
        function done() {
          clearTimeout(timer)
          resolve()
        }
        this.echoes.set(message.id, done)
      }).finally(() => this.echoes.delete(message.id))
    return message
  }

  private async post(content: string, options: SendOptions): Promise<LobbyMessage> {
    const nonce = options.nonce ?? makeNonce()
    const body = {
      content,
      metadata: options.metadata,
      tts: options.tts,
      flags: options.flags,
      nonce,
      enforce_nonce: true,
    }
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.client.rest.post(`/lobbies/${this.id}/messages`, { body })
      } catch (error) {
        // The request may have reached the server: the same nonce makes the retry answer the first message.
        if (!(error instanceof ConnectionError) || attempt >= SEND_ATTEMPTS) throw error
        await new Promise((resolve) => setTimeout(resolve, 250 * attempt))
      }
    }
  }

  /** Messages, newest first (`limit` 1-200, default 50; `before` / `after` a message id). */
  history(options: HistoryOptions = {}): Promise<LobbyMessage[]> {
    return this.client.rest.get(`/lobbies/${this.id}/messages`, { query: { ...options } })
  }

  /** Leave the lobby (not one its application made with POST /lobbies: 403 50001). */
  async leave(): Promise<void> {
    await this.client.rest.delete(`/lobbies/${this.id}/members/@me`)
    this.end()
  }

  /** An invite to the linked channel that only `userId` (default: the current user) can accept. */
  createInvite(userId?: string): Promise<{ code: string }> {
    return userId
      ? this.client.rest.post(`/lobbies/${this.id}/members/${userId}/invites`)
      : this.client.rest.post(`/lobbies/${this.id}/members/@me/invites`)
  }

  /** Link a guild text channel to the lobby (null unlinks). */
  async linkChannel(channelId: string | null): Promise<void> {
    this.apply(await this.client.rest.patch(`/lobbies/${this.id}/channel-linking`, { body: { channel_id: channelId } }))
    this.emit('update', this)
  }

  /** Read the lobby again (e.g. after a new Gateway session); emits update. */
  async refresh(): Promise<this> {
    this.apply(await this.client.rest.get(`/lobbies/${this.id}`))
    this.emit('update', this)
    return this
  }

  /** The lobby's state from a whole lobby (an answer or LOBBY_UPDATE). */
  apply(data: Partial<LobbyData>): void {
    if (data.application_id) this.applicationId = data.application_id
    if (data.metadata !== undefined) this.metadata = data.metadata
    if (data.flags !== undefined) this.flags = data.flags
    // A whole lobby: no linked_channel means none (unlinked).
    if (data.members) this.linkedChannel = data.linked_channel ?? undefined
    if (data.members) {
      this.members.clear()
      for (const member of data.members) this.members.set(member.id, member)
    }
    if (data.voice_states) {
      this.voiceStates.clear()
      for (const state of data.voice_states) if (state.connected) this.voiceStates.set(state.user_id, state)
    }
  }

  /** A Gateway dispatch about this lobby (Lobbies routes them here). */
  handle(type: string, data: any): void {
    switch (type) {
      case 'LOBBY_UPDATE':
      case 'LOBBY_CREATE':
        this.apply(data as GatewayLobby)
        return this.emit('update', this)
      case 'LOBBY_DELETE':
        return this.gone((data as { reason: string }).reason)
      case 'LOBBY_MESSAGE_CREATE': {
        const message = data as LobbyMessage
        this.seen.add(message.id)
        // A short memory: enough for the sends in flight.
        if (this.seen.size > 200) this.seen.delete(this.seen.values().next().value!)
        this.emit('message', message)
        return this.echoes.get(message.id)?.()
      }
      case 'LOBBY_MESSAGE_UPDATE':
        return this.emit('messageUpdate', data as LobbyMessage)
      case 'LOBBY_VOICE_STATE_UPDATE': {
        const state = data as LobbyVoiceState
        if (state.connected) this.voiceStates.set(state.user_id, state)
        else this.voiceStates.delete(state.user_id)
        return this.emit('voiceState', state)
      }
    }
    if (!type.startsWith('LOBBY_MEMBER_')) return // the call's own (offers, closes): lobby.voice's
    const { member } = data as LobbyMemberEvent
    if (!member?.id) return
    const before = this.members.get(member.id)
    switch (type) {
      case 'LOBBY_MEMBER_ADD':
        this.members.set(member.id, member)
        return this.emit('memberAdd', member)
      case 'LOBBY_MEMBER_UPDATE':
      case 'LOBBY_MEMBER_CONNECT':
      case 'LOBBY_MEMBER_DISCONNECT': {
        const merged = { ...before, ...member }
        this.members.set(member.id, merged)
        return this.emit('memberUpdate', merged, before)
      }
      case 'LOBBY_MEMBER_REMOVE':
        this.members.delete(member.id)
        return this.emit('memberRemove', before ?? member)
    }
  }

  /** Deleted, or this member removed: the last event. */
  gone(reason: string): void {
    if (!this.active) return
    this.end()
    this.emit('delete', reason)
  }

  /** No longer live: its events stop. */
  end(): void {
    if (!this.active) return
    this.active = false
    this.lobbies.forget(this)
  }
}

export class Lobbies {
  /** The live lobbies by id (those this client created, joined or got). */
  readonly live = new Map<string, Lobby>()

  private sessions = 0

  constructor(private readonly client: Client) {
    client.gateway.on('dispatch', (type, data) => this.route(type, data))
    // A new Gateway session (the old one could not be resumed): what changed meanwhile was not replayed; read again.
    client.gateway.on('ready', () => {
      if (this.sessions++ === 0) return
      for (const lobby of this.live.values())
        lobby.refresh().catch((error) => {
          if (error instanceof ApiError && error.status === 404) lobby.gone('deleted')
        })
    })
  }

  /** Join the lobby of this secret, or create it (PUT /lobbies; an OAuth2 Bearer token with lobbies.write). */
  async createOrJoin(options: CreateOrJoin): Promise<Lobby> {
    const data = await this.client.rest.put('/lobbies', {
      body: {
        secret: options.secret,
        lobby_metadata: options.lobbyMetadata,
        member_metadata: options.memberMetadata,
        idle_timeout_seconds: options.idleTimeoutSeconds,
        flags: options.flags,
      },
    })
    return this.track(data)
  }

  /** A lobby the user is in (GET /lobbies/{id}), live. */
  async get(id: string): Promise<Lobby> {
    return this.track(await this.client.rest.get(`/lobbies/${id}`))
  }

  /** Leave a lobby by id. */
  async leave(id: string): Promise<void> {
    await this.client.rest.delete(`/lobbies/${id}/members/@me`)
    this.live.get(id)?.end()
  }

  /** The live object of a lobby (one per id: an answer refreshes the one there is). */
  private track(data: LobbyData): Lobby {
    const known = this.live.get(data.id)
    if (known) {
      known.apply(data)
      return known
    }
    const lobby = new Lobby(this, this.client, data)
    this.live.set(lobby.id, lobby)
    return lobby
  }

  forget(lobby: Lobby): void {
    if (this.live.get(lobby.id) === lobby) this.live.delete(lobby.id)
  }

  /** Every live lobby ends (client.close()). */
  closeAll(): void {
    for (const lobby of [...this.live.values()]) lobby.end()
  }

  private route(type: string, data: any): void {
    if (!type.startsWith('LOBBY_') || !data) return
    const id: string | undefined =
      type === 'LOBBY_CREATE' || type === 'LOBBY_UPDATE' || type === 'LOBBY_DELETE' ? data.id : data.lobby_id
    const lobby = id ? this.live.get(id) : undefined
    lobby?.handle(type, data)
  }
}
