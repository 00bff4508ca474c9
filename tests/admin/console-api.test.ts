// The operator console's API (issue 47): the role granted by the CLI, 403 for everyone else, MFA and elevation,
// cross-site writes refused, search, a user's page, a lock that closes a live socket, the audit rows (console and
// CLI) and their export.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { api, databaseEnv, makeApp, makeUser, resetWorld, server } from '../helpers'
import { GatewayClient } from '../gateway-client'
import { totpCode, userWithTotp } from '../mfa/helpers'
import { cli as run } from '../ops/process-helpers'
import { CLI } from '../../src/admin/audit'
import { grantOperator } from '../../src/admin/operators'
import { clock } from '../../src/core/clock'
import { config, setConfig } from '../../src/config'
import { enqueueEventDelivery } from '../../src/lobbies/event-deliveries-store'
import { transaction } from '../../src/db/client'
import { createLobby } from '../lobbies/helpers'
import { tokenRequest } from '../oauth2/helpers'
import { newReceiver, stopReceivers } from '../lobbies/webhook-receiver'

beforeEach(resetWorld)
// What one test changes (the webhook guard and time-out), put back: only those keys, so the test server's database path
// and the rest stay as the server set them for the files that run after this one in the same process.
let before: { eventWebhooksAllowPrivate: boolean; eventWebhookTimeoutMs: number }
beforeAll(async () => {
  await server()
  const { eventWebhooksAllowPrivate, eventWebhookTimeoutMs } = config()
  before = { eventWebhooksAllowPrivate, eventWebhookTimeoutMs }
})
afterAll(() => {
  stopReceivers()
  setConfig({ ...config(), ...before })
})

async function cli(...args: string[]) {
  await server()
  return run({ ...process.env, ...databaseEnv(), LOG_LEVEL: 'silent' }, args)
}

/**
 * An operator with TOTP and a JWT of a fresh elevation: granted as `operator grant` grants (its function, in this
 * process: a child process costs seconds on a loaded machine; the tests of the command itself spawn it).
 */
async function operator() {
  const user = await userWithTotp()
  expect(await grantOperator(CLI, user.username)).toMatchObject({ id: user.id, operator: true, changed: true })
  return { ...user, jwt: await elevate(user) }
}

async function elevate(user: { token: string; secret: string }): Promise<string> {
  const first = await api('GET', '/admin/users?query=x', { token: user.token })
  expect(first.status).toBe(401)
  expect(first.body.code).toBe(60003)
  clock.advance(30_000)
  const finish = await api('POST', '/mfa/finish', {
    token: user.token,
    body: { ticket: first.body.mfa.ticket, mfa_type: 'totp', data: totpCode(user.secret) },
  })
  expect(finish.status).toBe(200)
  return finish.body.token as string
}

const as = (op: { token: string; jwt: string }, extra: Record<string, string> = {}) => ({
  token: op.token,
  headers: { 'x-service-mfa-authorization': op.jwt, ...extra },
})

