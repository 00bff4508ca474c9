// Every query of the accounts domain: users, sessions, one-time tokens, known IPs, phone codes and numbers
// (fingerprints: fingerprints-store.ts). Async, as every store (docs/DESIGN.md, "Stores are async"): a write runs in
// the caller's write transaction when it has one open, else alone behind the write mutex (`write`). Hot statements are
// prepared once per connection.
import { appState } from '../core/app'
import { and, asc, count, eq, getTableColumns, gt, inArray, lt, sql } from 'drizzle-orm'
import { forgetCallers } from '../core/caller'
import { clock } from '../core/clock'
import { forgetThrough, rowCache } from '../db/cache'
import { db, type DB, idsTable, idValue, lockForUpdate, prepared, write } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { AuthSessionRow, UserRow } from './tables'
import { PROVISIONAL_FLAG } from './provisional'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)
// The other store files of the domain reach the tables through this one `t`.
export { t }

export type UserInsert = typeof t.users.$inferInsert
export type OneTimeRow = typeof t.oneTimeTokens.$inferSelect

// ---- users

const userById = prepared((d) =>
  d
    .select()
    .from(t.users)
    .where(eq(t.users.id, sql.placeholder('id')))
    .prepare(),
)
// A list of ids is one JSON array parameter (idsTable): one prepared statement for every length.
const usersByIds = prepared((d) =>
  d.select(getTableColumns(t.users)).from(idsTable()).crossJoin(t.users).where(eq(t.users.id, idValue)).prepare(),
)
const userIdsByIds = prepared((d) =>
  d.select({ id: t.users.id }).from(idsTable()).crossJoin(t.users).where(eq(t.users.id, idValue)).prepare(),
)

// The user row by id, as nearly every request reads it; the three writers of the users table below forget it.
const userRows = rowCache<string, UserRow>('users', 2048)
// The private user's JSON text (GET /users/@me for user and bot tokens), forgotten with the row; it also holds the
// second factors it was made with (mfa_enabled, authenticator_types), which the caller compares: those live in mfa's
// tables, whose own cache forgets them when a factor changes.
const userTexts = rowCache<string, { text: string; factors: string }>('user-texts', 2048)
/** What this module holds per App (core/app.ts). */
const newAccounts = () => ({
  usersWritten: 0,
})
declare module '../core/app' {
  interface AppState {
    accounts: ReturnType<typeof newAccounts>
  }
}
const held = appState('accounts', newAccounts)

/** The private user's JSON text for these factors (any string naming them): cached with the row, else `build()`'s. */
export function cachedUserText(id: string, factors: string, build: () => string): string {
  const hit = userTexts.read(id, () => ({ text: build(), factors }))!
  if (hit.factors === factors) return hit.text
  userTexts.forget(id)
  return userTexts.read(id, () => ({ text: build(), factors }))!.text
}

function forgetUser(id: string): void {
  userRows.forget(id)
  userTexts.forget(id)
}

/**
 * Changes whenever this process writes a user row, and again when the write's scope ends (its commit): answers made of
 * many users (message authors) compare it.
 */
export const usersVersion = () => held().usersWritten + userRows.version

export async function cachedUser(id: string): Promise<UserRow | undefined> {
  return userRows.read(id, () => userById().get({ id }))
}

/** The users among these ids, by id (one query for a page of authors). */
export async function findUsers(ids: Iterable<string>): Promise<Map<string, UserRow>> {
  const unique = [...new Set(ids)]
  const found = new Map<string, UserRow>()
  if (unique.length === 0) return found
  for (const u of await usersByIds().all({ ids: JSON.stringify(unique) })) found.set(u.id, u)
  return found
}

// Login, registration and recovery look users up by what they type.
const userBy = (column: typeof t.users.email | typeof t.users.username | typeof t.users.phone) =>
  prepared((d) =>
    d
      .select()
      .from(t.users)
      .where(eq(column, sql.placeholder('value')))
      .prepare(),
  )
const userByEmail = userBy(t.users.email)
const userByUsername = userBy(t.users.username)
const userByPhone = userBy(t.users.phone)

export async function findUserByEmail(email: string): Promise<UserRow | undefined> {
  return userByEmail().get({ value: email.toLowerCase() })
}

