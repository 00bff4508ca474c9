// Authorization matrix (issue 19): every route of the OpenAPI document called as each kind of caller — nobody, the
// user, another user, the owning application's bot, another application's bot, a Bearer token with the route's scope
// and one without it, and a logged-out token — with the answer each must get. A route without a row fails the test,
// so a new route cannot ship without deciding who may call it.
import { afterEach, expect, test } from 'bun:test'
import { createSession } from '../../src/accounts/sessions'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'

afterEach(resetWorld)

type Caller = 'none' | 'user' | 'other' | 'bot' | 'otherBot' | 'bearer' | 'narrow' | 'revoked'
const CALLERS: Caller[] = ['none', 'user', 'other', 'bot', 'otherBot', 'bearer', 'narrow', 'revoked']

/**
 * Who may call, by the route's rule. 'pass' = past authentication and authorization (any answer but 401 and the
 * caller-kind 403s); otherwise the exact `status` or `status/code`.
 *   public: anyone, token or not        user: user tokens      members: users and bots (guild routes)
 *   bot: bots only                       oauth: bots, and Bearer tokens with lobbies.write
 *   any: users, bots and Bearer tokens   bearer: Bearer tokens   client: OAuth2 client credentials (none here)
 *   guilds: any kind, Bearer tokens need the guilds scope
 */
type Rule = 'public' | 'user' | 'members' | 'bot' | 'oauth' | 'any' | 'bearer' | 'client' | 'guilds'
type Expect = 'pass' | string
const BY_RULE: Record<Rule, Record<Caller, Expect>> = {
  public: {
    none: 'pass',
    user: 'pass',
    other: 'pass',
    bot: 'pass',
    otherBot: 'pass',
    bearer: 'pass',
    narrow: 'pass',
    revoked: 'pass',
  },
  user: {
    none: '401',
    user: 'pass',
    other: 'pass',
    bot: '403/20001',
    otherBot: '403/20001',
    bearer: '401',
    narrow: '401',
    revoked: '401',
  },
  members: {
    none: '401',
    user: 'pass',
    other: 'pass',
    bot: 'pass',
    otherBot: 'pass',
    bearer: '401',
    narrow: '401',
    revoked: '401',
  },
  bot: {
    none: '401',
    user: '403/20002',
    other: '403/20002',
    bot: 'pass',
    otherBot: 'pass',
    bearer: '401',
    narrow: '401',
    revoked: '401',
  },
  oauth: {
    none: '401',
    user: '403/20002',
    other: '403/20002',
    bot: 'pass',
    otherBot: 'pass',
    bearer: 'pass',
    narrow: '403/50001',
    revoked: '401',
  },
  any: {
    none: '401',
    user: 'pass',
    other: 'pass',
    bot: 'pass',
    otherBot: 'pass',
    bearer: 'pass',
    narrow: 'pass',
    revoked: '401',
  },
  bearer: {
    none: '401',
    user: '401',
    other: '401',
    bot: '401',
    otherBot: '401',
    bearer: 'pass',
    narrow: 'pass',
    revoked: '401',
  },
  client: {
    none: '401',
    user: '401',
    other: '401',
    bot: '401',
    otherBot: '401',
    bearer: '401',
    narrow: '401',
    revoked: '401',
  },
  guilds: {
    none: '401',
    user: 'pass',
    other: 'pass',
    bot: 'pass',
    otherBot: 'pass',
    bearer: '403/50001',
    narrow: '403/50001',
    revoked: '401',
  },
}

// Resources belong to the user (guild, channel, role, invite, key) and to the owning application (lobby, with the
// user as member). Another user, another application's bot, and a bot that is not in the guild see them as unknown.
const GUILD = { other: '404/10004', bot: '404/10004', otherBot: '404/10004' }
const CHANNEL = { other: '404/10003', bot: '404/10003', otherBot: '404/10003' }
const LOBBY = { otherBot: '404/10031' }
const APP = { otherBot: '403/50001' }
const OUTSIDE_GUILD = { bot: '403/50001', otherBot: '403/50001' }
const ADMIN = { user: '403/50001', other: '403/50001' }