describe('who may enter', () => {
  test('a user who is not an operator gets 403 on every console route, elevated or not; so does a bot', async () => {
    const user = await makeUser()
    const target = await makeUser()
    for (const [method, path] of [
      ['GET', '/admin/@me'],
      ['GET', '/admin/users?query=a'],
      ['GET', `/admin/users/${target.id}`],
      ['POST', `/admin/users/${target.id}/lock`],
      ['POST', `/admin/users/${target.id}/logout`],
      ['GET', '/admin/audit-log'],
    ] as const) {
      const r = await api(method, path, { token: user.token, body: method === 'POST' ? { reason: 'x' } : undefined })
      expect([path, r.status, r.body.code]).toEqual([path, 403, 50001])
    }
    expect((await api('GET', '/admin/@me')).status).toBe(401)
    const app = await makeApp()
    expect((await api('GET', '/admin/@me', { token: `Bot ${app.bot_token}` })).status).toBe(403)
  })

  test('an operator without MFA is told to enable it; with MFA each action needs an elevation', async () => {
    const plain = await makeUser()
    expect((await cli('operator', 'grant', '--user', plain.email)).code).toBe(0)
    const me = await api('GET', '/admin/@me', { token: plain.token })
    expect(me.status).toBe(200)
    expect(me.body).toEqual({ id: plain.id, username: plain.username, mfa_enabled: false })
    const refused = await api('GET', '/admin/users?query=a', { token: plain.token })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain('two-factor')

    const op = await operator()
    expect((await api('GET', '/admin/@me', { token: op.token })).body.mfa_enabled).toBe(true)
    const ok = await api('GET', `/admin/users?query=${op.username}`, as(op))
    expect(ok.status).toBe(200)
    expect(ok.body.map((u: { id: string }) => u.id)).toContain(op.id)
    // The elevation lives five minutes.
    clock.advance(301_000)
    expect((await api('GET', `/admin/users?query=${op.username}`, as(op))).body.code).toBe(60003)
  })

  test('granted and revoked by the CLI, the operator is in, then out at once; an unknown user is refused', async () => {
    const user = await userWithTotp()
    const granted = await cli('operator', 'grant', '--user', user.username)
    expect(granted.code).toBe(0)
    expect(JSON.parse(granted.stdout)).toMatchObject({ id: user.id, operator: true, changed: true })
    const op = { ...user, jwt: await elevate(user) }
    expect((await api('GET', '/admin/audit-log', as(op))).status).toBe(200)
    const r = await cli('operator', 'revoke', '--user', op.id)
    expect(r.code).toBe(0)
    expect((await api('GET', '/admin/audit-log', as(op))).status).toBe(403)
    const unknown = await cli('operator', 'grant', '--user', 'nobody-at-all-here')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('no user named')
  })

  test('a state-changing request from another site is refused; the same origin passes', async () => {
    const op = await operator()
    const target = await makeUser()
    const { url } = await server()
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<
      string,
      string
    >[]) {
      const r = await api('POST', `/admin/users/${target.id}/logout`, { ...as(op, headers), body: {} })
      expect([r.status, r.body.code, r.body.message]).toEqual([403, 50001, 'Cross-site requests are refused'])
    }
    const same = await api('POST', `/admin/users/${target.id}/logout`, {
      ...as(op, { origin: new URL(url).origin, 'sec-fetch-site': 'same-origin' }),
      body: {},
    })
    expect(same.status).toBe(200)
  })
})

describe('limits', () => {
  // The route limits' mechanism (fixed windows, 429 bodies) is tested in tests/core; here, that the console's routes
  // carry their own: 5 actions and 20 reads a second per operator (the CPU's load decides how many requests one
  // window sees, so the count is read from the headers, not raced).
  test('5 actions a second per operator, 20 reads; counted per operator, not shared with another', async () => {
    const op = await operator()
    const target = await makeUser()
    const action = await api('POST', `/admin/users/${target.id}/logout`, { ...as(op), body: {} })
    expect(action.headers.get('x-ratelimit-limit')).toBe('5')
    expect(Number(action.headers.get('x-ratelimit-remaining'))).toBeLessThan(5)
    const read = await api('GET', '/admin/audit-log?limit=1', as(op))
    expect(read.headers.get('x-ratelimit-limit')).toBe('20')
    const other = await operator()
    const theirs = await api('POST', `/admin/users/${target.id}/logout`, { ...as(other), body: {} })
    expect(theirs.headers.get('x-ratelimit-remaining')).toBe('4')
  })
})

