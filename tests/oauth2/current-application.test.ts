// Issue 28: GET /applications/@me and /oauth2/applications/@me answer Discord's application object for the calling
// bot (discord.py's Client.login() asks the second right after /users/@me); `verify_key` is the application's Ed25519
// public key, made with the application, or when first asked for an application made before keys existed.
import { afterEach, describe, expect, test } from 'bun:test'
import { verify } from 'node:crypto'
import { createSession } from '../../src/accounts/sessions'
import { ed25519SignHex } from '../../src/core/crypto'
import { createApplication } from '../../src/oauth2/applications'
import { findApplication } from '../../src/oauth2/store'
import { write } from '../../src/db/client'
import { applications } from '../../src/oauth2/tables'
import { eq } from 'drizzle-orm'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from './helpers'

afterEach(resetWorld)

const PATHS = ['/applications/@me', '/oauth2/applications/@me']

/** Verify an Ed25519 signature (hex) against a raw public key (hex), as an application checks a webhook. */
function verifies(publicKeyHex: string, message: string, signatureHex: string): boolean {
  const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(publicKeyHex, 'hex')])
  return verify(
    null,
    Buffer.from(message),
    { key: spki, format: 'der', type: 'spki' },
    Buffer.from(signatureHex, 'hex'),
  )
}

describe('GET /applications/@me and /oauth2/applications/@me', () => {
  test("a bot gets its application: Discord's fields, its bot, its owner, a verify_key that checks its signatures", async () => {
    const owner = await makeUser()
    const app = await createApplication('Game', ['http://localhost/callback'], owner.id)
    const user = await makeUser()
    await bearerFor(user, app)
    for (const prefix of ['/api/v9', '/api/v10', '/api'])
      for (const path of PATHS) {
        const r = await api('GET', `${prefix}${path}`, { token: `Bot ${app.bot_token}` })
        expect(r.status).toBe(200)
        expect(r.headers.get('content-type')).toBe('application/json')
        const body = r.body
        expect(body).toMatchObject({
          id: app.id,
          name: 'Game',
          description: '',
          icon: null,
          bot_public: true,
          bot_require_code_grant: false,
          flags: 0,
          team: null,
          redirect_uris: ['http://localhost/callback'],
          approximate_user_authorization_count: 1,
        })
        expect(body.owner).toMatchObject({ id: owner.id, username: owner.username })
        expect(body.bot.bot).toBe(true)
        expect(body.verify_key).toMatch(/^[0-9a-f]{64}$/)
        expect(JSON.stringify(body)).not.toContain((await findApplication(app.id))!.signingKey!)
      }
    const { verify_key } = (await api('GET', '/applications/@me', { token: `Bot ${app.bot_token}` })).body
    const row = (await findApplication(app.id))!
    expect(row.verifyKey).toBe(verify_key)
    const signature = ed25519SignHex(row.signingKey!, '1700000000{"type":0}')
    expect(verifies(verify_key, '1700000000{"type":0}', signature)).toBe(true)
    expect(verifies(verify_key, '1700000000{"type":1}', signature)).toBe(false)
  })

  test('each application its own key pair; an application without an owning account names its bot as owner', async () => {
    const a = await makeApp()
    const b = await makeApp()
    const [ra, rb] = await Promise.all(
      [a, b].map((app) => api('GET', '/oauth2/applications/@me', { token: `Bot ${app.bot_token}` })),
    )
    expect(ra.body.verify_key).not.toBe(rb.body.verify_key)
    expect(ra.body.owner.id).toBe(ra.body.bot.id)
  })

  test('an application made before key pairs gets one when first asked, and keeps it', async () => {
    const app = await makeApp()
    await write((w) =>
      w.update(applications).set({ verifyKey: null, signingKey: null }).where(eq(applications.id, app.id)).run(),
    )
    const first = await api('GET', '/applications/@me', { token: `Bot ${app.bot_token}` })
    expect(first.body.verify_key).toMatch(/^[0-9a-f]{64}$/)
    const second = await api('GET', '/oauth2/applications/@me', { token: `Bot ${app.bot_token}` })
    expect(second.body.verify_key).toBe(first.body.verify_key)
    expect((await findApplication(app.id))!.verifyKey).toBe(first.body.verify_key)
  })

  test('only a Bot token, as Discord: nobody 401, a user 403 20002, a bearer 401, a wrong bot token 401', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const bearer = await bearerFor(user, app)
    const session = (await createSession(user.id, { platform: 'test' })).token
    for (const path of PATHS) {
      expect((await api('GET', path)).status).toBe(401)
      const asUser = await api('GET', path, { token: session })
      expect([asUser.status, asUser.body.code]).toEqual([403, 20002])
      expect((await api('GET', path, { token: bearer })).status).toBe(401)
      expect((await api('GET', path, { token: `Bot ${app.bot_token}x` })).status).toBe(401)
    }
  })
})
