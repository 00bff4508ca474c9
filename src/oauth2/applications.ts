// Applications and their bot users. Secrets are shown once at creation and stored hashed.
import { eq, sql } from 'drizzle-orm'
import type { BearerCaller, BotCaller } from '../core/caller'
import { clock } from '../core/clock'
import { ownedToken, randomToken, sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { db, prepared, transaction } from '../db/client'
import { users } from '../accounts/tables'
import { grantedScopes } from './scopes'
import { applications, oauth2Tokens, type ApplicationRow } from './tables'

export type CreatedApplication = { id: string; name: string; bot_token: string; client_secret: string }

export async function createApplication(name: string, redirectUris: string[] = [], ownerId: string | null = null): Promise<CreatedApplication> {
  const id = snowflake()
  const botUserId = snowflake()
  const botToken = ownedToken(botUserId)
  const clientSecret = randomToken(32)
  const now = clock.now()
  transaction((tx) => {
    tx.insert(users)
      .values({ id: botUserId, username: botUsername(name, botUserId), globalName: name, bot: true, createdAt: now })
      .run()
    tx.insert(applications)
      .values({
        id,
        name,
        ownerId,
        botUserId,
        botTokenHash: sha256Hex(botToken),
        clientSecretHash: sha256Hex(clientSecret),
        redirectUris,
        createdAt: now,
      })
      .run()
  })
  return { id, name, bot_token: botToken, client_secret: clientSecret }
}

/** Bot usernames share the users' namespace; suffix with the id so they never collide. */
function botUsername(name: string, id: string): string {
  const base = name.toLowerCase().replace(/[^a-z0-9_.]/g, '').slice(0, 20) || 'bot'
  return `${base}_${id}`
}

export async function listApplications(): Promise<ApplicationRow[]> {
  return db().select().from(applications).all()
}

export async function findApplication(id: string): Promise<ApplicationRow | undefined> {
  return db().select().from(applications).where(eq(applications.id, id)).get()
}

const byBotTokenHash = prepared((d) =>
  d.select().from(applications).where(eq(applications.botTokenHash, sql.placeholder('hash'))).prepare(),
)

export async function resolveBotToken(token: string): Promise<BotCaller | undefined> {
  const app = byBotTokenHash().get({ hash: sha256Hex(token) })
  if (!app) return undefined
  return { kind: 'bot', userId: app.botUserId, applicationId: app.id }
}

const byAccessTokenHash = prepared((d) =>
  d.select().from(oauth2Tokens).where(eq(oauth2Tokens.accessTokenHash, sql.placeholder('hash'))).prepare(),
)

export async function resolveBearerToken(token: string): Promise<BearerCaller | undefined> {
  const grant = byAccessTokenHash().get({ hash: sha256Hex(token) })
  if (!grant || grant.expiresAt <= clock.now()) return undefined
  return {
    kind: 'bearer',
    userId: grant.userId,
    applicationId: grant.applicationId,
    scopes: grantedScopes(grant.scopes),
    grantId: grant.id,
  }
}