describe('users', () => {
  test('search by id, username prefix (any case) and e-mail; the page shows sessions, factors, no secret', async () => {
    const op = await operator()
    const target = await makeUser()
    const byId = await api('GET', `/admin/users?query=${target.id}`, as(op))
    expect(byId.body[0]).toMatchObject({ id: target.id, username: target.username, email: target.email, locked: false })
    const byPrefix = await api('GET', `/admin/users?query=${target.username.slice(0, -2).toUpperCase()}`, as(op))
    expect(byPrefix.body.map((u: { id: string }) => u.id)).toContain(target.id)
    const byEmail = await api('GET', `/admin/users?query=${encodeURIComponent(target.email)}`, as(op))
    expect(byEmail.body.map((u: { id: string }) => u.id)).toEqual([target.id])
    const bad = await api('GET', '/admin/users?query=a&limit=101', as(op))
    expect([bad.status, bad.body.code]).toEqual([400, 50035])

    const page = await api('GET', `/admin/users/${op.id}`, as(op))
    expect(page.status).toBe(200)
    expect(page.body.operator).toBe(true)
    expect(page.body.mfa).toEqual({ enabled: true, factors: ['totp', 'backup'] })
    expect(page.body.sessions.length).toBeGreaterThan(0)
    const text = JSON.stringify(page.body)
    expect(text).not.toContain(op.secret)
    expect(text).not.toContain('password')
    expect((await api('GET', '/admin/users/123', as(op))).body.code).toBe(10013)
  })

  test('lock closes the user’s live socket and their tokens; audited with the reason; unlock lets them log in', async () => {
    const op = await operator()
    const target = await makeUser()
    const { client } = await GatewayClient.identified(target.token)
    const noReason = await api('POST', `/admin/users/${target.id}/lock`, { ...as(op), body: {} })
    expect([noReason.status, noReason.body.errors.reason._errors[0].code]).toEqual([400, 'BASE_TYPE_REQUIRED'])
    const self = await api('POST', `/admin/users/${op.id}/lock`, { ...as(op), body: { reason: 'x' } })
    expect(self.status).toBe(400)

    const r = await api('POST', `/admin/users/${target.id}/lock`, { ...as(op), body: { reason: 'spam <b>wave</b>' } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ id: target.id, locked: true, sessions_ended: 1 })
    expect((await client.waitForClose()).code).toBe(4004)
    expect((await api('GET', '/users/@me', { token: target.token })).status).toBe(401)

    const log = await api('GET', `/admin/audit-log?target_id=${target.id}`, as(op))
    expect(log.body[0]).toMatchObject({
      actor: { id: op.id, name: op.username },
      action: 'user.lock',
      target_type: 'user',
      target_id: target.id,
      reason: 'spam <b>wave</b>',
      details: { sessions_ended: 1 },
    })
    expect(log.body[0].address).toBeString()

    const unlocked = await api('POST', `/admin/users/${target.id}/unlock`, { ...as(op), body: { reason: 'appeal' } })
    expect(unlocked.body).toEqual({ id: target.id, locked: false })
    const login = await api('POST', '/auth/login', { body: { login: target.email, password: target.password } })
    expect(login.status).toBe(200)
  })

  test('log out one session or all; remove MFA needs a reason; delete ends the account', async () => {
    const op = await operator()
    const target = await userWithTotp()
    const page = await api('GET', `/admin/users/${target.id}`, as(op))
    const hash = page.body.sessions[0].id_hash
    const one = await api('POST', `/admin/users/${target.id}/logout`, {
      ...as(op),
      body: { session_id_hashes: [hash] },
    })
    expect(one.body).toEqual({ sessions_ended: 1 })
    const mfa = await api('POST', `/admin/users/${target.id}/mfa/remove`, {
      ...as(op),
      body: { reason: 'called back' },
    })
    expect(mfa.body).toEqual({ id: target.id, mfa_enabled: false })
    expect((await api('GET', `/admin/users/${target.id}`, as(op))).body.mfa).toEqual({ enabled: false, factors: [] })
    const gone = await api('POST', `/admin/users/${target.id}/delete`, { ...as(op), body: { reason: 'GDPR request' } })
    expect(gone.body).toEqual({ id: target.id, state: 'deleted' })
    const actions = (await api('GET', `/admin/audit-log?target_id=${target.id}`, as(op))).body.map(
      (row: { action: string }) => row.action,
    )
    expect(actions).toEqual(['user.delete', 'user.mfa_remove', 'user.logout'])
  })
})

