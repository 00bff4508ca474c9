// The API document against the running server (issue 18, "API docs"): every operation of /api/docs/json is called
// here, each documented request example is sent as it is under each content type the document lists, and every
// answer (success or error) is checked against the schema the document gives for its status, strictly (a field the
// document does not name fails). An example must get its documented success, or the business refusal named below
// (a token only a mail could carry, a code only a phone could read): never a 400 50035 about its shape.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createVerifiedUser } from '../../src/accounts/users'
import { createSession } from '../../src/accounts/sessions'
import { cachedUser, findUserByEmail, insertUser, updateUser } from '../../src/accounts/store'
import { loadDefinitions } from '../../src/experiments/service'
import { addMember } from '../../src/guilds/lifecycle'
import { cachedGuild } from '../../src/guilds/store'
import { EXAMPLE_USER_ID } from '../../src/lobbies/schemas'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld, server, type Reply } from '../helpers'
import { authorizeQuery, bearerFor } from '../oauth2/helpers'
import { mfaTicket, SoftAuthenticator, totpCode, userWithKey, userWithTotp } from '../mfa/helpers'
import { schemaErrors, untypedParts } from './docs-schema-check'
import { CLI } from '../../src/admin/audit'
import { grantOperator } from '../../src/admin/operators'

type Media = { schema?: any; example?: unknown }
type Operation = {
  requestBody?: { required?: boolean; content: Record<string, Media> }
  responses: Record<string, { content?: Record<string, Media> }>
  parameters?: { name: string; in: string }[]
}
let paths: Record<string, Record<string, Operation>>

beforeAll(async () => {
  const { url } = await server()
  paths = ((await (await fetch(`${url}/api/docs/json`)).json()) as { paths: typeof paths }).paths
})
afterEach(resetWorld)
// The experiments case loads definitions; the server is shared with other test files.
afterAll(async () => await loadDefinitions([]))

type User = Awaited<ReturnType<typeof makeUser>>
type App = Awaited<ReturnType<typeof makeApp>>

/** What a case sends besides the documented example: the caller, path parameters, query, headers. */
type Call = {
  token?: string
  params?: Record<string, string>
  query?: string
  headers?: Record<string, string>
  body?: unknown
}
/** The answer expected: a documented 2xx, or a refusal with this status and Discord code (number) or field error code. */
type Outcome = 'ok' | [status: number, code: number | string]
type Case = { what?: string; call: () => Promise<Call>; expect?: Outcome }

const PASSWORD = 'correct horse battery staple'
const bot = (app: App) => `Bot ${app.bot_token}`
const basic = (app: App) => `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`

let readerUser: Promise<User> | undefined
/** A user shared by the cases that leave its account as it is (each case gets a session of its own: session()). */
const reader = () => (readerUser ??= makeUser())
const session = async () => (await createSession((await reader()).id, { platform: 'test' })).token
/** A new user owning a new guild (the bot scope's consent needs a guild the user manages). */
async function guildOwnedByNewUser() {
  const owner = await makeUser()
  const guild = await api('POST', '/guilds', { token: owner.token, body: { name: 'bot scope' } })
  return { owner, guildId: guild.body.id as string }
}
const botScopeQuery = (app: App) =>
  new URLSearchParams({ client_id: app.id, scope: 'bot', permissions: '2048' }).toString()
let readerGuild: ReturnType<typeof guildWorld> | undefined
/** A guild shared by the cases that only read it or add to it. */
const sharedGuild = () => (readerGuild ??= guildWorld())

let sharedKeyUser: ReturnType<typeof userWithKey> | undefined
/** A user with a security key, shared by the cases that read or rename it. */
const keyUser = () => (sharedKeyUser ??= userWithKey())

/** A guild owned by a new user, its text channel, and a second member who joined by invite. */
async function guildWorld() {
  const owner = await makeUser()
  const guild = (await api('POST', '/guilds', { token: owner.token, body: { name: 'Docs guild' } })).body
  const channels = (await api('GET', `/guilds/${guild.id}/channels`, { token: owner.token })).body as {
    id: string
    type: number
  }[]
  const channelId = channels.find((c) => c.type === 0)!.id
  const invite = (await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body: { max_age: 0 } }))
    .body
  const member = await makeUser()
  await api('POST', `/invites/${invite.code}`, { token: member.token })
  return { owner, guild, channelId, member, code: invite.code as string }
}

/** An operator (granted as the CLI grants it) with TOTP, elevated; with `target`, a user to act on. */
async function operatorCall(target = false): Promise<Call> {
  const op = await userWithTotp()
  await grantOperator(CLI, op.id)
  const first = await api('GET', '/admin/audit-log', { token: op.token })
  const finish = await api('POST', '/mfa/finish', {
    token: op.token,
    body: { ticket: first.body.mfa.ticket, mfa_type: 'totp', data: totpCode(op.secret) },
  })
  const headers = { 'x-service-mfa-authorization': finish.body.token as string }
  return { token: op.token, headers, ...(target ? { params: { userId: (await makeUser()).id } } : {}) }
}

/** A message the user sent; its id. */
async function sent(user: User, channelId: string): Promise<string> {
  return (await api('POST', `/channels/${channelId}/messages`, { token: user.token, body: { content: 'm' } })).body.id
}

/** Every field an embed may have, filled. */
const RICH_EMBEDS = [
  {
    title: 'Match found',
    description: 'Two teams of five',
    url: 'https://example.com/match/7',
    timestamp: '2025-01-01T12:00:00+00:00',
    color: 5793266,
    footer: { text: 'Lobby 7', icon_url: 'https://example.com/f.png' },
    image: { url: 'https://example.com/i.png' },
    thumbnail: { url: 'https://example.com/t.png' },
    author: { name: 'Matchmaker', url: 'https://example.com/m', icon_url: 'https://example.com/a.png' },
    fields: [
      { name: 'Map', value: 'Harbour', inline: true },
      { name: 'Mode', value: 'Ranked' },
    ],
  },
]

/** A message with everything a message shows: embeds, an edit, a pin, reactions (the member's 👍 among them). */
async function decoratedMessage(owner: User, member: User, channelId: string): Promise<string> {
  const id = (
    await api('POST', `/channels/${channelId}/messages`, {
      token: member.token,
      body: { content: 'decorated', embeds: RICH_EMBEDS },
    })
  ).body.id
  await api('PATCH', `/channels/${channelId}/messages/${id}`, { token: member.token, body: { content: 'edited' } })
  await api('PUT', `/channels/${channelId}/pins/${id}`, { token: owner.token })
  for (const [user, emoji] of [
    [member, '👍'],
    [owner, '👍'],
    [owner, '🎉'],
  ] as const)
    await api('PUT', `/channels/${channelId}/messages/${id}/reactions/${encodeURIComponent(emoji)}/@me`, {
      token: user.token,
    })
  return id
}

