// Handoff: an authenticated client mints a single-use token bound to a key and its IP; another client on the same
// IP exchanges key + token for a new session. Wrong key, wrong IP, reuse and expiry all fail the same way.
import { safeEqual, sha256Hex } from '../core/crypto'
import { transaction } from '../db/client'
import { publicUser } from '../accounts/serialize'
import { cachedUser } from '../accounts/store'
import type { ClientInfo } from '../accounts/client-info'
import { completeLogin } from '../accounts/complete-login'
import { handoffTokenInvalid } from './errors'
import { issueOneTime, redeemOneTime } from '../accounts/one-time'

const HANDOFF_TTL_MS = 5 * 60_000

export async function createHandoff(userId: string, key: string, ip: string): Promise<string> {
  return await issueOneTime('handoff', userId, HANDOFF_TTL_MS, { key: sha256Hex(key), ip })
}

export async function exchangeHandoff(key: string, handoffToken: string, client: ClientInfo) {
  // One transaction spends the token and makes the session: both happen, or neither. Redeemed first, checked after:
  // a token presented with the wrong key or from the wrong IP is burnt (the transaction commits without a session).
  const login = await transaction(async () => {
    const row = await redeemOneTime('handoff', handoffToken)
    if (!row?.userId || !safeEqual(row.data.key ?? '', sha256Hex(key)) || row.data.ip !== client.ip) return undefined
    const user = await cachedUser(row.userId)
    if (!user || user.state !== 'active' || user.compromised) return undefined // a lock also stops tokens minted before it
    return { token: (await completeLogin(user, { client })).token, user }
  })
  if (!login) throw handoffTokenInvalid()
  return { token: login.token, user: publicUser(login.user) }
}
