// Password hashing with argon2id at OWASP's minimum (m=19 MiB, t=2, p=1); rehash when parameters change.
import { reserve } from '../core/ratelimit'
import { passwordMismatch } from './errors'
export const PASSWORD_PARAMS = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, PASSWORD_PARAMS)
}

export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash)
  } catch {
    return false
  }
}

/** Whether a stored hash was made with other parameters than today's. */
export function needsRehash(hash: string): boolean {
  return !hash.startsWith(`$argon2id$v=19$m=${PASSWORD_PARAMS.memoryCost},t=${PASSWORD_PARAMS.timeCost},p=1$`)
}

const WRONG_PASSWORDS_PER_USER = { limit: 10, windowMs: 15 * 60_000 }

/** Re-authentication for account changes: 400 PASSWORD_DOES_NOT_MATCH on a wrong password, 429 after too many. */
export async function confirmPassword(
  user: { id: string; passwordHash: string | null },
  password: unknown,
): Promise<void> {
  const attempt = await reserve(['password-user', user.id, WRONG_PASSWORDS_PER_USER])
  if (typeof password === 'string' && user.passwordHash && (await verifyPassword(password, user.passwordHash)))
    return attempt.release()
  throw passwordMismatch()
}