describe('audit log', () => {
  test('CLI actions are rows too (actor cli); filtered by action; exported as JSON lines; no route changes a row', async () => {
    const op = await operator()
    const target = await makeUser()
    expect((await cli('user', 'lock', '--id', target.id)).code).toBe(0)
    const rows = (await api('GET', `/admin/audit-log?action=user.lock&target_id=${target.id}`, as(op))).body
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ actor: { id: null, name: 'cli' }, action: 'user.lock', address: null })
    const grants = (await api('GET', `/admin/audit-log?action=operator.grant&target_id=${op.id}`, as(op))).body
    expect(grants[0].actor.name).toBe('cli')

    const exported = await cli('audit', 'export', '--target', target.id)
    expect(exported.code).toBe(0)
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.action)).toEqual(['user.lock'])

    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'])
      expect((await api(method, '/admin/audit-log', { ...as(op), body: {} })).status).toBe(404)
  })
})

describe('applications', () => {
  test('listed without secrets; created with the bot token and secret shown once; audited; a bad URI is 50035', async () => {
    const op = await operator()
    const bad = await api('POST', '/admin/applications', {
      ...as(op),
      body: { name: 'Bad', redirect_uris: ['not a uri'] },
    })
    expect([bad.status, bad.body.code]).toEqual([400, 50035])
    const created = await api('POST', '/admin/applications', {
      ...as(op),
      body: { name: 'Console <b>App</b>', redirect_uris: ['https://game.example/cb'] },
    })
    expect(created.status).toBe(200)
    expect(Object.keys(created.body).sort()).toEqual(['bot_token', 'client_secret', 'id', 'name'])
    const bot = await api('GET', '/applications/@me', { token: `Bot ${created.body.bot_token}` })
    expect(bot.status).toBe(200)
    const list = await api('GET', '/admin/applications', as(op))
    const row = list.body.find((a: { id: string }) => a.id === created.body.id)
    expect(row).toMatchObject({ name: 'Console <b>App</b>', redirect_uris: ['https://game.example/cb'] })
    expect(JSON.stringify(list.body)).not.toContain(created.body.client_secret)
    const audit = await api('GET', `/admin/audit-log?target_id=${created.body.id}`, as(op))
    expect(audit.body[0]).toMatchObject({ action: 'application.create', actor: { id: op.id } })
  })
})