/** The rule, the answers that differ from it, and the body (a GET's: its query string). */
type Row = [Rule, Partial<Record<Caller, Expect>>?, unknown?]
const ROUTES: Record<string, Row> = {
  'GET /users/@me': ['any'],
  // A Bearer token may change the display name of a provisional account only, and needs sdk.social_layer for it.
  'PATCH /users/@me': ['user', { bearer: '403/50001', narrow: '403/50001' }, { global_name: 'x' }],
  'POST /partner-sdk/token/bot': ['bot', {}, { external_user_id: 'matrix-player' }],
  // The client authenticates in the body (client_id, client_secret): an Authorization header changes nothing.
  'POST /partner-sdk/token': ['public', {}, { client_id: '1', external_auth_type: 'OIDC', external_auth_token: 'x' }],
  'POST /auth/login': ['public'],
  'POST /auth/register': ['public'],
  'POST /auth/verify': ['public'],
  'POST /auth/authorize-ip': ['public'],
  'POST /auth/register/phone': ['public'],
  'POST /phone-verifications/verify': ['public'],
  'POST /auth/fingerprint': ['public'],
  'GET /auth/location-metadata': ['public'],
  'POST /auth/password/validate': ['public'],
  'POST /auth/handoff/exchange': ['public'],
  'GET /auth/sessions': ['user'],
  'POST /auth/logout': ['user'],
  'POST /users/@me/devices': ['user'],
  'GET /users/@me/settings': ['user'],
  'PATCH /users/@me/settings': ['user'],
  'POST /auth/verify/resend': ['user'],
  'POST /auth/handoff': ['user'],
  'POST /auth/forgot': ['public'],
  'POST /auth/reset': ['public'],
  'POST /auth/reset/check': ['public'],
  'POST /auth/revert': ['public'],
  'POST /users/@me/disable': ['user'],
  'POST /users/@me/delete': ['user'],
  'POST /auth/sessions/logout': ['user'],
  'POST /auth/mfa/sms/send': ['public'],
  'POST /auth/mfa/{type}': ['public'],
  'POST /auth/conditional/start': ['public'],
  'POST /auth/conditional/finish': ['public'],
  'POST /mfa/finish': ['user'],
  'POST /users/@me/mfa/totp/enable': ['user'],
  'POST /users/@me/mfa/totp/disable': ['user'],
  'POST /users/@me/mfa/codes-verification': ['user'],
  'POST /users/@me/mfa/sms/enable': ['user'],
  'POST /users/@me/mfa/sms/disable': ['user'],
  'POST /users/@me/phone': ['user'],
  'DELETE /users/@me/phone': ['user'],
  'POST /users/@me/mfa/webauthn/credentials': ['user'],
  'GET /users/@me/mfa/webauthn/credentials': ['user'],
  'PATCH /users/@me/mfa/webauthn/credentials/{id}': ['user', { user: '404', other: '404' }, { name: 'renamed' }],
  'DELETE /users/@me/mfa/webauthn/credentials/{id}': ['user', { user: '404', other: '404' }],
  'GET /unique-username/username-suggestions-unauthed': ['public'],
  'POST /unique-username/username-attempt-unauthed': ['public'],
  'GET /gateway': ['public'],
  'GET /gateway/bot': ['bot', { user: '403/20002', other: '403/20002' }],
  'POST /guilds': ['members', {}, { name: 'a guild' }],
  'GET /guilds/{guildId}': ['members', GUILD],
  'PATCH /guilds/{guildId}': ['members', GUILD, { name: 'renamed' }],
  'DELETE /guilds/{guildId}': ['members', GUILD],
  'GET /users/@me/guilds': ['guilds'],
  'DELETE /users/@me/guilds/{guildId}': ['members', { ...GUILD, user: '400/50055' }],
  'GET /guilds/{guildId}/members': ['members', GUILD],
  'DELETE /guilds/{guildId}/members/{userId}': ['members', GUILD],
  'GET /guilds/{guildId}/members/search': ['members', GUILD, 'query=a'],
  'PATCH /guilds/{guildId}/members/{userId}': ['members', GUILD, { nick: 'renamed' }],
  'PATCH /guilds/{guildId}/members/@me': ['members', GUILD, { nick: 'mine' }],
  'PATCH /guilds/{guildId}/roles': ['members', GUILD, []],
  'GET /guilds/{guildId}/bans': ['members', GUILD],
  'GET /guilds/{guildId}/invites': ['members', GUILD],
  'GET /channels/{channelId}/invites': ['members', CHANNEL],
  'GET /guilds/{guildId}/bans/{userId}': ['members', { ...GUILD, user: '404/10026' }],
  'PUT /guilds/{guildId}/bans/{userId}': ['members', { ...GUILD, user: '403/50013' }],
  'DELETE /guilds/{guildId}/bans/{userId}': ['members', { ...GUILD, user: '404/10026' }],
  'GET /guilds/{guildId}/roles': ['members', GUILD],
  'POST /guilds/{guildId}/roles': ['members', GUILD, { name: 'role' }],
  'PATCH /guilds/{guildId}/roles/{roleId}': ['members', GUILD, { name: 'renamed' }],
  'DELETE /guilds/{guildId}/roles/{roleId}': ['members', GUILD],
  'PUT /guilds/{guildId}/members/{userId}/roles/{roleId}': ['members', GUILD],
  'DELETE /guilds/{guildId}/members/{userId}/roles/{roleId}': ['members', GUILD],
  'GET /guilds/{guildId}/channels': ['members', GUILD],
  'POST /guilds/{guildId}/channels': ['members', GUILD, { name: 'more' }],
  'PATCH /guilds/{guildId}/channels': ['members', GUILD, []],
  'GET /channels/{channelId}': ['members', CHANNEL],
  'PATCH /channels/{channelId}': ['members', CHANNEL, { name: 'renamed' }],
  'DELETE /channels/{channelId}': ['members', CHANNEL],
  'POST /channels/{channelId}/messages': ['members', CHANNEL, { content: 'hello' }],
  'GET /channels/{channelId}/messages': ['members', CHANNEL],
  'POST /channels/{channelId}/invites': ['members', CHANNEL, { max_uses: 1 }],
  'GET /users/{userId}': ['members'],
  'GET /guilds/{guildId}/members/{userId}': ['members', GUILD],
  'GET /channels/{channelId}/messages/{messageId}': ['members', CHANNEL],
  'PATCH /channels/{channelId}/messages/{messageId}': ['members', CHANNEL, { content: 'edited' }],
  'DELETE /channels/{channelId}/messages/{messageId}': ['members', CHANNEL],
  'POST /channels/{channelId}/messages/bulk-delete': ['members', CHANNEL, { messages: ['1', '2'] }],
  'POST /channels/{channelId}/typing': ['members', CHANNEL],
  'GET /channels/{channelId}/pins': ['members', CHANNEL],
  'PUT /channels/{channelId}/pins/{messageId}': ['members', CHANNEL],
  'DELETE /channels/{channelId}/pins/{messageId}': ['members', CHANNEL],
  'GET /channels/{channelId}/messages/pins': ['members', CHANNEL],
  'PUT /channels/{channelId}/messages/pins/{messageId}': ['members', CHANNEL],
  'DELETE /channels/{channelId}/messages/pins/{messageId}': ['members', CHANNEL],
  'PUT /channels/{channelId}/messages/{messageId}/reactions/{emoji}/@me': ['members', CHANNEL],
  'DELETE /channels/{channelId}/messages/{messageId}/reactions/{emoji}/@me': ['members', CHANNEL],
  'DELETE /channels/{channelId}/messages/{messageId}/reactions/{emoji}/{userId}': ['members', CHANNEL],
  'GET /channels/{channelId}/messages/{messageId}/reactions/{emoji}': ['members', CHANNEL],
  'DELETE /channels/{channelId}/messages/{messageId}/reactions/{emoji}': ['members', CHANNEL],
  'DELETE /channels/{channelId}/messages/{messageId}/reactions': ['members', CHANNEL],
  'GET /invites/{code}': ['public'],
  'POST /invites/{code}': ['user'],
  'DELETE /invites/{code}': ['members', { other: '404/10006', bot: '404/10006', otherBot: '404/10006' }],
  'GET /oauth2/authorize': ['user'],
  'POST /oauth2/authorize': ['user', {}, { authorize: false }],
  'POST /oauth2/token': [
    'client',
    {
      none: '400',
      user: '400',
      other: '400',
      bot: '400',
      otherBot: '400',
      bearer: '400',
      narrow: '400',
      revoked: '400',
    },
  ],
  'POST /oauth2/token/revoke': ['client'],
  'GET /oauth2/@me': ['bearer'],
  'GET /oauth2/tokens': ['user'],
  'DELETE /oauth2/tokens/{tokenId}': ['user', { user: '404', other: '404' }],
  'GET /applications/@me': ['bot', { user: '403/20002', other: '403/20002' }],
  'GET /oauth2/applications/@me': ['bot', { user: '403/20002', other: '403/20002' }],
  'POST /lobbies': ['bot', {}, { metadata: { a: 'b' } }],
  'PUT /lobbies': ['oauth', {}, { secret: 'matrix' }],
  // User sessions are refused as on every lobby route (spec §4.1): the web client reads through its first-party token.
  'GET /lobbies/{lobbyId}': ['oauth', LOBBY],
  'PATCH /lobbies/{lobbyId}': ['bot', LOBBY, { metadata: { a: 'c' } }],
  'DELETE /lobbies/{lobbyId}': ['bot', LOBBY],
  // The fixture lobby is made with POST /lobbies: its members cannot leave it themselves (spec §4.1).
  'DELETE /lobbies/{lobbyId}/members/@me': ['oauth', { ...LOBBY, bearer: '403/50001' }],
  'PUT /lobbies/{lobbyId}/members/{userId}': ['bot', LOBBY, {}],
  'DELETE /lobbies/{lobbyId}/members/{userId}': ['bot', LOBBY],
  'POST /lobbies/{lobbyId}/members/bulk': ['bot', LOBBY, 'members'],
  'GET /lobbies/{lobbyId}/messages': ['oauth', LOBBY],
  'POST /lobbies/{lobbyId}/messages': ['oauth', LOBBY, { content: 'hello' }],
  'POST /lobbies/{lobbyId}/members/@me/invites': ['oauth', LOBBY],
  'POST /lobbies/{lobbyId}/members/{userId}/invites': ['oauth', LOBBY],
  'PATCH /lobbies/{lobbyId}/channel-linking': ['oauth', LOBBY, {}],
  'PUT /lobbies/{lobbyId}/messages/{messageId}/moderation-metadata': ['bot', LOBBY, { verdict: 'ok' }],
  // An application's own commands: another application's bot may not touch them, and its bot is not in the guild.
  'GET /applications/{applicationId}/commands': ['bot', APP],
  'POST /applications/{applicationId}/commands': ['bot', APP, { name: 'ping', description: 'pong' }],
  'PUT /applications/{applicationId}/commands': ['bot', APP, []],
  'GET /applications/{applicationId}/commands/{commandId}': ['bot', APP],
  'PATCH /applications/{applicationId}/commands/{commandId}': ['bot', APP, { description: 'd' }],
  'DELETE /applications/{applicationId}/commands/{commandId}': ['bot', APP],
  'GET /applications/{applicationId}/guilds/{guildId}/commands': ['bot', OUTSIDE_GUILD],
  'POST /applications/{applicationId}/guilds/{guildId}/commands': [
    'bot',
    OUTSIDE_GUILD,
    { name: 'p', description: 'd' },
  ],
  'PUT /applications/{applicationId}/guilds/{guildId}/commands': ['bot', OUTSIDE_GUILD, []],
  'GET /applications/{applicationId}/guilds/{guildId}/commands/{commandId}': ['bot', OUTSIDE_GUILD],
  'PATCH /applications/{applicationId}/guilds/{guildId}/commands/{commandId}': ['bot', OUTSIDE_GUILD, { name: 'n' }],
  'DELETE /applications/{applicationId}/guilds/{guildId}/commands/{commandId}': ['bot', OUTSIDE_GUILD],
  'POST /users/@me/remote-auth': ['user'],
  'POST /users/@me/remote-auth/finish': ['user'],
  'POST /users/@me/remote-auth/cancel': ['user'],
  'POST /users/@me/remote-auth/login': ['public'],
  'GET /experiments': ['public', { revoked: '401' }],
  // Relationships: users, and Bearer tokens with relationships.read / relationships.write (sdk.social_layer); bots never.
  'GET /users/@me/relationships': ['user', { bearer: '403/50001', narrow: '403/50001' }],
  'POST /users/@me/relationships': ['user', { bearer: '403/50001', narrow: '403/50001' }, { username: 'nobody-here' }],
  'PUT /users/@me/relationships/{userId}': ['user', { bearer: '403/50001', narrow: '403/50001' }],
  'PATCH /users/@me/relationships/{userId}': ['user', { bearer: '403/50001', narrow: '403/50001' }, { nickname: 'n' }],
  'DELETE /users/@me/relationships/{userId}': ['user', { bearer: '403/50001', narrow: '403/50001' }],
  // DMs: users and bots (the rules decide whom: 403 50007 for a user nobody shares anything with).
  'POST /users/@me/channels': ['members', {}, { recipient_id: '1' }],
  'GET /users/@me/channels': ['members'],
  // Game relationships and invites: the writes name a game, so OAuth2 tokens only (relationships.write); reads as above.
  'GET /users/@me/game-relationships': ['user', { bearer: '403/50001', narrow: '403/50001' }],
  'POST /users/@me/game-relationships': [
    'bearer',
    { bearer: '403/50001', narrow: '403/50001' },
    { username: 'nobody-here' },
  ],
  'PUT /users/@me/game-relationships/{userId}': ['bearer', { bearer: '403/50001', narrow: '403/50001' }],
  'DELETE /users/@me/game-relationships/{userId}': ['bearer', { bearer: '403/50001', narrow: '403/50001' }],
  'GET /game-invite/@me': ['user', { bearer: '403/50001', narrow: '403/50001' }],
  'POST /game-invite/@me': ['bearer', { bearer: '403/50001', narrow: '403/50001' }, { recipient_id: '1' }],
  'DELETE /game-invite/@me/{inviteId}': ['bearer', { bearer: '403/50001', narrow: '403/50001' }],
  // The web client's first-party token is exchanged from a user session only.
  'POST /oauth2/first-party/token': ['user'],
  // A Bearer token that may act in lobbies (lobbies.write, or the web client's first-party token).
  'GET /users/@me/lobbies': ['bearer', { narrow: '403/50001' }],
  // The console's API: operators only (nobody here is one: users get 403 50001; bots, as on every user route, 20001).
  'GET /admin/@me': ['user', ADMIN],
  'GET /admin/users': ['user', ADMIN, 'query=a'],
  'GET /admin/users/{userId}': ['user', ADMIN],
  'POST /admin/users/{userId}/lock': ['user', ADMIN, { reason: 'r' }],
  'POST /admin/users/{userId}/unlock': ['user', ADMIN],
  'POST /admin/users/{userId}/logout': ['user', ADMIN],
  'POST /admin/users/{userId}/mfa/remove': ['user', ADMIN, { reason: 'r' }],
  'POST /admin/users/{userId}/verification/resend': ['user', ADMIN],
  'POST /admin/users/{userId}/delete': ['user', ADMIN, { reason: 'r' }],
  'GET /admin/applications': ['user', ADMIN],
  'POST /admin/applications': ['user', ADMIN, { name: 'n' }],
  'GET /admin/audit-log': ['user', ADMIN],
  'POST /admin/applications/{appId}/bot/reset': ['user', ADMIN, { confirm: 'n' }],
  'POST /admin/applications/{appId}/client-secret/reset': ['user', ADMIN, { confirm: 'n' }],
  'POST /admin/applications/{appId}/event-webhooks': ['user', ADMIN, { url: null }],
  'POST /admin/applications/{appId}/event-webhooks/ping': ['user', ADMIN],
  'GET /admin/applications/{appId}/event-deliveries': ['user', ADMIN],
  'GET /admin/applications/{appId}/lobbies': ['user', ADMIN],
  'GET /admin/lobbies/{lobbyId}': ['user', ADMIN],
  'POST /admin/lobbies/{lobbyId}/close': ['user', ADMIN],
  'POST /admin/lobbies/{lobbyId}/members/{userId}/remove': ['user', ADMIN],
  'GET /admin/experiments': ['user', ADMIN],
  'PUT /admin/experiments': ['user', ADMIN, { definitions: [] }],
  'GET /admin/experiments/{name}/preview': ['user', ADMIN, 'user=1'],
  'GET /admin/experiments/{name}/histogram': ['user', ADMIN],
  'GET /admin/dashboard': ['user', ADMIN],
}

