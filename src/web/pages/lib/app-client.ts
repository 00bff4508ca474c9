// The web client as an application (issue 46): lobby routes refuse user sessions (spec §4.1), so the pages that show
// lobbies act through the server's first-party OAuth2 application, like a game. Its Bearer token is exchanged from the
// page's session (POST /oauth2/first-party/token: consent implied, the session's logout ends it) and kept beside the
// session token in localStorage ("app_token", the kind beside it), with a tag of the session it came from, so another
// login in this browser never reuses it, and the scopes it was issued with, so one from before the pages needed more
// (friends: relationships.read/write) is exchanged again rather than refused.
import { ApiError, Client, localStorageTokenStore } from '../../../../client/src/index'
import { client } from './client'
import { goLogin } from './ui'

const KEY = 'app_token'
const OWNER = 'app_token_session'
/** The scopes the kept token was issued with: one kept from before the pages needed more is exchanged again. */
const SCOPES = 'app_token_scope'
const NEEDED = ['identify', 'lobbies.write', 'gateway.connect', 'relationships.read', 'relationships.write']
const hasNeeded = () => {
  const kept = (localStorage.getItem(SCOPES) ?? '').split(' ')
  return NEEDED.every((scope) => kept.includes(scope))
}

/** Which session a kept token came from: a short hash of the session token (not a secret; only compared). */
function sessionTag(token: string): string {
  let h = 0x811c9dc5
  for (let i = 0; i < token.length; i++) h = Math.imul(h ^ token.charCodeAt(i), 0x01000193)
  return (h >>> 0).toString(36)
}

/**
 * The first-party client: REST and the Gateway with the Bearer token (the Gateway at this page's own origin: the
 * pages' CSP allows no other). A kept token of this session is reused; else, or when `fresh`, one is exchanged.
 */
export async function appClient({ fresh = false } = {}): Promise<Client> {
  const session = client.token
  if (!session) goLogin()
  const store = localStorageTokenStore(KEY)
  const tag = sessionTag(session)
  if (fresh || localStorage.getItem(OWNER) !== tag || !store.get() || !hasNeeded()) {
    const issued = (await client.rest.post('/oauth2/first-party/token')) as { access_token: string; scope: string }
    store.set({ token: issued.access_token, kind: 'Bearer' })
    localStorage.setItem(OWNER, tag)
    localStorage.setItem(SCOPES, issued.scope)
  }
  return new Client({ tokenStore: store, gateway: { followResumeUrl: false } })
}

/**
 * The first-party client and its user (`GET /users/@me`). A kept token that ended (its session logged out elsewhere)
 * is exchanged again; a session that ended goes to the login page.
 */
export async function connectApp<User>(): Promise<{ app: Client; me: User }> {
  for (const fresh of [false, true]) {
    try {
      const app = await appClient({ fresh })
      return { app, me: (await app.rest.get('/users/@me')) as User }
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 401)) throw error
      const sessionLives = () =>
        client.rest.get('/users/@me').then(
          () => true,
          () => false,
        )
      if (fresh || !(await sessionLives())) {
        client.setToken(null)
        goLogin()
      }
    }
  }
  throw new Error('unreachable')
}

/** Forget the first-party token (logout; the server ended it with the session already). */
export function forgetAppToken(): void {
  localStorageTokenStore(KEY).set(null)
  localStorage.removeItem(OWNER)
  localStorage.removeItem(SCOPES)
}
