// Applications and their bot users. Secrets are shown once at creation and stored hashed.
import type { BearerCaller, BotCaller, Resolved } from '../core/caller'
import { clock } from '../core/clock'
import { ed25519KeyPair, ownedToken, randomToken, sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { insertUser, isUserActive } from '../accounts/store'
import { grantedScopes } from './scopes'
import {
  findApplicationByBotTokenHash,
  findTokenByAccessHash,
  insertApplication,
  setApplicationKeysOnce,
} from './store'
import type { ApplicationRow } from './tables'

export type CreatedApplication = { id: string; name: string; bot_token: string; client_secret: string }

export async function createApplication(
  name: string,
  redirectUris: string[] = [],
  ownerId: string | null = null,
  firstParty = false,
): Promise<CreatedApplication> {
  const id = snowflake()
  const botUserId = snowflake()
  const botToken = ownedToken(botUserId)
  const clientSecret = randomToken(32)
  const keys = ed25519KeyPair()
  const now = clock.now()
  await transaction(async (tx) => {
    await insertUser({
      id: botUserId,
      username: botUsername(name, botUserId),
      globalName: name,
      bot: true,
      createdAt: now,
    })
    await insertApplication(tx, {
      id,
      name,
      ownerId,
      botUserId,
      botTokenHash: sha256Hex(botToken),
      clientSecretHash: sha256Hex(clientSecret),
      redirectUris,
      createdAt: now,
      verifyKey: keys.publicKeyHex,
      signingKey: keys.privateKey,
      firstParty,
    })
  })
  return { id, name, bot_token: botToken, client_secret: clientSecret }
}

/** The application with its Ed25519 key pair, made now for an application created before applications had one. */
export async function ensureApplicationKeys(
  app: ApplicationRow,
): Promise<ApplicationRow & { verifyKey: string; signingKey: string }> {
  if (app.verifyKey && app.signingKey) return app as ApplicationRow & { verifyKey: string; signingKey: string }
  const keys = ed25519KeyPair()
  const updated = (await setApplicationKeysOnce(app.id, keys.publicKeyHex, keys.privateKey)) ?? app
  return updated as ApplicationRow & { verifyKey: string; signingKey: string }
}

/** Bot usernames share the users' namespace; suffix with the id so they never collide. */
function botUsername(name: string, id: string): string {
  const base =
    name
      .toLowerCase()
      .replace(/[^a-z0-9_.]/g, '')
      .slice(0, 20) || 'bot'
  return `${base}_${id}`
}

/** How long a resolved bot token is reused at most; a reset or a deleted application forgets it at once (store). */
const BOT_REUSE_MS = 60_000

export async function resolveBotToken(token: string): Promise<Resolved<BotCaller> | undefined> {
  const app = await findApplicationByBotTokenHash(sha256Hex(token))
  if (!app) return undefined
  return { caller: { kind: 'bot', userId: app.botUserId, applicationId: app.id }, until: clock.now() + BOT_REUSE_MS }
}

export async function resolveBearerToken(token: string): Promise<Resolved<BearerCaller> | undefined> {
  const grant = await findTokenByAccessHash(sha256Hex(token))
  const now = clock.now()
  if (!grant || grant.expiresAt <= now || !(await isUserActive(grant.userId))) return undefined
  return {
    caller: {
      kind: 'bearer',
      userId: grant.userId,
      applicationId: grant.applicationId,
      scopes: grantedScopes(grant.scopes),
      grantId: grant.id,
      familyId: grant.familyId,
      // Only the first-party application's tokens are issued to a user session (first-party.ts).
      ...(grant.sessionId ? { firstParty: true as const } : {}),
    },
    // Reused until it expires, at most a minute; a revoked or refreshed token is forgotten at once (store).
    until: Math.min(grant.expiresAt, now + BOT_REUSE_MS),
  }
}