function matches(expect: Expect, status: number, code: unknown): boolean {
  if (expect === 'pass') return status !== 401 && !(status === 403 && [20001, 20002, 50001].includes(code as number))
  const [s, c] = expect.split('/')
  return status === Number(s) && (c === undefined || code === Number(c))
}

test('every route has a row, and every caller kind gets the answer its row says', async () => {
  const doc = (await api('GET', '/api/docs/json')).body as { paths: Record<string, Record<string, unknown>> }
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/^\/api\/v9/, '')}`),
  )
  expect(routes.filter((r) => !(r in ROUTES))).toEqual([])
  expect(Object.keys(ROUTES).filter((r) => !routes.includes(r))).toEqual([])

  const [alice, bob] = [await makeUser(), await makeUser()]
  const [game, other] = [await makeApp(), await makeApp()]
  const bearer = await bearerFor(alice, game)
  const narrow = await bearerFor(alice, game, 'identify')
  const fixtures = async () => {
    const token = (await createSession(alice.id, { platform: 'matrix' })).token
    const guild = (await api('POST', '/guilds', { token, body: { name: 'matrix guild' } })).body
    const channel = (await api('GET', `/guilds/${guild.id}/channels`, { token })).body[0]
    const role = (await api('POST', `/guilds/${guild.id}/roles`, { token, body: { name: 'r' } })).body
    const invite = (await api('POST', `/channels/${channel.id}/invites`, { token, body: { max_uses: 0 } })).body
    const lobby = (
      await api('POST', '/lobbies', { token: `Bot ${game.bot_token}`, body: { members: [{ id: alice.id }] } })
    ).body
    if (!guild.id || !channel?.id || !role.id || !invite.code || !lobby.id)
      throw new Error(`fixtures: ${JSON.stringify({ guild, role, invite, lobby })}`)
    const revoked = (await createSession(alice.id, { platform: 'matrix' })).token
    await api('POST', '/auth/logout', { token: revoked })
    const tokens: Record<Caller, string | undefined> = {
      none: undefined,
      user: token,
      other: (await createSession(bob.id, { platform: 'matrix' })).token,
      bot: `Bot ${game.bot_token}`,
      otherBot: `Bot ${other.bot_token}`,
      bearer,
      narrow,
      revoked,
    }
    return { guild, channel, role, invite, lobby, tokens }
  }
  // Reads share one set of things. A write gets a set that no write has changed: a refused write (any 4xx) changes
  // nothing, so its set serves the next call; one that went through may have deleted things or logged a session out,
  // so the next write gets a fresh set.
  let shared: Awaited<ReturnType<typeof fixtures>> | undefined
  let unchanged: Awaited<ReturnType<typeof fixtures>> | undefined
  const wrong: string[] = []
  for (const route of routes) {
    const [method, path] = route.split(' ')
    const [rule, overrides = {}, body] = ROUTES[route]
    for (const caller of CALLERS) {
      const f = method === 'GET' ? (shared ??= await fixtures()) : (unchanged ??= await fixtures())
      const { guild, channel, role, invite, lobby, tokens } = f
      const filled = path
        .replace('{guildId}', guild.id)
        .replace('{channelId}', channel.id)
        .replace('{roleId}', role.id)
        .replace('{userId}', alice.id)
        .replace('{lobbyId}', lobby.id)
        .replace('{messageId}', '1')
        .replace('{emoji}', encodeURIComponent('👍'))
        .replace('{applicationId}', game.id)
        .replace('{appId}', game.id)
        .replace('{name}', 'x')
        .replace('{commandId}', '1')
        .replace('{code}', invite.code)
        .replace('{type}', 'totp')
        .replace('{id}', 'AAAA')
      const query = method === 'GET' && typeof body === 'string' ? `?${body}` : ''
      const payload =
        body === 'members' ? [{ id: alice.id }] : (body ?? (method === 'GET' || method === 'DELETE' ? undefined : {}))
      const r = await api(method, filled + query, { token: tokens[caller], body: query ? undefined : payload })
      const expected = overrides[caller] ?? BY_RULE[rule][caller]
      if (!matches(expected, r.status, r.body?.code))
        wrong.push(
          `${route} as ${caller}: expected ${expected}, got ${r.status}${r.body?.code !== undefined ? `/${r.body.code}` : ''}`,
        )
      if (method !== 'GET' && r.status < 400) {
        unchanged = undefined
        // Alice stays far from the 100-lobby limit.
        await api('DELETE', `/lobbies/${lobby.id}`, { token: `Bot ${game.bot_token}` })
      }
      // A bearer that lost its grant (e.g. revoked by the token endpoint) would skew later rows.
      expect((await api('GET', '/oauth2/@me', { token: bearer })).status).toBe(200)
    }
  }
  expect(wrong).toEqual([])
}, 120_000)
