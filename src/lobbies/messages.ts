// Lobby chat: messages to every member (LOBBY_MESSAGE_CREATE), newest first on read, mirrored to a linked channel.
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { queuedTransaction, reading, transaction } from '../db/client'
import type { CamelKeys } from '../http/camel'
import { cachedUser, findUsers } from '../accounts/store'
import { touchLobby } from './activity'
import { events } from '../gateway/bus'
import { lobbyAudience } from './effects'
import { emptyMessage } from './errors'
import { MESSAGE_FLAGS_ALLOWED } from './limits'
import { kickEventDeliveries, queueLobbyEvent } from './event-webhooks'
import { guildPort } from './guild-port'
import { mirrorToLinkedChannel } from './linked-channel'
import type { MessageSchema } from './schemas'
import { lobbyMessage } from './serialize'
import {
  cachedMessagePage,
  findEnforcedNonce,
  insertMessage,
  listMessages,
  lockEnforcedNonce,
  releaseEnforcedNonce,
  setModerationMetadata,
} from './messages-store'
import type { LobbyRow, Metadata } from './tables'

/**
 * The message body (schemas.ts), its keys in camelCase. With a nonce, `enforceNonce`: a retry within NONCE_WINDOW_MS
 * answers the first message instead of posting again.
 */
export type MessageInput = CamelKeys<typeof MessageSchema.static>

const INDEPENDENT = { independent: true }

/** How long an enforced nonce holds (Discord: "a few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000

/**
 * POST /lobbies/{id}/messages. Returns the message and whether it is new: with `enforce_nonce`, the same author
 * sending the same nonce to the same lobby within five minutes gets the original back, and nothing is sent again.
 * The check and the insert are one transaction, and a unique index holds one enforced nonce per author and lobby,
 * so concurrent retries make exactly one message. `access` gives the lobby or throws (404, not a member): the caller
 * asks it first, and it is asked again inside the transaction, which runs a moment later (group commit), after
 * writes queued before it.
 */
export async function postMessage(
  access: () => Promise<LobbyRow>,
  authorId: string,
  input: MessageInput,
): Promise<{ message: ReturnType<typeof lobbyMessage>; created: boolean }> {
  if (input.content.trim() === '') throw emptyMessage()
  const enforce = input.enforceNonce === true && input.nonce !== undefined
  const author = await cachedUser(authorId)
  if (!author) throw Errors.unauthorized()
  // Its id is taken as it is queued: ids follow the batch's order, which is the order its dispatches go out in, even
  // where the writes run side by side (PostgreSQL) and their statements answer in another order.
  const id = snowflake()
  // Committed together with the other messages of this event-loop turn (group commit); answered after the COMMIT.
  // Independent of them: it reads the lobby and its own nonce, and two retries of one nonce in one batch collide on
  // the enforced nonces' unique index (the batch then runs again one write at a time).
  const { row, lobby, created, queued, event } = await queuedTransaction(async (tx) => {
    const lobby = await access()
    const now = clock.now()
    if (enforce) {
      await lockEnforcedNonce(tx, lobby.id, authorId, input.nonce!) // looked for, then written: one at a time
      const earlier = await findEnforcedNonce(lobby.id, authorId, input.nonce!)
      if (earlier && earlier.createdAt > now - NONCE_WINDOW_MS)
        return { row: earlier, lobby, created: false, queued: false, event: undefined }
      // Past the window the nonce is free again: the old message keeps it, but no longer holds it.
      if (earlier) await releaseEnforcedNonce(earlier.id)
    }
    const inserted = await insertMessage({
      id,
      lobbyId: lobby.id,
      applicationId: lobby.applicationId,
      authorId,
      content: input.content,
      metadata: input.metadata && Object.keys(input.metadata).length ? input.metadata : null,
      flags: (input.flags ?? 0) & MESSAGE_FLAGS_ALLOWED,
      tts: input.tts === true,
      nonce: input.nonce ?? null,
      enforceNonce: enforce,
      createdAt: now,
    })
    // A message is activity: the lobby's idle countdown starts over.
    await touchLobby(lobby)
    // The application's event webhooks get it too (durable outbox, same transaction); its body (the message without
    // its nonce) is made only when the application has a URL.
    const queued = await queueLobbyEvent(tx, lobby, 'LOBBY_MESSAGE_CREATE', () => lobbyMessage(inserted, author))
    // Given inside the transaction, sent once it commits: with several nodes it is an outbox row of this very
    // transaction (gateway/dispatch.ts, cluster/outbox.ts), so a node that dies right after COMMIT loses no event. The
    // answer is the same object (made once: it was three times a message, ~0.4 µs each).
    const event = lobbyMessage(inserted, author, { nonce: inserted.nonce ?? undefined })
    events.publish(lobbyAudience(lobby), 'LOBBY_MESSAGE_CREATE', { ...event, mentions: [] })
    return { row: inserted, lobby, created: true, queued, event }
  }, INDEPENDENT)
  const message = event ?? lobbyMessage(row, author, { nonce: row.nonce ?? undefined })
  if (!created) return { message, created }
  if (queued) kickEventDeliveries()
  // The linked channel gets a copy; a failure there does not undo the lobby message (Discord's rule).
  if (lobby.linkedChannelId) await mirrorToLinkedChannel(lobby, row.id, author.id, input.content).catch(() => undefined)
  return { message, created }
}

