import { table, text } from './table'

/** Keys the server generates once and keeps (HMAC for fingerprints, JWT signing for MFA elevation). */
export const serverSecrets = table('server_secrets', {
  name: text().primaryKey(),
  value: text().notNull(),
})