/** An application whose bot is in a guild, with a global command and a guild command of every field filled. */
async function commandsWorld() {
  const app = await makeApp()
  const { guild } = await guildWorld()
  const botId = (await api('GET', '/users/@me', { token: bot(app) })).body.id
  await addMember((await cachedGuild(guild.id))!, botId)
  const command = {
    name: 'queue',
    description: 'Join the queue',
    name_localizations: { fr: 'file' },
    description_localizations: { fr: "Rejoindre la file d'attente" },
    default_member_permissions: '8192',
    nsfw: false,
    options: [
      {
        type: 2,
        name: 'ranked',
        description: 'Ranked play',
        options: [
          {
            type: 1,
            name: 'join',
            description: 'Join',
            options: [
              {
                type: 3,
                name: 'mode',
                description: 'Mode',
                required: true,
                choices: [{ name: 'Solo', value: 'solo' }],
              },
              { type: 4, name: 'size', description: 'Size', min_value: 1, max_value: 5, autocomplete: false },
              { type: 7, name: 'channel', description: 'Where', channel_types: [0] },
              { type: 3, name: 'note', description: 'Note', min_length: 1, max_length: 50 },
            ],
          },
        ],
      },
    ],
  }
  const global = (await api('POST', `/applications/${app.id}/commands`, { token: bot(app), body: command })).body.id
  const local = (
    await api('POST', `/applications/${app.id}/guilds/${guild.id}/commands`, { token: bot(app), body: command })
  ).body.id
  return { app, guildId: guild.id as string, global: global as string, local: local as string }
}

async function role(owner: User, guildId: string): Promise<string> {
  return (await api('POST', `/guilds/${guildId}/roles`, { token: owner.token, body: { name: 'r' } })).body.id
}

/** An application, a user with a lobbies.write bearer token, and a lobby the user joined with PUT /lobbies. */
async function lobbyWorld() {
  const app = await makeApp()
  const user = await reader()
  const bearer = await bearerFor(user, app)
  const lobby = (await api('PUT', '/lobbies', { token: bearer, body: { secret: `s${Date.now()}${Math.random()}` } }))
    .body
  return { app, user, bearer, lobby }
}

/** A lobby member allowed to link (flags 1) who owns a guild, its text channel linked to the lobby. */
async function linkedLobby() {
  const { owner, channelId } = await guildWorld()
  const app = await makeApp()
  const bearer = await bearerFor(owner, app)
  const lobby = (await api('POST', '/lobbies', { token: bot(app), body: { members: [{ id: owner.id, flags: 1 }] } }))
    .body
  const linked = await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
    token: bearer,
    body: { channel_id: channelId },
  })
  if (linked.status !== 200) throw new Error(`link: ${linked.status} ${JSON.stringify(linked.body)}`)
  return { app, owner, bearer, lobby, channelId }
}

/** An elevation token (X-Service-MFA-Authorization) for the session: TOTP, a backup code, or the password without MFA. */
async function elevation(
  user: { token: string; secret?: string; backupCode?: string; password: string },
  method: string,
  path: string,
  body?: unknown,
): Promise<string> {
  const first = await api(method, path, { token: user.token, body })
  if (first.body?.code !== 60003) throw new Error(`no elevation asked: ${first.status} ${JSON.stringify(first.body)}`)
  const proof = user.secret
    ? { mfa_type: 'totp', data: totpCode(user.secret) }
    : user.backupCode
      ? { mfa_type: 'backup', data: user.backupCode }
      : { mfa_type: 'password', data: user.password }
  const finish = await api('POST', '/mfa/finish', {
    token: user.token,
    body: { ticket: first.body.mfa.ticket, ...proof },
  })
  return finish.body.token
}

/** The user the bulk members example names (created once with the example's id). */
async function exampleMember() {
  await server()
  if (!(await cachedUser(EXAMPLE_USER_ID)))
    await insertUser({ id: EXAMPLE_USER_ID, username: 'example_member', createdAt: Date.now() })
}

/** The account the login example names (created once, verified, with the example's password). */
async function exampleAccount(email: string) {
  if (!(await findUserByEmail(email))) await createVerifiedUser({ email, password: PASSWORD })
}

/** Two new users who are friends. */
async function friends() {
  const [a, b] = [await makeUser(), await makeUser()]
  await api('PUT', `/users/@me/relationships/${b.id}`, { token: a.token, body: {} })
  await api('PUT', `/users/@me/relationships/${a.id}`, { token: b.token, body: {} })
  return { a, b }
}

/** Two users of one game, game friends (or not yet: `befriend` false), with that game's OAuth2 tokens. */
async function gameFriends(befriend = true) {
  const app = await makeApp()
  const scope = 'identify relationships.read relationships.write gateway.connect'
  const [ua, ub] = [await makeUser(), await makeUser()]
  const [a, b] = [
    { ...ua, bearer: await bearerFor(ua, app, scope) },
    { ...ub, bearer: await bearerFor(ub, app, scope) },
  ]
  if (befriend) {
    await api('PUT', `/users/@me/game-relationships/${b.id}`, { token: a.bearer, body: {} })
    await api('PUT', `/users/@me/game-relationships/${a.id}`, { token: b.bearer, body: {} })
  }
  return { app, a, b }
}

/** A game invite from A to B (game friends), A's activity joinable. */
async function gameInvite() {
  const { a, b } = await gameFriends()
  const { client: toB } = await GatewayClient.identified(b.bearer)
  const { client } = await GatewayClient.identified(a.bearer)
  const activities = [{ name: 'G', type: 0, party: { id: 'p' }, secrets: { join: 's' } }]
  client.send(3, { status: 'online', since: null, afk: false, activities })
  await toB.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.activities.length === 1)
  const invite = await api('POST', '/game-invite/@me', { token: a.bearer, body: { recipient_id: b.id } })
  for (const c of [client, toB]) c.close()
  return { a, b, inviteId: invite.body.invite_id as string }
}

