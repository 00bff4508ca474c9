// Every query of the oauth2 domain: applications, authorization codes and tokens. Async, as every store
// (docs/DESIGN.md, "Stores are async"). Single-use steps are one UPDATE ... RETURNING each.
import { and, eq, gt, inArray, isNull, lt, or, type Placeholder, sql } from 'drizzle-orm'
import { forgetCallers } from '../core/caller'
import { clock } from '../core/clock'
import { forgetThrough, rowCache } from '../db/cache'
import { db, prepared, write, type DB } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { ApplicationRow, OAuth2CodeRow, OAuth2TokenRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

// ---- applications

export async function insertApplication(tx: DB, row: typeof t.applications.$inferInsert): Promise<void> {
  await tx.insert(t.applications).values(row).run()
}

export async function listApplications(): Promise<ApplicationRow[]> {
  return db().select().from(t.applications).all()
}

/** The server's own web client's application (first-party.ts), once made. */
export async function findFirstPartyApplication(): Promise<ApplicationRow | undefined> {
  return db().select().from(t.applications).where(eq(t.applications.firstParty, true)).limit(1).get()
}

/**
 * A user session's first-party tokens but its newest `keep`: deleted, so that a session that asks again (a new tab, a
 * cleared storage) holds a few at most.
 */
export async function trimSessionTokens(sessionId: string, keep: number): Promise<void> {
  await write(async (w) => {
    const rows = await w
      .select({ id: t.oauth2Tokens.id })
      .from(t.oauth2Tokens)
      .where(eq(t.oauth2Tokens.sessionId, sessionId))
      // Tokens of one millisecond tie on created_at: their snowflake ids (rising on a node) say which came last.
      .orderBy(sql`${t.oauth2Tokens.createdAt} DESC`, sql`${t.oauth2Tokens.id} DESC`)
      .all()
    const old = rows.slice(keep).map((r) => r.id)
    if (old.length === 0) return
    forgetThrough(forgetCallers)
    await w.delete(t.oauth2Tokens).where(inArray(t.oauth2Tokens.id, old)).run()
  })
}

export async function findApplication(id: string): Promise<ApplicationRow | undefined> {
  return db().select().from(t.applications).where(eq(t.applications.id, id)).get()
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
    await w
      .update(t.applications)
      .set({ verifyKey, signingKey })
      .where(and(eq(t.applications.id, id), isNull(t.applications.verifyKey)))
      .run()
    return await findApplication(id)
  })
}

/** How many users have a live OAuth2 grant for the application (Discord's approximate_user_authorization_count). */
export async function countAuthorizedUsers(applicationId: string): Promise<number> {
  const now = clock.now()
  return (
    (
      await db()
        .select({ n: sql<number>`count(distinct ${t.oauth2Tokens.userId})` })
        .from(t.oauth2Tokens)
        .where(
          and(
            eq(t.oauth2Tokens.applicationId, applicationId),
            or(
              gt(t.oauth2Tokens.expiresAt, now),
              and(isNull(t.oauth2Tokens.refreshUsedAt), gt(t.oauth2Tokens.refreshExpiresAt, now)),
            ),
          ),
        )
        .get()
    )?.n ?? 0
  )
}

// Where an application's event webhooks go: asked for every lobby message (most applications have none), so kept.
const webhookTargets = rowCache<string, { url: string | null }>('event-webhook-urls', 4096)

/** The application's event webhooks URL when they are enabled, else null. */
export async function cachedEventWebhookUrl(applicationId: string): Promise<string | null> {
  return (
    (
      await webhookTargets.read(applicationId, async () => {
        const row = await db()
          .select({ url: t.applications.eventWebhooksUrl, status: t.applications.eventWebhooksStatus })
          .from(t.applications)
          .where(eq(t.applications.id, applicationId))
          .get()
        return row ? { url: row.status === 2 ? row.url : null } : undefined
      })
    )?.url ?? null
  )
}

/**
 * The application's URL failed for too long (lobbies/event-webhooks.ts, the stop rule): its event webhooks become
 * disabled by the server (status 3), only if `url` is still its URL and enabled (a URL set meanwhile stays). True
 * when it changed.
 */
export async function disableFailingEventWebhooks(applicationId: string, url: string): Promise<boolean> {
  return await write(async (w) => {
    webhookTargets.forget(applicationId)
    const changed = await w
      .update(t.applications)
      .set({ eventWebhooksStatus: 3 })
      .where(
        and(
          eq(t.applications.id, applicationId),
          eq(t.applications.eventWebhooksUrl, url),
          eq(t.applications.eventWebhooksStatus, 2),
        ),
      )
      .returning({ id: t.applications.id })
      .all()
    return changed.length > 0
  })
}

