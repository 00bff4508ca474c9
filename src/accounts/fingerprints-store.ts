// The accounts domain's queries of client fingerprints (store.ts holds the user rows and what its store files share:
// the tables `t`).
import { and, eq, gt, isNull, lte } from 'drizzle-orm'
import { clock } from '../core/clock'
import { db, write } from '../db/client'
import { t } from './store'

export async function insertFingerprint(id: string, ip: string): Promise<void> {
  return await write(async (w) => {
    await w.insert(t.fingerprints).values({ id, valid: true, ip, createdAt: clock.now() }).run()
  })
}

/** A fingerprint row created after `since`. */
export async function findFingerprint(
  id: string,
  since: number,
): Promise<typeof t.fingerprints.$inferSelect | undefined> {
  return db()
    .select()
    .from(t.fingerprints)
    .where(and(eq(t.fingerprints.id, id), gt(t.fingerprints.createdAt, since)))
    .get()
}

/** Who used a fingerprint (null: nobody yet); undefined when there is no such row. */
export async function fingerprintUser(id: string): Promise<{ usedBy: string | null } | undefined> {
  return db().select({ usedBy: t.fingerprints.usedBy }).from(t.fingerprints).where(eq(t.fingerprints.id, id)).get()
}

/** Mark a valid, unused fingerprint used by `userId`: true for exactly one caller. */
export async function claimFingerprintRow(id: string, userId: string): Promise<boolean> {
  return await write(async (w) => {
    return !!(await w
      .update(t.fingerprints)
      .set({ usedBy: userId })
      .where(and(eq(t.fingerprints.id, id), eq(t.fingerprints.valid, true), isNull(t.fingerprints.usedBy)))
      .returning()
      .get())
  })
}

export async function retireFingerprintRow(id: string, userId: string): Promise<void> {
  return await write(async (w) => {
    await w
      .update(t.fingerprints)
      .set({ usedBy: userId })
      .where(and(eq(t.fingerprints.id, id), isNull(t.fingerprints.usedBy)))
      .run()
  })
}

export async function deleteFingerprintsCreatedBy(cutoff: number): Promise<void> {
  return await write(async (w) => {
    await w.delete(t.fingerprints).where(lte(t.fingerprints.createdAt, cutoff)).run()
  })
}
