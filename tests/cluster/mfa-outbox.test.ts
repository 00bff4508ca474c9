// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// MFA changes through the Gateway outbox (src/cluster/outbox.ts) on three real nodes: a factor's enrolment or removal
// gives the account's USER_UPDATE (and the new token's AUTH_SESSION_CHANGE) inside its transaction, so a node killed
// right after that COMMIT (LOBBY_TEST_DIE_AFTER_COMMIT: the node SIGKILLs itself there, before its relay) loses none of
// them: a live node's sweeper relays the rows. Meanwhile the replaced session is already gone from the database: a
// node's credential check that sees it so first applies what was committed (the relay, the log), so the socket moves
// to the new session rather than being closed 4004.
import { describe, expect, test } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import type { Served } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

/** A call through a node that dies right after its COMMIT: the connection drops, no answer. */
async function callAndDie(node: Served, method: string, path: string, token: string, body?: unknown, jwt?: string) {
  const sent = fetch(`${node.url}/api/v10${path}`, {
    method,
    headers: {
      authorization: token,
      'content-type': 'application/json',
      ...(jwt ? { 'x-service-mfa-authorization': jwt } : {}),
    },
    body: JSON.stringify(body ?? {}),
  })
  await expect(sent).rejects.toThrow()
  expect(await node.proc.exited).not.toBe(0)
}

/** A user with TOTP on (enabled through `node`, the nodes' real clock): its new token and backup codes. */
async function userWithTotp(node: Served) {
  const user = await cluster.newUser()
  const secret = new Secret({ size: 20 }).base32
  const code = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate()
  const enabled = await call(node, 'POST', '/users/@me/mfa/totp/enable', user.token, {
    secret,
    code,
    password: user.password,
  })
  expect(enabled.status).toBe(200)
  const backup = (enabled.body.backup_codes as { code: string }[]).map((c) => c.code)
  return { ...user, token: enabled.body.token as string, backup }
}

describe.skipIf(!present)('MFA account events through the outbox', () => {
  test('TOTP removed through a node killed right after its COMMIT: USER_UPDATE reaches another session’s socket on another node', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'USER_UPDATE' })
    const user = await userWithTotp(a)
    // A second session (a login finished with a backup code), its socket on another node than the one that dies.
    const ticket = await call(a, 'POST', '/auth/login', undefined, { login: user.email, password: user.password })
    const login = await call(a, 'POST', '/auth/mfa/backup', undefined, {
      ticket: ticket.body.ticket,
      code: user.backup[0],
    })
    expect(login.status).toBe(200)
    const socket = (await cluster.socketOn(c, login.body.token)).client
    // Elevation with another backup code, then the removal through the node that dies after its COMMIT.
    const asked = await call(a, 'POST', '/users/@me/mfa/totp/disable', user.token, {})
    expect([asked.status, asked.body.code]).toEqual([401, 60003])
    const finish = await call(a, 'POST', '/mfa/finish', user.token, {
      ticket: asked.body.mfa.ticket,
      mfa_type: 'backup',
      data: user.backup[1],
    })
    expect(finish.status).toBe(200)
    await callAndDie(dying, 'POST', '/users/@me/mfa/totp/disable', user.token, {}, finish.body.token)
    // No other write comes: the sweeper of a live node relays the row once it is older than ~5 s.
    const update = await socket.waitFor('USER_UPDATE', 15_000)
    expect(update.d).toMatchObject({ id: user.id, mfa_enabled: false })
    await Bun.sleep(300)
    expect(socket.dispatches('USER_UPDATE')).toHaveLength(1)
    expect((await call(c, 'GET', '/users/@me', login.body.token)).body.mfa_enabled).toBe(false)
  }, 60_000)

  test('TOTP enabled through a node killed right after its COMMIT: the socket of the replaced session moves to the new one, never closed 4004', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'change-auth-session' })
    const user = await cluster.newUser()
    const socket = (await cluster.socketOn(c, user.token)).client
    let closed: number | undefined
    socket.waitForClose(60_000).then(
      ({ code }) => {
        closed = code
      },
      () => {},
    )
    const secret = new Secret({ size: 20 }).base32
    const code = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate()
    await callAndDie(dying, 'POST', '/users/@me/mfa/totp/enable', user.token, { secret, code, password: user.password })
    // The old session is gone from the database at once; its socket's node learns of the new one only when a live
    // node's sweeper relays the rows (~5-7 s): its credential check (every 5 s) must not close the socket before.
    // Before the credential checks waited for the log (gateway/limits.ts closeEndedCredentials), it was closed 4004.
    const change = await socket.waitFor('AUTH_SESSION_CHANGE', 15_000).catch((error) => {
      throw new Error(`${error} (closed: ${closed})`)
    })
    const update = await socket.waitFor('USER_UPDATE', 5000)
    expect(update.d).toMatchObject({ id: user.id, mfa_enabled: true })
    expect(closed).toBeUndefined()
    // It lives on under the new session, past the next credential checks; the old token is refused.
    await Bun.sleep(6000)
    expect(closed).toBeUndefined()
    expect(typeof change.d.auth_session_id_hash).toBe('string')
    expect((await call(a, 'GET', '/users/@me', user.token)).status).toBe(401)
  }, 60_000)
})