/** Set the event webhooks URL and status (1 disabled, 2 enabled). */
export async function setEventWebhooks(applicationId: string, url: string | null, status: 1 | 2): Promise<void> {
  return await write(async (w) => {
    webhookTargets.forget(applicationId)
    await w
      .update(t.applications)
      .set({ eventWebhooksUrl: url, eventWebhooksStatus: status })
      .where(eq(t.applications.id, applicationId))
      .run()
  })
}

/**
 * Replace an application's bot token or client secret (the console's rotation; both stored hashed). The old bot
 * token stops resolving at once, on every node: the token cache is forgotten here and through the cluster's log.
 * False when there is no such application.
 */
export async function setApplicationSecretHashes(
  id: string,
  hashes: { botTokenHash?: string; clientSecretHash?: string },
): Promise<boolean> {
  return await write(async (w) => {
    forgetThrough(forgetCallers)
    const row = await w
      .update(t.applications)
      .set(hashes)
      .where(eq(t.applications.id, id))
      .returning({ id: t.applications.id })
      .get()
    return row !== undefined
  })
}

// Token resolution (every Bot request) reads only the columns it needs (no redirect_uris JSON to parse).
// A locked application's bot token resolves to nothing (`app lock`).
const applicationByBotTokenHash = prepared((d) =>
  d
    .select({ id: t.applications.id, botUserId: t.applications.botUserId })
    .from(t.applications)
    .where(and(eq(t.applications.botTokenHash, sql.placeholder('hash')), isNull(t.applications.lockedAt)))
    .prepare(),
)

/** Its application is not locked (a token of a locked application authenticates nothing). */
const appUnlocked = () =>
  sql`NOT EXISTS (SELECT 1 FROM ${t.applications} WHERE ${t.applications.id} = ${t.oauth2Tokens.applicationId} AND ${t.applications.lockedAt} IS NOT NULL)`

/**
 * Lock (`app lock`) or unlock an application; undefined when there is none. Locking answers who must be disconnected:
 * its bot user and the users holding its OAuth2 tokens.
 */
export async function setApplicationLocked(
  id: string,
  locked: boolean,
): Promise<{ botUserId: string; userIds: string[] } | undefined> {
  return await write(async (w) => {
    forgetThrough(forgetCallers) // its tokens stop (or start again) resolving
    const row = await w
      .update(t.applications)
      .set({ lockedAt: locked ? clock.now() : null })
      .where(eq(t.applications.id, id))
      .returning({ botUserId: t.applications.botUserId })
      .get()
    if (!row) return undefined
    const users = await w
      .selectDistinct({ userId: t.oauth2Tokens.userId })
      .from(t.oauth2Tokens)
      .where(eq(t.oauth2Tokens.applicationId, id))
      .all()
    return { botUserId: row.botUserId, userIds: users.map((u) => u.userId) }
  })
}

/**
 * Delete an application (`app delete`): the row, and with it (ON DELETE CASCADE) its tokens, codes and every row of the
 * domains that hang on it (lobbies, commands, external identities, identity providers). Answers its bot user and the
 * users that held its tokens (their sockets close); undefined when there is none.
 */
export async function deleteApplicationRow(id: string): Promise<{ botUserId: string; userIds: string[] } | undefined> {
  return await write(async (w) => {
    forgetThrough(forgetCallers) // its bot token and its OAuth2 tokens stop resolving
    const users = await w
      .selectDistinct({ userId: t.oauth2Tokens.userId })
      .from(t.oauth2Tokens)
      .where(eq(t.oauth2Tokens.applicationId, id))
      .all()
    const row = await w
      .delete(t.applications)
      .where(eq(t.applications.id, id))
      .returning({ botUserId: t.applications.botUserId })
      .get()
    return row && { botUserId: row.botUserId, userIds: users.map((u) => u.userId) }
  })
}

export async function findApplicationByBotTokenHash(
  hash: string,
): Promise<Pick<ApplicationRow, 'id' | 'botUserId'> | undefined> {
  return applicationByBotTokenHash().get({ hash })
}

// ---- codes and tokens

