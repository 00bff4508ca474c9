// Lobby chat: messages to every member (LOBBY_MESSAGE_CREATE), newest first on read, mirrored to a linked channel.
import { clock } from '../core/clock'
import { ApiError, Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { findUser } from '../users/store'
import { touchLobby } from './activity'
import { Effects } from './effects'
import { MESSAGE_FLAGS_ALLOWED } from './limits'
import { mirrorToLinkedChannel } from './linked'
import { lobbyMessage } from './serialize'
import { insertMessage, listMessages } from './store'
import type { LobbyRow, Metadata } from './tables'

export type MessageInput = { content: string; metadata?: Metadata | null; flags?: number | null; nonce?: string | number }

export async function postMessage(lobby: LobbyRow, authorId: string, input: MessageInput) {
  if (input.content.trim() === '') throw new ApiError(400, 50006, 'Cannot send an empty message')
  const author = await findUser(authorId)
  if (!author) throw Errors.unauthorized()
  const effects = new Effects()
  const row = transaction((tx) => {
    const inserted = insertMessage(tx, {
      id: snowflake(),
      lobbyId: lobby.id,
      applicationId: lobby.applicationId,
      authorId,
      content: input.content,
      metadata: input.metadata && Object.keys(input.metadata).length ? input.metadata : null,
      flags: (input.flags ?? 0) & MESSAGE_FLAGS_ALLOWED,
      createdAt: clock.now(),
    })
    // A message is activity: the lobby's idle countdown starts over.
    touchLobby(tx, lobby.id)
    return inserted
  })
  const message = lobbyMessage(row, author, { nonce: input.nonce })
  effects.toLobby(lobby, 'LOBBY_MESSAGE_CREATE', { ...message, mentions: [] })
  await effects.flush()
  // The linked channel gets a copy; a failure there does not undo the lobby message (Discord's rule).
  await mirrorToLinkedChannel(lobby, author.id, input.content).catch(() => undefined)
  return message
}

/** Newest first; `before`/`after` page through the whole history. */
export async function readMessages(lobby: LobbyRow, page: { limit: number; before?: string; after?: string }) {
  const rows = listMessages(lobby.id, page)
  const authors = new Map<string, Awaited<ReturnType<typeof findUser>>>()
  for (const r of rows) if (!authors.has(r.authorId)) authors.set(r.authorId, await findUser(r.authorId))
  return rows.flatMap((r) => {
    const author = authors.get(r.authorId)
    return author ? [lobbyMessage(r, author)] : []
  })
}
