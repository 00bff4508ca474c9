// What every successful authentication ends with (password login, MFA, passwordless, handoff, registration):
// a new session for the client, the IP remembered as known, the client's fingerprint ended, and the login success body.
import { Errors } from '../core/errors'
import { ipKey } from '../core/ip-key'
import { transaction } from '../db/client'
import type { ClientInfo } from './client-info'
import { retireFingerprint } from './fingerprints'
import { isProvisional } from './provisional'
import { createSession } from './sessions'
import { loginSettings } from './settings'
import { cachedUser, insertKnownIp, isKnownIp } from './store'
import { accountCompromised } from './errors'
import type { UserRow } from './tables'

export type LoginContext = { client: ClientInfo; loginSource?: string | null; giftCodeSkuId?: string | null }

/** A place the user logged in from: an IPv6 address by its /64 (core/ip-key.ts), as the limits count a client. */
export async function rememberIp(userId: string, ip: string): Promise<void> {
  await insertKnownIp(userId, ipKey(ip))
}

/** The user logged in from this place before: its /64, or (rows kept before they were keyed so) the exact address. */
export async function isKnownLocation(userId: string, ip: string): Promise<boolean> {
  const key = ipKey(ip)
  return (await isKnownIp(userId, key)) || (key !== ip && (await isKnownIp(userId, ip)))
}

/** Its writes one transaction: a caller can make it part of its own (spending a single-use token), as a savepoint. */
export async function completeLogin(user: UserRow, context: LoginContext, requiredActions: string[] = []) {
  const token = await transaction(async () => {
    // Read again inside the transaction: a lock that came after the flow began (an MFA ticket, a handoff or QR
    // token, a passkey ceremony) still stops it here, whatever the flow checked before.
    const current = await cachedUser(user.id)
    if (current?.compromised) throw accountCompromised()
    // A provisional account (issue 44) has no credential to log in with; no flow may give it a user session.
    if (current && isProvisional(current)) throw Errors.invalidAccountType()
    const { token } = await createSession(user.id, {
      ip: context.client.ip,
      os: context.client.os,
      platform: context.client.platform,
      location: context.client.location,
      loginSource: context.loginSource ?? null,
      giftCodeSkuId: context.giftCodeSkuId ?? null,
    })
    await rememberIp(user.id, context.client.ip)
    if (context.client.fingerprint) await retireFingerprint(context.client.fingerprint, user.id)
    return token
  })
  return {
    user_id: user.id,
    token,
    user_settings: loginSettings(user),
    ...(requiredActions.length ? { required_actions: requiredActions } : {}),
  }
}
