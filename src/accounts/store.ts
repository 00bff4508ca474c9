import { eq, sql } from 'drizzle-orm'
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