const CASES: Record<string, Case | Case[]> = {
  'GET /api/v9/gateway': { call: async () => ({}) },
  'GET /api/v9/gateway/bot': { call: async () => ({ token: bot(await makeApp()) }) },

  'GET /api/v9/users/@me': [
    { what: 'user', call: async () => ({ token: await session() }) },
    { what: 'bot', call: async () => ({ token: bot(await makeApp()) }) },
    {
      what: 'bearer without email',
      call: async () => ({ token: await bearerFor(await reader(), await makeApp(), 'identify') }),
    },
    {
      what: 'bearer with email',
      call: async () => ({ token: await bearerFor(await reader(), await makeApp(), 'identify email') }),
    },
  ],
  'GET /api/v9/users/{userId}': [
    { what: 'user', call: async () => ({ token: await session(), params: { userId: (await makeUser()).id } }) },
    {
      what: 'bot',
      call: async () => ({ token: bot(await makeApp()), params: { userId: (await reader()).id } }),
    },
  ],
  'PATCH /api/v9/users/@me': { call: async () => ({ token: await session() }) },
  'GET /api/v9/users/@me/settings': { call: async () => ({ token: await session() }) },
  'PATCH /api/v9/users/@me/settings': { call: async () => ({ token: await session() }) },
  'GET /api/v9/users/@me/relationships': [
    { what: 'user', call: async () => ({ token: (await friends()).a.token }) },
    {
      what: 'bearer',
      call: async () => ({ token: await bearerFor((await friends()).a, await makeApp(), 'relationships.read') }),
    },
  ],
  // The example's username belongs to nobody here: Discord's 80004.
  'POST /api/v9/users/@me/relationships': { call: async () => ({ token: await session() }), expect: [400, 80004] },
  'PUT /api/v9/users/@me/relationships/{userId}': {
    call: async () => ({ token: (await makeUser()).token, params: { userId: (await makeUser()).id } }),
  },
  'PATCH /api/v9/users/@me/relationships/{userId}': {
    call: async () => {
      const { a, b } = await friends()
      return { token: a.token, params: { userId: b.id } }
    },
  },
  'DELETE /api/v9/users/@me/relationships/{userId}': {
    call: async () => {
      const { a, b } = await friends()
      return { token: a.token, params: { userId: b.id } }
    },
  },
  // The example's recipient is nobody here: Discord's 50007 (the same answer as for a user one may not DM).
  'POST /api/v9/users/@me/channels': { call: async () => ({ token: await session() }), expect: [403, 50007] },
  'GET /api/v9/users/@me/channels': [
    { what: 'user', call: async () => ({ token: await session() }) },
    { what: 'bot', call: async () => ({ token: bot(await makeApp()) }) },
  ],
  'GET /api/v9/users/@me/game-relationships': [
    { what: 'user', call: async () => ({ token: (await gameFriends()).a.token }) },
    { what: 'bearer', call: async () => ({ token: (await gameFriends()).a.bearer }) },
  ],
  // The example's username belongs to nobody here: Discord's 80004.
  'POST /api/v9/users/@me/game-relationships': {
    call: async () => ({ token: (await gameFriends()).a.bearer }),
    expect: [400, 80004],
  },
  'PUT /api/v9/users/@me/game-relationships/{userId}': {
    call: async () => {
      const { a, b } = await gameFriends(false)
      return { token: a.bearer, params: { userId: b.id } }
    },
  },
  'DELETE /api/v9/users/@me/game-relationships/{userId}': {
    call: async () => {
      const { a, b } = await gameFriends()
      return { token: a.bearer, params: { userId: b.id } }
    },
  },
  'GET /api/v9/game-invite/@me': { call: async () => ({ token: (await gameInvite()).b.bearer }) },
  // The example's recipient is nobody here: 10013.
  'POST /api/v9/game-invite/@me': {
    call: async () => ({ token: (await gameFriends()).a.bearer }),
    expect: [404, 10013],
  },
  'DELETE /api/v9/game-invite/@me/{inviteId}': {
    call: async () => {
      const { b, inviteId } = await gameInvite()
      return { token: b.bearer, params: { inviteId } }
    },
  },
  'GET /api/v9/unique-username/username-suggestions-unauthed': {
    call: async () => ({ query: 'global_name=Ada%20Lovelace' }),
  },
  'POST /api/v9/unique-username/username-attempt-unauthed': { call: async () => ({}) },

  'GET /api/v9/oauth2/authorize': [
    { call: async () => ({ token: await session(), query: authorizeQuery(await makeApp()) }) },
    {
      what: 'bot scope: the bot and the guilds offered',
      call: async () => {
        const { owner } = await guildOwnedByNewUser()
        return { token: owner.token, query: botScopeQuery(await makeApp()) }
      },
    },
  ],
  'POST /api/v9/oauth2/authorize': [
    { call: async () => ({ token: await session(), query: authorizeQuery(await makeApp()) }) },
    {
      what: 'bot scope: the bot added',
      call: async () => {
        const { owner, guildId } = await guildOwnedByNewUser()
        return {
          token: owner.token,
          query: botScopeQuery(await makeApp()),
          body: { authorize: true, guild_id: guildId },
        }
      },
    },
  ],
  'POST /api/v9/oauth2/token': { call: async () => ({ headers: { authorization: basic(await makeApp()) } }) },
  'POST /api/v9/partner-sdk/token/bot': { call: async () => ({ token: bot(await makeApp()) }) },
  // The web client's first-party token, exchanged from a user session.
  'POST /api/v9/oauth2/first-party/token': { call: async () => ({ token: await session() }) },
  // A game's Bearer token lists the lobbies of its application its user is in (here one, joined by secret).
  'GET /api/v9/users/@me/lobbies': { call: async () => ({ token: (await lobbyWorld()).bearer }) },
  // The example's application does not exist here: Discord's unknown application.
  'POST /api/v9/partner-sdk/token': { call: async () => ({}), expect: [404, 10002] },
  'POST /api/v9/oauth2/token/revoke': { call: async () => ({ headers: { authorization: basic(await makeApp()) } }) },
  'GET /api/v9/oauth2/@me': { call: async () => ({ token: await bearerFor(await reader(), await makeApp()) }) },
  'GET /api/v9/oauth2/tokens': {
    call: async () => {
      const user = await makeUser()
      await bearerFor(user, await makeApp())
      return { token: user.token }
    },
  },
  'DELETE /api/v9/oauth2/tokens/{tokenId}': {
    call: async () => {
      const user = await makeUser()
      await bearerFor(user, await makeApp())
      const listed = await api('GET', '/oauth2/tokens', { token: user.token })
      return { token: user.token, params: { tokenId: listed.body[0].id } }
    },
  },

  'POST /api/v9/guilds': { call: async () => ({ token: await session() }) },
  'GET /api/v9/guilds/{guildId}': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'PATCH /api/v9/guilds/{guildId}': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'DELETE /api/v9/guilds/{guildId}': {
    call: async () => {
      const { owner, guild } = await guildWorld()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'GET /api/v9/users/@me/guilds': [
    { what: 'user', call: async () => ({ token: (await sharedGuild()).member.token }) },
    {
      what: 'bearer',
      call: async () => ({ token: await bearerFor((await sharedGuild()).owner, await makeApp(), 'identify guilds') }),
    },
  ],
  'DELETE /api/v9/users/@me/guilds/{guildId}': {
    call: async () => {
      const { member, guild } = await guildWorld()
      return { token: member.token, params: { guildId: guild.id } }
    },
  },
  'GET /api/v9/guilds/{guildId}/members': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id }, query: 'limit=10' }
    },
  },
  'GET /api/v9/guilds/{guildId}/members/{userId}': {
    call: async () => {
      const { owner, guild, member } = await sharedGuild()
      return { token: member.token, params: { guildId: guild.id, userId: owner.id } }
    },
  },
  'GET /api/v9/guilds/{guildId}/members/search': {
    call: async () => {
      const { guild, member } = await sharedGuild()
      return { token: member.token, params: { guildId: guild.id }, query: 'query=&limit=10' }
    },
  },
  'PATCH /api/v9/guilds/{guildId}/members/@me': {
    call: async () => {
      const { guild, member } = await guildWorld()
      return { token: member.token, params: { guildId: guild.id } }
    },
  },
  'PATCH /api/v9/guilds/{guildId}/members/{userId}': {
    call: async () => {
      const { owner, guild, member } = await guildWorld()
      const body = { nick: 'Captain', roles: [await role(owner, guild.id)] }
      return { token: owner.token, params: { guildId: guild.id, userId: member.id }, body }
    },
  },
  'DELETE /api/v9/guilds/{guildId}/members/{userId}': {
    call: async () => {
      const { owner, guild, member } = await guildWorld()
      return { token: owner.token, params: { guildId: guild.id, userId: member.id } }
    },
  },
  'GET /api/v9/guilds/{guildId}/roles': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'POST /api/v9/guilds/{guildId}/roles': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'GET /api/v9/guilds/{guildId}/invites': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'GET /api/v9/channels/{channelId}/invites': {
    call: async () => {
      const { owner, channelId } = await sharedGuild()
      return { token: owner.token, params: { channelId } }
    },
  },
  'GET /api/v9/guilds/{guildId}/bans': {
    call: async () => {
      const { owner, guild } = await guildWorld()
      await api('PUT', `/guilds/${guild.id}/bans/${(await makeUser()).id}`, { token: owner.token })
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'GET /api/v9/guilds/{guildId}/bans/{userId}': {
    call: async () => {
      const { owner, guild } = await guildWorld()
      const userId = (await makeUser()).id
      await api('PUT', `/guilds/${guild.id}/bans/${userId}`, {
        token: owner.token,
        headers: { 'x-audit-log-reason': 'r' },
      })
      return { token: owner.token, params: { guildId: guild.id, userId } }
    },
  },
  'PUT /api/v9/guilds/{guildId}/bans/{userId}': {
    call: async () => {
      const { owner, guild, member } = await guildWorld()
      return { token: owner.token, params: { guildId: guild.id, userId: member.id } }
    },
  },
  'DELETE /api/v9/guilds/{guildId}/bans/{userId}': {
    call: async () => {
      const { owner, guild } = await guildWorld()
      const userId = (await makeUser()).id
      await api('PUT', `/guilds/${guild.id}/bans/${userId}`, { token: owner.token })
      return { token: owner.token, params: { guildId: guild.id, userId } }
    },
  },
  'PATCH /api/v9/guilds/{guildId}/channels': {
    call: async () => {
      const { owner, guild, channelId } = await guildWorld()
      return { token: owner.token, params: { guildId: guild.id }, body: [{ id: channelId, position: 3 }] }
    },
  },
  'PATCH /api/v9/guilds/{guildId}/roles': {
    call: async () => {
      const { owner, guild } = await guildWorld()
      const [low, high] = [await role(owner, guild.id), await role(owner, guild.id)]
      return { token: owner.token, params: { guildId: guild.id }, body: [{ id: low, position: 2 }, { id: high }] }
    },
  },
  'PATCH /api/v9/guilds/{guildId}/roles/{roleId}': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id, roleId: await role(owner, guild.id) } }
    },
  },
  'DELETE /api/v9/guilds/{guildId}/roles/{roleId}': {
    call: async () => {
      const { owner, guild } = await guildWorld()
      return { token: owner.token, params: { guildId: guild.id, roleId: await role(owner, guild.id) } }
    },
  },
  'PUT /api/v9/guilds/{guildId}/members/{userId}/roles/{roleId}': {
    call: async () => {
      const { owner, guild, member } = await guildWorld()
      return {
        token: owner.token,
        params: { guildId: guild.id, userId: member.id, roleId: await role(owner, guild.id) },
      }
    },
  },
  'DELETE /api/v9/guilds/{guildId}/members/{userId}/roles/{roleId}': {
    call: async () => {
      const { owner, guild, member } = await guildWorld()
      const roleId = await role(owner, guild.id)
      await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${roleId}`, { token: owner.token })
      return { token: owner.token, params: { guildId: guild.id, userId: member.id, roleId } }
    },
  },
  'GET /api/v9/guilds/{guildId}/channels': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'POST /api/v9/guilds/{guildId}/channels': {
    call: async () => {
      const { owner, guild } = await sharedGuild()
      return { token: owner.token, params: { guildId: guild.id } }
    },
  },
  'GET /api/v9/channels/{channelId}': {
    call: async () => {
      const { owner, channelId } = await sharedGuild()
      return { token: owner.token, params: { channelId } }
    },
  },
  'PATCH /api/v9/channels/{channelId}': {
    call: async () => {
      const { owner, channelId } = await sharedGuild()
      return { token: owner.token, params: { channelId } }
    },
  },
  'DELETE /api/v9/channels/{channelId}': {
    call: async () => {
      const { owner, channelId } = await guildWorld()
      return { token: owner.token, params: { channelId } }
    },
  },
  'POST /api/v9/channels/{channelId}/messages': [
    {
      call: async () => {
        const { member, channelId } = await sharedGuild()
        return { token: member.token, params: { channelId } }
      },
    },
    {
      what: 'embeds only',
      call: async () => {
        const { member, channelId } = await sharedGuild()
        return { token: member.token, params: { channelId }, body: { content: null, embeds: RICH_EMBEDS } }
      },
    },
  ],
  'GET /api/v9/channels/{channelId}/messages': {
    call: async () => {
      const { owner, channelId } = await sharedGuild()
      await api('POST', `/channels/${channelId}/messages`, {
        token: owner.token,
        body: { content: 'hello', nonce: 'n1' },
      })
      await decoratedMessage(owner, (await sharedGuild()).member, channelId)
      return { token: owner.token, params: { channelId } }
    },
  },
  'GET /api/v9/channels/{channelId}/messages/{messageId}': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      const messageId = await decoratedMessage(owner, member, channelId)
      return { token: member.token, params: { channelId, messageId } }
    },
  },
  'PATCH /api/v9/channels/{channelId}/messages/{messageId}': {
    call: async () => {
      const { member, channelId } = await sharedGuild()
      return { token: member.token, params: { channelId, messageId: await sent(member, channelId) } }
    },
  },
  'DELETE /api/v9/channels/{channelId}/messages/{messageId}': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      return { token: owner.token, params: { channelId, messageId: await sent(member, channelId) } }
    },
  },
  'POST /api/v9/channels/{channelId}/messages/bulk-delete': {
    call: async () => {
      const { owner, channelId } = await sharedGuild()
      return { token: owner.token, params: { channelId } }
    },
  },
  'POST /api/v9/channels/{channelId}/typing': {
    call: async () => {
      const { member, channelId } = await sharedGuild()
      return { token: member.token, params: { channelId } }
    },
  },
  'GET /api/v9/channels/{channelId}/pins': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      await decoratedMessage(owner, member, channelId)
      return { token: member.token, params: { channelId } }
    },
  },
  'PUT /api/v9/channels/{channelId}/pins/{messageId}': {
    call: async () => {
      const { owner, member, channelId } = await guildWorld()
      return { token: owner.token, params: { channelId, messageId: await sent(member, channelId) } }
    },
  },
  'DELETE /api/v9/channels/{channelId}/pins/{messageId}': {
    call: async () => {
      const { owner, member, channelId } = await guildWorld()
      const messageId = await sent(member, channelId)
      await api('PUT', `/channels/${channelId}/pins/${messageId}`, { token: owner.token })
      return { token: owner.token, params: { channelId, messageId } }
    },
  },
  'GET /api/v9/channels/{channelId}/messages/pins': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      await decoratedMessage(owner, member, channelId)
      return { token: member.token, params: { channelId } }
    },
  },
  'PUT /api/v9/channels/{channelId}/messages/pins/{messageId}': {
    call: async () => {
      const { owner, member, channelId } = await guildWorld()
      return { token: owner.token, params: { channelId, messageId: await sent(member, channelId) } }
    },
  },
  'DELETE /api/v9/channels/{channelId}/messages/pins/{messageId}': {
    call: async () => {
      const { owner, member, channelId } = await guildWorld()
      const messageId = await sent(member, channelId)
      await api('PUT', `/channels/${channelId}/messages/pins/${messageId}`, { token: owner.token })
      return { token: owner.token, params: { channelId, messageId } }
    },
  },
  'PUT /api/v9/channels/{channelId}/messages/{messageId}/reactions/{emoji}/@me': {
    call: async () => {
      const { member, channelId } = await sharedGuild()
      return { token: member.token, params: { channelId, messageId: await sent(member, channelId), emoji: '👍' } }
    },
  },
  'DELETE /api/v9/channels/{channelId}/messages/{messageId}/reactions/{emoji}/@me': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      const messageId = await decoratedMessage(owner, member, channelId)
      return { token: member.token, params: { channelId, messageId, emoji: '👍' } }
    },
  },
  'DELETE /api/v9/channels/{channelId}/messages/{messageId}/reactions/{emoji}/{userId}': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      const messageId = await decoratedMessage(owner, member, channelId)
      return { token: owner.token, params: { channelId, messageId, emoji: '👍', userId: member.id } }
    },
  },
  'GET /api/v9/channels/{channelId}/messages/{messageId}/reactions/{emoji}': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      const messageId = await decoratedMessage(owner, member, channelId)
      return { token: member.token, params: { channelId, messageId, emoji: '👍' }, query: 'limit=10' }
    },
  },
  'DELETE /api/v9/channels/{channelId}/messages/{messageId}/reactions/{emoji}': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      const messageId = await decoratedMessage(owner, member, channelId)
      return { token: owner.token, params: { channelId, messageId, emoji: '👍' } }
    },
  },
  'DELETE /api/v9/channels/{channelId}/messages/{messageId}/reactions': {
    call: async () => {
      const { owner, member, channelId } = await sharedGuild()
      const messageId = await decoratedMessage(owner, member, channelId)
      return { token: owner.token, params: { channelId, messageId } }
    },
  },
  'POST /api/v9/channels/{channelId}/invites': {
    call: async () => {
      const { owner, channelId } = await sharedGuild()
      return { token: owner.token, params: { channelId } }
    },
  },
  'GET /api/v9/invites/{code}': { call: async () => ({ params: { code: (await sharedGuild()).code } }) },
  'POST /api/v9/invites/{code}': {
    call: async () => ({ token: (await makeUser()).token, params: { code: (await guildWorld()).code } }),
  },
  'DELETE /api/v9/invites/{code}': {
    call: async () => {
      const { owner, code } = await guildWorld()
      return { token: owner.token, params: { code } }
    },
  },

  'POST /api/v9/auth/login': [
    {
      what: 'the example account',
      call: async () => {
        await exampleAccount(String((example('POST /api/v9/auth/login') as { login: string }).login))
        return {}
      },
    },
    {
      what: 'an account with TOTP: a ticket',
      call: async () => {
        const user = await userWithTotp()
        return { body: { login: user.email, password: user.password } }
      },
    },
  ],
  'POST /api/v9/auth/register': { call: async () => ({}) },
  'POST /api/v9/auth/verify': { call: async () => ({}), expect: [400, 'TOKEN_INVALID'] },
  'POST /api/v9/auth/authorize-ip': { call: async () => ({}), expect: [400, 'TOKEN_INVALID'] },
  'POST /api/v9/auth/register/phone': { call: async () => ({}) },
  'POST /api/v9/phone-verifications/verify': { call: async () => ({}), expect: [400, 50037] },
  'POST /api/v9/auth/fingerprint': { call: async () => ({}) },
  'GET /api/v9/auth/location-metadata': { call: async () => ({}) },
  'POST /api/v9/auth/password/validate': { call: async () => ({}) },
  'POST /api/v9/auth/handoff/exchange': { call: async () => ({}), expect: [400, 'HANDOFF_TOKEN_INVALID'] },
  'GET /api/v9/auth/sessions': { call: async () => ({ token: await session() }) },
  'POST /api/v9/auth/logout': { call: async () => ({ token: await session() }) },
  'POST /api/v9/users/@me/devices': { call: async () => ({ token: await session() }) },
  'POST /api/v9/auth/verify/resend': { call: async () => ({ token: await session() }) },
  'POST /api/v9/auth/handoff': { call: async () => ({ token: await session() }) },
  'POST /api/v9/auth/forgot': { call: async () => ({}) },
  'POST /api/v9/auth/reset': { call: async () => ({}), expect: [400, 'TOKEN_INVALID'] },
  'POST /api/v9/auth/reset/check': { call: async () => ({}), expect: [400, 'TOKEN_INVALID'] },
  'POST /api/v9/auth/revert': { call: async () => ({}), expect: [400, 'TOKEN_INVALID'] },
  'POST /api/v9/users/@me/disable': { call: async () => ({ token: (await makeUser()).token }) },
  'POST /api/v9/users/@me/delete': { call: async () => ({ token: (await makeUser()).token }) },
  'POST /api/v9/auth/sessions/logout': {
    call: async () => {
      const user = await makeUser()
      const body = example('POST /api/v9/auth/sessions/logout')
      return {
        token: user.token,
        headers: { 'x-service-mfa-authorization': await elevation(user, 'POST', '/auth/sessions/logout', body) },
      }
    },
  },

  'POST /api/v9/auth/mfa/sms/send': { call: async () => ({}), expect: [400, 60006] },
  'POST /api/v9/auth/mfa/{type}': [
    { what: 'the example', call: async () => ({ params: { type: 'totp' } }), expect: [400, 60006] },
    {
      what: 'a real ticket and code',
      call: async () => {
        const user = await userWithTotp()
        const { ticket } = await mfaTicket(user)
        return { params: { type: 'totp' }, body: { ticket, code: totpCode(user.secret) } }
      },
    },
  ],
  'POST /api/v9/auth/conditional/start': { call: async () => ({}) },
  'POST /api/v9/auth/conditional/finish': { call: async () => ({}), expect: [400, 60006] },
  'POST /api/v9/mfa/finish': { call: async () => ({ token: await session() }), expect: [400, 60006] },
  'POST /api/v9/users/@me/mfa/totp/enable': { call: async () => ({ token: await session() }), expect: [400, 60008] },
  'POST /api/v9/users/@me/mfa/totp/disable': {
    call: async () => {
      const user = await userWithTotp()
      return {
        token: user.token,
        headers: { 'x-service-mfa-authorization': await elevation(user, 'POST', '/users/@me/mfa/totp/disable') },
      }
    },
  },
  'POST /api/v9/users/@me/mfa/codes-verification': {
    call: async () => {
      const user = await userWithTotp()
      return {
        token: user.token,
        headers: { 'x-service-mfa-authorization': await elevation(user, 'POST', '/users/@me/mfa/codes-verification') },
      }
    },
  },
  'POST /api/v9/users/@me/mfa/sms/enable': {
    call: async () => {
      const user = await userWithTotp()
      await updateUser(user.id, { phone: `+1555${String(Date.now()).slice(-7)}` })
      return { token: user.token }
    },
  },
  'POST /api/v9/users/@me/mfa/sms/disable': {
    call: async () => {
      const user = await userWithTotp()
      await updateUser(user.id, { phone: `+1555${String(Date.now()).slice(-7)}` })
      await api('POST', '/users/@me/mfa/sms/enable', { token: user.token, body: { password: user.password } })
      const body = example('POST /api/v9/users/@me/mfa/sms/disable')
      return {
        token: user.token,
        headers: { 'x-service-mfa-authorization': await elevation(user, 'POST', '/users/@me/mfa/sms/disable', body) },
      }
    },
  },
  'POST /api/v9/users/@me/phone': { call: async () => ({ token: await session() }) },
  'DELETE /api/v9/users/@me/phone': { call: async () => ({ token: (await makeUser()).token }) },
  'POST /api/v9/users/@me/mfa/webauthn/credentials': [
    { what: 'the example (start)', call: async () => ({ token: await session() }) },
    {
      what: 'a finished registration',
      call: async () => {
        const user = await makeUser()
        const start = await api('POST', '/users/@me/mfa/webauthn/credentials', { token: user.token })
        return {
          token: user.token,
          body: {
            ticket: start.body.ticket,
            name: 'My key',
            credential: new SoftAuthenticator().register(start.body.challenge),
          },
        }
      },
    },
  ],
  'GET /api/v9/users/@me/mfa/webauthn/credentials': { call: async () => ({ token: (await keyUser()).token }) },
  'PATCH /api/v9/users/@me/mfa/webauthn/credentials/{id}': {
    call: async () => {
      const user = await keyUser()
      return { token: user.token, params: { id: user.credential.id } }
    },
  },
  'DELETE /api/v9/users/@me/mfa/webauthn/credentials/{id}': {
    call: async () => {
      const user = await userWithKey()
      const path = `/users/@me/mfa/webauthn/credentials/${user.credential.id}`
      const backupCode = user.credential.backup_codes[0].code
      return {
        token: user.token,
        params: { id: user.credential.id },
        headers: { 'x-service-mfa-authorization': await elevation({ ...user, backupCode }, 'DELETE', path) },
      }
    },
  },

  'GET /api/v9/applications/@me': { call: async () => ({ token: bot(await makeApp()) }) },
  'GET /api/v9/oauth2/applications/@me': { call: async () => ({ token: bot(await makeApp()) }) },
  'POST /api/v9/lobbies': { call: async () => ({ token: bot(await makeApp()) }) },
  'PUT /api/v9/lobbies': [
    { what: 'bearer', call: async () => ({ token: await bearerFor(await reader(), await makeApp()) }) },
    { what: 'bot', call: async () => ({ token: bot(await makeApp()) }) },
  ],
  'GET /api/v9/lobbies/{lobbyId}': [
    {
      what: 'bot',
      call: async () => {
        const { app, lobby } = await lobbyWorld()
        return { token: bot(app), params: { lobbyId: lobby.id } }
      },
    },
    {
      what: 'linked',
      call: async () => {
        const { bearer, lobby } = await linkedLobby()
        return { token: bearer, params: { lobbyId: lobby.id } }
      },
    },
  ],
  'PATCH /api/v9/lobbies/{lobbyId}': {
    call: async () => {
      const { app, lobby } = await lobbyWorld()
      return { token: bot(app), params: { lobbyId: lobby.id } }
    },
  },
  'DELETE /api/v9/lobbies/{lobbyId}': {
    call: async () => {
      const { app, lobby } = await lobbyWorld()
      return { token: bot(app), params: { lobbyId: lobby.id } }
    },
  },
  'DELETE /api/v9/lobbies/{lobbyId}/members/@me': {
    call: async () => {
      const { bearer, lobby } = await lobbyWorld()
      return { token: bearer, params: { lobbyId: lobby.id } }
    },
  },
  'PUT /api/v9/lobbies/{lobbyId}/members/{userId}': {
    call: async () => {
      const { app, lobby } = await lobbyWorld()
      return { token: bot(app), params: { lobbyId: lobby.id, userId: (await makeUser()).id } }
    },
  },
  'DELETE /api/v9/lobbies/{lobbyId}/members/{userId}': {
    call: async () => {
      const { app, lobby, user } = await lobbyWorld()
      return { token: bot(app), params: { lobbyId: lobby.id, userId: user.id } }
    },
  },
  'POST /api/v9/lobbies/{lobbyId}/members/bulk': {
    call: async () => {
      await exampleMember()
      const { app, lobby } = await lobbyWorld()
      return { token: bot(app), params: { lobbyId: lobby.id } }
    },
  },
  'GET /api/v9/lobbies/{lobbyId}/messages': {
    call: async () => {
      const { app, bearer, lobby } = await lobbyWorld()
      const sent = await api('POST', `/lobbies/${lobby.id}/messages`, {
        token: bearer,
        body: { content: 'gg', metadata: { k: 'v' }, nonce: 7 },
      })
      // A moderated one too: moderation_metadata and edited_timestamp are documented.
      await api('POST', `/lobbies/${lobby.id}/messages`, { token: bearer, body: { content: 'plain' } })
      await api('PUT', `/lobbies/${lobby.id}/messages/${sent.body.id}/moderation-metadata`, {
        token: bot(app),
        body: { verdict: 'ok' },
      })
      return { token: bearer, params: { lobbyId: lobby.id } }
    },
  },
  'PUT /api/v9/lobbies/{lobbyId}/messages/{messageId}/moderation-metadata': {
    call: async () => {
      const { app, bearer, lobby } = await lobbyWorld()
      const sent = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bearer, body: { content: 'gg' } })
      return { token: bot(app), params: { lobbyId: lobby.id, messageId: sent.body.id } }
    },
  },
  'POST /api/v9/lobbies/{lobbyId}/messages': [
    {
      what: 'member',
      call: async () => {
        const { bearer, lobby } = await lobbyWorld()
        return { token: bearer, params: { lobbyId: lobby.id } }
      },
    },
    {
      what: 'member of a linked lobby',
      call: async () => {
        const { bearer, lobby } = await linkedLobby()
        return { token: bearer, params: { lobbyId: lobby.id } }
      },
    },
  ],
  'POST /api/v9/lobbies/{lobbyId}/members/@me/invites': {
    call: async () => {
      const { bearer, lobby } = await linkedLobby()
      return { token: bearer, params: { lobbyId: lobby.id } }
    },
  },
  'POST /api/v9/lobbies/{lobbyId}/members/{userId}/invites': {
    call: async () => {
      const { app, owner, lobby } = await linkedLobby()
      return { token: bot(app), params: { lobbyId: lobby.id, userId: owner.id } }
    },
  },
  'PATCH /api/v9/lobbies/{lobbyId}/channel-linking': {
    call: async () => {
      const { bearer, lobby } = await linkedLobby()
      return { token: bearer, params: { lobbyId: lobby.id } }
    },
    expect: [404, 10003],
  },

  'GET /api/v9/applications/{applicationId}/commands': {
    call: async () => {
      const { app } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id } }
    },
  },
  'POST /api/v9/applications/{applicationId}/commands': {
    call: async () => {
      const app = await makeApp()
      return { token: bot(app), params: { applicationId: app.id } }
    },
  },
  'PUT /api/v9/applications/{applicationId}/commands': {
    call: async () => {
      const app = await makeApp()
      return { token: bot(app), params: { applicationId: app.id } }
    },
  },
  'GET /api/v9/applications/{applicationId}/commands/{commandId}': {
    call: async () => {
      const { app, global } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, commandId: global } }
    },
  },
  'PATCH /api/v9/applications/{applicationId}/commands/{commandId}': {
    call: async () => {
      const { app, global } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, commandId: global } }
    },
  },
  'DELETE /api/v9/applications/{applicationId}/commands/{commandId}': {
    call: async () => {
      const { app, global } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, commandId: global } }
    },
  },
  'GET /api/v9/applications/{applicationId}/guilds/{guildId}/commands': {
    call: async () => {
      const { app, guildId } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, guildId } }
    },
  },
  'POST /api/v9/applications/{applicationId}/guilds/{guildId}/commands': {
    call: async () => {
      const { app, guildId } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, guildId } }
    },
  },
  'PUT /api/v9/applications/{applicationId}/guilds/{guildId}/commands': {
    call: async () => {
      const { app, guildId } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, guildId } }
    },
  },
  'GET /api/v9/applications/{applicationId}/guilds/{guildId}/commands/{commandId}': {
    call: async () => {
      const { app, guildId, local } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, guildId, commandId: local } }
    },
  },
  'PATCH /api/v9/applications/{applicationId}/guilds/{guildId}/commands/{commandId}': {
    call: async () => {
      const { app, guildId, local } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, guildId, commandId: local } }
    },
  },
  'DELETE /api/v9/applications/{applicationId}/guilds/{guildId}/commands/{commandId}': {
    call: async () => {
      const { app, guildId, local } = await commandsWorld()
      return { token: bot(app), params: { applicationId: app.id, guildId, commandId: local } }
    },
  },

  'GET /api/v9/experiments': [
    { what: 'anonymous', call: async () => ({ query: 'with_guild_experiments=true' }) },
    {
      what: "user, the README's example definitions loaded",
      call: async () => {
        await server()
        await loadDefinitions(await Bun.file(join(import.meta.dir, '../../docs/experiments.example.json')).json())
        return { token: (await makeUser()).token, query: 'with_guild_experiments=true' }
      },
    },
  ],

  'GET /api/v9/admin/@me': [
    { call: async () => await operatorCall() },
    { what: 'not an operator', call: async () => ({ token: await session() }), expect: [403, 50001] },
  ],
  'GET /api/v9/admin/users': { call: async () => ({ ...(await operatorCall()), query: 'query=u&limit=5' }) },
  'GET /api/v9/admin/users/{userId}': { call: async () => await operatorCall(true) },
  'POST /api/v9/admin/users/{userId}/lock': { call: async () => await operatorCall(true) },
  'POST /api/v9/admin/users/{userId}/unlock': { call: async () => await operatorCall(true) },
  'POST /api/v9/admin/users/{userId}/logout': { call: async () => await operatorCall(true) },
  'POST /api/v9/admin/users/{userId}/mfa/remove': { call: async () => await operatorCall(true) },
  'POST /api/v9/admin/users/{userId}/verification/resend': { call: async () => await operatorCall(true) },
  'POST /api/v9/admin/users/{userId}/delete': { call: async () => await operatorCall(true) },
  'GET /api/v9/admin/applications': {
    call: async () => {
      await makeApp()
      return await operatorCall()
    },
  },
  'POST /api/v9/admin/applications': { call: async () => await operatorCall() },
  'GET /api/v9/admin/audit-log': {
    call: async () => {
      const call = await operatorCall(true)
      // A row to show: a lock with its reason and details.
      await api('POST', `/admin/users/${call.params!.userId}/lock`, { ...call, body: { reason: 'docs' } })
      return { ...call, params: undefined, query: 'limit=10' }
    },
  },

  'POST /api/v9/admin/applications/{appId}/bot/reset': {
    call: async () => {
      const app = await makeApp()
      return { ...(await operatorCall()), params: { appId: app.id }, body: { confirm: app.name, reason: 'leaked' } }
    },
  },
  'POST /api/v9/admin/applications/{appId}/client-secret/reset': [
    {
      call: async () => {
        const app = await makeApp()
        return { ...(await operatorCall()), params: { appId: app.id }, body: { confirm: app.name } }
      },
    },
    {
      what: 'the name mistyped',
      call: async () => ({
        ...(await operatorCall()),
        params: { appId: (await makeApp()).id },
        body: { confirm: 'x' },
      }),
      expect: [400, 'ADMIN_NOT_CONFIRMED'],
    },
  ],
  'POST /api/v9/admin/applications/{appId}/event-webhooks': [
    {
      what: 'turned off',
      call: async () => ({ ...(await operatorCall()), params: { appId: (await makeApp()).id }, body: { url: null } }),
    },
    {
      what: 'a URL that does not answer the PING',
      call: async () => ({
        ...(await operatorCall()),
        params: { appId: (await makeApp()).id },
        body: { url: 'http://127.0.0.1:9/none' },
      }),
      expect: [400, 'BASE_TYPE_INVALID'],
    },
  ],
  'POST /api/v9/admin/applications/{appId}/event-webhooks/ping': {
    what: 'no URL set',
    call: async () => ({ ...(await operatorCall()), params: { appId: (await makeApp()).id } }),
  },
  'GET /api/v9/admin/applications/{appId}/event-deliveries': {
    call: async () => ({ ...(await operatorCall()), params: { appId: (await makeApp()).id } }),
  },
  'GET /api/v9/admin/applications/{appId}/lobbies': {
    call: async () => {
      const app = await makeApp()
      await api('POST', '/lobbies', { token: bot(app), body: { members: [{ id: (await reader()).id }] } })
      return { ...(await operatorCall()), params: { appId: app.id }, query: 'limit=10' }
    },
  },
  'GET /api/v9/admin/lobbies/{lobbyId}': {
    call: async () => {
      const app = await makeApp()
      const lobby = await api('POST', '/lobbies', {
        token: bot(app),
        body: { metadata: { a: 'b' }, members: [{ id: (await reader()).id, metadata: { team: 'red' } }] },
      })
      await api('POST', `/lobbies/${lobby.body.id}/messages`, { token: bot(app), body: { content: 'm' } })
      return { ...(await operatorCall()), params: { lobbyId: lobby.body.id } }
    },
  },
  'POST /api/v9/admin/lobbies/{lobbyId}/close': {
    call: async () => {
      const lobby = await api('POST', '/lobbies', { token: bot(await makeApp()), body: {} })
      return { ...(await operatorCall()), params: { lobbyId: lobby.body.id } }
    },
  },
  'POST /api/v9/admin/lobbies/{lobbyId}/members/{userId}/remove': {
    call: async () => {
      const member = await makeUser()
      const lobby = await api('POST', '/lobbies', {
        token: bot(await makeApp()),
        body: { members: [{ id: member.id }] },
      })
      return { ...(await operatorCall()), params: { lobbyId: lobby.body.id, userId: member.id } }
    },
  },
  'GET /api/v9/admin/experiments': {
    call: async () => {
      await server()
      await loadDefinitions(await Bun.file(join(import.meta.dir, '../../docs/experiments.example.json')).json())
      return await operatorCall()
    },
  },
  'PUT /api/v9/admin/experiments': [
    {
      what: "the README's example definitions",
      call: async () => ({
        ...(await operatorCall()),
        body: { definitions: await Bun.file(join(import.meta.dir, '../../docs/experiments.example.json')).json() },
      }),
    },
    {
      what: 'a bad file',
      call: async () => ({ ...(await operatorCall()), body: { definitions: [{ name: 'x' }] } }),
      expect: [400, 'EXPERIMENTS_INVALID'],
    },
  ],
  'GET /api/v9/admin/experiments/{name}/preview': {
    call: async () => {
      await server()
      await loadDefinitions(await Bun.file(join(import.meta.dir, '../../docs/experiments.example.json')).json())
      return {
        ...(await operatorCall()),
        params: { name: '2025-03_new_settings_page' },
        query: 'user=1084179945133187083',
      }
    },
  },
  'GET /api/v9/admin/experiments/{name}/histogram': {
    call: async () => {
      await server()
      await loadDefinitions(await Bun.file(join(import.meta.dir, '../../docs/experiments.example.json')).json())
      return { ...(await operatorCall()), params: { name: '2025-01_global_holdout' }, query: 'sample=100' }
    },
  },
  'GET /api/v9/admin/dashboard': { call: async () => await operatorCall() },

  'POST /api/v9/users/@me/remote-auth': {
    call: async () => ({ token: await session() }),
    expect: [400, 'REMOTE_AUTH_INVALID_FINGERPRINT'],
  },
  'POST /api/v9/users/@me/remote-auth/finish': {
    call: async () => ({ token: await session() }),
    expect: [400, 'REMOTE_AUTH_INVALID_HANDSHAKE_TOKEN'],
  },
  'POST /api/v9/users/@me/remote-auth/cancel': {
    call: async () => ({ token: await session() }),
    expect: [400, 'REMOTE_AUTH_INVALID_HANDSHAKE_TOKEN'],
  },
  'POST /api/v9/users/@me/remote-auth/login': { call: async () => ({}), expect: [400, 'REMOTE_AUTH_INVALID_TICKET'] },
}

function operation(key: string): Operation {
  const [method, path] = key.split(' ')
  return paths[path]?.[method.toLowerCase()]
}

/** The JSON example of an operation's body. */
function example(key: string): unknown {
  return operation(key).requestBody?.content['application/json']?.example
}

/** The request a case makes under one content type: the documented example, or the case's own body. */
function send(key: string, call: Call, type: string | undefined): Promise<Reply> {
  const [method, template] = key.split(' ')
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = call.params?.[name]
    if (value === undefined) throw new Error(`${key}: no value for {${name}}`)
    return encodeURIComponent(value)
  })
  const headers: Record<string, string> = { ...call.headers }
  let raw: string | undefined
  if (call.body !== undefined) {
    raw = JSON.stringify(call.body)
    headers['content-type'] = 'application/json'
  } else if (type) {
    const value = operation(key).requestBody!.content[type].example
    if (type === 'application/json') raw = JSON.stringify(value)
    else if (type === 'application/x-www-form-urlencoded')
      raw = new URLSearchParams(value as Record<string, string>).toString()
    else {
      const boundary = 'docs-example-boundary'
      raw = Object.entries(value as Record<string, string>)
        .map(([name, field]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${field}\r\n`)
        .join('')
        .concat(`--${boundary}--\r\n`)
      headers['content-type'] = `multipart/form-data; boundary=${boundary}`
    }
    headers['content-type'] ??= type
  }
  return api(method, `${path}${call.query ? `?${call.query}` : ''}`, { token: call.token, raw, headers })
}