export async function findUserByUsername(username: string): Promise<UserRow | undefined> {
  return userByUsername().get({ value: username.toLowerCase() })
}

/** The user holding this E.164 number. */
export async function findUserByPhone(phone: string): Promise<UserRow | undefined> {
  return userByPhone().get({ value: phone })
}

/** Throws the database's unique-constraint error when the username, e-mail or phone is taken. */
export async function insertUser(row: UserInsert): Promise<UserRow> {
  return await write((w) => {
    if (row.id) forgetUser(row.id)
    else held().usersWritten++
    return w.insert(t.users).values(row).returning().get()
  })
}

const userStateById = prepared((d) =>
  d
    .select({ state: t.users.state, compromised: t.users.compromised })
    .from(t.users)
    .where(eq(t.users.id, sql.placeholder('id')))
    .prepare(),
)

/** The account exists, is neither disabled nor deleted, and is not locked (the tokens it granted work only then). */
export async function isUserActive(id: string): Promise<boolean> {
  const row = await userStateById().get({ id })
  return row?.state === 'active' && !row.compromised
}

/** Keep the policy's verdict on a password, if it is still the user's password. */
export async function setPasswordVerdict(id: string, passwordHash: string, weak: boolean): Promise<void> {
  return await write(async (w) => {
    forgetUser(id)
    await w
      .update(t.users)
      .set({ passwordWeak: weak })
      .where(and(eq(t.users.id, id), eq(t.users.passwordHash, passwordHash)))
      .run()
  })
}

/** Change columns of a user row; undefined when there is no such user. Unique columns throw when taken. */
export async function updateUser(id: string, patch: Partial<Omit<UserInsert, 'id'>>): Promise<UserRow | undefined> {
  return await write((w) => {
    forgetThrough(forgetCallers) // the account's state decides whether its tokens work
    forgetUser(id)
    // A new password has not been judged by the policy unless the caller says so.
    if (patch.passwordHash !== undefined && patch.passwordWeak === undefined) patch = { ...patch, passwordWeak: null }
    return w.update(t.users).set(patch).where(eq(t.users.id, id)).returning().get()
  })
}

/** People (not bots) in ID order (snowflakes: by length, then text), `limit` after the ID `after` (`user list`). */
export async function listUsers(page: { limit: number; after?: string; provisional?: boolean }): Promise<UserRow[]> {
  const people = page.provisional
    ? and(eq(t.users.bot, false), sql`(${t.users.flags} & ${PROVISIONAL_FLAG}) <> 0`)
    : eq(t.users.bot, false)
  const after = page.after
    ? sql`(length(${t.users.id}), ${t.users.id}) > (${page.after.length}, ${page.after})`
    : undefined
  return db()
    .select()
    .from(t.users)
    .where(after ? and(people, after) : people)
    .orderBy(sql`length(${t.users.id})`, asc(t.users.id))
    .limit(page.limit)
    .all()
}

/** People (not bots) (the /metrics gauge). */
export async function countUsers(): Promise<number> {
  return (await db().select({ n: count() }).from(t.users).where(eq(t.users.bot, false)).get())?.n ?? 0
}

/** The ids among `ids` that are users. (A prepared statement runs inside the caller's open transaction too.) */
export async function existingUserIds(ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  return new Set((await userIdsByIds().all({ ids: JSON.stringify(ids) })).map((r) => r.id))
}

// ---- sessions

// Every login inserts one: the statement is prepared once.
const sessionInsert = prepared((d) => {
  const ph = sql.placeholder
  return d
    .insert(t.authSessions)
    .values({
      id: ph('id'),
      userId: ph('userId'),
      tokenHash: ph('tokenHash'),
      idHash: ph('idHash'),
      createdAt: ph('createdAt'),
      lastUsedAt: ph('lastUsedAt'),
      ip: ph('ip'),
      clientOs: ph('clientOs'),
      clientPlatform: ph('clientPlatform'),
      clientLocation: ph('clientLocation'),
      loginSource: ph('loginSource'),
      giftCodeSkuId: ph('giftCodeSkuId'),
    })
    .prepare()
})

/** Every column given (null where unknown): the row inserted is the row returned. */
export async function insertSession(row: AuthSessionRow): Promise<AuthSessionRow> {
  return await write(async (w) => {
    await sessionInsert().run(row)
    return row
  })
}

