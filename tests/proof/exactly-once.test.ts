// Exactly once (issue 19): every single-use or counted thing redeemed by 50 parallel requests, alternating /api/v9
// and /api/v10: exactly the allowed number succeed and every other one gets the documented error.
import { afterEach, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { snowflake } from '../../src/core/snowflake'
import { write } from '../../src/db/client'
import { MAX_LOBBIES_PER_USER_PER_APP, MAX_MEMBERS_PER_LOBBY } from '../../src/lobbies/limits'
import { lobbies, lobbyMembers } from '../../src/lobbies/tables'
import { users } from '../../src/accounts/tables'
import { createSession } from '../../src/accounts/sessions'
import { lastLinkToken, lastSmsCode, withConfig } from '../auth/helpers'
import { api, makeApp, makeUser, resetWorld, type Reply } from '../helpers'
import { elevated, mfaTicket, SoftAuthenticator, totpCode, userWithKey, userWithTotp } from '../mfa/helpers'
import { authorizeCode, bearerFor, grantTokens, REDIRECT, tokenRequest } from '../oauth2/helpers'
import { claim, finish } from '../remote-auth/helpers'
import { DesktopClient } from '../remote-auth/desktop-client'

afterEach(resetWorld)

const N = 50

/** N parallel requests; the i-th goes to /api/v9 or /api/v10 and from its own client IP (X-Forwarded-For). */
async function race(
  make: (i: number, version: string, headers: Record<string, string>) => Promise<Reply>,
): Promise<Reply[]> {
  return withConfig({ trustProxy: true }, () =>
    Promise.all(
      Array.from({ length: N }, (_, i) =>
        make(i, i % 2 ? '/api/v10' : '/api/v9', { 'x-forwarded-for': `10.19.${i >> 8}.${i & 255}` }),
      ),
    ),
  )
}

function outcome(replies: Reply[], success: (r: Reply) => boolean) {
  const wins = replies.filter(success)
  const rest = replies.filter((r) => !success(r))
  return { wins: wins.length, rest }
}

/** Users without a password hash (fast: no argon2), with a session token. */
async function quickUsers(n: number) {
  const now = clock.now()
  const rows = Array.from({ length: n }, () => {
    const id = snowflake()
    return { id, username: `q${id}`, email: `q${id}@example.test`, emailVerified: true, createdAt: now }
  })
  for (let i = 0; i < rows.length; i += 200)
    await write((w) =>
      w
        .insert(users)
        .values(rows.slice(i, i + 200))
        .run(),
    )
  return Promise.all(
    rows.map(async (r) => ({ id: r.id, token: (await createSession(r.id, { platform: 'test' })).token })),
  )
}

const formError = (code: string) => (r: Reply) => r.status === 400 && JSON.stringify(r.body.errors ?? {}).includes(code)

test('handoff token: one exchange of 50', async () => {
  const user = await makeUser()
  const created = await withConfig({ trustProxy: true }, () =>
    api('POST', '/auth/handoff', {
      token: user.token,
      body: { key: 'k' },
      headers: { 'x-forwarded-for': '10.19.0.7' },
    }),
  )
  const replies = await withConfig({ trustProxy: true }, () =>
    Promise.all(
      Array.from({ length: N }, (_, i) =>
        api('POST', `${i % 2 ? '/api/v10' : '/api/v9'}/auth/handoff/exchange`, {
          body: { key: 'k', handoff_token: created.body.handoff_token },
          headers: { 'x-forwarded-for': '10.19.0.7' },
        }),
      ),
    ),
  )
  const { wins, rest } = outcome(replies, (r) => r.status === 200)
  expect(wins).toBe(1)
  expect(rest.every(formError('HANDOFF_TOKEN_INVALID'))).toBe(true)
})

test('reset and revert tokens: one use of 50', async () => {
  const user = await makeUser()
  await api('POST', '/auth/forgot', { body: { login: user.email } })
  const reset = (await lastLinkToken(user.email, 'reset'))!
  let r = outcome(
    await race((i, v, headers) =>
      api('POST', `${v}/auth/reset`, { body: { token: reset, password: `new password ${i}` }, headers }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => x.status === 400 && x.body.code === 50035)).toBe(true)

  const other = await makeUser()
  const moved = `m${Date.now()}${Math.random().toString(36).slice(2, 6)}@example.test`
  expect(
    (
      await elevated(
        'PATCH',
        '/users/@me',
        other.token,
        { email: moved, password: other.password },
        'password',
        () => other.password,
      )
    ).retry.status,
  ).toBe(200)
  const revert = (await lastLinkToken(other.email, 'wasntme'))!
  r = outcome(
    await race((i, v, headers) =>
      api('POST', `${v}/auth/revert`, { body: { token: revert, password: `taking back ${i}` }, headers }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => x.status === 400 && x.body.code === 50035)).toBe(true)
})

test('MFA ticket and TOTP step: one login of 50 with the same ticket and code; one elevation of 50 with the same code', async () => {
  const user = await userWithTotp()
  const { ticket } = await mfaTicket(user)
  const code = totpCode(user.secret)
  let r = outcome(
    await race((_, v, headers) => api('POST', `${v}/auth/mfa/totp`, { body: { ticket, code }, headers })),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => (x.status === 400 && [60006, 60008].includes(x.body.code)) || x.status === 429)).toBe(true)
  // The TOTP step alone: 50 tickets, one code.
  resetWorld()
  clock.advance(60_000)
  const token = (
    await api('POST', '/auth/mfa/backup', {
      body: { ticket: (await mfaTicket(user)).ticket, code: user.backupCodes[9] },
    })
  ).body.token
  const tickets = await Promise.all(
    Array.from(
      { length: N },
      async () =>
        (await api('POST', '/auth/sessions/logout', { token, body: { session_id_hashes: ['x'] } })).body.mfa
          .ticket as string,
    ),
  )
  const step = totpCode(user.secret)
  r = outcome(
    await race((i, v, headers) =>
      api('POST', `${v}/mfa/finish`, { token, body: { ticket: tickets[i], mfa_type: 'totp', data: step }, headers }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => (x.status === 400 && x.body.code === 60008) || x.status === 429)).toBe(true)
})

test('backup code: one of 50 elevations with the same code', async () => {
  const user = await userWithTotp()
  const tickets = await Promise.all(
    Array.from(
      { length: N },
      async () =>
        (await api('POST', '/auth/sessions/logout', { token: user.token, body: { session_id_hashes: ['x'] } })).body.mfa
          .ticket as string,
    ),
  )
  const r = outcome(
    await race((i, v, headers) =>
      api('POST', `${v}/mfa/finish`, {
        token: user.token,
        body: { ticket: tickets[i], mfa_type: 'backup', data: user.backupCodes[0] },
        headers,
      }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => (x.status === 400 && x.body.code === 60008) || x.status === 429)).toBe(true)
}, 30_000)

test('SMS code: one login of 50 with the same ticket and texted code', async () => {
  const user = await userWithTotp()
  const phone = `+1557${Math.floor(1e6 + Math.random() * 8.99e6)}`
  await api('POST', '/users/@me/phone', { token: user.token, body: { phone } })
  const verified = await api('POST', '/phone-verifications/verify', { body: { phone, code: await lastSmsCode(phone) } })
  expect(
    (
      await api('POST', '/users/@me/phone', {
        token: user.token,
        body: { phone_token: verified.body.token, password: user.password },
      })
    ).status,
  ).toBe(204)
  expect(
    (await api('POST', '/users/@me/mfa/sms/enable', { token: user.token, body: { password: user.password } })).status,
  ).toBe(204)
  const { ticket } = await mfaTicket(user)
  expect((await api('POST', '/auth/mfa/sms/send', { body: { ticket } })).status).toBe(200)
  const code = (await lastSmsCode(phone))!
  const r = outcome(
    await race((_, v, headers) => api('POST', `${v}/auth/mfa/sms`, { body: { ticket, code }, headers })),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => (x.status === 400 && [60006, 60008].includes(x.body.code)) || x.status === 429)).toBe(true)
})

test('WebAuthn counter: one of 50 assertions with the same counter value', async () => {
  const user = await userWithKey()
  const tickets = await Promise.all(
    Array.from(
      { length: N },
      async () =>
        (await api('POST', '/auth/sessions/logout', { token: user.token, body: { session_id_hashes: ['x'] } })).body
          .mfa,
    ),
  )
  const key = user.key as SoftAuthenticator
  const base = key.counter
  const assertions = tickets.map((mfa) => {
    key.counter = base // the same counter value in every assertion (a cloned authenticator)
    return key.assert(mfa.methods.find((m: { type: string }) => m.type === 'webauthn').challenge)
  })
  const r = outcome(
    await race((i, v, headers) =>
      api('POST', `${v}/mfa/finish`, {
        token: user.token,
        body: { ticket: tickets[i].ticket, mfa_type: 'webauthn', data: assertions[i] },
        headers,
      }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => (x.status === 400 && x.body.code === 60008) || x.status === 429)).toBe(true)
})

test('OAuth2 code: one exchange of 50; refresh token: one rotation of 50 (the race then revokes the grant)', async () => {
  const app = await makeApp()
  const user = await makeUser()
  const code = await authorizeCode(user, app)
  let r = outcome(
    await race((_, v) =>
      tokenRequest(
        v === '/api/v9' ? '/oauth2/token' : '/oauth2/token',
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
        [app.id, app.client_secret],
      ),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => x.status === 400 && x.body.error === 'invalid_grant')).toBe(true)
  const tokens = await grantTokens(user, app)
  r = outcome(
    await race(() =>
      tokenRequest('/oauth2/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, [
        app.id,
        app.client_secret,
      ]),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every((x) => x.status === 400 && x.body.error === 'invalid_grant')).toBe(true)
})

test('invite with max_uses 5: five of 50 users join', async () => {
  const owner = await makeUser()
  const guild = (await api('POST', '/guilds', { token: owner.token, body: { name: 'race guild' } })).body
  const channel = (await api('GET', `/guilds/${guild.id}/channels`, { token: owner.token })).body[0]
  const invite = (await api('POST', `/channels/${channel.id}/invites`, { token: owner.token, body: { max_uses: 5 } }))
    .body
  const joiners = await quickUsers(N)
  const r = outcome(
    await race((i, v, headers) => api('POST', `${v}/invites/${invite.code}`, { token: joiners[i].token, headers })),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(5)
  expect(r.rest.every((x) => x.status === 404 && x.body.code === 10006)).toBe(true)
  const members = await api('GET', `/guilds/${guild.id}/members?limit=1000`, { token: owner.token })
  expect(members.body).toHaveLength(6)
})

test(`lobby join by secret at the ${MAX_MEMBERS_PER_LOBBY}-member limit: one of 50 joins`, async () => {
  const app = await makeApp()
  const [first] = await quickUsers(1)
  const firstBearer = await bearerFor(first, app)
  const created = await api('PUT', '/lobbies', { token: firstBearer, body: { secret: 'full house' } })
  expect(created.status).toBe(200)
  const filler = await quickUsers(MAX_MEMBERS_PER_LOBBY - 2)
  const now = clock.now()
  const rows = filler.map((u) => ({ lobbyId: created.body.id, userId: u.id, applicationId: app.id, joinedAt: now }))
  for (let i = 0; i < rows.length; i += 200)
    await write((w) =>
      w
        .insert(lobbyMembers)
        .values(rows.slice(i, i + 200))
        .run(),
    )
  const racers = await quickUsers(N)
  const bearers = await Promise.all(racers.map((u) => bearerFor(u, app)))
  const r = outcome(
    await race((i, v, headers) =>
      api('PUT', `${v}/lobbies`, { token: bearers[i], body: { secret: 'full house' }, headers }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every(formError('LOBBY_MEMBER_LIMIT'))).toBe(true)
  expect(
    (await api('GET', `/lobbies/${created.body.id}`, { token: `Bot ${app.bot_token}` })).body.members,
  ).toHaveLength(MAX_MEMBERS_PER_LOBBY)
}, 30_000)

test(`the per-user ${MAX_LOBBIES_PER_USER_PER_APP}-lobby limit: one of 50 joins`, async () => {
  const app = await makeApp()
  const [user] = await quickUsers(1)
  const bearer = await bearerFor(user, app)
  const now = clock.now()
  const ids = Array.from({ length: MAX_LOBBIES_PER_USER_PER_APP - 1 }, () => snowflake())
  await write(async (w) => {
    await w
      .insert(lobbies)
      .values(ids.map((id) => ({ id, applicationId: app.id, idleTimeoutSeconds: 300, createdAt: now })))
      .run()
    await w
      .insert(lobbyMembers)
      .values(ids.map((lobbyId) => ({ lobbyId, userId: user.id, applicationId: app.id, joinedAt: now })))
      .run()
  })
  const r = outcome(
    await race((i, v, headers) =>
      api('PUT', `${v}/lobbies`, { token: bearer, body: { secret: `secret ${i}` }, headers }),
    ),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every(formError('USER_LOBBY_LIMIT'))).toBe(true)
})

test('enforce_nonce channel messages: 50 sends with one nonce make one message', async () => {
  const user = await makeUser()
  const guild = (await api('POST', '/guilds', { token: user.token, body: { name: 'nonce guild' } })).body
  const channel = (await api('GET', `/guilds/${guild.id}/channels`, { token: user.token })).body[0]
  const replies = await race((_, v, headers) =>
    api('POST', `${v}/channels/${channel.id}/messages`, {
      token: user.token,
      body: { content: 'once', nonce: 'n-1', enforce_nonce: true },
      headers,
    }),
  )
  expect(replies.every((x) => x.status === 200)).toBe(true)
  expect(new Set(replies.map((x) => x.body.id)).size).toBe(1)
  const list = await api('GET', `/channels/${channel.id}/messages`, { token: user.token })
  expect(list.body.filter((m: { content: string }) => m.content === 'once')).toHaveLength(1)
  // Without enforce_nonce the nonce is only echoed: two sends, two messages.
  const a = await api('POST', `/channels/${channel.id}/messages`, {
    token: user.token,
    body: { content: 'twice', nonce: 'n-2' },
  })
  const b = await api('POST', `/channels/${channel.id}/messages`, {
    token: user.token,
    body: { content: 'twice', nonce: 'n-2' },
  })
  expect(a.body.id).not.toBe(b.body.id)
})

test('remote-auth ticket: one exchange of 50', async () => {
  const user = await makeUser()
  const desktop = await DesktopClient.ready()
  const claimed = await claim(user.token, desktop.fingerprint)
  expect((await finish(user.token, claimed.body.handshake_token)).status).toBe(204)
  const { ticket } = await desktop.waitFor('pending_login')
  const r = outcome(
    await race((_, v, headers) => api('POST', `${v}/users/@me/remote-auth/login`, { body: { ticket }, headers })),
    (x) => x.status === 200,
  )
  expect(r.wins).toBe(1)
  expect(r.rest.every(formError('REMOTE_AUTH_INVALID_TICKET'))).toBe(true)
  desktop.ws.close()
})
