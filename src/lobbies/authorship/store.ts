// The lobby messages' authorship moved from one account to another (a provisional account merged into a full one,
// issue 44). Beside lobbies/store.ts, which another change is splitting: the coordinator may fold it in there.
import { and, eq } from 'drizzle-orm'
import type { DB } from '../../db/client'
import { dialectTables } from '../../db/client'
import * as sqliteTables from '../tables'

const t = dialectTables(sqliteTables, () => import('../tables.pg'))

/**
 * The application's lobby messages of `from` become `to`'s; how many. Pages of messages cached as text are made again
 * because the caller changes a user row in the same transaction (usersVersion: lobbies/store.ts cachedMessagePage).
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
