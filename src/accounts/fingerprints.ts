// Fingerprints: anonymous identifiers for clients before login, "<snowflake>.<MAC>". At most 3 valid per 2 minutes
// per IP (an IPv6 client counts by its /64); extras are returned but not valid (unusable for registration or
// experiments) and leave no row, so requests past the limit cost no disk. A valid one lives 30 days.
import { createHmac } from 'node:crypto'
import { clock } from '../core/clock'
import { safeEqual } from '../core/crypto'
import { perIp, tryConsume } from '../core/ratelimit'
import { snowflake } from '../core/snowflake'
import { getSecret } from '../db/secrets'
import {
  claimFingerprintRow,
  deleteFingerprintsCreatedBy,
  findFingerprint,
  fingerprintUser,
  insertFingerprint,
  retireFingerprintRow,
} from './fingerprints-store'

const FINGERPRINT_LIMIT = { limit: 3, windowMs: 120_000 }
const FINGERPRINT_TTL_MS = 30 * 24 * 3600_000

async function mac(id: string): Promise<string> {
  return createHmac('sha256', await getSecret('fingerprint'))
    .update(id)
    .digest('base64url')
    .slice(0, 27)
}

export async function createFingerprint(ip: string): Promise<string> {
  const id = snowflake()
  if (await tryConsume(...perIp('fingerprint-ip', ip, FINGERPRINT_LIMIT))) await insertFingerprint(id, ip)
  return `${id}.${await mac(id)}`
}

/** The snowflake of a fingerprint that is authentic and valid; undefined otherwise. */
async function validFingerprint(value: unknown): Promise<string | undefined> {
  if (typeof value !== 'string' || value.length > 64) return undefined
  const [id, given] = value.split('.')
  if (!id || !given || !/^\d{1,20}$/.test(id) || !safeEqual(given, await mac(id))) return undefined
  const row = await findFingerprint(id, clock.now() - FINGERPRINT_TTL_MS)
  return row?.valid ? id : undefined
}

/** Claim a valid, unused fingerprint for a new account (atomic: one account per fingerprint). */
export async function claimFingerprint(value: unknown, userId: string): Promise<string | undefined> {
  const id = await validFingerprint(value)
  if (!id) return undefined
  return (await claimFingerprintRow(id, userId)) ? id : undefined
}

/** Forget fingerprints past their life (housekeeping). */
export async function purgeExpiredFingerprints(): Promise<void> {
  await deleteFingerprintsCreatedBy(clock.now() - FINGERPRINT_TTL_MS)
}

/**
 * The snowflake of a fingerprint still honoured (GET /experiments): authentic and valid, and not yet ended by the
 * login or registration that took it. Undefined otherwise.
 */
export async function honouredFingerprint(value: unknown): Promise<string | undefined> {
  const id = await validFingerprint(value)
  if (!id) return undefined
  const row = await fingerprintUser(id)
  return row && row.usedBy === null ? id : undefined
}

/** Fingerprints are honoured until login: a login that carries one ends it (the account's ID takes over). */
export async function retireFingerprint(value: unknown, userId: string): Promise<void> {
  const id = await validFingerprint(value)
  if (!id) return
  await retireFingerprintRow(id, userId)
}
