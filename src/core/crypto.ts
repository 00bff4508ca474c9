// Random secrets, hashing for storage, constant-time comparison.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** URL-safe random string carrying `bytes` bytes of entropy (default 32 = 256 bits). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

/** Uniform random digits (e.g. SMS codes), without modulo bias. */
export function randomDigits(length: number): string {
  let out = ''
  while (out.length < length) {
    const byte = randomBytes(1)[0]
    if (byte < 250) out += String(byte % 10)
  }
  return out
}

/** SHA-256 of a secret, hex; what we store instead of the secret. */
export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex')
}

export function sha256Base64(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('base64')
}

/** Constant-time string equality (hashes both sides so lengths never leak). */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}

/** Tokens that carry their owner's id in front, as Discord's do: base64url(id).random */
export function ownedToken(ownerId: string, bytes = 32): string {
  return `${Buffer.from(ownerId).toString('base64url')}.${randomToken(bytes)}`
}
