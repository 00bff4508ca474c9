// Every query of the mfa domain: TOTP secrets, backup codes, SMS factors, security keys and MFA tickets. Async, as
// every store (docs/DESIGN.md, "Stores are async"). Single-use steps are one guarded UPDATE or DELETE ... RETURNING
// each. What every request may ask (which authenticators are on: /users/@me's mfa_enabled and authenticator_types) is
// prepared once and cached.
import { and, eq, gt, lt, or, sql } from 'drizzle-orm'
import { clock } from '../core/clock'
import { rowCache } from '../db/cache'
import { db, prepared, transaction, write } from '../db/client'
import { backupCodes, mfaTickets, smsFactors, totpSecrets, webauthnCredentials } from './tables'

export type TicketRow = typeof mfaTickets.$inferSelect
export type CredentialRow = typeof webauthnCredentials.$inferSelect
export type BackupCodeRow = typeof backupCodes.$inferSelect

const totpOf = prepared((d) =>
  d
    .select({ one: sql<number>`1` })
    .from(totpSecrets)
    .where(eq(totpSecrets.userId, sql.placeholder('userId')))
    .prepare(),
)
const credentialOf = prepared((d) =>
  d
    .select({ one: sql<number>`1` })
    .from(webauthnCredentials)
    .where(eq(webauthnCredentials.userId, sql.placeholder('userId')))
    .limit(1)
    .prepare(),
)
const smsOf = prepared((d) =>
  d
    .select({ one: sql<number>`1` })
    .from(smsFactors)
    .where(eq(smsFactors.userId, sql.placeholder('userId')))
    .prepare(),
)

/** Discord's authenticator types (READY's `auth`, the private user's `authenticator_types`). */
export const AuthenticatorType = { WEBAUTHN: 1, TOTP: 2, SMS: 3 } as const

// The user's authenticator types (every /users/@me asks, for mfa_enabled and authenticator_types, through the
// factors' `enrolled`): three index lookups, under a microsecond together (one `UNION ALL` statement measured 7 times
// slower in SQLite). The writers of TOTP secrets, security keys and SMS factors below forget it (db/cache.ts has the
// rules).
const authenticatorTypesOf = rowCache<string, readonly number[]>(8192)

/** The authenticator types whose rows the user has, ascending (cached). */
export async function cachedAuthenticatorTypes(userId: string): Promise<readonly number[]> {
  return authenticatorTypesOf.read(userId, () => {
    const types: number[] = []
    if (credentialOf().get({ userId }) !== undefined) types.push(AuthenticatorType.WEBAUTHN)
    if (totpOf().get({ userId }) !== undefined) types.push(AuthenticatorType.TOTP)
    if (smsOf().get({ userId }) !== undefined) types.push(AuthenticatorType.SMS)
    return types
  })!
}

// ---- TOTP

export async function hasTotpSecret(userId: string): Promise<boolean> {
  return (await cachedAuthenticatorTypes(userId)).includes(AuthenticatorType.TOTP)
}

export async function findTotpSecret(userId: string): Promise<typeof totpSecrets.$inferSelect | undefined> {
  return db().select().from(totpSecrets).where(eq(totpSecrets.userId, userId)).get()
}

/** Move the last accepted step forward to `step`: true once per step, even in parallel. */
export async function claimTotpStep(userId: string, step: number): Promise<boolean> {
  return await write((w) => {
    return !!w
      .update(totpSecrets)
      .set({ lastStep: step })
      .where(and(eq(totpSecrets.userId, userId), lt(totpSecrets.lastStep, step)))
      .returning({ u: totpSecrets.userId })
      .get()
  })
}

/** false when the user already has a secret. */
export async function insertTotpSecret(userId: string, secret: string, step: number): Promise<boolean> {
  return await write((w) => {
    authenticatorTypesOf.forget(userId)
    return !!w
      .insert(totpSecrets)
      .values({ userId, secret, lastStep: step, createdAt: clock.now() })
      .onConflictDoNothing()
      .returning()
      .get()
  })
}

export async function deleteTotpSecret(userId: string): Promise<void> {
  return await write((w) => {
    authenticatorTypesOf.forget(userId)
    w.delete(totpSecrets).where(eq(totpSecrets.userId, userId)).run()
  })
}

// ---- backup codes

/** Replace a user's codes with these hashes, in one transaction. */
export async function replaceBackupCodes(userId: string, hashes: string[]): Promise<void> {
  await transaction((tx) => {
    tx.delete(backupCodes).where(eq(backupCodes.userId, userId)).run()
    tx.insert(backupCodes)
      .values(hashes.map((codeHash) => ({ userId, codeHash })))
      .run()
  })
}

export async function backupCodesOf(userId: string): Promise<BackupCodeRow[]> {
  return db().select().from(backupCodes).where(eq(backupCodes.userId, userId)).all()
}

export async function unusedBackupCodes(userId: string): Promise<BackupCodeRow[]> {
  return db()
    .select()
    .from(backupCodes)
    .where(and(eq(backupCodes.userId, userId), eq(backupCodes.consumed, false)))
    .all()
}

export async function hasUnusedBackupCode(userId: string): Promise<boolean> {
  return !!db()
    .select({ id: backupCodes.id })
    .from(backupCodes)
    .where(and(eq(backupCodes.userId, userId), eq(backupCodes.consumed, false)))
    .get()
}

