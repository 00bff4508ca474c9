// The accounts domain as the app mounts it (domain.ts): the calling user's routes, user tokens, which sessions
// still live, READY's user, and the sweep of expired tokens, fingerprints and idle sessions.
import type { Caller } from '../core/caller'
import type { DomainModule } from '../domain'
import { purgeExpiredFingerprints } from './fingerprints'
import { purgeExpiredOneTime } from './one-time'
import { accountEndpoints } from './routes'
import { userForCaller } from './serialize'
import { retryPendingMessages } from '../delivery'
import { liveSessionIds, resolveUserToken, sweepIdleSessions } from './sessions'
import { secondFactor } from './second-factor'
import { cachedUser } from './store'

/**
 * READY's `user`: the private user for user sessions, the bot user (bot: true) for applications; and for user
 * sessions Discord's `auth: {authenticator_types}`, the second factors the account has on.
 */
async function userReady(caller: Caller) {
  const user = await cachedUser(caller.userId)
  const { enabled, authenticatorTypes: types } = await secondFactor().state(caller.userId)
  return {
    ready: {
      user: user ? userForCaller(user, caller, enabled) : null,
      ...(caller.kind === 'user' ? { auth: { authenticator_types: types } } : {}),
    },
  }
}

export const accountsModule = {
  name: 'accounts',
  endpoints: accountEndpoints,
  tokens: { user: resolveUserToken },
  liveSessions: liveSessionIds,
  identify: userReady,
  async sweep() {
    await purgeExpiredOneTime()
    await purgeExpiredFingerprints()
    await sweepIdleSessions()
    await retryPendingMessages()
  },
} satisfies DomainModule
