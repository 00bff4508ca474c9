// The mobile side (spec §4.10) and the desktop's ticket exchange. A handshake token (256 bits, stored as sha256) is
// bound to its user and the desktop's fingerprint and lives in the desktop's row, so it dies with the socket;
// finish swaps it for a ticket (256 bits, sha256, 2 minutes) in one transaction; the exchange deletes the ticket
// with DELETE ... RETURNING before issuing anything, so parallel redemptions yield one session.
import type { ClientInfo } from '../accounts/client-info'
import { completeLogin } from '../accounts/complete-login'
import type { UserCaller } from '../core/caller'
import { clock } from '../core/clock'
import { randomToken, sha256Hex } from '../core/crypto'
import { requireElevation } from '../mfa/elevation'
import { mfaEnabled } from '../mfa/factors'
import { cachedUser } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { FINGERPRINT_PATTERN, encryptTo, keyFrom } from './crypto'
import { desktopFor } from './desktop'
import { invalidFingerprint, invalidHandshakeToken, invalidTicket, temporaryTokenUnsupported } from './errors'
import { TICKET_TTL_MS } from './limits'
import {
  claimDesktop,
  deleteDesktop,
  exchangeHandshakeForTicket,
  findHandshake,
  takeHandshake,
  takeTicket,
} from './store'

const usable = (user: UserRow | undefined): user is UserRow => !!user && user.state === 'active' && !user.compromised

/** What the desktop shows before the user accepts: id:discriminator:avatar:username (avatar "0" when none). */
function userPayload(user: UserRow): string {
  return `${user.id}:${user.discriminator}:${user.avatar ?? '0'}:${user.username}`
}

const handshakeHash = (token: string) => (token.length > 0 && token.length <= 128 ? sha256Hex(token) : '')

/** POST /users/@me/remote-auth: claim the desktop, send it pending_ticket, return the handshake token. */
export async function claimRemoteAuth(me: UserCaller, fingerprint: string): Promise<{ handshake_token: string }> {
  const user = await cachedUser(me.userId)
  if (!usable(user)) throw invalidFingerprint()
  if (!FINGERPRINT_PATTERN.test(fingerprint)) throw invalidFingerprint()
  if (!(await desktopFor(fingerprint))) throw invalidFingerprint()
  const token = randomToken(32)
  const claimed = await claimDesktop(fingerprint, user.id, sha256Hex(token), clock.now())
  // Asked again after the claim (it may have waited for the write mutex): a socket gone meanwhile takes its row with
  // it, and nobody gets a handshake for it.
  const desktop = await desktopFor(fingerprint)
  if (!claimed || !desktop) throw invalidFingerprint()
  await desktop.send({
    op: 'pending_ticket',
    encrypted_user_payload: encryptTo(keyFrom(claimed.publicKey), userPayload(user)),
  })
  return { handshake_token: token }
}

/** POST .../finish: (MFA users: elevation first) the handshake becomes a ticket; the desktop gets pending_login. */
export async function finishRemoteAuth(
  me: UserCaller,
  handshakeToken: string,
  temporaryToken: boolean | undefined,
  request: Request,
): Promise<void> {
  if (temporaryToken === true) throw temporaryTokenUnsupported()
  const hash = handshakeHash(handshakeToken)
  if (!hash || !(await findHandshake(hash, me.userId, clock.now()))) throw invalidHandshakeToken()
  const user = await cachedUser(me.userId)
  if (!usable(user)) throw invalidHandshakeToken()
  // A 60003 leaves the handshake as it was: the retry with the elevation token uses it.
  if (await mfaEnabled(user.id)) await requireElevation(me, request)
  // Check the socket, swap handshake for ticket, check the socket again (the swap may have waited for the write
  // mutex: a desktop gone meanwhile never gets the ticket, which expires unused), tell the desktop.
  const row = await findHandshake(hash, me.userId, clock.now())
  if (!row || !(await desktopFor(row.fingerprint))) {
    if (row) await deleteDesktop(row.fingerprint)
    throw invalidHandshakeToken()
  }
  const ticket = randomToken(32)
  const swapped = await exchangeHandshakeForTicket(hash, me.userId, clock.now(), sha256Hex(ticket), TICKET_TTL_MS)
  const desktop = await desktopFor(row.fingerprint)
  if (!swapped || !desktop) throw invalidHandshakeToken()
  await desktop.send({ op: 'pending_login', ticket })
  await desktop.close()
}

/** POST .../cancel: the handshake is used up; the desktop gets cancel. */
export async function cancelRemoteAuth(me: UserCaller, handshakeToken: string): Promise<void> {
  const hash = handshakeHash(handshakeToken)
  const row = hash ? await takeHandshake(hash, me.userId, clock.now()) : undefined
  if (!row) throw invalidHandshakeToken()
  const desktop = await desktopFor(row.fingerprint)
  if (desktop) {
    await desktop.send({ op: 'cancel' })
    await desktop.close()
  }
}

/** POST .../login (no auth): the ticket, once, for a session with the desktop's client info, encrypted to its key. */
export async function exchangeTicket(ticket: string): Promise<{ encrypted_token: string }> {
  if (ticket.length === 0 || ticket.length > 128) throw invalidTicket()
  const row = await takeTicket(sha256Hex(ticket), clock.now())
  if (!row) throw invalidTicket()
  const user = await cachedUser(row.userId)
  if (!usable(user)) throw invalidTicket() // an operator lock after finish still stops it
  const client: ClientInfo = {
    ip: row.ip,
    os: row.clientOs,
    platform: row.clientPlatform,
    location: row.clientLocation ?? '',
  }
  const { token } = await completeLogin(user, { client })
  return { encrypted_token: encryptTo(keyFrom(row.publicKey), token) }
}
