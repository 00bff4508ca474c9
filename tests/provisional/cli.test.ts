// The operators' side of provisional accounts (issue 44, part 5), as child processes on the test server's database:
// `app auth-provider add|list|remove`, `user list --provisional`, `user delete` (its token and socket end), `app delete`
// (everything of the application goes, nothing of another one).
import { afterEach, expect, test } from 'bun:test'
import { and, count, eq, type SQL } from 'drizzle-orm'
import * as accountTables from '../../src/accounts/tables'
import * as commandTables from '../../src/commands/tables'
import { db } from '../../src/db/client'
import { dialectTables } from '../../src/db/dialect-tables'
import * as guildTables from '../../src/guilds/tables'
import * as lobbyTables from '../../src/lobbies/tables'
import * as oauth2Tables from '../../src/oauth2/tables'
import * as provisionalTables from '../../src/provisional/tables'
import * as relationshipTables from '../../src/relationships/tables'
import { addProvider } from '../../src/provisional/providers'
import { GatewayClient } from '../gateway-client'
import { makeGuild } from '../guilds/helpers'
import { api, databaseEnv, makeApp, makeUser, resetWorld } from '../helpers'
import { authorizeCode, bearerFor, REDIRECT, tokenRequest } from '../oauth2/helpers'
import { cli as run } from '../ops/process-helpers'
import { player } from './helpers'

// The tables as the server's stores see them (PostgreSQL's twins on that pass).
const t = dialectTables({
  ...accountTables,
  ...commandTables,
  ...guildTables,
  ...lobbyTables,
  ...oauth2Tables,
  ...provisionalTables,
  ...relationshipTables,
})

afterEach(() => resetWorld())

async function cli(...args: string[]) {
  return await run({ ...process.env, ...databaseEnv(), LOG_LEVEL: 'silent' }, args)
}
const json = (r: { stdout: string }) => JSON.parse(r.stdout)

test('app auth-provider add, list and remove; refusals are one line', async () => {
  const app = await makeApp()
  const added = await cli(
    ...['app', 'auth-provider', 'add', '--id', app.id, '--type', 'oidc'],
    ...['--issuer', 'https://id.example.com/tenant', '--audience', 'game-client'],
  )
  expect(added.code).toBe(0)
  const provider = json(added)
  expect(provider).toEqual({
    id: expect.any(String),
    application_id: app.id,
    type: 'oidc',
    issuer: 'https://id.example.com/tenant',
    audience: 'game-client',
  })
  expect(json(await cli('app', 'auth-provider', 'list', '--id', app.id))).toEqual([provider])
  expect(json(await cli('app', 'auth-provider', 'list')).map((p: { id: string }) => p.id)).toContain(provider.id)

  const again = await cli(
    ...['app', 'auth-provider', 'add', '--id', app.id, '--type', 'oidc'],
    ...['--issuer', 'https://id.example.com/tenant', '--audience', 'other'],
  )
  expect(again.code).toBe(1)
  expect(again.stderr).toContain('already has a provider')
  const steam = await cli(
    ...['app', 'auth-provider', 'add', '--id', app.id, '--type', 'steam'],
    ...['--issuer', 'https://x.example', '--audience', 'a'],
  )
  expect(steam.code).toBe(1)
  expect(steam.stderr).toContain("vendors' services")
  const notUrl = await cli(
    ...['app', 'auth-provider', 'add', '--id', app.id, '--type', 'oidc', '--issuer', 'ftp://x', '--audience', 'a'],
  )
  expect(notUrl.code).toBe(1)
  expect((await cli('app', 'auth-provider', 'add', '--id', app.id, '--type', 'oidc')).code).toBe(2)

  const removed = await cli('app', 'auth-provider', 'remove', '--provider', provider.id)
  expect(json(removed)).toEqual({ id: provider.id, removed: true })
  expect(json(await cli('app', 'auth-provider', 'list', '--id', app.id))).toEqual([])
  expect((await cli('app', 'auth-provider', 'remove', '--provider', provider.id)).code).toBe(1)
}, 30_000)