/** Every field error code anywhere in a Discord error tree. */
function fieldCodes(tree: unknown): string[] {
  if (!tree || typeof tree !== 'object') return []
  return Object.entries(tree).flatMap(([key, value]) =>
    key === '_errors' && Array.isArray(value) ? value.map((e: { code: string }) => e.code) : fieldCodes(value),
  )
}

/** Problems with one answer: its status is not documented, or its body does not match the documented schema. */
function answerProblems(op: Operation, reply: Reply): string[] {
  // Issue 28: Discord's exact content type on a JSON answer (discord.py compares it with `==`), and a Via header.
  const type = reply.headers.get('content-type')
  const wire = reply.headers.get('via') ? [] : ['no Via header']
  if (reply.body !== null && typeof reply.body === 'object' && type !== 'application/json')
    wire.push(`JSON answered as ${type}`)
  if (wire.length) return wire
  const status = String(reply.status)
  const documented =
    op.responses[status] ?? (reply.status >= 400 && reply.status < 500 ? op.responses['4XX'] : undefined)
  if (!documented)
    return [
      `status ${status} is not documented (${Object.keys(op.responses).join(', ')}): ${JSON.stringify(reply.body)}`,
    ]
  const schema = documented.content?.['application/json']?.schema
  if (!schema)
    return reply.body === null || reply.body === ''
      ? []
      : [`status ${status} is documented without a body but answered ${JSON.stringify(reply.body)}`]
  return schemaErrors(schema, reply.body)
}

