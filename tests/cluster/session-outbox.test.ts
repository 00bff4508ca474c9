// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Session calls through the Gateway outbox (src/cluster/outbox.ts) on three real nodes: a logout or a password change
// gives its socket calls inside the transaction that deletes the sessions, so a node killed right after that COMMIT
// (LOBBY_TEST_DIE_AFTER_COMMIT=<call kind or event type>: the node SIGKILLs itself there, before its relay, which it
// does only for what was an outbox row of that transaction) still closes the sessions' sockets on the other nodes,
// and an account event still reaches them: a live node's sweeper relays the rows. (A socket whose auth session was
// replaced moves to the new one: its node's credential check applies what was committed before it closes anything,
// tests/cluster/mfa-outbox.test.ts.)
import { describe, expect, test } from 'bun:test'
import type { Served } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

/** A call through a node that dies right after its COMMIT: the connection drops, no answer. */
async function callAndDie(node: Served, method: string, path: string, token: string, body?: unknown) {
  await expect(call(node, method, path, token, body)).rejects.toThrow()
  expect(await node.proc.exited).not.toBe(0)
}

describe.skipIf(!present)('session calls through the outbox', () => {
  test('a logout through a node killed right after its COMMIT closes the session’s sockets on the other nodes', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'close-auth-session' })
    const user = await cluster.newUser()
    const onA = (await cluster.socketOn(a, user.token)).client
    const onC = (await cluster.socketOn(c, user.token)).client
    await callAndDie(dying, 'POST', '/auth/logout', user.token, {})
    // No other write comes: the sweeper of a live node relays the row once it is older than ~5 s.
    for (const s of [onA, onC]) expect((await s.waitForClose(15_000)).code).toBe(4004)
    expect((await call(a, 'GET', '/users/@me', user.token)).status).toBe(401)
    expect((await call(c, 'GET', '/users/@me', user.token)).status).toBe(401)
  }, 60_000)

  test('a password change through a node killed right after its COMMIT: the other session’s socket closes', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'change-auth-session' })
    const user = await cluster.newUser()
    const login = await call(a, 'POST', '/auth/login', undefined, { login: user.email, password: user.password })
    expect(login.status).toBe(200)
    const other = login.body.token as string
    const theirs = (await cluster.socketOn(c, other)).client
    // It dies after the COMMIT that holds the session calls: they were outbox rows of the password's transaction.
    await callAndDie(dying, 'PATCH', '/users/@me', user.token, {
      password: user.password,
      new_password: 'another cluster passphrase entirely',
    })
    expect((await theirs.waitForClose(15_000)).code).toBe(4004)
    expect((await call(c, 'GET', '/users/@me', other)).status).toBe(401)
    expect((await call(c, 'GET', '/users/@me', user.token)).status).toBe(401)
  }, 60_000)

  test('a settings change through a node killed right after its COMMIT reaches the user’s socket on another node', async () => {
    const [a] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'USER_SETTINGS_UPDATE' })
    const user = await cluster.newUser()
    const socket = (await cluster.socketOn(a, user.token)).client
    await callAndDie(dying, 'PATCH', '/users/@me/settings', user.token, { theme: 'light' })
    const update = await socket.waitFor('USER_SETTINGS_UPDATE', 15_000)
    expect(update.d.theme).toBe('light')
    await Bun.sleep(300)
    expect(socket.dispatches('USER_SETTINGS_UPDATE')).toHaveLength(1)
  }, 60_000)
})