const sessionByTokenHash = prepared((d) =>
  d
    .select()
    .from(t.authSessions)
    .where(eq(t.authSessions.tokenHash, sql.placeholder('hash')))
    .prepare(),
)
// A token works only while its user is active: a disabled or deleted account stops at once, whoever changed it.
// The user's state is a correlated subquery, so the plan is always the token index then the user's primary key (a
// join may be reordered into a scan of users when the statistics are stale).
const activeSessionByTokenHash = prepared((d) =>
  d
    .select({
      id: t.authSessions.id,
      userId: t.authSessions.userId,
      idHash: t.authSessions.idHash,
      lastUsedAt: t.authSessions.lastUsedAt,
    })
    .from(t.authSessions)
    .where(
      and(
        eq(t.authSessions.tokenHash, sql.placeholder('hash')),
        sql`(select ${t.users.state} from ${t.users} where ${t.users.id} = ${t.authSessions.userId}) = 'active'`,
      ),
    )
    .prepare(),
)
const touchSession = prepared((d) =>
  d
    .update(t.authSessions)
    .set({ lastUsedAt: sql`${sql.placeholder('now')}` })
    .where(eq(t.authSessions.id, sql.placeholder('id')))
    .prepare(),
)

export async function findSessionByTokenHash(hash: string): Promise<AuthSessionRow | undefined> {
  return sessionByTokenHash().get({ hash })
}

/** The session of a token hash, only while its user is active (every authenticated request asks). */
export async function findActiveSessionByTokenHash(
  hash: string,
): Promise<Pick<AuthSessionRow, 'id' | 'userId' | 'idHash' | 'lastUsedAt'> | undefined> {
  return activeSessionByTokenHash().get({ hash })
}

export async function touchSessionAt(id: string, now: number): Promise<void> {
  return await write(async (w) => {
    await touchSession().run({ now, id })
  })
}

export async function findSession(id: string): Promise<AuthSessionRow | undefined> {
  return db().select().from(t.authSessions).where(eq(t.authSessions.id, id)).get()
}

export async function deleteSessionRow(id: string): Promise<void> {
  return await write(async (w) => {
    forgetThrough(forgetCallers)
    await w.delete(t.authSessions).where(eq(t.authSessions.id, id)).run()
  })
}

const sessionsOf = prepared((d) =>
  d
    .select()
    .from(t.authSessions)
    .where(eq(t.authSessions.userId, sql.placeholder('userId')))
    .prepare(),
)

export async function sessionsOfUser(userId: string): Promise<AuthSessionRow[]> {
  return sessionsOf().all({ userId })
}

/** Delete sessions last used before `cutoff`; returns how many. */
export async function deleteSessionsIdleSince(cutoff: number): Promise<number> {
  return await write(async (w) => {
    forgetThrough(forgetCallers)
    return (
      await w
        .delete(t.authSessions)
        .where(lt(t.authSessions.lastUsedAt, cutoff))
        .returning({ id: t.authSessions.id })
        .all()
    ).length
  })
}

/** Delete a user's sessions but `exceptId`; returns the ids deleted. */
export async function deleteSessionsOfUser(userId: string, exceptId?: string): Promise<string[]> {
  return await write(async (w) => {
    forgetThrough(forgetCallers)
    const rows = await w
      .select({ id: t.authSessions.id })
      .from(t.authSessions)
      .where(eq(t.authSessions.userId, userId))
      .all()
    const ids = rows.map((r) => r.id).filter((id) => id !== exceptId)
    for (const id of ids)
      await w
        .delete(t.authSessions)
        .where(and(eq(t.authSessions.id, id), eq(t.authSessions.userId, userId)))
        .run()
    return ids
  })
}

/** The ids of a user's sessions with these id hashes. */
export async function sessionIdsByHash(userId: string, idHashes: string[]): Promise<string[]> {
  return (
    await db()
      .select({ id: t.authSessions.id })
      .from(t.authSessions)
      .where(and(eq(t.authSessions.userId, userId), inArray(t.authSessions.idHash, idHashes)))
      .all()
  ).map((r) => r.id)
}

