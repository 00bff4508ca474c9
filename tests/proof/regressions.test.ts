// The smallest reproductions of what the fuzzing, crash and concurrency proofs of issue 19 found, one per fix.
import { afterEach, expect, test } from 'bun:test'
import { rawDatabase } from '../../src/db/client'
import { lastLinkToken } from '../auth/helpers'
import { api, makeUser, onPostgres, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'
import { elevated, newSecret, totpCode } from '../mfa/helpers'

afterEach(resetWorld)

test('an object with its own "toString" key where a string or integer is expected: 400 form error, not 500', async () => {
  // Found by fuzz-rest: Elysia's validation message interpolates the value (`${value}`), and so did ours
  // (String(value)); an object whose own toString is not a function cannot be turned into a string.
  const user = await makeUser()
  const hand = await api('POST', '/auth/handoff/exchange', { raw: '{"key":{"toString":false},"handoff_token":""}' })
  expect(hand.status).toBe(400)
  expect(hand.body.errors.key._errors[0].code).toBe('BASE_TYPE_STRING')
  const logout = await api('POST', '/auth/sessions/logout', {
    token: user.token,
    raw: '{"session_id_hashes":[{"toString":0}]}',
  })
  expect(logout.status).toBe(400)
  const escaped = await api('POST', '/auth/handoff/exchange', {
    raw: '{"key":"k","handoff_token":{"valueOf":1,"toStr\\u0069ng":2}}',
  })
  expect(escaped.status).toBe(400)
  const { bot } = await setup(0)
  const lobby = await api('POST', '/lobbies', {
    token: bot,
    raw: '{"idle_timeout_seconds":{"toString":"x","valueOf":"y"}}',
  })
  expect(lobby.status).toBe(400)
  expect(lobby.body.errors.idle_timeout_seconds._errors[0].code).toBe('NUMBER_TYPE_COERCE')
  // The keys are still data: a metadata map with them is stored and read back as sent.
  const created = await createLobby(bot, { metadata: { toString: 'a', valueOf: 'b' } })
  expect(created.metadata).toEqual({ toString: 'a', valueOf: 'b' })
  const read = await api('GET', `/lobbies/${created.id}`, { token: bot })
  expect(read.body.metadata).toEqual({ toString: 'a', valueOf: 'b' })
})

// Interrupted operations (found by crash.test.ts, SIGKILL at random moments): an operation that writes more than
// once must commit all of it or none of it. To reproduce one deterministically, a trigger makes the write after the
// first one fail, as a kill between the two would: the request answers 500, and the first write must not stay.
async function withFailing<T>(
  table: string,
  event: 'INSERT' | 'UPDATE',
  when: string,
  fn: () => Promise<T>,
): Promise<T> {
  const sqlite = rawDatabase()
  const name = `proof_fail_${table}_${event.toLowerCase()}`
  sqlite.exec(
    `CREATE TRIGGER ${name} BEFORE ${event} ON ${table} WHEN ${when} BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
  )
  try {
    return await fn()
  } finally {
    sqlite.exec(`DROP TRIGGER ${name}`)
  }
}

/** A test that injects its failure with an SQLite trigger: skipped on PostgreSQL, saying so in its name. */
const failingTest = (name: string, fn: () => Promise<void>) =>
  test.skipIf(onPostgres)(
    `${name} (SQLite only, skipped on PostgreSQL: the failure is injected by an SQLite trigger)`,
    fn,
  )

failingTest('a reset that fails after the token was checked leaves the token redeemable', async () => {
  const user = await makeUser()
  expect((await api('POST', '/auth/forgot', { body: { login: user.email } })).status).toBe(204)
  const token = (await lastLinkToken(user.email, 'reset'))!
  const failed = await withFailing(
    'users',
    'UPDATE',
    `OLD.id = '${user.id}' AND NEW.password_hash IS NOT OLD.password_hash`,
    () => api('POST', '/auth/reset', { body: { token, password: 'a brand new passphrase' } }),
  )
  expect(failed.status).toBe(500)
  const retried = await api('POST', '/auth/reset', { body: { token, password: 'a brand new passphrase' } })
  expect(retried.status).toBe(200)
  expect(
    (await api('POST', '/auth/login', { body: { login: user.email, password: 'a brand new passphrase' } })).status,
  ).toBe(200)
})

failingTest('a failed revert leaves its token redeemable, and the account can still be taken back', async () => {
  const user = await makeUser()
  const moved = `moved${Date.now()}${Math.random().toString(36).slice(2, 6)}@example.test`
  const change = await elevated(
    'PATCH',
    '/users/@me',
    user.token,
    { email: moved, password: user.password },
    'password',
    () => user.password,
  )
  expect(change.retry.status).toBe(200)
  const token = (await lastLinkToken(user.email, 'wasntme'))!
  const failed = await withFailing('users', 'UPDATE', `OLD.id = '${user.id}' AND NEW.email IS NOT OLD.email`, () =>
    api('POST', '/auth/revert', { body: { token, password: 'taking it back now' } }),
  )
  expect(failed.status).toBe(500)
  const retried = await api('POST', '/auth/revert', { body: { token, password: 'taking it back now' } })
  expect(retried.status).toBe(200)
  expect(
    (await api('POST', '/auth/login', { body: { login: user.email, password: 'taking it back now' } })).status,
  ).toBe(200)
})

failingTest('an e-mail change that cannot issue its revert token does not change the address', async () => {
  const user = await makeUser()
  const moved = `moved${Date.now()}${Math.random().toString(36).slice(2, 6)}@example.test`
  const failed = await withFailing(
    'one_time_tokens',
    'INSERT',
    `NEW.purpose = 'revert_email' AND NEW.user_id = '${user.id}'`,
    () =>
      elevated(
        'PATCH',
        '/users/@me',
        user.token,
        { email: moved, password: user.password },
        'password',
        () => user.password,
      ),
  )
  expect(failed.retry.status).toBe(500)
  expect((await api('GET', '/users/@me', { token: user.token })).body.email).toBe(user.email)
})

failingTest('a TOTP enrolment that cannot store its backup codes does not enable TOTP', async () => {
  const user = await makeUser()
  const secret = newSecret()
  const failed = await withFailing('backup_codes', 'INSERT', `NEW.user_id = '${user.id}'`, () =>
    api('POST', '/users/@me/mfa/totp/enable', {
      token: user.token,
      body: { secret, code: totpCode(secret), password: user.password },
    }),
  )
  expect(failed.status).toBe(500)
  const login = await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })
  expect(login.body.mfa).toBeFalsy()
  expect(typeof login.body.token).toBe('string')
})

failingTest('an invite accepted by a join that fails is not used up', async () => {
  const [owner, joiner, later] = [await makeUser(), await makeUser(), await makeUser()]
  const guild = (await api('POST', '/guilds', { token: owner.token, body: { name: 'invite guild' } })).body
  const channel = (await api('GET', `/guilds/${guild.id}/channels`, { token: owner.token })).body[0]
  const invite = (await api('POST', `/channels/${channel.id}/invites`, { token: owner.token, body: { max_uses: 1 } }))
    .body
  const failed = await withFailing('guild_members', 'INSERT', `NEW.user_id = '${joiner.id}'`, () =>
    api('POST', `/invites/${invite.code}`, { token: joiner.token }),
  )
  expect(failed.status).toBe(500)
  const joined = await api('POST', `/invites/${invite.code}`, { token: later.token })
  expect(joined.status).toBe(200)
  expect(joined.body.uses).toBe(1)
})