describe('applications: rotation, event webhooks, deliveries', () => {
  test('a new bot token: confirmed by the name, shown once; the old one refused at once and its socket closed', async () => {
    const op = await operator()
    const app = await makeApp()
    const old = `Bot ${app.bot_token}`
    expect((await api('GET', '/applications/@me', { token: old })).status).toBe(200)
    const { client: botSocket } = await GatewayClient.identified(old)
    const path = `/admin/applications/${app.id}/bot/reset`
    const wrong = await api('POST', path, { ...as(op), body: { confirm: 'not it' } })
    expect([wrong.status, wrong.body.errors.confirm._errors[0].code]).toEqual([400, 'ADMIN_NOT_CONFIRMED'])
    expect((await api('GET', '/applications/@me', { token: old })).status).toBe(200)

    const r = await api('POST', path, { ...as(op), body: { confirm: app.name, reason: 'leaked' } })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['bot_token', 'id'])
    // Refused at once: the answer cached for the old token (the request above) is forgotten.
    expect((await api('GET', '/applications/@me', { token: old })).status).toBe(401)
    expect((await botSocket.waitForClose()).code).toBe(4004)
    expect((await api('GET', '/applications/@me', { token: `Bot ${r.body.bot_token}` })).body.id).toBe(app.id)
    expect(JSON.stringify((await api('GET', '/admin/applications', as(op))).body)).not.toContain(r.body.bot_token)

    const secret = await api('POST', `/admin/applications/${app.id}/client-secret/reset`, {
      ...as(op),
      body: { confirm: app.name },
    })
    expect(Object.keys(secret.body).sort()).toEqual(['client_secret', 'id'])
    const form = (s: string) =>
      tokenRequest('/oauth2/token', { grant_type: 'client_credentials', scope: 'identify' }, [app.id, s])
    expect((await form(app.client_secret)).status).toBe(401)
    expect((await form(secret.body.client_secret)).status).toBe(200)
    const actions = (await api('GET', `/admin/audit-log?target_id=${app.id}`, as(op))).body.map(
      (row: { action: string; reason: string | null }) => [row.action, row.reason],
    )
    expect(actions).toEqual([
      ['application.client_secret_reset', null],
      ['application.bot_token_reset', 'leaked'],
    ])
    expect(
      (await api('POST', '/admin/applications/1/bot/reset', { ...as(op), body: { confirm: 'x' } })).body.code,
    ).toBe(10002)
  })

  test('the event webhooks URL is PINGed before it is taken; a test PING answers what it got; the delivery log', async () => {
    setConfig({ ...config(), eventWebhooksAllowPrivate: true, eventWebhookTimeoutMs: 2000 })
    const op = await operator()
    const app = await makeApp()
    const hook = newReceiver()
    hook.trust((await api('GET', '/applications/@me', { token: `Bot ${app.bot_token}` })).body.verify_key)
    const path = `/admin/applications/${app.id}/event-webhooks`
    hook.answer(() => 500)
    const refused = await api('POST', path, { ...as(op), body: { url: hook.url } })
    expect([refused.status, refused.body.errors.event_webhooks_url._errors[0].message]).toEqual([
      400,
      'The URL did not acknowledge the PING (HTTP 500).',
    ])
    hook.answer(() => 204)
    const set = await api('POST', path, { ...as(op), body: { url: hook.url, reason: 'game backend' } })
    expect(set.body).toMatchObject({ id: app.id, event_webhooks_url: hook.url, event_webhooks_status: 2 })
    const ping = await api('POST', `${path}/ping`, as(op))
    expect(ping.body).toMatchObject({ ok: true, url: hook.url, error: null })
    expect(ping.body.latency_ms).toBeNumber()
    hook.answer(() => 503)
    expect((await api('POST', `${path}/ping`, as(op))).body).toMatchObject({ ok: false, error: 'HTTP 503' })
    expect(hook.calls.every((c) => c.verified && c.body.type === 0)).toBe(true)

    // The log: what is still to deliver, oldest first, with its attempts (a queued row, written as the outbox does).
    const lobby = await createLobby(`Bot ${app.bot_token}`)
    await transaction(async (tx) => {
      await enqueueEventDelivery(tx, {
        lobbyId: lobby.id,
        applicationId: app.id,
        body: JSON.stringify({ version: 1, application_id: app.id, type: 1, event: { type: 'LOBBY_DELETE' } }),
        now: clock.now() + 3_600_000,
      })
    })
    const log = await api('GET', `/admin/applications/${app.id}/event-deliveries`, as(op))
    expect(log.status).toBe(200)
    expect(log.body.at(-1)).toMatchObject({
      lobby_id: lobby.id,
      event_type: 'LOBBY_DELETE',
      status: 'queued',
      attempts: 0,
    })
    const off = await api('POST', path, { ...as(op), body: { url: null } })
    expect(off.body).toMatchObject({ event_webhooks_url: null, event_webhooks_status: 1 })
    const rows = (await api('GET', `/admin/audit-log?target_id=${app.id}`, as(op))).body
    expect(rows.map((r: { action: string }) => r.action)).toEqual([
      'application.webhook_url',
      'application.webhook_ping',
      'application.webhook_ping',
      'application.webhook_url',
    ])
    expect(rows[1].details).toMatchObject({ ok: false, error: 'HTTP 503' })
  })
})