/** Which of these sessions exist, were used at or after `cutoff`, and belong to an active account. */
export async function liveSessionIdsSince(ids: string[], cutoff: number): Promise<Set<string>> {
  const alive = new Set<string>()
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db()
      .select({ id: t.authSessions.id, lastUsedAt: t.authSessions.lastUsedAt })
      .from(t.authSessions)
      .innerJoin(t.users, eq(t.users.id, t.authSessions.userId))
      .where(and(inArray(t.authSessions.id, ids.slice(i, i + 500)), eq(t.users.state, 'active')))
      .all()
    for (const r of rows) if (r.lastUsedAt >= cutoff) alive.add(r.id)
  }
  return alive
}

// ---- one-time tokens

export async function insertOneTime(row: typeof t.oneTimeTokens.$inferInsert): Promise<void> {
  return await write(async (w) => {
    await w.insert(t.oneTimeTokens).values(row).run()
  })
}

/** Delete and return a live token row: exactly one caller gets it. */
export async function takeOneTime(tokenHash: string, purpose: string, now: number): Promise<OneTimeRow | undefined> {
  return await write((w) => {
    return w
      .delete(t.oneTimeTokens)
      .where(
        and(
          eq(t.oneTimeTokens.tokenHash, tokenHash),
          eq(t.oneTimeTokens.purpose, purpose),
          gt(t.oneTimeTokens.expiresAt, now),
        ),
      )
      .returning()
      .get()
  })
}

export async function findOneTime(tokenHash: string, purpose: string, now: number): Promise<OneTimeRow | undefined> {
  return db()
    .select()
    .from(t.oneTimeTokens)
    .where(
      and(
        eq(t.oneTimeTokens.tokenHash, tokenHash),
        eq(t.oneTimeTokens.purpose, purpose),
        gt(t.oneTimeTokens.expiresAt, now),
      ),
    )
    .get()
}

export async function deleteOneTimeOf(userId: string, purpose: string): Promise<void> {
  return await write(async (w) => {
    await w
      .delete(t.oneTimeTokens)
      .where(and(eq(t.oneTimeTokens.userId, userId), eq(t.oneTimeTokens.purpose, purpose)))
      .run()
  })
}

export async function deleteExpiredOneTime(now: number): Promise<void> {
  return await write(async (w) => {
    await w.delete(t.oneTimeTokens).where(sql`${t.oneTimeTokens.expiresAt} <= ${now}`).run()
  })
}

// ---- known IPs

// Every password login asks both (its rate limit and the new-location check), and every login inserts.
const knownIp = prepared((d) =>
  d
    .select({ userId: t.knownIps.userId })
    .from(t.knownIps)
    .where(and(eq(t.knownIps.userId, sql.placeholder('userId')), eq(t.knownIps.ip, sql.placeholder('ip'))))
    .prepare(),
)
const anyKnownIp = prepared((d) =>
  d
    .select({ userId: t.knownIps.userId })
    .from(t.knownIps)
    .where(eq(t.knownIps.userId, sql.placeholder('userId')))
    .limit(1)
    .prepare(),
)
const knownIpInsert = prepared((d) =>
  d
    .insert(t.knownIps)
    .values({ userId: sql.placeholder('userId'), ip: sql.placeholder('ip'), createdAt: sql.placeholder('createdAt') })
    .onConflictDoNothing()
    .prepare(),
)

export async function insertKnownIp(userId: string, ip: string): Promise<void> {
  return await write(async (w) => {
    await knownIpInsert().run({ userId, ip, createdAt: clock.now() })
  })
}

export async function isKnownIp(userId: string, ip: string): Promise<boolean> {
  return (await knownIp().get({ userId, ip })) !== undefined
}

export async function hasKnownIps(userId: string): Promise<boolean> {
  return (await anyKnownIp().get({ userId })) !== undefined
}

// ---- phone codes and numbers

export async function isPhoneBlocked(phone: string): Promise<boolean> {
  return !!(await db().select().from(t.blockedPhones).where(eq(t.blockedPhones.phone, phone)).get())
}