const tokenByAccessTokenHash = prepared((d) =>
  d
    .select({
      id: t.oauth2Tokens.id,
      userId: t.oauth2Tokens.userId,
      applicationId: t.oauth2Tokens.applicationId,
      scopes: t.oauth2Tokens.scopes,
      expiresAt: t.oauth2Tokens.expiresAt,
      familyId: t.oauth2Tokens.familyId,
      sessionId: t.oauth2Tokens.sessionId,
    })
    .from(t.oauth2Tokens)
    .where(and(eq(t.oauth2Tokens.accessTokenHash, sql.placeholder('hash')), appUnlocked()))
    .prepare(),
)

/** What a Bearer request needs of its grant (every Bearer request asks). */
export async function findTokenByAccessHash(
  hash: string,
): Promise<
  | Pick<OAuth2TokenRow, 'id' | 'userId' | 'applicationId' | 'scopes' | 'expiresAt' | 'familyId' | 'sessionId'>
  | undefined
> {
  return tokenByAccessTokenHash().get({ hash })
}

export async function insertCode(row: typeof t.oauth2Codes.$inferInsert): Promise<void> {
  return await write(async (w) => {
    const now = clock.now()
    // Codes live 10 minutes; drop long-dead ones (kept an hour for replay detection) as new ones arrive.
    await w
      .delete(t.oauth2Codes)
      .where(lt(t.oauth2Codes.expiresAt, now - 3600_000))
      .run()
    await w.insert(t.oauth2Codes).values(row).run()
  })
}

/** Mark a code used; undefined when it does not exist or was already used (atomic: one statement). */
export async function useCode(codeHash: string): Promise<OAuth2CodeRow | undefined> {
  return await write((w) => {
    return w
      .update(t.oauth2Codes)
      .set({ usedAt: clock.now() })
      .where(and(eq(t.oauth2Codes.codeHash, codeHash), isNull(t.oauth2Codes.usedAt)))
      .returning()
      .get()
  })
}

export async function findCode(codeHash: string): Promise<OAuth2CodeRow | undefined> {
  return db().select().from(t.oauth2Codes).where(eq(t.oauth2Codes.codeHash, codeHash)).get()
}

export async function insertToken(tx: DB, row: typeof t.oauth2Tokens.$inferInsert): Promise<void> {
  await tx.insert(t.oauth2Tokens).values(row).run()
}

// A provisional account's token (src/provisional/, every game backend's call): prepared once, not built each time.
const bearerTokenInsert = prepared((d) => {
  const ph = sql.placeholder
  return d
    .insert(t.oauth2Tokens)
    .values({
      id: ph('id'),
      applicationId: ph('applicationId'),
      userId: ph('userId'),
      scopes: ph('scopes'),
      accessTokenHash: ph('accessTokenHash'),
      refreshTokenHash: ph('refreshTokenHash'),
      familyId: ph('familyId'),
      expiresAt: ph('expiresAt'),
      refreshExpiresAt: ph('refreshExpiresAt'),
      publicClient: false,
      createdAt: ph('createdAt'),
    })
    .prepare()
})

/** Insert a token issued to no OAuth2 client flow (public_client false), inside the caller's write transaction. */
export async function insertIssuedToken(
  _tx: DB,
  row: Omit<typeof t.oauth2Tokens.$inferSelect, 'publicClient' | 'refreshUsedAt'>,
): Promise<void> {
  await bearerTokenInsert().run(row)
}

const signingKeyById = prepared((d) =>
  d
    .select({ signingKey: t.applications.signingKey })
    .from(t.applications)
    .where(eq(t.applications.id, sql.placeholder('id')))
    .prepare(),
)

/** The application's Ed25519 private key (null: made before applications had keys; undefined: no application). */
export async function findApplicationSigningKey(id: string): Promise<string | null | undefined> {
  return (await signingKeyById().get({ id }))?.signingKey
}

export async function findTokenByRefreshHash(hash: string): Promise<OAuth2TokenRow | undefined> {
  return db().select().from(t.oauth2Tokens).where(eq(t.oauth2Tokens.refreshTokenHash, hash)).get()
}

export async function findTokenById(id: string): Promise<OAuth2TokenRow | undefined> {
  return db().select().from(t.oauth2Tokens).where(eq(t.oauth2Tokens.id, id)).get()
}

export async function findTokenByAnyHash(hash: string): Promise<OAuth2TokenRow | undefined> {
  return db()
    .select()
    .from(t.oauth2Tokens)
    .where(or(eq(t.oauth2Tokens.accessTokenHash, hash), eq(t.oauth2Tokens.refreshTokenHash, hash)))
    .get()
}

