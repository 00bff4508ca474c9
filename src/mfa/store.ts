// Every query of the mfa domain: TOTP secrets, backup codes, SMS factors, security keys and MFA tickets. Async, as
// every store (docs/DESIGN.md, "Stores are async"). Single-use steps are one guarded UPDATE or DELETE ... RETURNING
// each. What every request may ask (which authenticators are on: /users/@me's mfa_enabled and authenticator_types) is
// prepared once and cached.
import { and, eq, gt, lt, or, sql } from 'drizzle-orm'
import { clock } from '../core/clock'
import { rowCache } from '../db/cache'
import { db, prepared, transaction, write } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

export type TicketRow = typeof t.mfaTickets.$inferSelect
export type CredentialRow = typeof t.webauthnCredentials.$inferSelect
export type BackupCodeRow = typeof t.backupCodes.$inferSelect

const totpOf = prepared((d) =>
  d
    .select({ one: sql<number>`1` })
    .from(t.totpSecrets)
    .where(eq(t.totpSecrets.userId, sql.placeholder('userId')))
    .prepare(),
)
const credentialOf = prepared((d) =>
  d
    .select({ one: sql<number>`1` })
    .from(t.webauthnCredentials)
    .where(eq(t.webauthnCredentials.userId, sql.placeholder('userId')))
    .limit(1)
    .prepare(),
)
const smsOf = prepared((d) =>
  d
    .select({ one: sql<number>`1` })
    .from(t.smsFactors)
    .where(eq(t.smsFactors.userId, sql.placeholder('userId')))
    .prepare(),
)

/** Discord's authenticator types (READY's `auth`, the private user's `authenticator_types`). */
export const AuthenticatorType = { WEBAUTHN: 1, TOTP: 2, SMS: 3 } as const

// The user's authenticator types (every /users/@me asks, for mfa_enabled and authenticator_types, through the
// factors' `enrolled`): three index lookups, under a microsecond together (one `UNION ALL` statement measured 7 times
// slower in SQLite). The writers of TOTP secrets, security keys and SMS factors below forget it (db/cache.ts has the
// rules).
const authenticatorTypesOf = rowCache<string, readonly number[]>('authenticator-types', 8192)

/** The authenticator types whose rows the user has, ascending (cached). */
export async function cachedAuthenticatorTypes(userId: string): Promise<readonly number[]> {
  // A hit is answered as it is (no await: @me asks on every request); a miss reads the three tables.
  return authenticatorTypesOf.read(userId, async () => {
    const types: number[] = []
    if ((await credentialOf().get({ userId })) !== undefined) types.push(AuthenticatorType.WEBAUTHN)
    if ((await totpOf().get({ userId })) !== undefined) types.push(AuthenticatorType.TOTP)
    if ((await smsOf().get({ userId })) !== undefined) types.push(AuthenticatorType.SMS)
    return types
  }) as readonly number[] | Promise<readonly number[]>
}

// ---- TOTP

export async function hasTotpSecret(userId: string): Promise<boolean> {
  return (await cachedAuthenticatorTypes(userId)).includes(AuthenticatorType.TOTP)
}

export async function findTotpSecret(userId: string): Promise<typeof t.totpSecrets.$inferSelect | undefined> {
  return db().select().from(t.totpSecrets).where(eq(t.totpSecrets.userId, userId)).get()
}

/** Move the last accepted step forward to `step`: true once per step, even in parallel. */
export async function claimTotpStep(userId: string, step: number): Promise<boolean> {
  return await write(async (w) => {
    return !!(await w
      .update(t.totpSecrets)
      .set({ lastStep: step })
      .where(and(eq(t.totpSecrets.userId, userId), lt(t.totpSecrets.lastStep, step)))
      .returning({ u: t.totpSecrets.userId })
      .get())
  })
}

/** false when the user already has a secret. */
export async function insertTotpSecret(userId: string, secret: string, step: number): Promise<boolean> {
  return await write(async (w) => {
    authenticatorTypesOf.forget(userId)
    return !!(await w
      .insert(t.totpSecrets)
      .values({ userId, secret, lastStep: step, createdAt: clock.now() })
      .onConflictDoNothing()
      .returning()
      .get())
  })
}

export async function deleteTotpSecret(userId: string): Promise<void> {
  return await write(async (w) => {
    authenticatorTypesOf.forget(userId)
    await w.delete(t.totpSecrets).where(eq(t.totpSecrets.userId, userId)).run()
  })
}

// ---- backup codes

/** Replace a user's codes with these hashes, in one transaction. */
export async function replaceBackupCodes(userId: string, hashes: string[]): Promise<void> {
  await transaction(async (tx) => {
    await tx.delete(t.backupCodes).where(eq(t.backupCodes.userId, userId)).run()
    await tx
      .insert(t.backupCodes)
      .values(hashes.map((codeHash) => ({ userId, codeHash })))
      .run()
  })
}

export async function backupCodesOf(userId: string): Promise<BackupCodeRow[]> {
  return db().select().from(t.backupCodes).where(eq(t.backupCodes.userId, userId)).all()
}

export async function unusedBackupCodes(userId: string): Promise<BackupCodeRow[]> {
  return db()
    .select()
    .from(t.backupCodes)
    .where(and(eq(t.backupCodes.userId, userId), eq(t.backupCodes.consumed, false)))
    .all()
}

export async function hasUnusedBackupCode(userId: string): Promise<boolean> {
  return !!(await db()
    .select({ id: t.backupCodes.id })
    .from(t.backupCodes)
    .where(and(eq(t.backupCodes.userId, userId), eq(t.backupCodes.consumed, false)))
    .get())
}

