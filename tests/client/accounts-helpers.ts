// Accounts for the SDK's accounts and QR/OAuth2 tests: users registered through the SDK itself (one HTTP call, where
// the CLI's `user create` is a process of its own, ~1.5 s on a loaded machine), TOTP turned on, and the mail the
// server kept in its outbox (no SMTP server is set), read from its SQLite file.
import { Database } from 'bun:sqlite'
import { Client } from '../../client/src/index'
import { newSecret, totpCode } from '../mfa/helpers'
import type { TestServer } from './server'

export const PASSWORD = 'an sdk test passphrase'
let made = 0

export type TestUser = { id: string; token: string; email: string; password: string }

/** A new account (consent given: loopback has no country, so the rule asks for it). */
export async function registeredUser(server: TestServer): Promise<TestUser> {
  const n = `${Date.now().toString(36)}${++made}`
  const email = `sdk-${n}@example.test`
  const client = new Client({ baseUrl: server.url })
  const session = await client.auth.register({ email, password: PASSWORD, username: `sdk_${n}`, consent: true })
  return { id: session.userId, token: session.token, email, password: PASSWORD }
}

/** A user with TOTP on, enabled with the current step's code: `next()` is the code to prove it with once more. */
export async function userWithTotp(server: TestServer) {
  const user = await registeredUser(server)
  const secret = newSecret()
  const client = new Client({ baseUrl: server.url, token: user.token })
  const on = await client.rest.post('/users/@me/mfa/totp/enable', {
    body: { secret, code: totpCode(secret), password: user.password },
  })
  return {
    ...user,
    token: on.token,
    secret,
    backupCodes: on.backup_codes.map((b) => b.code),
    next: () => totpCode(secret, 1),
  }
}

/** The token of the last mailed link to `path` (`/reset#token=…`) for `to`. */
export function mailedToken(server: TestServer, to: string, path: string): string {
  const db = new Database(server.env.DATABASE_PATH!, { readonly: true })
  try {
    const row = db
      .query<{ body: string }, [string]>(
        'SELECT body FROM outbox WHERE "to" = ? AND channel = \'email\' ORDER BY created_at DESC, id DESC LIMIT 1',
      )
      .get(to)
    const m = new RegExp(`/${path}#token=([^\\s]+)`).exec(row?.body ?? '')
    if (!m) throw new Error(`no ${path} link mailed to ${to}`)
    return decodeURIComponent(m[1])
  } finally {
    db.close()
  }
}