describe('every operation of /api/docs/json against the server', () => {
  test('each operation has a case here, and each case an operation', () => {
    const documented = Object.entries(paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    )
    expect(documented.length).toBeGreaterThan(80)
    expect(documented.filter((key) => !(key in CASES))).toEqual([])
    expect(Object.keys(CASES).filter((key) => !documented.includes(key))).toEqual([])
  })

  test('each request body has an example under each content type; each success answer that has a body a typed schema', () => {
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
          expect(media.example, `${method} ${path} ${type}`).toBeDefined()
          // The example is what the schema allows (the server's answer to it is checked below).
          expect(schemaErrors(media.schema, media.example), `${method} ${path} ${type}`).toEqual([])
        }
        for (const [status, answer] of Object.entries(op.responses)) {
          if (!status.startsWith('2') || !answer.content) continue
          expect(untypedParts(answer.content['application/json'].schema), `${method} ${path} ${status}`).toEqual([])
        }
      }
    }
  })

  for (const [key, cases] of Object.entries(CASES)) {
    for (const c of [cases].flat()) {
      test(`${key}${c.what ? ` (${c.what})` : ''}`, async () => {
        const op = operation(key)
        expect(op, key).toBeDefined()
        // Each content type the document lists gets its own example, in a world of its own.
        const types = op.requestBody ? Object.keys(op.requestBody.content) : [undefined]
        for (const type of types) {
          const call = await c.call()
          const reply = await send(key, call, call.body === undefined ? type : undefined)
          const label = `${key} ${type ?? ''}: ${reply.status} ${JSON.stringify(reply.body)?.slice(0, 400)}`
          const outcome = c.expect ?? 'ok'
          if (outcome === 'ok') expect(reply.status, label).toBeLessThan(300)
          else {
            expect(reply.status, label).toBe(outcome[0])
            const codes = typeof outcome[1] === 'number' ? [reply.body?.code] : fieldCodes(reply.body?.errors)
            expect(codes, label).toContain(outcome[1])
          }
          expect(answerProblems(op, reply), label).toEqual([])
          if (call.body !== undefined) break
        }
      })
    }
  }
})

