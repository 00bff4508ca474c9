// The hash Discord's experiments use: Murmur3 x86 32-bit, seed 0, unsigned (murmurhash-js). Keys are ASCII here
// (definitions refuse anything else), where murmurhash-js and the UTF-8 reference agree.
import murmurhash from 'murmurhash-js'

export const POSITIONS = 10_000

export function murmur3(key: string): number {
  return murmurhash.murmur3(key, 0)
}

/** Rollout position 0-9999 of a resource: murmur3("<hash key>:<resource id>") % 10000. */
export function rolloutPosition(hashKey: string, resourceId: string): number {
  return murmur3(`${hashKey}:${resourceId}`) % POSITIONS
}