/** Newest first; `before`/`after` page through the whole history. As JSON text, kept until the lobby gets a message. */
export async function readMessages(
  lobby: LobbyRow,
  page: { limit: number; before?: string; after?: string },
): Promise<string> {
  const key = `${page.limit} ${page.before ?? ''} ${page.after ?? ''}`
  return await cachedMessagePage(
    lobby.id,
    key,
    async () =>
      await reading(async () => {
        const rows = await listMessages(lobby.id, page)
        // The page's authors in one query.
        const authors = await findUsers(rows.map((r) => r.authorId))
        return JSON.stringify(
          rows.flatMap((r) => {
            const author = authors.get(r.authorId)
            return author ? [lobbyMessage(r, author)] : []
          }),
        )
      }),
  )
}

/**
 * PUT /lobbies/{id}/messages/{message.id}/moderation-metadata: the application's moderation replaces the message's
 * moderation metadata and stamps its edit time. The lobby hears LOBBY_MESSAGE_UPDATE (with edited_timestamp); the
 * message's copy in a linked channel, MESSAGE_UPDATE. `access` gives the lobby or throws; asked again inside.
 */
export async function moderateMessage(
  access: () => Promise<LobbyRow>,
  messageId: string,
  metadata: Metadata,
): Promise<void> {
  const { row, queued } = await transaction(async (tx) => {
    const lobby = await access()
    const row = await setModerationMetadata(tx, lobby.id, messageId, metadata, clock.now())
    const author = row && (await cachedUser(row.authorId))
    if (!author) return { row, queued: false }
    // The application's event webhooks hear it too (durable outbox, same transaction), and the Gateway (given inside
    // the transaction: sent once it commits).
    const queued = await queueLobbyEvent(tx, lobby, 'LOBBY_MESSAGE_UPDATE', () => lobbyMessage(row, author))
    events.publish(lobbyAudience(lobby), 'LOBBY_MESSAGE_UPDATE', {
      ...lobbyMessage(row, author),
      mentions: [],
      tts: false,
    })
    // Its copy in a linked channel: MESSAGE_UPDATE, given in the same transaction.
    if (row.channelMessageId) await guildPort()?.channelMessageModerated(row.channelMessageId, metadata)
    return { row, queued }
  })
  if (!row) throw Errors.unknownMessage()
  if (queued) kickEventDeliveries()
}