/** The live code of a phone and purpose, replacing any earlier one. */
export async function upsertPhoneCode(
  phone: string,
  purpose: string,
  codeHash: string,
  expiresAt: number,
): Promise<void> {
  return await write(async (w) => {
    await w
      .insert(t.phoneCodes)
      .values({ phone, purpose, codeHash, attempts: 0, expiresAt })
      .onConflictDoUpdate({
        target: [t.phoneCodes.phone, t.phoneCodes.purpose],
        set: { codeHash, attempts: 0, expiresAt },
      })
      .run()
  })
}

/** Delete the code if it matches, is live and has tries left: true for exactly one caller. */
export async function takePhoneCode(
  phone: string,
  purpose: string,
  codeHash: string,
  now: number,
  maxAttempts: number,
): Promise<boolean> {
  return await write(async (w) => {
    return !!(await w
      .delete(t.phoneCodes)
      .where(
        and(
          eq(t.phoneCodes.phone, phone),
          eq(t.phoneCodes.purpose, purpose),
          eq(t.phoneCodes.codeHash, codeHash),
          gt(t.phoneCodes.expiresAt, now),
          sql`${t.phoneCodes.attempts} < ${maxAttempts}`,
        ),
      )
      .returning()
      .get())
  })
}

export async function countPhoneCodeAttempt(phone: string, purpose: string): Promise<void> {
  return await write(async (w) => {
    await w
      .update(t.phoneCodes)
      .set({ attempts: sql`${t.phoneCodes.attempts} + 1` })
      .where(and(eq(t.phoneCodes.phone, phone), eq(t.phoneCodes.purpose, purpose)))
      .run()
  })
}

export async function livePhoneCodePurposes(phone: string, now: number): Promise<string[]> {
  return (
    await db()
      .select({ purpose: t.phoneCodes.purpose })
      .from(t.phoneCodes)
      .where(and(eq(t.phoneCodes.phone, phone), gt(t.phoneCodes.expiresAt, now)))
      .all()
  ).map((r) => r.purpose)
}

export async function insertUserPhone(userId: string, phone: string): Promise<void> {
  return await write(async (w) => {
    await w.insert(t.userPhones).values({ userId, phone, addedAt: clock.now() }).onConflictDoNothing().run()
  })
}

/** Block every number the user ever had. */
export async function blockPhonesOfUser(userId: string): Promise<void> {
  return await write(async (w) => {
    const phones = await w
      .select({ phone: t.userPhones.phone })
      .from(t.userPhones)
      .where(eq(t.userPhones.userId, userId))
      .all()
    for (const { phone } of phones)
      await w.insert(t.blockedPhones).values({ phone, createdAt: clock.now() }).onConflictDoNothing().run()
  })
}

/**
 * Hold the user's row until the transaction ends: a check of a per-user count (the lobbies a user is in) and the
 * write it allows are not interleaved with another's (db/client.ts lockForUpdate; nothing on SQLite).
 */
export async function lockUser(tx: DB, id: string): Promise<void> {
  await lockForUpdate(tx, t.users, t.users.id, id)
}

/**
 * The operator console's search (admin/users.ts): an id, or the start of a username, an e-mail or a phone number.
 * Each is a range on a unique index (`>= q AND < q + U+FFFF`: byte order on both databases), so 100,000 users
 * answer as fast as 100.
 */
export async function searchUsers(query: string, limit: number): Promise<UserRow[]> {
  const q = query.trim()
  if (!q) return []
  const found = new Map<string, UserRow>()
  const keep = (rows: UserRow[]) => {
    for (const row of rows) if (found.size < limit) found.set(row.id, row)
  }
  const startingWith = async (
    column: typeof t.users.username | typeof t.users.email | typeof t.users.phone,
    prefix: string,
  ) =>
    await db()
      .select()
      .from(t.users)
      .where(and(sql`${column} >= ${prefix}`, sql`${column} < ${`${prefix}\uffff`}`))
      .orderBy(asc(column))
      .limit(limit)
      .all()
  if (/^\d{1,20}$/.test(q)) keep(await db().select().from(t.users).where(eq(t.users.id, q)).limit(1).all())
  const lower = q.toLowerCase()
  keep(await startingWith(t.users.username, lower))
  keep(await startingWith(t.users.email, lower))
  if (/^\+?[\d\s().-]+$/.test(q)) keep(await startingWith(t.users.phone, `+${q.replace(/\D/g, '')}`))
  return [...found.values()]
}
