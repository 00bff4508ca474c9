// OAuth2 flows for tests: authorize as a user, exchange the code, get a bearer token.
import { createHash, randomBytes } from 'node:crypto'
import { api, server, type Reply } from '../helpers'

export type TestApp = { id: string; client_secret: string; bot_token: string }
export type TestUser = { id: string; token: string }

export const REDIRECT = 'http://localhost/callback'

/** POST a form to a token endpoint; `basic` sends client credentials by HTTP Basic instead of the body. */
export async function tokenRequest(
  path: string,
  form: Record<string, string>,
  basic?: [string, string],
): Promise<Reply> {
  const { url } = await server()
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' }
  if (basic)
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(basic[0])}:${encodeURIComponent(basic[1])}`).toString('base64')}`
  const response = await fetch(`${url}/api/v10${path}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form).toString(),
  })
  const text = await response.text()
  let body: any = text
  try {
    body = text ? JSON.parse(text) : null
  } catch {}
  return { status: response.status, body, headers: response.headers }
}

export function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export function authorizeQuery(app: { id: string }, extra: Record<string, string> = {}) {
  return new URLSearchParams({
    client_id: app.id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'identify lobbies.write',
    state: 'xyz',
    ...extra,
  }).toString()
}

/** Approve the authorization as the user; returns the code from the redirect. */
export async function authorizeCode(user: TestUser, app: TestApp, extra: Record<string, string> = {}): Promise<string> {
  const r = await api('POST', `/oauth2/authorize?${authorizeQuery(app, extra)}`, {
    token: user.token,
    body: { authorize: true },
  })
  if (r.status !== 200) throw new Error(`authorize failed: ${r.status} ${JSON.stringify(r.body)}`)
  return new URL(r.body.location).searchParams.get('code')!
}

/** A full authorization-code flow; returns the token response. */
export async function grantTokens(user: TestUser, app: TestApp, scope = 'identify lobbies.write') {
  const code = await authorizeCode(user, app, { scope })
  const r = await tokenRequest('/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, [
    app.id,
    app.client_secret,
  ])
  if (r.status !== 200) throw new Error(`token failed: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body as {
    access_token: string
    refresh_token: string
    scope: string
    expires_in: number
    token_type: string
  }
}

/** `Bearer <token>` for the user through the app, with the given scopes. */
export async function bearerFor(user: TestUser, app: TestApp, scope = 'identify lobbies.write'): Promise<string> {
  return `Bearer ${(await grantTokens(user, app, scope)).access_token}`
}
