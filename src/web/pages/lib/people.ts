// How a person is shown (every call is the SDK's): a stand-in avatar (the lobby page, both sides of QR login),
// and the short form of a fingerprint a person compares between the two screens.
import { el } from './ui'

export type RemoteUser = { id: string; discriminator: string; avatar: string | null; username: string }

/**
 * A stand-in avatar: the initial on one of Discord's default-avatar colours chosen as Discord chooses the default
 * avatar ((id >> 22) % 6). The server has no avatar images to show (no CDN).
 */
export function avatarFor(user: { id: string; username: string }): HTMLElement {
  const index = Number((BigInt(user.id) >> 22n) % 6n)
  return el('span', { class: `avatar avatar-${index}`, 'aria-hidden': 'true' }, (user.username[0] ?? '?').toUpperCase())
}

/** The first characters of a fingerprint, grouped, so a person can compare the code on both screens. */
export function shortFingerprint(fingerprint: string): string {
  return `${fingerprint.slice(0, 4)} ${fingerprint.slice(4, 8)}`
}
