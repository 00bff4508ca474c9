// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The operator console across nodes (issue 47): an operator granted by the CLI locks a user through node A while
// the user's Gateway socket is open on node B: the socket closes (4004) at once, and node B refuses the token; a bot
// token rotated through node A is refused by node B at once.
import { describe, expect, test } from 'bun:test'
import { Secret, TOTP } from 'otpauth'
import { cli } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

const totp = (secret: string, steps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: Date.now() + steps * 30_000,
  })

describe.skipIf(!present)('the console on several nodes', () => {
  test('a lock through node A closes the user’s socket on node B at once; B refuses the token', async () => {
    const [a, b] = cluster.nodes
    const op = await cluster.newUser()
    const secret = new Secret({ size: 20 }).base32
    const enabled = await call(a, 'POST', '/users/@me/mfa/totp/enable', op.token, {
      secret,
      code: totp(secret),
      password: op.password,
    })
    expect(enabled.status).toBe(200)
    const token = enabled.body.token as string
    expect((await cli(cluster.env, ['operator', 'grant', '--user', op.email])).code).toBe(0)
    // Elevated on node A with the next step's code (the enrolment spent this one).
    const asked = await call(a, 'GET', '/admin/users?query=x', token)
    expect([asked.status, asked.body.code]).toEqual([401, 60003])
    const finish = await call(a, 'POST', '/mfa/finish', token, {
      ticket: asked.body.mfa.ticket,
      mfa_type: 'totp',
      data: totp(secret, 1),
    })
    expect(finish.status).toBe(200)

    const target = await cluster.newUser()
    const socket = (await cluster.socketOn(b, target.token)).client
    const started = Date.now()
    const locked = await fetch(`${a.url}/api/v10/admin/users/${target.id}/lock`, {
      method: 'POST',
      headers: {
        authorization: token,
        'x-service-mfa-authorization': finish.body.token,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ reason: 'cluster check' }),
    })
    expect(locked.status).toBe(200)
    expect((await socket.waitForClose(3000)).code).toBe(4004)
    expect(Date.now() - started).toBeLessThan(3000)
    expect((await call(b, 'GET', '/users/@me', target.token)).status).toBe(401)

    // A bot token rotated through node A: node B, which had the old one's answer cached, refuses it at once (the token
    // cache's forgetting goes through the cluster's log), and the bot's socket on B closes.
    const elevated = { 'x-service-mfa-authorization': finish.body.token, 'content-type': 'application/json' }
    const admin = (path: string, body: unknown) =>
      fetch(`${a.url}/api/v10/admin${path}`, {
        method: 'POST',
        headers: { authorization: token, ...elevated },
        body: JSON.stringify(body),
      })
    const app = (await (await admin('/applications', { name: 'Cluster game' })).json()) as {
      id: string
      bot_token: string
    }
    const old = `Bot ${app.bot_token}`
    expect((await call(b, 'GET', '/applications/@me', old)).status).toBe(200)
    const botSocket = (await cluster.socketOn(b, old)).client
    const rotated = await admin(`/applications/${app.id}/bot/reset`, { confirm: 'Cluster game' })
    expect(rotated.status).toBe(200)
    expect((await call(b, 'GET', '/applications/@me', old)).status).toBe(401)
    expect((await botSocket.waitForClose(3000)).code).toBe(4004)
    const fresh = `Bot ${((await rotated.json()) as { bot_token: string }).bot_token}`
    expect((await call(b, 'GET', '/applications/@me', fresh)).status).toBe(200)
  }, 60_000)
})
