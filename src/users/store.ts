import { and, asc, count, eq, sql } from 'drizzle-orm'
import { db, prepared } from '../db/client'
import { users, type UserRow } from './tables'

const byId = prepared((d) => d.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare())

export async function findUser(id: string): Promise<UserRow | undefined> {
  return byId().get({ id })
}

export async function findUserByEmail(email: string): Promise<UserRow | undefined> {
  return db().select().from(users).where(eq(users.email, email.toLowerCase())).get()
}

export async function findUserByUsername(username: string): Promise<UserRow | undefined> {
  return db().select().from(users).where(eq(users.username, username.toLowerCase())).get()
}

export async function insertUser(row: typeof users.$inferInsert): Promise<UserRow> {
  return db().insert(users).values(row).returning().get()
}

/** People (not bots) in ID order (snowflakes: by length, then text), `limit` after the ID `after` (`user list`). */
export async function listUsers(page: { limit: number; after?: string }): Promise<UserRow[]> {
  const people = eq(users.bot, false)
  const after = page.after ? sql`(length(${users.id}), ${users.id}) > (${page.after.length}, ${page.after})` : undefined
  return db().select().from(users).where(after ? and(people, after) : people).orderBy(sql`length(${users.id})`, asc(users.id)).limit(page.limit).all()
}

/** People (not bots) (the /metrics gauge). */
export function countUsers(): number {
  return db().select({ n: count() }).from(users).where(eq(users.bot, false)).get()?.n ?? 0
}
