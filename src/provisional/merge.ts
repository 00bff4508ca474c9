// Merging a provisional account into a full account (issue 44, part 4; Discord's "Merging Provisional Accounts"):
// POST /oauth2/token with an authorization code and the player's external credential. The credential is checked before
// the code is spent (oauth2/merge-port.ts); then, in the code's transaction, under the identity's lock: the full
// account takes the provisional one's lobby memberships and lobby messages (lobbies/merge.ts) and its friends, requests
// and blocks (relationships/merge.ts), the identity (and any other of the account) names the full account, and the
// provisional account ends: deleted, its tokens gone, its sockets closed (4004) on every node. Later token requests for the identity answer 530010; a second merge 530014.
import { isProvisional } from '../accounts/provisional'
import { cachedUser, updateUser } from '../accounts/store'
import { clock } from '../core/clock'
import { sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import type { DB } from '../db/client'
import { events } from '../gateway/bus'
import { mergeLobbyMember } from '../lobbies/merge'
import { mergeRelationships } from '../relationships/merge'
import type { PreparedMerge } from '../oauth2/merge-port'
import { revokeAuthorization } from '../oauth2/revocation'
import { findTokenByAccessHash } from '../oauth2/store'
import { ProvisionalErrors } from './errors'
import { verifyIdToken } from './oidc'
import { EXTERNAL_AUTH_TYPES } from './schemas'
import {
  findIdentity,
  type IdentityKey,
  identitiesOfUser,
  insertIdentity,
  listProviders,
  lockIdentity,
  repointIdentities,
} from './store'

export async function prepareMerge(applicationId: string, type: string, token: string): Promise<PreparedMerge> {
  const key = await identityOf(applicationId, type, token)
  return { run: (tx, userId) => merge(tx, key, userId) }
}

/** The identity a credential proves (Discord's errors otherwise). */
async function identityOf(applicationId: string, type: string, token: string): Promise<IdentityKey> {
  if (type === 'OIDC') {
    const identity = await verifyIdToken(await listProviders(applicationId), token)
    return { applicationId, kind: 'oidc', issuer: identity.issuer, subject: identity.subject }
  }
  if (type === 'DISCORD_BOT_ISSUED_ACCESS_TOKEN') {
    const grant = await findTokenByAccessHash(sha256Hex(token))
    if (!grant || grant.applicationId !== applicationId || grant.expiresAt <= clock.now())
      throw ProvisionalErrors.badAccessToken()
    const identity = (await identitiesOfUser(grant.userId)).find((i) => i.applicationId === applicationId)
    if (!identity) throw ProvisionalErrors.badAccessToken()
    return { applicationId, kind: identity.kind, issuer: identity.issuer, subject: identity.subject }
  }
  if ((EXTERNAL_AUTH_TYPES as readonly string[]).includes(type))
    throw ProvisionalErrors.notConfigured("this type (it needs its vendor's services)")
  throw ProvisionalErrors.notConfigured(`"${type.slice(0, 64)}"`)
}

async function merge(tx: DB, key: IdentityKey, userId: string): Promise<void> {
  const target = await cachedUser(userId)
  if (!target || isProvisional(target)) throw ProvisionalErrors.badMergeDestination()
  await lockIdentity(tx, key)
  const identity = await findIdentity(key)
  const others = (await identitiesOfUser(userId)).filter(
    (i) => i.applicationId === key.applicationId && i.id !== identity?.id,
  )
  if (!identity) {
    // No provisional account yet: the identity is linked to the full account straight away.
    if (others.length > 0) throw ProvisionalErrors.tooManyIdentities()
    await insertIdentity(tx, { id: snowflake(), ...key, userId, createdAt: clock.now() })
    return
  }
  const source = identity.userId === userId ? undefined : await cachedUser(identity.userId)
  if (!source || !isProvisional(source)) throw ProvisionalErrors.badMergeSource()
  if (source.state !== 'active' || source.compromised) throw ProvisionalErrors.mergeSourceBanned()
  if (others.length > 0) throw ProvisionalErrors.tooManyIdentities()
  await mergeLobbyMember(tx, key.applicationId, source.id, userId)
  await mergeRelationships(tx, source.id, userId)
  await repointIdentities(tx, source.id, userId)
  await updateUser(source.id, { state: 'deleted' })
  await revokeAuthorization(source.id)
  events.closeUser(source.id, 4004, 'Authentication failed')
}
