import { sqliteTable, text } from 'drizzle-orm/sqlite-core'

/** Keys the server generates once and keeps (HMAC for fingerprints, JWT signing for MFA elevation). */
export const serverSecrets = sqliteTable('server_secrets', {
  name: text().primaryKey(),
  value: text().notNull(),
})