/** Spend a refresh token and end its access token, in one statement; undefined if someone spent it first. */
export async function spendRefreshToken(tx: DB, id: string): Promise<OAuth2TokenRow | undefined> {
  forgetThrough(forgetCallers) // its access token ends here
  const now = clock.now()
  return tx
    .update(t.oauth2Tokens)
    .set({
      refreshUsedAt: now,
      expiresAt: sql`CASE WHEN ${t.oauth2Tokens.expiresAt} < ${now} THEN ${t.oauth2Tokens.expiresAt} ELSE ${now} END`,
    })
    .where(and(eq(t.oauth2Tokens.id, id), isNull(t.oauth2Tokens.refreshUsedAt)))
    .returning()
    .get()
}

/** Delete every token of a grant family; the users whose tokens went (one, or none when it was gone already). */
export async function deleteFamily(familyId: string): Promise<string[]> {
  return await write(async (w) => {
    forgetThrough(forgetCallers)
    const gone = await w
      .delete(t.oauth2Tokens)
      .where(eq(t.oauth2Tokens.familyId, familyId))
      .returning({ userId: t.oauth2Tokens.userId })
      .all()
    return [...new Set(gone.map((r) => r.userId))]
  })
}

/** Delete every token a user granted (to one application, or to all): their authorization is gone. */
export async function deleteUserTokens(userId: string, applicationId?: string): Promise<number> {
  return await write(async (w) => {
    forgetThrough(forgetCallers)
    return (
      await w
        .delete(t.oauth2Tokens)
        .where(
          and(
            eq(t.oauth2Tokens.userId, userId),
            applicationId === undefined ? undefined : eq(t.oauth2Tokens.applicationId, applicationId),
          ),
        )
        .returning({ id: t.oauth2Tokens.id })
        .all()
    ).length
  })
}

/** The user's live grants, one row per application: its newest token (id, scopes, application). */
export async function liveGrantsOfUser(
  userId: string,
): Promise<Pick<OAuth2TokenRow, 'id' | 'applicationId' | 'scopes'>[]> {
  const now = clock.now()
  const rows = await db()
    .select({ id: t.oauth2Tokens.id, applicationId: t.oauth2Tokens.applicationId, scopes: t.oauth2Tokens.scopes })
    .from(t.oauth2Tokens)
    .where(and(eq(t.oauth2Tokens.userId, userId), liveToken(now)))
    .orderBy(sql`${t.oauth2Tokens.createdAt} DESC`)
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
    const rows = await db()
      .selectDistinct({ familyId: t.oauth2Tokens.familyId, userId: t.oauth2Tokens.userId })
      .from(t.oauth2Tokens)
      .where(and(inArray(t.oauth2Tokens.familyId, familyIds.slice(i, i + 500)), liveToken(now), appUnlocked()))
      .all()
    for (const r of rows) live.set(r.familyId, r.userId)
  }
  return live
}

/** Which of these applications exist and are not locked: their bots still authenticate. */
export async function liveApplications(ids: string[]): Promise<Set<string>> {
  const live = new Set<string>()
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db()
      .select({ id: t.applications.id })
      .from(t.applications)
      .where(and(inArray(t.applications.id, ids.slice(i, i + 500)), isNull(t.applications.lockedAt)))
      .all()
    for (const r of rows) live.add(r.id)
  }
  return live
}

/**
 * A token that still buys something: its access token has not expired, or its refresh token is unspent and valid
 * (`now` a time, or the placeholder of a prepared statement).
 */
function liveToken(now: number | Placeholder) {
  return or(
    gt(t.oauth2Tokens.expiresAt, now),
    and(isNull(t.oauth2Tokens.refreshUsedAt), gt(t.oauth2Tokens.refreshExpiresAt, now)),
  )
}

const liveGrant = prepared((d) =>
  d
    .select({ id: t.oauth2Tokens.id })
    .from(t.oauth2Tokens)
    .where(
      and(
        eq(t.oauth2Tokens.userId, sql.placeholder('userId')),
        eq(t.oauth2Tokens.applicationId, sql.placeholder('applicationId')),
        liveToken(sql.placeholder('now')),
      ),
    )
    .limit(1)
    .prepare(),
)

/** Whether the user has a live grant for the application (it "authorized" the application). */
export async function hasGrant(userId: string, applicationId: string): Promise<boolean> {
  return (await liveGrant().get({ userId, applicationId, now: clock.now() })) !== undefined
}
