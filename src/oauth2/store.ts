// Every query of the oauth2 domain: applications, authorization codes and tokens. Async, as every store
// (docs/DESIGN.md, "Stores are async"). Single-use steps are one UPDATE ... RETURNING each.
import { and, eq, gt, inArray, isNull, lt, or, type Placeholder, sql } from 'drizzle-orm'
import { forgetCallers } from '../core/caller'
import { clock } from '../core/clock'
import { forgetThrough, rowCache } from '../db/cache'
import { db, prepared, write, type DB } from '../db/client'
import {
  applications,
  oauth2Codes,
  oauth2Tokens,
  type ApplicationRow,
  type OAuth2CodeRow,
  type OAuth2TokenRow,
} from './tables'

// ---- applications

export async function insertApplication(tx: DB, row: typeof applications.$inferInsert): Promise<void> {
  tx.insert(applications).values(row).run()
}

export async function listApplications(): Promise<ApplicationRow[]> {
  return db().select().from(applications).all()
}

export async function findApplication(id: string): Promise<ApplicationRow | undefined> {
  return db().select().from(applications).where(eq(applications.id, id)).get()
}

/**
 * Give an application made before key pairs existed its pair. Guarded (`verify_key IS NULL`): when two processes race,
 * the first pair stays and both read it back.
 */
export async function setApplicationKeysOnce(
  id: string,
  verifyKey: string,
  signingKey: string,
): Promise<ApplicationRow | undefined> {
  return await write(async (w) => {
    w.update(applications)
      .set({ verifyKey, signingKey })
      .where(and(eq(applications.id, id), isNull(applications.verifyKey)))
      .run()
    return await findApplication(id)
  })
}

/** How many users have a live OAuth2 grant for the application (Discord's approximate_user_authorization_count). */
export async function countAuthorizedUsers(applicationId: string): Promise<number> {
  const now = clock.now()
  return (
    db()
      .select({ n: sql<number>`count(distinct ${oauth2Tokens.userId})` })
      .from(oauth2Tokens)
      .where(
        and(
          eq(oauth2Tokens.applicationId, applicationId),
          or(
            gt(oauth2Tokens.expiresAt, now),
            and(isNull(oauth2Tokens.refreshUsedAt), gt(oauth2Tokens.refreshExpiresAt, now)),
          ),
        ),
      )
      .get()?.n ?? 0
  )
}

// Where an application's event webhooks go: asked for every lobby message (most applications have none), so kept.
const webhookTargets = rowCache<string, { url: string | null }>(4096)

/** The application's event webhooks URL when they are enabled, else null. */
export async function cachedEventWebhookUrl(applicationId: string): Promise<string | null> {
  return (
    webhookTargets.read(applicationId, () => {
      const row = db()
        .select({ url: applications.eventWebhooksUrl, status: applications.eventWebhooksStatus })
        .from(applications)
        .where(eq(applications.id, applicationId))
        .get()
      return row ? { url: row.status === 2 ? row.url : null } : undefined
    })?.url ?? null
  )
}

/** Set the event webhooks URL and status (1 disabled, 2 enabled). */
export async function setEventWebhooks(applicationId: string, url: string | null, status: 1 | 2): Promise<void> {
  return await write((w) => {
    webhookTargets.forget(applicationId)
    w.update(applications)
      .set({ eventWebhooksUrl: url, eventWebhooksStatus: status })
      .where(eq(applications.id, applicationId))
      .run()
  })
}

// Token resolution (every Bot request) reads only the columns it needs (no redirect_uris JSON to parse).
const applicationByBotTokenHash = prepared((d) =>
  d
    .select({ id: applications.id, botUserId: applications.botUserId })
    .from(applications)
    .where(eq(applications.botTokenHash, sql.placeholder('hash')))
    .prepare(),
)

export async function findApplicationByBotTokenHash(
  hash: string,
): Promise<Pick<ApplicationRow, 'id' | 'botUserId'> | undefined> {
  return applicationByBotTokenHash().get({ hash })
}

// ---- codes and tokens

const tokenByAccessTokenHash = prepared((d) =>
  d
    .select({
      id: oauth2Tokens.id,
      userId: oauth2Tokens.userId,
      applicationId: oauth2Tokens.applicationId,
      scopes: oauth2Tokens.scopes,
      expiresAt: oauth2Tokens.expiresAt,
      familyId: oauth2Tokens.familyId,
    })
    .from(oauth2Tokens)
    .where(eq(oauth2Tokens.accessTokenHash, sql.placeholder('hash')))
    .prepare(),
)

/** What a Bearer request needs of its grant (every Bearer request asks). */
export async function findTokenByAccessHash(
  hash: string,
): Promise<Pick<OAuth2TokenRow, 'id' | 'userId' | 'applicationId' | 'scopes' | 'expiresAt' | 'familyId'> | undefined> {
  return tokenByAccessTokenHash().get({ hash })
}

export async function insertCode(row: typeof oauth2Codes.$inferInsert): Promise<void> {
  return await write((w) => {
    const now = clock.now()
    // Codes live 10 minutes; drop long-dead ones (kept an hour for replay detection) as new ones arrive.
    w.delete(oauth2Codes)
      .where(lt(oauth2Codes.expiresAt, now - 3600_000))
      .run()
    w.insert(oauth2Codes).values(row).run()
  })
}

