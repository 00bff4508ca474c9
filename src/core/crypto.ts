// Random secrets, hashing for storage, constant-time comparison, Ed25519 keys and signatures.
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, timingSafeEqual } from 'node:crypto'

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

/** An Ed25519 key pair: the public key as Discord shows it (hex of the 32 raw bytes), the private key as PKCS#8 DER. */
export function ed25519KeyPair(): { publicKeyHex: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  return {
    publicKeyHex: Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('hex'),
    privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
  }
}

/** An Ed25519 signature (hex, as Discord's X-Signature-Ed25519) of `message` with a private key of ed25519KeyPair. */
export function ed25519SignHex(privateKey: string, message: string | Uint8Array): string {
  const key = createPrivateKey({ key: Buffer.from(privateKey, 'base64'), format: 'der', type: 'pkcs8' })
  return sign(null, typeof message === 'string' ? Buffer.from(message) : message, key).toString('hex')
}
