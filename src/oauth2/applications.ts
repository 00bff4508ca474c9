// Applications and their bot users. Secrets are shown once at creation and stored hashed.
import type { BearerCaller, BotCaller } from '../core/caller'
import { clock } from '../core/clock'
import { ownedToken, randomToken, sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { insertUser } from '../accounts/store'
import { grantedScopes } from './scopes'
import { findApplicationByBotTokenHash, findTokenByAccessHash, insertApplication } from './store'

export type CreatedApplication = { id: string; name: string; bot_token: string; client_secret: string }

export async function createApplication(name: string, redirectUris: string[] = [], ownerId: string | null = null): Promise<CreatedApplication> {
  const id = snowflake()
  const botUserId = snowflake()
  const botToken = ownedToken(botUserId)
  const clientSecret = randomToken(32)
  const now = clock.now()
  transaction((tx) => {
    insertUser({ id: botUserId, username: botUsername(name, botUserId), globalName: name, bot: true, createdAt: now }, tx)
    insertApplication(tx, {
      id,
      name,
      ownerId,
      botUserId,
      botTokenHash: sha256Hex(botToken),
      clientSecretHash: sha256Hex(clientSecret),
      redirectUris,
      createdAt: now,
    })
  })
  return { id, name, bot_token: botToken, client_secret: clientSecret }
}

/** Bot usernames share the users' namespace; suffix with the id so they never collide. */
function botUsername(name: string, id: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9_.]/g, '').slice(0, 20) || 'bot'
  return `${base}_${id}`
}

export async function resolveBotToken(token: string): Promise<BotCaller | undefined> {
  const app = findApplicationByBotTokenHash(sha256Hex(token))
  if (!app) return undefined
  return { kind: 'bot', userId: app.botUserId, applicationId: app.id }
}

export async function resolveBearerToken(token: string): Promise<BearerCaller | undefined> {
  const grant = findTokenByAccessHash(sha256Hex(token))
  if (!grant || grant.expiresAt <= clock.now()) return undefined
  return {
    kind: 'bearer',
    userId: grant.userId,
    applicationId: grant.applicationId,
    scopes: grantedScopes(grant.scopes),
    grantId: grant.id,
  }
}
