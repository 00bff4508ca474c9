// The desktop's side of the crypto (WIRE.md §3): an RSA-2048 SPKI key in standard base64, its fingerprint, RSA-OAEP
// with SHA-256 (OAEP and MGF1, empty label) to it, and the two accepted nonce proofs.
import { constants, createHash, createPublicKey, publicEncrypt, type KeyObject } from 'node:crypto'
import { safeEqual } from '../core/crypto'

const KEY_BITS = 2048
const PUBLIC_EXPONENT = 65537n
const STANDARD_BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

export type DesktopKey = { key: KeyObject; spki: Buffer; encoded: string }

/** The key of an `init` frame, or null unless it is the base64 SPKI DER of an RSA-2048 key with e = 65537. */
export function parsePublicKey(encoded: unknown): DesktopKey | null {
  if (
    typeof encoded !== 'string' ||
    encoded.length > 1024 ||
    encoded.length % 4 !== 0 ||
    !STANDARD_BASE64.test(encoded)
  )
    return null
  const spki = Buffer.from(encoded, 'base64')
  let key: KeyObject
  try {
    key = createPublicKey({ key: spki, format: 'der', type: 'spki' })
  } catch {
    return null
  }
  const details = key.asymmetricKeyDetails
  if (
    key.asymmetricKeyType !== 'rsa' ||
    details?.modulusLength !== KEY_BITS ||
    details.publicExponent !== PUBLIC_EXPONENT
  )
    return null
  return { key, spki, encoded }
}

export function keyFrom(encoded: string): KeyObject {
  return createPublicKey({ key: Buffer.from(encoded, 'base64'), format: 'der', type: 'spki' })
}

/** Unpadded base64url SHA-256 of the SPKI DER: 43 characters. */
export function fingerprintOf(spki: Uint8Array): string {
  return createHash('sha256').update(spki).digest('base64url')
}

export const FINGERPRINT_PATTERN = /^[A-Za-z0-9_-]{43}$/

/** RSA-OAEP-SHA256 to the desktop's key, standard base64. */
export function encryptTo(key: KeyObject, data: string | Uint8Array): string {
  return publicEncrypt(
    { key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    Buffer.from(data),
  ).toString('base64')
}

const unpadded = (s: string) => s.replace(/=+$/, '')

/**
 * A `nonce_proof` frame proves the nonce: `{nonce}` is the nonce itself (unpadded base64url; current clients),
 * `{proof}` is SHA-256 of it (unpadded base64url; older clients). Compared in constant time.
 */
export function proves(frame: { nonce?: unknown; proof?: unknown }, nonce: Buffer): boolean {
  if (typeof frame.nonce === 'string' && frame.nonce.length <= 128)
    return safeEqual(unpadded(frame.nonce), nonce.toString('base64url'))
  if (typeof frame.proof === 'string' && frame.proof.length <= 128) {
    return safeEqual(unpadded(frame.proof), createHash('sha256').update(nonce).digest('base64url'))
  }
  return false
}
