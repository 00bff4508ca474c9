// POST /partner-sdk/token/bot (issue 44, part 1) and what a provisional account is (part 3): the game backend's Bot
// token makes the account on the first call for a player id and gives a new hour-long Bearer token for it on every
// call; one account per (application, id) under 50 concurrent first calls; its limits at their edges.
import { afterEach, describe, expect, test } from 'bun:test'
import { createPublicKey, verify } from 'node:crypto'
import { clock } from '../../src/core/clock'
import { api, makeApp, resetWorld } from '../helpers'
import { rawSql } from '../db/raw'
import { botToken, player } from './helpers'

afterEach(() => resetWorld())

const PROVISIONAL = 1 << 23

describe('POST /partner-sdk/token/bot', () => {
  test("the first call makes the account, the next ones give a new token for it; Discord's answer", async () => {
    const app = await makeApp()
    const first = await botToken(app.bot_token, 'player-1', 'Grace')
    expect(first.status).toBe(200)
    expect(first.headers.get('cache-control')).toBe('no-store')
    expect(first.body).toEqual({
      access_token: expect.any(String),
      id_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'sdk.social_layer',
    })
    // 256 random bits, base64url.
    expect(first.body.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const me = await api('GET', '/users/@me', { token: `Bearer ${first.body.access_token}` })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ global_name: 'Grace', bot: false, flags: PROVISIONAL, public_flags: PROVISIONAL })
    expect(me.body.username).toBe(`player_${me.body.id}`)

    const second = await botToken(app.bot_token, 'player-1', 'Someone else')
    expect(second.status).toBe(200)
    expect(second.body.access_token).not.toBe(first.body.access_token)
    const again = await api('GET', '/users/@me', { token: `Bearer ${second.body.access_token}` })
    // The same account; the name given on a later call does not rename it.
    expect(again.body.id).toBe(me.body.id)
    expect(again.body.global_name).toBe('Grace')
    // The first token still works: a new token does not end the old one.
    expect((await api('GET', '/users/@me', { token: `Bearer ${first.body.access_token}` })).status).toBe(200)

    // The row: no password, no e-mail, the flag; the token stored hashed, for an hour.
    const [row] = await rawSql('SELECT email, password_hash, phone, flags FROM users WHERE id = ?', me.body.id)
    expect(row).toEqual({ email: null, password_hash: null, phone: null, flags: PROVISIONAL })
    const tokens = await rawSql(
      'SELECT access_token_hash, expires_at - created_at AS lifetime, refresh_token_hash, scopes FROM oauth2_tokens WHERE user_id = ?',
      me.body.id,
    )
    expect(tokens).toHaveLength(2)
    for (const t of tokens) {
      expect(t).toMatchObject({ lifetime: 3600_000, refresh_token_hash: null, scopes: 'sdk.social_layer' })
      expect(t.access_token_hash).toMatch(/^[0-9a-f]{64}$/)
    }
  })

  test('the id_token is an EdDSA JWT naming the account, checked with the application verify_key', async () => {
    const app = await makeApp()
    const r = await botToken(app.bot_token, 'jwt-player')
    const me = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
    const [head, payload, signature] = r.body.id_token.split('.')
    expect(JSON.parse(Buffer.from(head, 'base64url').toString())).toEqual({ alg: 'EdDSA', typ: 'JWT' })
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    expect(claims).toMatchObject({ sub: me.body.id, aud: app.id })
    expect(claims.exp - claims.iat).toBe(3600)
    const current = await api('GET', '/applications/@me', { token: `Bot ${app.bot_token}` })
    const raw = Buffer.from(current.body.verify_key, 'hex')
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
    expect(verify(null, Buffer.from(`${head}.${payload}`), key, Buffer.from(signature, 'base64url'))).toBe(true)
  })

  test('without a name the account has none (its username shows); the same id under another application is another account', async () => {
    const a = await makeApp()
    const b = await makeApp()
    const inA = await player(a, 'shared-id')
    const inB = await player(b, 'shared-id')
    expect(inA.id).not.toBe(inB.id)
    const me = await api('GET', '/users/@me', { token: inA.bearer })
    expect(me.body.global_name).toBeNull()
    // A token of one application does not name the other's account.
    const viaA = await api('POST', '/partner-sdk/token', {
      body: {
        client_id: b.id,
        external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
        external_auth_token: inA.token.access_token,
      },
    })
    expect(viaA.status).toBe(401)
  })

  test('50 concurrent first calls for one player make one account', async () => {
    const app = await makeApp()
    const replies = await Promise.all(Array.from({ length: 50 }, () => botToken(app.bot_token, 'rush')))
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200))
    const ids = new Set<string>()
    for (const r of replies)
      ids.add((await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })).body.id)
    expect(ids.size).toBe(1)
    const rows = await rawSql('SELECT user_id FROM external_identities WHERE application_id = ?', app.id)
    expect(rows).toHaveLength(1)
    expect((await rawSql('SELECT count(*) AS n FROM oauth2_tokens WHERE user_id = ?', [...ids][0]))[0].n).toBe(50)
  })

  test('limits: external_user_id 1 to 128 characters, preferred_global_name 1 to 32', async () => {
    const app = await makeApp()
    expect((await botToken(app.bot_token, 'x'.repeat(128), 'n'.repeat(32))).status).toBe(200)
    const long = await botToken(app.bot_token, 'x'.repeat(129))
    expect(long.status).toBe(400)
    expect(long.body.code).toBe(50035)
    expect(long.body.errors.external_user_id._errors[0].code).toBe('BASE_TYPE_BAD_LENGTH')
    expect((await botToken(app.bot_token, '')).status).toBe(400)
    const name = await botToken(app.bot_token, 'y', 'n'.repeat(33))
    expect(name.status).toBe(400)
    expect(name.body.errors.preferred_global_name._errors[0].code).toBe('BASE_TYPE_BAD_LENGTH')
    expect((await botToken(app.bot_token, 'y', '')).status).toBe(400)
    const missing = await api('POST', '/partner-sdk/token/bot', { token: `Bot ${app.bot_token}`, body: {} })
    expect(missing.status).toBe(400)
    expect(missing.body.errors.external_user_id._errors[0].code).toBe('BASE_TYPE_REQUIRED')
  })

  test('only a Bot token: none 401, a user or Bearer token refused', async () => {
    const app = await makeApp()
    const p = await player(app, 'who')
    const none = await api('POST', '/partner-sdk/token/bot', { body: { external_user_id: 'a' } })
    expect(none.status).toBe(401)
    const bearer = await api('POST', '/partner-sdk/token/bot', { token: p.bearer, body: { external_user_id: 'a' } })
    expect(bearer.status).toBe(401)
  })

  test('the token lasts an hour', async () => {
    const app = await makeApp()
    const p = await player(app, 'hour')
    clock.advance(3600_000 - 1000)
    // The token cache keeps an answer up to a minute, never past the expiry.
    expect((await api('GET', '/users/@me', { token: p.bearer })).status).toBe(200)
    clock.advance(1000)
    expect((await api('GET', '/users/@me', { token: p.bearer })).status).toBe(401)
  })
})
