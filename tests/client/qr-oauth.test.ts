// suite: one pass
// The SDK's QR login and OAuth2 against a real server process. QR: a desktop SDK client (its key in WebCrypto) shows
// a code, a logged-in mobile SDK client scans it, the desktop shows who, the mobile approves (elevated with TOTP
// through onMfaRequired) and the desktop holds a token; a denial is `cancelled`. OAuth2: a public client's PKCE
// authorize URL, the code exchanged with the verifier, refresh with rotation (a used refresh token ends the grant),
// and the expiry callback refreshing into the client's token.
import { describe, expect, test } from 'bun:test'
import { ApiError, Client, type RemoteUser } from '../../client/src/index'
import { registeredUser, userWithTotp } from './accounts-helpers'
import { REDIRECT, startServer } from './server'

const server = await startServer()
const app = await server.newApp()
/** A server whose remote-auth sockets (so its codes) live one second. */
const short = await startServer({ REMOTE_AUTH_TIMEOUT_MS: '1000' })
const client = (options: ConstructorParameters<typeof Client>[0] = {}) =>
  new Client({ baseUrl: server.url, ...options })

/** What a desktop login emitted, in order. */
function record(login: ReturnType<Client['remoteAuth']['desktop']>) {
  const events: string[] = []
  const qr = new Promise<string>((resolve) => login.on('qr', (url) => (events.push('qr'), resolve(url))))
  const pending = new Promise<RemoteUser>((resolve) =>
    login.on('pendingUser', (user) => (events.push('pendingUser'), resolve(user))),
  )
  login.on('done', () => events.push('done'))
  login.on('cancelled', () => events.push('cancelled'))
  login.on('expired', () => events.push('expired'))
  login.on('error', (e) => events.push(`error ${e.message}`))
  return { events, qr, pending }
}

describe('QR login', () => {
  test('a mobile client with TOTP approves (elevated once); the desktop gets the user, then a token of its own', async () => {
    const user = await userWithTotp(server)
    let asked = 0
    const mobile = client({ token: user.token, onMfaRequired: () => (asked++, { method: 'totp', code: user.next() }) })
    const desktop = client()
    const login = desktop.remoteAuth.desktop({ webUrl: 'https://lobbies.example.com' })
    const seen = record(login)
    const url = await seen.qr
    expect(url).toMatch(/^https:\/\/lobbies\.example\.com\/ra\/[A-Za-z0-9_-]{43}$/)
    expect(url.endsWith(login.fingerprint!)).toBe(true)

    const request = await mobile.remoteAuth.scan(url)
    expect(request.fingerprint).toBe(login.fingerprint!)
    const shown = await seen.pending
    expect(shown).toMatchObject({ id: user.id, username: expect.stringMatching(/^sdk_/) })
    await request.approve()
    expect(asked).toBe(1)
    const session = await login.wait()
    expect(session).toEqual({ token: expect.any(String), userId: user.id })
    expect(seen.events).toEqual(['qr', 'pendingUser', 'done'])
    expect(desktop.token).toBe(session!.token)
    expect(session!.token).not.toBe(user.token)
    expect((await desktop.rest.get('/users/@me')).id).toBe(user.id)
  })

  test('a denial: the desktop hears cancelled, holds no token; a used or made-up code is a 50035', async () => {
    const user = await registeredUser(server)
    const mobile = client({ token: user.token })
    const desktop = client()
    const login = desktop.remoteAuth.desktop()
    const seen = record(login)
    const url = await seen.qr
    expect(url.startsWith(`${server.url}/ra/`)).toBe(true)
    await mobile.remoteAuth.deny(url)
    expect(await login.wait()).toBeNull()
    expect(seen.events).toEqual(['qr', 'pendingUser', 'cancelled'])
    expect(desktop.token).toBeUndefined()

    const used = await mobile.remoteAuth.approve(url).catch((e) => e)
    expect(used).toBeInstanceOf(ApiError)
    expect(used).toMatchObject({ status: 400, code: 50035 })
    expect(Object.keys(used.fieldErrors())).toEqual(['fingerprint'])
    expect(await mobile.remoteAuth.scan('not a code').catch((e) => e)).toMatchObject({ code: 50035 })
  })

  test('a code that lived its time is replaced by a new one; with renew: false the login ends', async () => {
    const desktop = new Client({ baseUrl: short.url })
    const login = desktop.remoteAuth.desktop()
    const urls: string[] = []
    const second = new Promise<void>((resolve) => login.on('qr', (url) => urls.push(url) === 2 && resolve()))
    const seen = record(login)
    await second
    expect(seen.events).toEqual(['qr', 'expired', 'qr'])
    expect(urls[1]).not.toBe(urls[0])
    login.stop()

    const once = desktop.remoteAuth.desktop({ renew: false })
    const ended = record(once)
    await ended.qr
    expect(await once.wait()).toBeNull()
    expect(ended.events).toEqual(['qr', 'expired'])
  })

  test('stop() closes the socket: wait() resolves null and no code comes after', async () => {
    const login = client().remoteAuth.desktop()
    const seen = record(login)
    await seen.qr
    login.stop()
    expect(await login.wait()).toBeNull()
    await Bun.sleep(50)
    expect(seen.events).toEqual(['qr'])
  })
})

