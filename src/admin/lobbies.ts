// The console's live lobbies: an application's lobbies with their member counts (paged by id: 10,000 stay usable),
// a lobby's page (metadata, members with who is online and who is in the call, the last messages with their
// moderation metadata), and the actions an application's bot has (remove a member, close the lobby), through the same
// functions as its API, so members get the same events (LOBBY_MEMBER_REMOVE, LOBBY_DELETE). Audited in the action's
// transaction.
import { findUsers } from '../accounts/store'
import { Errors } from '../core/errors'
import { transaction } from '../db/client'
import { isOnline } from '../lobbies/activity'
import { countApplicationLobbies, lobbiesOfApplication } from '../lobbies/console-store'
import { deleteLobby } from '../lobbies/lifecycle'
import { removeMember } from '../lobbies/members'
import { cachedLobbyMembers, getMember } from '../lobbies/members-store'
import { listMessages } from '../lobbies/messages-store'
import { cachedLobby } from '../lobbies/store'
import type { LobbyRow } from '../lobbies/tables'
import { findApplication } from '../oauth2/store'
import { type Actor, audit } from './audit'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export async function applicationLobbies(applicationId: string, page: { before?: string; limit: number }) {
  if (!/^\d{1,20}$/.test(applicationId) || !(await findApplication(applicationId))) throw Errors.unknownApplication()
  const before = page.before && /^\d{1,20}$/.test(page.before) ? page.before : undefined
  const rows = await lobbiesOfApplication(applicationId, { before, limit: page.limit })
  return {
    total: await countApplicationLobbies(applicationId),
    lobbies: rows.map((l) => ({
      id: l.id,
      created_at: new Date(l.createdAt).toISOString(),
      member_count: l.members,
      in_call: l.inCall,
      active: l.online || l.inCall > 0,
    })),
  }
}

async function lobbyOrThrow(lobbyId: string): Promise<LobbyRow> {
  const lobby = /^\d{1,20}$/.test(lobbyId) ? await cachedLobby(lobbyId) : undefined
  if (!lobby) throw Errors.unknownLobby()
  return lobby
}

/** A lobby's page: what an operator looks at before acting on it. */
export async function lobbyPage(lobbyId: string) {
  const lobby = await lobbyOrThrow(lobbyId)
  const members = await cachedLobbyMembers(lobbyId)
  const messages = await listMessages(lobbyId, { limit: 50 })
  const people = await findUsers(new Set([...members.map((m) => m.userId), ...messages.map((m) => m.authorId)]))
  const who = (id: string) => ({
    id,
    username: people.get(id)?.username ?? id,
    global_name: people.get(id)?.globalName ?? null,
  })
  return {
    lobby: {
      id: lobby.id,
      application_id: lobby.applicationId,
      metadata: lobby.metadata ?? null,
      flags: lobby.flags,
      created_at: new Date(lobby.createdAt).toISOString(),
      idle_deadline: iso(lobby.idleDeadline),
      linked_channel_id: lobby.linkedChannelId,
    },
    members: members.map((m) => ({
      ...who(m.userId),
      metadata: m.metadata ?? null,
      flags: m.flags,
      online: isOnline(m.userId, lobby.applicationId),
      in_call: m.voiceSessionId !== null,
    })),
    messages: messages.map((m) => ({
      id: m.id,
      author: who(m.authorId),
      content: m.content,
      metadata: m.metadata ?? null,
      moderation_metadata: m.moderationMetadata ?? null,
      created_at: new Date(m.createdAt).toISOString(),
    })),
  }
}

/** Remove a member as the application's bot would (DELETE /lobbies/{id}/members/{user}): the same events. */
export async function removeLobbyMember(actor: Actor, lobbyId: string, userId: string, reason: string | undefined) {
  const lobby = await lobbyOrThrow(lobbyId)
  if (!/^\d{1,20}$/.test(userId) || !(await getMember(lobbyId, userId))) throw Errors.unknownMember()
  await transaction(async () => {
    await removeMember(lobby, userId)
    await audit(actor, {
      action: 'lobby.member_remove',
      targetType: 'lobby',
      targetId: lobbyId,
      reason,
      details: { user_id: userId, application_id: lobby.applicationId },
    })
  })
  return { lobby_id: lobbyId, user_id: userId, removed: true }
}

/** Close a lobby as the bot's DELETE /lobbies/{id} does (LOBBY_DELETE to its members). */
export async function closeLobby(actor: Actor, lobbyId: string, reason: string | undefined) {
  const lobby = await lobbyOrThrow(lobbyId)
  await transaction(async () => {
    await deleteLobby(lobbyId)
    await audit(actor, {
      action: 'lobby.close',
      targetType: 'lobby',
      targetId: lobbyId,
      reason,
      details: { application_id: lobby.applicationId },
    })
  })
  return { id: lobbyId, closed: true }
}