describe('experiments', () => {
  const example = async () => await Bun.file(`${import.meta.dir}/../../docs/experiments.example.json`).json()

  test('shown and replaced whole; a bad file is refused with each problem’s path and changes nothing; a stale edit is refused', async () => {
    const op = await operator()
    const file = await example()
    const loaded = await api('PUT', '/admin/experiments', { ...as(op), body: { definitions: file, reason: 'spring' } })
    expect(loaded.status).toBe(200)
    expect(loaded.body).toMatchObject({ loaded: file.length })
    const shown = await api('GET', '/admin/experiments', as(op))
    expect(shown.body).toEqual({ version: loaded.body.version, definitions: file })

    const bad = structuredClone(file)
    bad[1].populations[0].ranges[0].rollout[0].e = 10_000
    bad[2].kind = 'team'
    const refused = await api('PUT', '/admin/experiments', {
      ...as(op),
      body: { definitions: bad, version: loaded.body.version },
    })
    expect([refused.status, refused.body.code]).toEqual([400, 50035])
    expect(refused.body.errors.definitions._errors.map((e: { message: string }) => e.message)).toEqual([
      '[1].populations[0].ranges[0].rollout[0].e: must be ≤ 9999',
      expect.stringMatching(/^\[2\]\.kind: /),
    ])
    expect((await api('GET', '/admin/experiments', as(op))).body.version).toBe(loaded.body.version)

    // An edit of an older version: another load came since.
    file[1].revision = 4
    const again = await api('PUT', '/admin/experiments', { ...as(op), body: { definitions: file } })
    expect(again.status).toBe(200)
    const stale = await api('PUT', '/admin/experiments', {
      ...as(op),
      body: { definitions: file, version: loaded.body.version },
    })
    expect(stale.body.errors.version._errors[0].code).toBe('ADMIN_STALE')
    // At once in this process (GET /experiments answers from the new set).
    expect((await api('GET', '/admin/experiments', as(op))).body.definitions[1].revision).toBe(4)
    const rows = (await api('GET', '/admin/audit-log?action=experiments.load', as(op))).body
    expect(rows.slice(0, 2).map((r: { details: { version: number } }) => r.details.version)).toEqual([
      again.body.version,
      loaded.body.version,
    ])
    expect(rows[1].reason).toBe('spring')
  })

  test('a preview says which bucket an id gets and why; the histogram follows the rollout; unknown names are 400', async () => {
    const op = await operator()
    await api('PUT', '/admin/experiments', { ...as(op), body: { definitions: await example() } })
    // The example's override: this id is in bucket 1 of 2025-03_new_settings_page, whatever its position.
    const name = '2025-03_new_settings_page'
    const preview = await api('GET', `/admin/experiments/${name}/preview?user=1084179945133187083`, as(op))
    expect(preview.body).toMatchObject({ experiment: name, kind: 'user', bucket: 1, override: true })
    const plain = await api('GET', `/admin/experiments/${name}/preview?user=${op.id}`, as(op))
    expect(plain.body).toMatchObject({ override: false, population: 0 })
    expect(plain.body.position).toBeWithin(0, 10_000)
    const wrongKind = await api('GET', '/admin/experiments/2025-02_community_boosting/preview?user=1', as(op))
    expect([wrongKind.status, wrongKind.body.errors.target._errors[0].code]).toEqual([400, 'ADMIN_UNKNOWN'])
    expect((await api('GET', '/admin/experiments/nope/preview?user=1', as(op))).status).toBe(400)

    // 2025-01_global_holdout: positions 0-499 are bucket 0 (5%), the rest bucket 1.
    const histogram = await api('GET', '/admin/experiments/2025-01_global_holdout/histogram?sample=4000', as(op))
    expect(histogram.body.sample).toBe(4000)
    const counts = Object.fromEntries(
      histogram.body.buckets.map((b: { bucket: number; count: number }) => [b.bucket, b.count]),
    )
    expect(counts[0] + counts[1]).toBe(4000)
    expect(counts[0]).toBeWithin(100, 320)
    expect((await api('GET', '/admin/experiments/x/histogram?sample=20001', as(op))).status).toBe(400)
  })
})

