import { sqliteTable, text, integer } from 'drizzle-orm/sqlite-core'

export const users = sqliteTable('users', {
  id: text().primaryKey(),
  /** Lower-case unique handle (Discord's post-2023 usernames). */
  username: text().notNull().unique(),
  globalName: text(),
  discriminator: text().notNull().default('0'),
  avatar: text(),
  /** Lower-cased for uniqueness; null for bots. */
  email: text().unique(),
  emailVerified: integer({ mode: 'boolean' }).notNull().default(false),
  /** E.164 */
  phone: text().unique(),
  passwordHash: text(),
  bot: integer({ mode: 'boolean' }).notNull().default(false),
  flags: integer().notNull().default(0),
  locale: text().notNull().default('en-US'),
  theme: text().notNull().default('dark'),
  /** ISO date (YYYY-MM-DD) */
  dateOfBirth: text(),
  /** active | disabled (by the user) | deletion_scheduled */
  state: text().notNull().default('active'),
  /** Flagged by an operator: every login must go through a password reset first. */
  compromised: integer({ mode: 'boolean' }).notNull().default(false),
  promotionalEmailOptIn: integer({ mode: 'boolean' }).notNull().default(false),
  createdAt: integer().notNull(),
})

export type UserRow = typeof users.$inferSelect
