// A real server for the SDK's tests, as a game studio runs it: `bun src/main.ts` in its own process on a temporary
// database (PostgreSQL under TEST_DATABASE=postgres is not needed: the SDK talks HTTP and WebSocket only), verified
// users made by the CLI, an application with a redirect URI, and players' OAuth2 Bearer tokens (identify,
// gateway.connect, lobbies.write) from the authorization-code flow, all through the SDK's own REST client.
import { afterAll } from 'bun:test'
import { Client } from '../../client/src/index'
import { cli, type Env, freshEnv, type Served, serve } from '../ops/process-helpers'

export type Player = { id: string; token: string; email: string; password: string; bearer: string; refresh: string }
export type App = { id: string; bot: string; clientSecret: string }
export const REDIRECT = 'http://localhost/callback'

export type TestServer = Served & {
  env: Env
  newUser(): Promise<Omit<Player, 'bearer' | 'refresh'>>
  newApp(): Promise<App>
  player(app: App): Promise<Player>
}

let users = 0

/** Start a server (`env`: more settings, e.g. GATEWAY_HEARTBEAT_MS), stopped after the file (call it at its top). */
export async function startServer(extra: Env = {}): Promise<TestServer> {
  const { env } = freshEnv({ LOG_LEVEL: 'warn', ROUTE_RATE_LIMITS: 'true', ...extra })
  let served: Served | undefined
  afterAll(async () => {
    if (served?.proc.exitCode === null) await served.stop()
  }, 15_000)
  served = await serve(env)
  const made: TestServer = {
    ...served,
    env,
    async newUser() {
      const email = `sdk-${++users}-${Date.now()}@example.test`
      const password = 'an sdk test passphrase'
      const r = await cli(env, ['user', 'create', '--email', email, '--password', password])
      if (r.code !== 0) throw new Error(`user create: ${r.stderr}`)
      const { id, token } = JSON.parse(r.stdout)
      return { id, token, email, password }
    },
    async newApp() {
      const r = await cli(env, ['app', 'create', '--name', `SDK game ${Date.now()}`, '--redirect-uri', REDIRECT])
      if (r.code !== 0) throw new Error(`app create: ${r.stderr}`)
      const app = JSON.parse(r.stdout)
      return { id: app.id, bot: app.bot_token, clientSecret: app.client_secret }
    },
    async player(app) {
      const user = await made.newUser()
      const tokens = await grant(made.url, user.token, app)
      return { ...user, bearer: tokens.access_token, refresh: tokens.refresh_token }
    },
  }
  return made
}

/** The user approves the app (POST /oauth2/authorize), and the code is exchanged for tokens. */
export async function grant(
  baseUrl: string,
  userToken: string,
  app: App,
  scope = 'identify gateway.connect lobbies.write',
): Promise<{ access_token: string; refresh_token: string }> {
  const client = new Client({ baseUrl, token: userToken })
  const query = { client_id: app.id, response_type: 'code', redirect_uri: REDIRECT, scope, state: 'sdk' }
  const approved = await client.rest.post('/oauth2/authorize', { query, body: { authorize: true } })
  const code = new URL(approved.location).searchParams.get('code')!
  const tokens = await client.rest.post('/oauth2/token', {
    auth: basic(app),
    form: { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
  })
  return { access_token: tokens.access_token, refresh_token: tokens.refresh_token! }
}

/** The application's client credentials as HTTP Basic. */
export const basic = (app: App) => `Basic ${btoa(`${app.id}:${app.clientSecret}`)}`
