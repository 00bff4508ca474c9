// Friends for a game (issue 45): Discord-wide relationships and the game's own friends (game relationships), the
// unified friends list a game shows (both kinds, each friend once, with its presence), and game invites. Presences
// are kept current from READY's `presences` and PRESENCE_UPDATE while the Gateway is connected.
import type { GameInvite, GameRelationship, Relationship, User } from './api.gen'
import type { Client } from './client'

export type { GameInvite, GameRelationship, Relationship }

/** Discord's relationship types. */
export const RelationshipType = { FRIEND: 1, BLOCKED: 2, INCOMING_REQUEST: 3, OUTGOING_REQUEST: 4 } as const

export type PresenceStatus = 'online' | 'idle' | 'dnd' | 'offline'

export type Activity = {
  name: string
  type: number
  state?: string | null
  details?: string | null
  [key: string]: unknown
}

/** A presence as the Gateway gives it (PRESENCE_UPDATE, READY's `presences`). */
export type Presence = {
  user: { id: string }
  status: PresenceStatus
  activities: Activity[]
  client_status?: Record<string, string>
}

/** RELATIONSHIP_UPDATE / RELATIONSHIP_REMOVE: the relationship without its user. */
export type RelationshipChange = { id: string; type: number; nickname: string | null; since?: string }

/** The Gateway's relationship dispatches, for `client.gateway.on(name, listener)`. */
export type RelationshipEvents = {
  RELATIONSHIP_ADD: (data: Relationship & { should_notify?: boolean }) => void
  RELATIONSHIP_UPDATE: (data: RelationshipChange) => void
  RELATIONSHIP_REMOVE: (data: RelationshipChange) => void
  PRESENCE_UPDATE: (data: Presence) => void
}

/** One friend of the unified list: a Discord friend, a game friend of this application, or both. */
export type UnifiedFriend = {
  id: string
  user: User
  /** Friends Discord-wide. */
  discord: boolean
  /** Friends in this application's game. */
  game: boolean
  /** Discord-wide friends may have a nickname. */
  nickname: string | null
  /** Their presence as last heard (offline when never heard). */
  presence: Presence
}

const FRIEND = RelationshipType.FRIEND
const ORDER: Record<string, number> = { online: 0, idle: 1, dnd: 2, offline: 3 }

export class Relationships {
  /** The presences heard on the Gateway, by user id. */
  readonly presences = new Map<string, Presence>()

  constructor(private readonly client: Client) {
    client.gateway.on('ready', (ready) => {
      this.presences.clear()
      for (const p of (ready.presences as Presence[] | undefined) ?? []) this.presences.set(p.user.id, p)
    })
    client.gateway.on('dispatch', (type, data) => {
      if (type === 'PRESENCE_UPDATE') this.presences.set((data as Presence).user.id, data as Presence)
    })
  }

  /** Discord-wide friends, blocks and requests (relationships.read). */
  list(): Promise<Relationship[]> {
    return this.client.rest.get('/users/@me/relationships')
  }

  /** Send a friend request, or accept the one this user sent. */
  async addFriend(userId: string): Promise<void> {
    await this.client.rest.put(`/users/@me/relationships/${userId}`, { body: {} })
  }

  /** A friend request by username (80004 when no such user; 80000 when they take none). */
  async request(username: string): Promise<void> {
    await this.client.rest.post('/users/@me/relationships', { body: { username } })
  }

  async block(userId: string): Promise<void> {
    await this.client.rest.put(`/users/@me/relationships/${userId}`, { body: { type: RelationshipType.BLOCKED } })
  }

  /** A friend's nickname (null clears it). */
  async setNickname(userId: string, nickname: string | null): Promise<void> {
    await this.client.rest.patch(`/users/@me/relationships/${userId}`, { body: { nickname } })
  }

  /** Remove a friend, cancel or decline a request, or unblock. */
  async remove(userId: string): Promise<void> {
    await this.client.rest.delete(`/users/@me/relationships/${userId}`)
  }

  /** The game's own friends and requests (an OAuth2 token: of its application). */
  gameList(): Promise<GameRelationship[]> {
    return this.client.rest.get('/users/@me/game-relationships')
  }

  /** Send a game friend request (by id, or `{ username }`), or accept the one this user sent. */
  async addGameFriend(user: string | { username: string }): Promise<void> {
    if (typeof user === 'string') await this.client.rest.put(`/users/@me/game-relationships/${user}`, { body: {} })
    else await this.client.rest.post('/users/@me/game-relationships', { body: user })
  }

  /** Remove a game friend, cancel or decline a game friend request. */
  async removeGameFriend(userId: string): Promise<void> {
    await this.client.rest.delete(`/users/@me/game-relationships/${userId}`)
  }

  /**
   * The unified friends list (the Social SDK's): Discord friends and this game's friends, each once, online first,
   * then by name. Two calls, made at once.
   */
  async unifiedFriends(): Promise<UnifiedFriend[]> {
    const [discord, game] = await Promise.all([this.list(), this.gameList()])
    const byId = new Map<string, UnifiedFriend>()
    const entry = (id: string, user: User) => {
      const found = byId.get(id)
      if (found) return found
      const made: UnifiedFriend = {
        id,
        user,
        discord: false,
        game: false,
        nickname: null,
        presence: this.presences.get(id) ?? { user: { id }, status: 'offline', activities: [], client_status: {} },
      }
      byId.set(id, made)
      return made
    }
    for (const r of discord)
      if (r.type === FRIEND) Object.assign(entry(r.id, r.user), { discord: true, nickname: r.nickname })
    for (const r of game) if (r.type === FRIEND) entry(r.id, r.user).game = true
    const name = (f: UnifiedFriend) => f.nickname ?? f.user.global_name ?? f.user.username
    return [...byId.values()].sort(
      (a, b) => (ORDER[a.presence.status] ?? 3) - (ORDER[b.presence.status] ?? 3) || name(a).localeCompare(name(b)),
    )
  }

  /** Invite a friend to this user's activity of the game (its party and join secret, set with op 3 first). */
  async sendInvite(recipientId: string, options: { content?: string; ttl?: number } = {}): Promise<string> {
    const body = { recipient_id: recipientId, ...options }
    return (await this.client.rest.post('/game-invite/@me', { body })).invite_id
  }

  /** Ask a friend to let this user join its activity of the game (answered by an invite). */
  async askToJoin(userId: string, options: { content?: string; ttl?: number } = {}): Promise<string> {
    const body = { recipient_id: userId, type: 5 as const, ...options }
    return (await this.client.rest.post('/game-invite/@me', { body })).invite_id
  }

  /** The live invites and join requests this user sent or received. */
  invites(): Promise<GameInvite[]> {
    return this.client.rest.get('/game-invite/@me')
  }

  /** Take an invite back, or decline one. */
  async deleteInvite(inviteId: string): Promise<void> {
    await this.client.rest.delete(`/game-invite/@me/${inviteId}`)
  }
}
