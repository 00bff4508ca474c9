// The lobbies domain's queries of its messages (store.ts holds the domain's lobby rows and what its store files
// share: the tables `t`, the caches).
import { and, asc, desc, eq, gt, lt, type SQL, sql } from 'drizzle-orm'
import { usersVersion } from '../accounts/store'
import {
  asInteger,
  type DB,
  db,
  jsonPlaceholder,
  lockName,
  prepared,
  sendWithCommit,
  toJson,
  write,
} from '../db/client'
import { type ColumnOf, insertColumns } from '../db/insert-columns'
import { messagePages, t } from './store'
import type { LobbyMessageRow, Metadata } from './tables'

const ph = sql.placeholder

/** The lobby's page of messages for this query as JSON text: cached, else `build()`'s. */
export async function cachedMessagePage(lobbyId: string, query: string, build: () => Promise<string>): Promise<string> {
  return messagePages.read(lobbyId, query, usersVersion(), build)
}

// A new message's columns: the statement's placeholders, the row as written and MessageInsert are made from them.
const messageColumns = insertColumns(
  [
    'id',
    'lobbyId',
    'applicationId',
    'authorId',
    'content',
    'metadata',
    'flags',
    'tts',
    'nonce',
    'enforceNonce',
    'createdAt',
  ],
  { json: ['metadata', 'nonce'], fallbacks: { flags: 0, tts: false, enforceNonce: false } },
)
const messageInsert = prepared((d) => d.insert(t.lobbyMessages).values(messageColumns.values()).prepare())
const enforcedNonce = prepared((d) =>
  d
    .select()
    .from(t.lobbyMessages)
    .where(
      and(
        eq(t.lobbyMessages.lobbyId, ph('lobbyId')),
        eq(t.lobbyMessages.authorId, ph('authorId')),
        eq(t.lobbyMessages.nonce, jsonPlaceholder('nonce')),
        eq(t.lobbyMessages.enforceNonce, true),
      ),
    )
    .prepare(),
)
const enforcedNonceRelease = prepared((d) =>
  d
    .update(t.lobbyMessages)
    .set({ enforceNonce: false })
    .where(eq(t.lobbyMessages.id, ph('id')))
    .prepare(),
)

// A page of messages: newest first, or (after a cursor alone) the oldest ones newer than it, read ascending.
const messageOrder = asInteger(t.lobbyMessages.id)
const inLobby = eq(t.lobbyMessages.lobbyId, ph('lobbyId'))
const beforeCursor = lt(messageOrder, asInteger(ph('before')))
const afterCursor = gt(messageOrder, asInteger(ph('after')))
const messagePage = (where: SQL | undefined, order: SQL) =>
  prepared((d) => d.select().from(t.lobbyMessages).where(where).orderBy(order).limit(ph('limit')).prepare())
const pageNewest = messagePage(inLobby, desc(messageOrder))
const pageBefore = messagePage(and(inLobby, beforeCursor), desc(messageOrder))
const pageBetween = messagePage(and(inLobby, beforeCursor, afterCursor), desc(messageOrder))
const pageAfter = messagePage(and(inLobby, afterCursor), asc(messageOrder))

export type MessageInsert = Pick<typeof t.lobbyMessages.$inferInsert, ColumnOf<typeof messageColumns>>

/**
 * The row as written: every column is given (those the insert leaves out are null), so no RETURNING (it cost a third
 * of the insert).
 */
export async function insertMessage(row: MessageInsert): Promise<LobbyMessageRow> {
  messagePages.forget(row.lobbyId)
  const written = {
    ...messageColumns.written(row),
    moderationMetadata: null,
    editedAt: null,
    channelMessageId: null,
  } as LobbyMessageRow
  // Nothing of its answer is needed: on PostgreSQL it goes out with the transaction's COMMIT.
  await sendWithCommit(messageInsert().run(messageColumns.params(written)))
  return written
}

/** The author's message in the lobby that holds this enforced nonce, if any. */
export async function findEnforcedNonce(
  lobbyId: string,
  authorId: string,
  nonce: string | number,
): Promise<LobbyMessageRow | undefined> {
  return enforcedNonce().get({ lobbyId, authorId, nonce: toJson(nonce) })
}

/** (The enforce_nonce flag is not part of any answer: the lobby's cached pages stay.) */
export async function releaseEnforcedNonce(messageId: string): Promise<void> {
  await enforcedNonceRelease().run({ id: messageId })
}

export async function listMessages(
  lobbyId: string,
  page: { limit: number; before?: string; after?: string },
): Promise<LobbyMessageRow[]> {
  const { limit, before, after } = page
  if (before !== undefined && after !== undefined) return pageBetween().all({ lobbyId, limit, before, after })
  if (before !== undefined) return pageBefore().all({ lobbyId, limit, before })
  // After a cursor: the oldest `limit` newer ones, still answered newest first.
  if (after !== undefined) return (await pageAfter().all({ lobbyId, limit, after })).reverse()
  return pageNewest().all({ lobbyId, limit })
}

/** One message of the lobby, or undefined (another lobby's message is unknown here). */
export async function findLobbyMessage(
  lobbyId: string,
  messageId: string,
  tx: DB = db(),
): Promise<LobbyMessageRow | undefined> {
  return tx
    .select()
    .from(t.lobbyMessages)
    .where(and(eq(t.lobbyMessages.id, messageId), eq(t.lobbyMessages.lobbyId, lobbyId)))
    .get()
}

/** Replace a message's moderation metadata and stamp its edit time; the lobby's cached pages show it, so they go. */
export async function setModerationMetadata(
  tx: DB,
  lobbyId: string,
  messageId: string,
  moderationMetadata: Metadata,
  editedAt: number,
): Promise<LobbyMessageRow | undefined> {
  messagePages.forget(lobbyId)
  return tx
    .update(t.lobbyMessages)
    .set({ moderationMetadata, editedAt })
    .where(and(eq(t.lobbyMessages.id, messageId), eq(t.lobbyMessages.lobbyId, lobbyId)))
    .returning()
    .get()
}

/** Remember the message's copy in the linked channel. (No answer shows it: the cached pages stay.) */
export async function setChannelCopy(messageId: string, channelMessageId: string): Promise<void> {
  return await write(async (w) => {
    await w.update(t.lobbyMessages).set({ channelMessageId }).where(eq(t.lobbyMessages.id, messageId)).run()
  })
}

/** One enforce_nonce send per lobby, author and nonce at a time (the message it finds may not exist yet). */
export async function lockEnforcedNonce(
  tx: DB,
  lobbyId: string,
  authorId: string,
  nonce: string | number,
): Promise<void> {
  await lockName(tx, `lobby-nonce:${lobbyId}:${authorId}:${JSON.stringify(nonce)}`)
}

/**
 * The application's lobby messages of `from` become `to`'s (a provisional account merged into a full one); how many.
 * Pages of messages cached as text are made again because the caller changes a user row in the same transaction
 * (usersVersion: cachedMessagePage).
 */
export async function moveLobbyMessages(tx: DB, applicationId: string, from: string, to: string): Promise<number> {
  return (
    await tx
      .update(t.lobbyMessages)
      .set({ authorId: to })
      .where(and(eq(t.lobbyMessages.applicationId, applicationId), eq(t.lobbyMessages.authorId, from)))
      .returning({ id: t.lobbyMessages.id })
      .all()
  ).length
}
