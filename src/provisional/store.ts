// Every query of provisional accounts: external identities and the applications' identity providers. Async, as every
// store (docs/DESIGN.md, "Stores are async").
import { and, asc, eq, sql } from 'drizzle-orm'
import { db, type DB, lockName, prepared, write } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { ExternalAuthProviderRow, ExternalIdentityRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

export type IdentityKey = { applicationId: string; kind: 'bot' | 'oidc'; issuer: string; subject: string }

// ---- identities

const identityByKey = prepared((d) =>
  d
    .select({ id: t.externalIdentities.id, userId: t.externalIdentities.userId })
    .from(t.externalIdentities)
    .where(
      and(
        eq(t.externalIdentities.applicationId, sql.placeholder('applicationId')),
        eq(t.externalIdentities.kind, sql.placeholder('kind')),
        eq(t.externalIdentities.issuer, sql.placeholder('issuer')),
        eq(t.externalIdentities.subject, sql.placeholder('subject')),
      ),
    )
    .prepare(),
)

/** The account an external identity is (every token request asks: one index probe). */
export async function findIdentity(key: IdentityKey): Promise<Pick<ExternalIdentityRow, 'id' | 'userId'> | undefined> {
  return identityByKey().get(key)
}

/** The accounts an application's external identities name (its provisional accounts, and full ones merged into). */
export async function identityAccountsOf(applicationId: string): Promise<string[]> {
  const rows = await db()
    .selectDistinct({ userId: t.externalIdentities.userId })
    .from(t.externalIdentities)
    .where(eq(t.externalIdentities.applicationId, applicationId))
    .all()
  return rows.map((r) => r.userId)
}

/**
 * Hold an identity's name until the transaction ends, so that concurrent first requests for it make one account: the
 * second reads the first's row after its COMMIT (PostgreSQL: an advisory lock; SQLite has one writer anyway).
 */
export async function lockIdentity(tx: DB, key: IdentityKey): Promise<void> {
  await lockName(tx, `external-identity:${key.applicationId}:${key.kind}:${key.issuer}:${key.subject}`)
}

export async function insertIdentity(tx: DB, row: ExternalIdentityRow): Promise<void> {
  await tx.insert(t.externalIdentities).values(row).run()
}

/** The identities that name a user (what a merge moves, what `user list --provisional` shows). */
export async function identitiesOfUser(userId: string): Promise<ExternalIdentityRow[]> {
  return db().select().from(t.externalIdentities).where(eq(t.externalIdentities.userId, userId)).all()
}

/** Every identity of `from` names `to` now (a merge); how many. */
export async function repointIdentities(tx: DB, from: string, to: string): Promise<number> {
  return (
    await tx
      .update(t.externalIdentities)
      .set({ userId: to })
      .where(eq(t.externalIdentities.userId, from))
      .returning({ id: t.externalIdentities.id })
      .all()
  ).length
}

// ---- identity providers

export async function insertProvider(row: ExternalAuthProviderRow): Promise<void> {
  await write(async (w) => {
    await w.insert(t.externalAuthProviders).values(row).run()
  })
}

/** An application's providers (or every application's), oldest first. */
export async function listProviders(applicationId?: string): Promise<ExternalAuthProviderRow[]> {
  return db()
    .select()
    .from(t.externalAuthProviders)
    .where(applicationId === undefined ? undefined : eq(t.externalAuthProviders.applicationId, applicationId))
    .orderBy(asc(t.externalAuthProviders.createdAt), asc(t.externalAuthProviders.id))
    .all()
}

/** Remove one provider by id; whether it existed. */
export async function deleteProvider(id: string): Promise<boolean> {
  return await write(async (w) => {
    const gone = await w
      .delete(t.externalAuthProviders)
      .where(eq(t.externalAuthProviders.id, id))
      .returning({ id: t.externalAuthProviders.id })
      .all()
    return gone.length > 0
  })
}
