// Password hashing with argon2id at OWASP's minimum (m=19 MiB, t=2, p=1); rehash when parameters change.
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