test('user list --provisional lists only provisional accounts; user delete ends its token and socket', async () => {
  const app = await makeApp()
  const guest = await player(app, 'cli-guest', 'Guest')
  const person = await makeUser()
  const all = json(await cli('user', 'list', '--limit', '100000'))
  expect(all.find((u: { id: string }) => u.id === person.id)).toMatchObject({ provisional: false })
  expect(all.find((u: { id: string }) => u.id === guest.id)).toMatchObject({ provisional: true, email: null })
  const only = json(await cli('user', 'list', '--provisional', '--limit', '100000'))
  expect(only.map((u: { id: string }) => u.id)).toContain(guest.id)
  expect(only.map((u: { id: string }) => u.id)).not.toContain(person.id)
  expect(only.every((u: { provisional: boolean }) => u.provisional)).toBe(true)

  const { client } = await GatewayClient.identified(guest.bearer)
  const deleted = await cli('user', 'delete', '--id', guest.id)
  expect(deleted.code).toBe(0)
  expect(json(deleted)).toMatchObject({ id: guest.id, deleted: true, tokens_ended: 1 })
  // Another process's commit: the server sees it and closes the socket within its credential re-check.
  expect((await client.waitForClose(7000)).code).toBe(4004)
  expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(401)
}, 30_000)

type App = Awaited<ReturnType<typeof makeApp>>

/** What an application owns: a player and a full account chatting in a lobby, a command, a provider, its bot in a guild. */
async function stake(app: App, tag: string) {
  const guest = await player(app, `${tag}-guest`)
  const person = await makeUser()
  const personBearer = await bearerFor(person, app, 'identify lobbies.write gateway.connect')
  const lobby = await api('PUT', '/lobbies', { token: guest.bearer, body: { secret: `${tag}-secret` } })
  await api('PUT', '/lobbies', { token: personBearer, body: { secret: `${tag}-secret` } })
  for (const token of [guest.bearer, personBearer])
    expect((await api('POST', `/lobbies/${lobby.body.id}/messages`, { token, body: { content: tag } })).status).toBe(
      201,
    )
  // The player asks the full account to be its friend in this game (the request's two rows).
  const asked = await api('PUT', `/users/@me/game-relationships/${person.id}`, { token: guest.bearer, body: {} })
  expect(asked.status).toBe(204)
  const bot = `Bot ${app.bot_token}`
  const command = await api('POST', `/applications/${app.id}/commands`, {
    token: bot,
    body: { name: `${tag}-ping`, description: 'ping' },
  })
  expect(command.status).toBe(201)
  await addProvider({ applicationId: app.id, type: 'oidc', issuer: `https://${tag}.example.com`, audience: tag })
  const { owner, guild } = await makeGuild(`${tag} guild`)
  const query = new URLSearchParams({ client_id: app.id, scope: 'bot', permissions: '2048' }).toString()
  const added = await api('POST', `/oauth2/authorize?${query}`, {
    token: owner.token,
    body: { authorize: true, guild_id: guild.id, permissions: '2048' },
  })
  expect(added.status).toBe(200)
  const botUserId = (await api('GET', '/users/@me', { token: bot })).body.id as string
  return { guest, person, personBearer, lobbyId: lobby.body.id as string, bot, botUserId, guildId: guild.id as string }
}

/** How many rows of each kind an application (and its bot) has. */
async function rowsOf(appId: string, botUserId: string) {
  // A table of either dialect (PostgreSQL's twins on that pass).
  const n = async (table: any, where: SQL) => (await db().select({ n: count() }).from(table).where(where).get())?.n ?? 0
  return {
    applications: await n(t.applications, eq(t.applications.id, appId)),
    lobbies: await n(t.lobbies, eq(t.lobbies.applicationId, appId)),
    members: await n(t.lobbyMembers, eq(t.lobbyMembers.applicationId, appId)),
    messages: await n(t.lobbyMessages, eq(t.lobbyMessages.applicationId, appId)),
    tokens: await n(t.oauth2Tokens, eq(t.oauth2Tokens.applicationId, appId)),
    commands: await n(t.commands, eq(t.commands.applicationId, appId)),
    identities: await n(t.externalIdentities, eq(t.externalIdentities.applicationId, appId)),
    providers: await n(t.externalAuthProviders, eq(t.externalAuthProviders.applicationId, appId)),
    gameRelationships: await n(t.gameRelationships, eq(t.gameRelationships.applicationId, appId)),
    guildMembers: await n(t.members, eq(t.members.userId, botUserId)),
    managedRoles: await n(t.roles, eq(t.roles.botId, botUserId)),
    activeBot: await n(t.users, and(eq(t.users.id, botUserId), eq(t.users.state, 'active'))!),
  }
}