/** Mark a code used; undefined when it does not exist or was already used (atomic: one statement). */
export async function useCode(codeHash: string): Promise<OAuth2CodeRow | undefined> {
  return await write((w) => {
    return w
      .update(oauth2Codes)
      .set({ usedAt: clock.now() })
      .where(and(eq(oauth2Codes.codeHash, codeHash), isNull(oauth2Codes.usedAt)))
      .returning()
      .get()
  })
}

export async function findCode(codeHash: string): Promise<OAuth2CodeRow | undefined> {
  return db().select().from(oauth2Codes).where(eq(oauth2Codes.codeHash, codeHash)).get()
}

export async function insertToken(tx: DB, row: typeof oauth2Tokens.$inferInsert): Promise<void> {
  tx.insert(oauth2Tokens).values(row).run()
}

export async function findTokenByRefreshHash(hash: string): Promise<OAuth2TokenRow | undefined> {
  return db().select().from(oauth2Tokens).where(eq(oauth2Tokens.refreshTokenHash, hash)).get()
}

export async function findTokenById(id: string): Promise<OAuth2TokenRow | undefined> {
  return db().select().from(oauth2Tokens).where(eq(oauth2Tokens.id, id)).get()
}

export async function findTokenByAnyHash(hash: string): Promise<OAuth2TokenRow | undefined> {
  return db()
    .select()
    .from(oauth2Tokens)
    .where(or(eq(oauth2Tokens.accessTokenHash, hash), eq(oauth2Tokens.refreshTokenHash, hash)))
    .get()
}

/** Spend a refresh token and end its access token, in one statement; undefined if someone spent it first. */
export async function spendRefreshToken(tx: DB, id: string): Promise<OAuth2TokenRow | undefined> {
  forgetThrough(forgetCallers) // its access token ends here
  const now = clock.now()
  return tx
    .update(oauth2Tokens)
    .set({ refreshUsedAt: now, expiresAt: sql`min(${oauth2Tokens.expiresAt}, ${now})` })
    .where(and(eq(oauth2Tokens.id, id), isNull(oauth2Tokens.refreshUsedAt)))
    .returning()
    .get()
}

/** Delete every token of a grant family; the users whose tokens went (one, or none when it was gone already). */
export async function deleteFamily(familyId: string): Promise<string[]> {
  return await write((w) => {
    forgetThrough(forgetCallers)
    const gone = w
      .delete(oauth2Tokens)
      .where(eq(oauth2Tokens.familyId, familyId))
      .returning({ userId: oauth2Tokens.userId })
      .all()
    return [...new Set(gone.map((r) => r.userId))]
  })
}

/** Delete every token a user granted (to one application, or to all): their authorization is gone. */
export async function deleteUserTokens(userId: string, applicationId?: string): Promise<number> {
  return await write((w) => {
    forgetThrough(forgetCallers)
    return w
      .delete(oauth2Tokens)
      .where(
        and(
          eq(oauth2Tokens.userId, userId),
          applicationId === undefined ? undefined : eq(oauth2Tokens.applicationId, applicationId),
        ),
      )
      .returning({ id: oauth2Tokens.id })
      .all().length
  })
}

/** The user's live grants, one row per application: its newest token (id, scopes, application). */
export async function liveGrantsOfUser(
  userId: string,
): Promise<Pick<OAuth2TokenRow, 'id' | 'applicationId' | 'scopes'>[]> {
  const now = clock.now()
  const rows = db()
    .select({ id: oauth2Tokens.id, applicationId: oauth2Tokens.applicationId, scopes: oauth2Tokens.scopes })
    .from(oauth2Tokens)
    .where(and(eq(oauth2Tokens.userId, userId), liveToken(now)))
    .orderBy(sql`${oauth2Tokens.createdAt} DESC`)
    .all()
  const byApp = new Map<string, (typeof rows)[number]>()
  for (const row of rows) if (!byApp.has(row.applicationId)) byApp.set(row.applicationId, row)
  return [...byApp.values()]
}

/** Of these token families, those with a token still usable (its access token, or a refresh token not spent), by user. */
export async function liveFamilies(familyIds: string[]): Promise<Map<string, string>> {
  const live = new Map<string, string>()
  const now = clock.now()
  for (let i = 0; i < familyIds.length; i += 500) {
    const rows = db()
      .selectDistinct({ familyId: oauth2Tokens.familyId, userId: oauth2Tokens.userId })
      .from(oauth2Tokens)
      .where(and(inArray(oauth2Tokens.familyId, familyIds.slice(i, i + 500)), liveToken(now)))
      .all()
    for (const r of rows) live.set(r.familyId, r.userId)
  }
  return live
}

/**
 * A token that still buys something: its access token has not expired, or its refresh token is unspent and valid
 * (`now` a time, or the placeholder of a prepared statement).
 */
function liveToken(now: number | Placeholder) {
  return or(
    gt(oauth2Tokens.expiresAt, now),
    and(isNull(oauth2Tokens.refreshUsedAt), gt(oauth2Tokens.refreshExpiresAt, now)),
  )
}

const liveGrant = prepared((d) =>
  d
    .select({ id: oauth2Tokens.id })
    .from(oauth2Tokens)
    .where(
      and(
        eq(oauth2Tokens.userId, sql.placeholder('userId')),
        eq(oauth2Tokens.applicationId, sql.placeholder('applicationId')),
        liveToken(sql.placeholder('now')),
      ),
    )
    .limit(1)
    .prepare(),
)

/** Whether the user has a live grant for the application (it "authorized" the application). */
export async function hasGrant(userId: string, applicationId: string): Promise<boolean> {
  return liveGrant().get({ userId, applicationId, now: clock.now() }) !== undefined
}
