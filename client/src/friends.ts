// Discord-wide relationships (friends, blocks, friend requests) and friends' presence, thin and typed over REST:
// GET/POST /users/@me/relationships, PUT/PATCH/DELETE /users/@me/relationships/{id}. The Gateway tells what changes
// (RELATIONSHIP_ADD / _UPDATE / _REMOVE, PRESENCE_UPDATE; READY's `relationships` and `presences`): `FriendsEvents`
// types them for `client.gateway.on(...)`. Needs a user session, or an OAuth2 token with relationships.read (list)
// and relationships.write (the rest). Game relationships (one application's friends) are not here.
import type { Relationship } from './api.gen'
import type { Client } from './client'

export type { Relationship }

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

/** PRESENCE_UPDATE, and each of READY's `presences`: a friend's status and activities. */
export type Presence = {
  user: { id: string }
  status: PresenceStatus
  activities: Activity[]
  client_status?: Record<string, string>
}

/** RELATIONSHIP_UPDATE / RELATIONSHIP_REMOVE: the relationship without its user. */
export type RelationshipChange = { id: string; type: number; nickname: string | null; since?: string }

/** The Gateway's relationship dispatches, for `client.gateway.on(name, listener)`. */
export type FriendsEvents = {
  RELATIONSHIP_ADD: (data: Relationship & { should_notify?: boolean }) => void
  RELATIONSHIP_UPDATE: (data: RelationshipChange) => void
  RELATIONSHIP_REMOVE: (data: RelationshipChange) => void
  PRESENCE_UPDATE: (data: Presence) => void
}

export class Friends {
  constructor(private readonly client: Client) {}

  /** Every relationship: friends, blocks, incoming and outgoing requests. */
  list(): Promise<Relationship[]> {
    return this.client.rest.get('/users/@me/relationships')
  }

  /** A friend request by username (80004 when no such user; 80000 when they take none). */
  async request(username: string): Promise<void> {
    await this.client.rest.post('/users/@me/relationships', { body: { username } })
  }

  /** Send a request to a user by id, or accept the one they sent. */
  async accept(userId: string): Promise<void> {
    await this.client.rest.put(`/users/@me/relationships/${userId}`, { body: {} })
  }

  async block(userId: string): Promise<void> {
    await this.client.rest.put(`/users/@me/relationships/${userId}`, { body: { type: RelationshipType.BLOCKED } })
  }

  /** Remove a friend, decline or cancel a request, or unblock: whichever the relationship is. */
  async remove(userId: string): Promise<void> {
    await this.client.rest.delete(`/users/@me/relationships/${userId}`)
  }

  /** A friend's nickname (null clears it). */
  async setNickname(userId: string, nickname: string | null): Promise<void> {
    await this.client.rest.patch(`/users/@me/relationships/${userId}`, { body: { nickname } })
  }
}