/** Mark a code used: true for exactly one caller. */
export async function consumeBackupCodeRow(id: number): Promise<boolean> {
  return await write((w) => {
    return !!w
      .update(backupCodes)
      .set({ consumed: true })
      .where(and(eq(backupCodes.id, id), eq(backupCodes.consumed, false)))
      .returning({ id: backupCodes.id })
      .get()
  })
}

export async function deleteBackupCodes(userId: string): Promise<void> {
  return await write((w) => {
    w.delete(backupCodes).where(eq(backupCodes.userId, userId)).run()
  })
}

// ---- SMS

export async function hasSmsFactor(userId: string): Promise<boolean> {
  return (await cachedAuthenticatorTypes(userId)).includes(AuthenticatorType.SMS)
}

export async function insertSmsFactor(userId: string): Promise<void> {
  return await write((w) => {
    authenticatorTypesOf.forget(userId)
    w.insert(smsFactors).values({ userId, createdAt: clock.now() }).onConflictDoNothing().run()
  })
}

export async function deleteSmsFactor(userId: string): Promise<void> {
  return await write((w) => {
    authenticatorTypesOf.forget(userId)
    w.delete(smsFactors).where(eq(smsFactors.userId, userId)).run()
  })
}

// ---- security keys

export async function credentialsOfUser(userId: string): Promise<CredentialRow[]> {
  return db().select().from(webauthnCredentials).where(eq(webauthnCredentials.userId, userId)).all()
}

export async function hasCredential(userId: string): Promise<boolean> {
  return (await cachedAuthenticatorTypes(userId)).includes(AuthenticatorType.WEBAUTHN)
}

export async function findCredentialByCredentialId(credentialId: string): Promise<CredentialRow | undefined> {
  return db().select().from(webauthnCredentials).where(eq(webauthnCredentials.credentialId, credentialId)).get()
}

/** undefined when the credential id is already registered. */
export async function insertCredential(
  row: typeof webauthnCredentials.$inferInsert,
): Promise<CredentialRow | undefined> {
  return await write((w) => {
    authenticatorTypesOf.forget(row.userId)
    return w.insert(webauthnCredentials).values(row).onConflictDoNothing().returning().get()
  })
}

/**
 * Store the counter of an assertion if it moved past the stored one (0/0: the authenticator keeps no counter);
 * undefined otherwise, which is a cloned authenticator or a replay.
 */
export async function advanceCounter(id: string, next: number): Promise<CredentialRow | undefined> {
  return await write((w) => {
    return w
      .update(webauthnCredentials)
      .set({ counter: next })
      .where(
        and(
          eq(webauthnCredentials.id, id),
          or(
            lt(webauthnCredentials.counter, next),
            and(eq(webauthnCredentials.counter, 0), eq(webauthnCredentials.counter, next)),
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
      .update(webauthnCredentials)
      .set({ name })
      .where(and(eq(webauthnCredentials.id, id), eq(webauthnCredentials.userId, userId)))
      .returning()
      .get()
  })
}

export async function deleteCredential(userId: string, id: string): Promise<boolean> {
  return await write((w) => {
    authenticatorTypesOf.forget(userId)
    return !!w
      .delete(webauthnCredentials)
      .where(and(eq(webauthnCredentials.id, id), eq(webauthnCredentials.userId, userId)))
      .returning()
      .get()
  })
}

export async function deleteCredentialsOf(userId: string): Promise<void> {
  return await write((w) => {
    authenticatorTypesOf.forget(userId)
    w.delete(webauthnCredentials).where(eq(webauthnCredentials.userId, userId)).run()
  })
}

// ---- tickets

export async function insertTicket(row: typeof mfaTickets.$inferInsert): Promise<void> {
  return await write((w) => {
    w.insert(mfaTickets).values(row).run()
  })
}

export async function findLiveTicket(ticketHash: string, purpose: string, now: number): Promise<TicketRow | undefined> {
  return db()
    .select()
    .from(mfaTickets)
    .where(and(eq(mfaTickets.ticketHash, ticketHash), eq(mfaTickets.purpose, purpose), gt(mfaTickets.expiresAt, now)))
    .get()
}

export async function countWrongCode(ticketHash: string): Promise<void> {
  return await write((w) => {
    w.update(mfaTickets)
      .set({ attempts: sql`${mfaTickets.attempts} + 1` })
      .where(eq(mfaTickets.ticketHash, ticketHash))
      .run()
  })
}

/** Delete a ticket that has tries left: true for exactly one caller. */
export async function takeTicket(ticketHash: string, maxWrongCodes: number): Promise<boolean> {
  return await write((w) => {
    return !!w
      .delete(mfaTickets)
      .where(and(eq(mfaTickets.ticketHash, ticketHash), sql`${mfaTickets.attempts} < ${maxWrongCodes}`))
      .returning({ h: mfaTickets.ticketHash })
      .get()
  })
}

export async function deleteExpiredTickets(now: number): Promise<void> {
  return await write((w) => {
    w.delete(mfaTickets).where(sql`${mfaTickets.expiresAt} <= ${now}`).run()
  })
}