describe('security: the credentials each operation lists are the ones the server takes', () => {
  // A refusal of the credential itself (not of what it asks): no or wrong kind of token, bots only / no bots, or an
  // OAuth2 token without the route's scope (403 50001 on a route that lists that scope).
  const refusedCaller = (r: Reply) =>
    (r.status === 401 && [0, 50014].includes(r.body?.code)) ||
    (r.status === 403 && [20001, 20002].includes(r.body?.code))

  test('each operation, called with no token, a user token, a bot token and an OAuth2 token', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const bearers = new Map<string, string>()
    const bearerWith = async (scope: string) => {
      if (!bearers.has(scope)) bearers.set(scope, await bearerFor(user, app, scope))
      return bearers.get(scope)!
    }
    const problems: string[] = []
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops) as [
        string,
        Operation & { security?: Record<string, string[]>[] },
      ][]) {
        // Ids that exist nowhere: the answer is about the credential, or a 404 after it was taken.
        const url = path.replace(/\{type\}/, 'totp').replace(/\{(\w+)\}/g, '1')
        const listed = new Map((op.security ?? []).flatMap((s) => Object.entries(s)))
        const open = !op.security || op.security.some((s) => Object.keys(s).length === 0)
        const call = async (token?: string) => api(method.toUpperCase(), url, { token, rateLimited: 'wait' })
        const anonymous = await call()
        if (open === refusedCaller(anonymous))
          problems.push(`${method} ${path} without a token: ${anonymous.status} ${JSON.stringify(anonymous.body)}`)
        if (open) continue
        // A fresh session for each call: some routes end the session that calls them (logout).
        const kinds: [scheme: string, token: () => Promise<string>][] = [
          ['UserToken', async () => (await createSession(user.id, { platform: 'test' })).token],
          ['BotToken', async () => `Bot ${app.bot_token}`],
          ['OAuth2Bearer', () => bearerWith(listed.get('OAuth2Bearer')?.join(' ') || 'identify')],
        ]
        for (const [scheme, token] of kinds) {
          const reply = await call(await token())
          if (listed.has(scheme) === refusedCaller(reply))
            problems.push(`${method} ${path} with ${scheme}: ${reply.status} ${JSON.stringify(reply.body)}`)
        }
        const scope = listed.get('OAuth2Bearer')?.[0]
        if (scope && scope !== 'identify') {
          const reply = await call(await bearerWith('identify'))
          if (reply.status !== 403)
            problems.push(
              `${method} ${path} with a bearer token without ${scope}: ${reply.status} ${JSON.stringify(reply.body)}`,
            )
        }
      }
    }
    expect(problems).toEqual([])
  }, 60_000)
})