/** Mark a code used: true for exactly one caller. */
export async function consumeBackupCodeRow(id: number): Promise<boolean> {
  return await write(async (w) => {
    return !!(await w
      .update(t.backupCodes)
      .set({ consumed: true })
      .where(and(eq(t.backupCodes.id, id), eq(t.backupCodes.consumed, false)))
      .returning({ id: t.backupCodes.id })
      .get())
  })
}

export async function deleteBackupCodes(userId: string): Promise<void> {
  return await write(async (w) => {
    await w.delete(t.backupCodes).where(eq(t.backupCodes.userId, userId)).run()
  })
}

// ---- SMS

export async function hasSmsFactor(userId: string): Promise<boolean> {
  return (await cachedAuthenticatorTypes(userId)).includes(AuthenticatorType.SMS)
}

export async function insertSmsFactor(userId: string): Promise<void> {
  return await write(async (w) => {
    authenticatorTypesOf.forget(userId)
    await w.insert(t.smsFactors).values({ userId, createdAt: clock.now() }).onConflictDoNothing().run()
  })
}

export async function deleteSmsFactor(userId: string): Promise<void> {
  return await write(async (w) => {
    authenticatorTypesOf.forget(userId)
    await w.delete(t.smsFactors).where(eq(t.smsFactors.userId, userId)).run()
  })
}

// ---- security keys

export async function credentialsOfUser(userId: string): Promise<CredentialRow[]> {
  return db().select().from(t.webauthnCredentials).where(eq(t.webauthnCredentials.userId, userId)).all()
}

export async function hasCredential(userId: string): Promise<boolean> {
  return (await cachedAuthenticatorTypes(userId)).includes(AuthenticatorType.WEBAUTHN)
}

export async function findCredentialByCredentialId(credentialId: string): Promise<CredentialRow | undefined> {
  return db().select().from(t.webauthnCredentials).where(eq(t.webauthnCredentials.credentialId, credentialId)).get()
}

/** undefined when the credential id is already registered. */
export async function insertCredential(
  row: typeof t.webauthnCredentials.$inferInsert,
): Promise<CredentialRow | undefined> {
  return await write((w) => {
    authenticatorTypesOf.forget(row.userId)
    return w.insert(t.webauthnCredentials).values(row).onConflictDoNothing().returning().get()
  })
}

/**
 * Store the counter of an assertion if it moved past the stored one (0/0: the authenticator keeps no counter);
 * undefined otherwise, which is a cloned authenticator or a replay.
 */
export async function advanceCounter(id: string, next: number): Promise<CredentialRow | undefined> {
  return await write((w) => {
    return w
      .update(t.webauthnCredentials)
      .set({ counter: next })
      .where(
        and(
          eq(t.webauthnCredentials.id, id),
          or(
            lt(t.webauthnCredentials.counter, next),
            and(eq(t.webauthnCredentials.counter, 0), eq(t.webauthnCredentials.counter, next)),
          ),
        ),
      )
      .returning()
      .get()
  })
}

export async function renameCredentialRow(
  userId: string,
  id: string,
  name: string,
): Promise<CredentialRow | undefined> {
  return await write((w) => {
    return w
      .update(t.webauthnCredentials)
      .set({ name })
      .where(and(eq(t.webauthnCredentials.id, id), eq(t.webauthnCredentials.userId, userId)))
      .returning()
      .get()
  })
}

export async function deleteCredential(userId: string, id: string): Promise<boolean> {
  return await write(async (w) => {
    authenticatorTypesOf.forget(userId)
    return !!(await w
      .delete(t.webauthnCredentials)
      .where(and(eq(t.webauthnCredentials.id, id), eq(t.webauthnCredentials.userId, userId)))
      .returning()
      .get())
  })
}

export async function deleteCredentialsOf(userId: string): Promise<void> {
  return await write(async (w) => {
    authenticatorTypesOf.forget(userId)
    await w.delete(t.webauthnCredentials).where(eq(t.webauthnCredentials.userId, userId)).run()
  })
}

// ---- tickets

export async function insertTicket(row: typeof t.mfaTickets.$inferInsert): Promise<void> {
  return await write(async (w) => {
    await w.insert(t.mfaTickets).values(row).run()
  })
}

export async function findLiveTicket(ticketHash: string, purpose: string, now: number): Promise<TicketRow | undefined> {
  return db()
    .select()
    .from(t.mfaTickets)
    .where(
      and(eq(t.mfaTickets.ticketHash, ticketHash), eq(t.mfaTickets.purpose, purpose), gt(t.mfaTickets.expiresAt, now)),
    )
    .get()
}

export async function countWrongCode(ticketHash: string): Promise<void> {
  return await write(async (w) => {
    await w
      .update(t.mfaTickets)
      .set({ attempts: sql`${t.mfaTickets.attempts} + 1` })
      .where(eq(t.mfaTickets.ticketHash, ticketHash))
      .run()
  })
}

/** Delete a ticket that has tries left: true for exactly one caller. */
export async function takeTicket(ticketHash: string, maxWrongCodes: number): Promise<boolean> {
  return await write(async (w) => {
    return !!(await w
      .delete(t.mfaTickets)
      .where(and(eq(t.mfaTickets.ticketHash, ticketHash), sql`${t.mfaTickets.attempts} < ${maxWrongCodes}`))
      .returning({ h: t.mfaTickets.ticketHash })
      .get())
  })
}

export async function deleteExpiredTickets(now: number): Promise<void> {
  return await write(async (w) => {
    await w.delete(t.mfaTickets).where(sql`${t.mfaTickets.expiresAt} <= ${now}`).run()
  })
}
