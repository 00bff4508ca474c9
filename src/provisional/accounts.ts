// A token for an external identity: its provisional account made on the first request (one per application and
// identity, whatever the concurrency), found on the next; an OAuth2 Bearer token of scope sdk.social_layer for it,
// an hour long, 256 random bits stored as SHA-256 (oauth2_tokens, so the Bearer machinery resolves and revokes it),
// and an id_token naming the account, signed with the application's Ed25519 key (EdDSA: its verify_key checks it).
import { createPrivateKey, type KeyObject, sign } from 'node:crypto'
import { config } from '../config'
import { appState } from '../core/app'
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { Lru } from '../core/lru'
import { randomToken, sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { queuedTransaction, transaction } from '../db/client'
import { uniqueViolation } from '../db/errors'
import { isProvisional, PROVISIONAL_FLAG } from '../accounts/provisional'
import { cachedUser, insertUser } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { ensureApplicationKeys } from '../oauth2/applications'
import { findApplication, findApplicationSigningKey, insertIssuedToken } from '../oauth2/store'
import { ProvisionalErrors } from './errors'
import { findIdentity, type IdentityKey, insertIdentity, lockIdentity } from './store'

export const TOKEN_SECONDS = 3600
/** OIDC confidential clients only (as Discord): the OAuth2 refresh grant keeps the hour (oauth2/grants.ts). */
const REFRESH_SECONDS = 30 * 24 * 3600
export const SCOPE = 'sdk.social_layer'

export type ProvisionalTokenAnswer = {
  access_token: string
  id_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token?: string
  scope: string
}

/**
 * The account of an external identity, made now (with `displayName` as its global_name) when it has none; then a
 * token for it. 530010 when the identity now names a full account (merged), 403 when its account is locked or
 * deleted.
 */
export async function tokenForIdentity(
  applicationId: string,
  key: IdentityKey,
  displayName: string | undefined,
  { refresh = false } = {},
): Promise<ProvisionalTokenAnswer> {
  const found = await findIdentity(key)
  if (found) return await tokenForAccount(applicationId, await usable(found.userId), refresh)
  const userId = await transaction(async (tx) => {
    await lockIdentity(tx, key)
    // Another request may have made it since the read above (it held the lock until its COMMIT).
    const again = await findIdentity(key)
    if (again) return again.userId
    const id = snowflake()
    const now = clock.now()
    try {
      await insertUser({
        id,
        username: `player_${id}`,
        globalName: displayName ?? null,
        flags: PROVISIONAL_FLAG,
        createdAt: now,
      })
    } catch (error) {
      // The generated name was taken (a person registered it): Discord's "username generation failed, retry".
      if (uniqueViolation(error) === 'users.username') throw ProvisionalErrors.usernameFailed()
      throw error
    }
    await insertIdentity(tx, { id: snowflake(), ...key, userId: id, createdAt: now })
    return id
  })
  return await tokenForAccount(applicationId, await usable(userId), refresh)
}

/** The identity's account, if a token may be issued for it. */
async function usable(userId: string): Promise<UserRow> {
  const user = await cachedUser(userId)
  if (!user) throw ProvisionalErrors.unavailable()
  if (!isProvisional(user)) throw ProvisionalErrors.notProvisional()
  if (user.state !== 'active' || user.compromised) throw ProvisionalErrors.unavailable()
  return user
}

/** A new token for a provisional account (DISCORD_BOT_ISSUED_ACCESS_TOKEN: the account its token names). */
export async function tokenForAccount(
  applicationId: string,
  user: UserRow,
  refresh: boolean,
): Promise<ProvisionalTokenAnswer> {
  const accessToken = randomToken(32)
  const refreshToken = refresh ? randomToken(32) : undefined
  const now = clock.now()
  // Group commit (one COMMIT for the tokens asked in one turn): a game's backend asks for many players at once, and a
  // COMMIT each held the writer (bench: 181 tokens/s). Independent on PostgreSQL: it touches no row of another's.
  await queuedTransaction(
    (tx) =>
      insertIssuedToken(tx, {
        id: snowflake(),
        applicationId,
        userId: user.id,
        scopes: SCOPE,
        accessTokenHash: sha256Hex(accessToken),
        refreshTokenHash: refreshToken ? sha256Hex(refreshToken) : null,
        familyId: snowflake(),
        expiresAt: now + TOKEN_SECONDS * 1000,
        refreshExpiresAt: refreshToken ? now + REFRESH_SECONDS * 1000 : null,
        sessionId: null,
        createdAt: now,
      }),
    { independent: true },
  )
  return {
    access_token: accessToken,
    id_token: await idToken(applicationId, user.id, now),
    token_type: 'Bearer',
    expires_in: TOKEN_SECONDS,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scope: SCOPE,
  }
}

export { usable as usableProvisionalAccount }

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** An OpenID Connect ID token for the account: EdDSA with the application's key (its verify_key checks it). */
async function idToken(applicationId: string, userId: string, now: number): Promise<string> {
  const iat = Math.floor(now / 1000)
  const claims = { iss: config().baseUrl, sub: userId, aud: applicationId, iat, exp: iat + TOKEN_SECONDS }
  const head = `${b64({ alg: 'EdDSA', typ: 'JWT' })}.${b64(claims)}`
  return `${head}.${sign(null, Buffer.from(head), await signingKey(applicationId)).toString('base64url')}`
}

// Parsing the key is most of a signature's cost, and reading it a query: each application's is kept parsed. An
// application's key pair never changes once made (setApplicationKeysOnce).
const newProvisionalKeys = () => ({ keys: new Lru<string, KeyObject>(1024) })
declare module '../core/app' {
  interface AppState {
    provisionalKeys: ReturnType<typeof newProvisionalKeys>
  }
}
const held = appState('provisionalKeys', newProvisionalKeys)

async function signingKey(applicationId: string): Promise<KeyObject> {
  const keys = held().keys
  const hit = keys.get(applicationId)
  if (hit) return hit
  let der = await findApplicationSigningKey(applicationId)
  if (der === null) {
    const app = await findApplication(applicationId)
    if (app) der = (await ensureApplicationKeys(app)).signingKey
  }
  if (!der) throw Errors.unauthorized()
  const key = createPrivateKey({ key: Buffer.from(der, 'base64'), format: 'der', type: 'pkcs8' })
  keys.set(applicationId, key)
  return key
}