describe('OAuth2 for a public client (PKCE)', () => {
  /** The user approves on the consent page: POST /oauth2/authorize with the URL's query, as the page sends it. */
  async function approve(userToken: string, url: string): Promise<string> {
    const query = Object.fromEntries(new URL(url).searchParams)
    const answer = await client({ token: userToken }).rest.post('/oauth2/authorize', {
      query: query as never,
      body: { authorize: true },
    })
    return answer.location
  }

  test('the authorize URL, the code with its verifier, the Bearer token; a crossed state or a wrong verifier fail', async () => {
    const user = await registeredUser(server)
    const game = client()
    const request = await game.oauth2.authorizeUrl({ clientId: app.id, redirectUri: REDIRECT, scope: ['identify'] })
    const url = new URL(request.url)
    expect(url.origin + url.pathname).toBe(`${server.url}/oauth2/authorize`)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(url.searchParams.get('state')).toBe(request.state)
    expect(request.codeVerifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/)
    const redirect = await approve(user.token, request.url)
    expect(() => game.oauth2.parseRedirect(redirect, { state: 'another' })).toThrow(ApiError)
    const crossed = await game.oauth2.exchangeCode({ ...request, state: 'another' }, redirect).catch((e) => e)
    expect(crossed).toMatchObject({ status: 400, message: 'The redirect state is not the request’s.' })

    const tokens = await game.oauth2.exchangeCode(request, redirect)
    expect(tokens).toMatchObject({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      scope: ['identify'],
    })
    expect(tokens.expiresAt).toBeGreaterThan(Date.now() + 3600_000)
    expect(game.tokenKind).toBe('Bearer')
    expect((await game.rest.get('/users/@me')).id).toBe(user.id)

    const other = await game.oauth2.authorizeUrl({ clientId: app.id, redirectUri: REDIRECT, scope: 'identify' })
    const code = game.oauth2.parseRedirect(await approve(user.token, other.url), other)
    const wrong = await game.oauth2.exchangeCode({ ...other, codeVerifier: request.codeVerifier }, code).catch((e) => e)
    expect(wrong).toBeInstanceOf(ApiError)
    expect(wrong.status).toBe(400)
    expect(wrong.message).toContain('invalid_grant')
  })

  test('refresh rotates; a refresh token used twice ends the grant', async () => {
    const user = await registeredUser(server)
    const game = client()
    const request = await game.oauth2.authorizeUrl({ clientId: app.id, redirectUri: REDIRECT, scope: 'identify' })
    const first = await game.oauth2.exchangeCode(request, await approve(user.token, request.url))
    const second = await game.oauth2.refresh()
    expect(second.refreshToken).not.toBe(first.refreshToken)
    expect(second.accessToken).not.toBe(first.accessToken)
    expect(game.token).toBe(second.accessToken)
    expect((await game.rest.get('/users/@me')).id).toBe(user.id)

    const replay = await game.oauth2.refresh({ refreshToken: first.refreshToken }).catch((e) => e)
    expect(replay).toMatchObject({ status: 400 })
    expect(replay.message).toContain('invalid_grant')
    // The reuse revoked the family: the newest access token stops working too.
    expect(
      await client({ token: `Bearer ${second.accessToken}` })
        .rest.get('/users/@me')
        .catch((e) => e),
    ).toMatchObject({ status: 401 })
  })

  test('the expiry callback fires ahead of the expiry; its refresh is the client’s token at once', async () => {
    const user = await registeredUser(server)
    const game = client()
    const request = await game.oauth2.authorizeUrl({ clientId: app.id, redirectUri: REDIRECT, scope: 'identify' })
    const first = await game.oauth2.exchangeCode(request, await approve(user.token, request.url))
    const refreshed = new Promise<string>((resolve) =>
      // Told 0.1 s from now: `before` is the whole lifetime but 0.1 s.
      game.oauth2.setTokenExpirationCallback(async () => resolve((await game.oauth2.refresh()).accessToken), {
        before: (first.expiresAt - Date.now()) / 1000 - 0.1,
      }),
    )
    const token = await refreshed
    expect(token).not.toBe(first.accessToken)
    expect(game.token).toBe(token)
    expect((await game.rest.get('/users/@me')).id).toBe(user.id)
    game.oauth2.dispose()
  })
})