test('app delete: everything of the application goes in one step, its sockets close; another application keeps all', async () => {
  const [app, other] = [await makeApp(), await makeApp()]
  const mine = await stake(app, 'doomed')
  const theirs = await stake(other, 'kept')
  const before = await rowsOf(other.id, theirs.botUserId)
  expect(await rowsOf(app.id, mine.botUserId)).toEqual(before)
  expect(before).toEqual({
    ...{ applications: 1, lobbies: 1, members: 2, messages: 2, tokens: 2, commands: 1 },
    ...{ identities: 1, providers: 1, gameRelationships: 2, guildMembers: 1, managedRoles: 1, activeBot: 1 },
  })
  const sockets = await Promise.all(
    [mine.bot, mine.guest.bearer, mine.personBearer, theirs.bot, theirs.guest.bearer, mine.person.token].map(
      async (token) => (await GatewayClient.identified(token.replace(/^Bot /, ''))).client,
    ),
  )

  // A player of it merged into the full account: the identity names a full account, which the deletion must spare.
  const merged = await player(app, 'doomed-merged')
  const code = await authorizeCode(mine.person, app, { scope: 'identify' })
  const merge = await tokenRequest(
    '/oauth2/token',
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
      external_auth_token: merged.token.access_token,
    },
    [app.id, app.client_secret],
  )
  expect(merge.status).toBe(200)

  const deleted = await cli('app', 'delete', '--id', app.id)
  expect(deleted.code).toBe(0)
  expect(json(deleted)).toEqual({ id: app.id, deleted: true, lobbies: 1, provisional_accounts: 1, guilds_left: 1 })
  for (const s of sockets.slice(0, 3)) expect((await s.waitForClose(4000)).code).toBe(4004)
  expect(await rowsOf(app.id, mine.botUserId)).toEqual({
    ...{ applications: 0, lobbies: 0, members: 0, messages: 0, tokens: 0, commands: 0 },
    ...{ identities: 0, providers: 0, gameRelationships: 0, guildMembers: 0, managedRoles: 0, activeBot: 0 },
  })
  const guest = await db().select().from(t.users).where(eq(t.users.id, mine.guest.id)).get()
  expect(guest?.state).toBe('deleted')
  for (const token of [mine.bot, mine.guest.bearer, mine.personBearer])
    expect((await api('GET', '/users/@me', { token })).status).toBe(401)
  // The full account (merged into, too) keeps its own session; the other application all of its rows, tokens and sockets.
  expect((await api('GET', '/users/@me', { token: mine.person.token })).status).toBe(200)
  expect(await rowsOf(other.id, theirs.botUserId)).toEqual(before)
  expect((await api('GET', `/lobbies/${theirs.lobbyId}/messages`, { token: theirs.guest.bearer })).body).toHaveLength(2)
  expect((await api('GET', `/applications/${other.id}/commands`, { token: theirs.bot })).body).toHaveLength(1)
  for (const s of sockets.slice(3)) expect(s.closed).toBeNull()

  const audited = (await cli('audit', 'export', '--action', 'application.delete', '--target', app.id)).stdout
  expect(JSON.parse(audited.trim())).toMatchObject({
    action: 'application.delete',
    target_id: app.id,
    details: { lobbies: 1, provisional_accounts: 1, guilds_left: 1 },
  })
  const again = await cli('app', 'delete', '--id', app.id)
  expect([again.code, again.stderr.trim()]).toEqual([1, `error: no application with id ${app.id}`])
  expect((await cli('app', 'delete')).code).toBe(2)
  for (const s of sockets) s.close()
}, 60_000)