describe('live lobbies', () => {
  test('listed by application with member counts, paged; a lobby’s page; remove a member and close it, with the events', async () => {
    const op = await operator()
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const [a, b] = [await makeUser(), await makeUser()]
    const first = await createLobby(bot, { members: [{ id: a.id }] })
    const lobby = await createLobby(bot, {
      metadata: { mode: '<b>ranked</b>' },
      members: [{ id: a.id }, { id: b.id, metadata: { team: 'red' } }],
    })
    const sent = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'gg <i>wp</i>' } })
    await api('PUT', `/lobbies/${lobby.id}/messages/${sent.body.id}/moderation-metadata`, {
      token: bot,
      body: { flagged: 'no' },
    })
    const list = await api('GET', `/admin/applications/${app.id}/lobbies?limit=1`, as(op))
    expect(list.body).toMatchObject({ total: 2, lobbies: [{ id: lobby.id, member_count: 2, in_call: 0 }] })
    const older = await api('GET', `/admin/applications/${app.id}/lobbies?limit=1&before=${lobby.id}`, as(op))
    expect(older.body.lobbies.map((l: { id: string; member_count: number }) => [l.id, l.member_count])).toEqual([
      [first.id, 1],
    ])
    expect((await api('GET', '/admin/applications/1/lobbies', as(op))).body.code).toBe(10002)

    const { client: socketA } = await GatewayClient.identified(a.token)
    const { client: socketB } = await GatewayClient.identified(b.token)
    const page = await api('GET', `/admin/lobbies/${lobby.id}`, as(op))
    expect(page.body.lobby).toMatchObject({ id: lobby.id, application_id: app.id, metadata: { mode: '<b>ranked</b>' } })
    expect(page.body.members.map((m: { id: string; online: boolean }) => [m.id, m.online])).toEqual([
      [a.id, true],
      [b.id, true],
    ])
    expect(page.body.members[1]).toMatchObject({ username: b.username, metadata: { team: 'red' }, in_call: false })
    expect(page.body.messages[0]).toMatchObject({
      content: 'gg <i>wp</i>',
      moderation_metadata: { flagged: 'no' },
      author: { id: expect.any(String) },
    })

    const removed = await api('POST', `/admin/lobbies/${lobby.id}/members/${b.id}/remove`, {
      ...as(op),
      body: { reason: 'griefing' },
    })
    expect(removed.body).toEqual({ lobby_id: lobby.id, user_id: b.id, removed: true })
    expect((await socketA.waitFor('LOBBY_MEMBER_REMOVE')).d.member.id).toBe(b.id)
    expect((await socketB.waitFor('LOBBY_DELETE')).d).toEqual({ id: lobby.id, reason: 'removed' })
    const again = await api('POST', `/admin/lobbies/${lobby.id}/members/${b.id}/remove`, { ...as(op), body: {} })
    expect([again.status, again.body.code]).toEqual([404, 10007])

    const closed = await api('POST', `/admin/lobbies/${lobby.id}/close`, { ...as(op), body: { reason: 'report 7' } })
    expect(closed.body).toEqual({ id: lobby.id, closed: true })
    expect((await socketA.waitFor('LOBBY_DELETE')).d).toEqual({ id: lobby.id, reason: 'deleted' })
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
    expect((await api('GET', `/admin/lobbies/${lobby.id}`, as(op))).body.code).toBe(10031)
    const rows = (await api('GET', `/admin/audit-log?target_id=${lobby.id}`, as(op))).body
    expect(rows.map((r: { action: string; reason: string }) => [r.action, r.reason])).toEqual([
      ['lobby.close', 'report 7'],
      ['lobby.member_remove', 'griefing'],
    ])
    socketA.close()
    socketB.close()
  })

  test('the dashboard counts users, sockets, lobbies and the last hour’s lobby messages a minute', async () => {
    const op = await operator()
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const lobby = await createLobby(bot)
    for (const content of ['one', 'two', 'three'])
      await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content } })
    const r = await api('GET', '/admin/dashboard', as(op))
    expect(r.status).toBe(200)
    expect(r.body.users).toBeGreaterThanOrEqual(2)
    expect(r.body.lobbies).toBeGreaterThanOrEqual(1)
    expect(r.body.messages_per_minute).toHaveLength(60)
    expect(r.body.messages_per_minute.at(-1)).toBeGreaterThanOrEqual(3)
    expect(r.body.node).toMatchObject({
      clustered: false,
      database: process.env.TEST_DATABASE === 'postgres' ? 'postgresql' : 'sqlite',
    })
  })
})
