// What a provisional account is to every flow (issue 44): a user the game's application made for one of its players
// (src/provisional/), with no password and no e-mail, marked by a bit of `flags` (and `public_flags`). Discord
// documents no value for it; this server uses bit 23, which no documented or known Discord user flag uses.
import type { UserRow } from './tables'

export const PROVISIONAL_FLAG = 1 << 23

export function isProvisional(user: Pick<UserRow, 'flags'>): boolean {
  return (user.flags & PROVISIONAL_FLAG) !== 0
}
