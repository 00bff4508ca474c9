// OAuth2's bot scope (Discord's bot authorization): GET /oauth2/authorize offers the guilds where the user may add the
// bot, POST adds it there with a managed role holding the granted permissions; the bot's sockets get GUILD_CREATE,
// the members' GUILD_MEMBER_ADD. With other scopes it is a code grant whose token answer names the guild.
import { afterAll, afterEach, describe, expect, test } from 'bun:test'
import { config } from '../../src/config'
import { Permission } from '../../src/core/discord'
import { tracked } from '../gateway-client'
import { join, makeGuild, type TestUser } from '../guilds/helpers'
import { api, makeApp, makeUser, resetWorld, server } from '../helpers'
import { REDIRECT, tokenRequest } from './helpers'

const sockets = tracked()
afterEach(resetWorld)
afterAll(() => sockets.closeAll())

type App = Awaited<ReturnType<typeof makeApp>>

const ASKED = Permission.SEND_MESSAGES | Permission.MANAGE_MESSAGES | Permission.KICK_MEMBERS

function botQuery(app: App, extra: Record<string, string> = {}) {
  return new URLSearchParams({ client_id: app.id, scope: 'bot', permissions: `${ASKED}`, ...extra }).toString()
}

const consent = (user: TestUser, query: string, body: Record<string, unknown>) =>
  api('POST', `/oauth2/authorize?${query}`, { token: user.token, body })

async function botUser(app: App) {
  return (await api('GET', '/users/@me', { token: `Bot ${app.bot_token}` })).body as { id: string; username: string }
}

/** A member of the guild given a role (made by the owner) with these permissions. */
async function memberWith(owner: TestUser, guildId: string, channelId: string, permissions: bigint) {
  const member = await join(channelId, owner)
  const role = await api('POST', `/guilds/${guildId}/roles`, {
    token: owner.token,
    body: { name: 'managers', permissions: `${permissions}` },
  })
  const given = await api('PUT', `/guilds/${guildId}/members/${member.id}/roles/${role.body.id}`, {
    token: owner.token,
  })
  expect(given.status).toBe(204)
  return member
}

describe('GET /oauth2/authorize with the bot scope', () => {
  test('needs neither response_type nor redirect_uri; names the bot and the guilds where the user may add it', async () => {
    const app = await makeApp([REDIRECT, 'http://localhost/other'])
    const { owner, guild, channelId } = await makeGuild('Mine')
    const other = await makeGuild('Theirs')
    await join(other.channelId, other.owner, owner) // a plain member there: not offered
    const managed = await makeGuild('Managed')
    const manager = await memberWith(managed.owner, managed.guild.id, managed.channelId, Permission.MANAGE_GUILD)
    await join(channelId, owner, manager) // a plain member of "Mine"

    const r = await api('GET', `/oauth2/authorize?${botQuery(app)}`, { token: owner.token })
    expect(r.status).toBe(200)
    expect(r.body.scopes).toEqual(['bot'])
    expect(r.body.redirect_uri).toBeUndefined()
    expect(r.body.bot).toMatchObject({ id: (await botUser(app)).id, bot: true })
    expect(r.body.guilds).toEqual([
      { id: guild.id, name: 'Mine', icon: null, owner: true, permissions: expect.any(String) },
    ])

    const m = await api('GET', `/oauth2/authorize?${botQuery(app)}`, { token: manager.token })
    expect(m.body.guilds.map((g: { id: string }) => g.id)).toEqual([managed.guild.id])
    expect(BigInt(m.body.guilds[0].permissions) & Permission.MANAGE_GUILD).toBe(Permission.MANAGE_GUILD)
    expect(m.body.guilds[0].owner).toBe(false)
  })

  test('a browser opening the API path without a token (an invite link) is sent on to the consent page', async () => {
    const app = await makeApp()
    const { url } = await server()
    const query = botQuery(app, { guild_id: '1234567890123456' })
    const open = (prefix: string, headers: Record<string, string>) =>
      fetch(`${url}${prefix}/oauth2/authorize?${query}`, { headers, redirect: 'manual' })
    for (const prefix of ['/api', '/api/v9', '/api/v10']) {
      const page = await open(prefix, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' })
      expect(page.status).toBe(302)
      expect(page.headers.get('location')).toBe(`${config().webUrl}/oauth2/authorize?${query}`)
    }
    // An API client keeps Discord's answers: no token 401, a wrong one 401, even when it asks for HTML.
    expect((await open('/api/v9', { accept: 'application/json' })).status).toBe(401)
    expect((await open('/api/v9', { accept: 'text/html', authorization: 'nope' })).status).toBe(401)
    const bot = await open('/api/v9', { accept: 'text/html', authorization: `Bot ${app.bot_token}` })
    expect([bot.status, ((await bot.json()) as { code: number }).code]).toEqual([403, 20001])
  })

  test('refuses a permissions value Discord does not know, a guild_id that is no snowflake, applications.commands alone', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const get = (extra: Record<string, string>) =>
      api('GET', `/oauth2/authorize?${botQuery(app, extra)}`, { token: user.token })
    for (const permissions of ['-1', 'x', `${1n << 60n}`]) {
      const r = await get({ permissions })
      expect([r.status, r.body.code]).toEqual([400, 50035])
      expect(r.body.errors.permissions).toBeDefined()
    }
    expect((await get({ guild_id: 'nope' })).body.errors.guild_id).toBeDefined()
    const commands = await get({ scope: 'applications.commands' })
    expect([commands.status, commands.body.error]).toEqual([400, 'invalid_scope'])
    expect((await get({ scope: 'bot applications.commands' })).status).toBe(200)
  })
})

describe('POST /oauth2/authorize with the bot scope', () => {
  test("adds the bot with a managed role: GUILD_CREATE to the bot's socket, GUILD_MEMBER_ADD to the members'", async () => {
    const app = await makeApp()
    const bot = await botUser(app)
    const { owner, guild } = await makeGuild()
    const botSocket = await sockets.identified(`Bot ${app.bot_token}`)
    const ownerSocket = await sockets.identified(owner.token)

    const r = await consent(owner, botQuery(app), { authorize: true, guild_id: guild.id, permissions: `${ASKED}` })
    expect(r.status).toBe(200)
    // No redirect URI named: Discord's own "authorized" page.
    expect(r.body.location).toBe(`${config().webUrl}/oauth2/authorized`)

    const roles = (await api('GET', `/guilds/${guild.id}/roles`, { token: owner.token })).body
    const role = roles.find((x: { managed: boolean }) => x.managed)
    expect(role).toMatchObject({ name: app.name, permissions: `${ASKED}`, tags: { bot_id: bot.id }, position: 1 })
    expect(roles.filter((x: { tags?: unknown }) => x.tags).length).toBe(1)

    const created = (await botSocket.waitFor('GUILD_CREATE')).d
    expect(created.id).toBe(guild.id)
    expect(created.roles.find((x: { id: string }) => x.id === role.id)).toMatchObject({ managed: true })
    expect((await ownerSocket.waitFor('GUILD_ROLE_CREATE')).d.role).toMatchObject({ id: role.id, managed: true })
    const added = (await ownerSocket.waitFor('GUILD_MEMBER_ADD')).d
    expect(added).toMatchObject({ guild_id: guild.id, user: { id: bot.id, bot: true }, roles: [role.id] })

    // The bot acts with what it was granted.
    const member = await api('GET', `/guilds/${guild.id}/members/${bot.id}`, { token: `Bot ${app.bot_token}` })
    expect(member.body.roles).toEqual([role.id])
  })

  test('the person may untick asked permissions, never add one; with none granted the bot has no role', async () => {
    const app = await makeApp()
    const { owner, guild } = await makeGuild()
    const more = await consent(owner, botQuery(app), {
      authorize: true,
      guild_id: guild.id,
      permissions: `${ASKED | Permission.ADMINISTRATOR}`,
    })
    expect([more.status, more.body.code]).toEqual([400, 50035])
    expect(more.body.errors.permissions._errors[0].code).toBe('BASE_TYPE_INVALID')

    const fewer = await consent(owner, botQuery(app), {
      authorize: true,
      guild_id: guild.id,
      permissions: `${Permission.SEND_MESSAGES}`,
    })
    expect(fewer.status).toBe(200)
    const role = (await api('GET', `/guilds/${guild.id}/roles`, { token: owner.token })).body.find(
      (x: { managed: boolean }) => x.managed,
    )
    expect(role.permissions).toBe(`${Permission.SEND_MESSAGES}`)

    const bare = await makeApp()
    const none = await consent(owner, botQuery(bare, { permissions: '0' }), { authorize: true, guild_id: guild.id })
    expect(none.status).toBe(200)
    const bareBot = await botUser(bare)
    const member = await api('GET', `/guilds/${guild.id}/members/${bareBot.id}`, { token: owner.token })
    expect([member.status, member.body.roles]).toEqual([200, []])
    // Authorized again with a permission: the bot, already there, gets its role now.
    const watcher = await sockets.identified(owner.token)
    const granted = await consent(owner, botQuery(bare, { permissions: `${Permission.SEND_MESSAGES}` }), {
      authorize: true,
      guild_id: guild.id,
    })
    expect(granted.status).toBe(200)
    const updated = (await watcher.waitFor('GUILD_MEMBER_UPDATE')).d
    expect([updated.user.id, updated.roles.length]).toEqual([bareBot.id, 1])
    await watcher.expectNo('GUILD_MEMBER_ADD', 100)
  })

  test('permission edges: no MANAGE_GUILD 403 50013, not a member 404 10004, a permission the user lacks 403 50013', async () => {
    const app = await makeApp()
    const bot = await botUser(app)
    const { owner, guild, channelId } = await makeGuild()
    const plain = await join(channelId, owner)
    const stranger = await makeUser()
    // MANAGE_GUILD and SEND_MESSAGES (from @everyone), but not MANAGE_MESSAGES nor KICK_MEMBERS.
    const manager = await memberWith(owner, guild.id, channelId, Permission.MANAGE_GUILD)
    const body = { authorize: true, guild_id: guild.id }

    const noManage = await consent(plain, botQuery(app), body)
    expect([noManage.status, noManage.body.code]).toEqual([403, 50013])
    const notMember = await consent(stranger, botQuery(app), body)
    expect([notMember.status, notMember.body.code]).toEqual([404, 10004])
    const lacking = await consent(manager, botQuery(app), body)
    expect([lacking.status, lacking.body.code]).toEqual([403, 50013])
    expect((await api('GET', `/guilds/${guild.id}/members/${bot.id}`, { token: owner.token })).status).toBe(404)

    // What the manager holds, it may grant.
    const held = await consent(manager, botQuery(app, { permissions: `${Permission.SEND_MESSAGES}` }), body)
    expect(held.status).toBe(200)
    expect((await api('GET', `/guilds/${guild.id}/members/${bot.id}`, { token: owner.token })).status).toBe(200)
  })

  test('guild_id: required, a snowflake, and fixed by disable_guild_select', async () => {
    const app = await makeApp()
    const { owner, guild } = await makeGuild()
    const second = await api('POST', '/guilds', { token: owner.token, body: { name: 'second' } })
    const missing = await consent(owner, botQuery(app), { authorize: true })
    expect(missing.body.errors.guild_id._errors[0].code).toBe('BASE_TYPE_REQUIRED')
    const wrong = await consent(owner, botQuery(app), { authorize: true, guild_id: 'x' })
    expect(wrong.body.errors.guild_id).toBeDefined()
    const unknown = await consent(owner, botQuery(app), { authorize: true, guild_id: '1234567890123456' })
    expect([unknown.status, unknown.body.code]).toEqual([404, 10004])
    const fixed = botQuery(app, { guild_id: guild.id, disable_guild_select: 'true' })
    const other = await consent(owner, fixed, { authorize: true, guild_id: second.body.id })
    expect([other.status, other.body.code]).toEqual([400, 50035])
    expect((await consent(owner, fixed, { authorize: true, guild_id: guild.id })).status).toBe(200)
  })

  test('a bot already there stays and its role takes the permissions granted now; a banned bot is refused', async () => {
    const app = await makeApp()
    const bot = await botUser(app)
    const { owner, guild } = await makeGuild()
    expect((await consent(owner, botQuery(app), { authorize: true, guild_id: guild.id })).status).toBe(200)
    const watcher = await sockets.identified(owner.token)
    const again = await consent(owner, botQuery(app, { permissions: `${Permission.SEND_MESSAGES}` }), {
      authorize: true,
      guild_id: guild.id,
    })
    expect(again.status).toBe(200)
    expect((await watcher.waitFor('GUILD_ROLE_UPDATE')).d.role).toMatchObject({
      permissions: `${Permission.SEND_MESSAGES}`,
      tags: { bot_id: bot.id },
    })
    await watcher.expectNo('GUILD_MEMBER_ADD', 100)

    const ban = await api('PUT', `/guilds/${guild.id}/bans/${bot.id}`, { token: owner.token, body: {} })
    expect(ban.status).toBe(204)
    const banned = await consent(owner, botQuery(app), { authorize: true, guild_id: guild.id })
    expect([banned.status, banned.body.code]).toEqual([403, 40007])
  })

  test("the authorized page: the server's own, with the pages' headers; a cancel says so", async () => {
    const { url } = await server()
    const done = await fetch(`${url}/oauth2/authorized`, { headers: { accept: 'text/html' } })
    expect([done.status, done.headers.get('content-type')]).toEqual([200, 'text/html;charset=utf-8'])
    expect(done.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    expect(await done.text()).toContain('<h1>Authorized</h1>')
    const cancelled = await fetch(`${url}/oauth2/authorized?error=access_denied`)
    expect(await cancelled.text()).toContain('<h1>Cancelled</h1>')
  })

  test('authorize: false without a redirect URI goes to the authorized page with error=access_denied, nothing added', async () => {
    const app = await makeApp()
    const { owner, guild } = await makeGuild()
    const r = await consent(owner, botQuery(app), { authorize: false, guild_id: guild.id })
    expect(r.body.location).toBe(`${config().webUrl}/oauth2/authorized?error=access_denied`)
    const members = await api('GET', `/guilds/${guild.id}/members?limit=10`, { token: owner.token })
    expect(members.body.length).toBe(1)
  })

  test('the bot alone with a registered redirect_uri goes there with guild_id and permissions, and no code', async () => {
    const app = await makeApp()
    const { owner, guild } = await makeGuild()
    const r = await consent(owner, botQuery(app, { redirect_uri: REDIRECT, state: 's1' }), {
      authorize: true,
      guild_id: guild.id,
    })
    const back = new URL(r.body.location)
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT)
    expect(Object.fromEntries(back.searchParams)).toEqual({ guild_id: guild.id, permissions: `${ASKED}`, state: 's1' })
    const unregistered = await consent(owner, botQuery(app, { redirect_uri: 'http://evil.test/' }), {
      authorize: true,
      guild_id: guild.id,
    })
    expect(unregistered.body.errors.redirect_uri).toBeDefined()
  })
})

describe('the bot scope with other scopes (advanced bot authorization)', () => {
  test('a code grant: the redirect names the guild, the token answer carries it', async () => {
    const app = await makeApp()
    const { owner, guild } = await makeGuild('Coded')
    const noType = await consent(owner, botQuery(app, { scope: 'bot identify' }), {
      authorize: true,
      guild_id: guild.id,
    })
    expect(noType.body.errors.response_type).toBeDefined()

    // No redirect_uri: the first registered one, as Discord's.
    const q = botQuery(app, { scope: 'bot identify', response_type: 'code', state: 'st' })
    const info = await api('GET', `/oauth2/authorize?${q}`, { token: owner.token })
    expect([info.body.redirect_uri, info.body.guilds.length]).toEqual([REDIRECT, 1])
    const r = await consent(owner, q, { authorize: true, guild_id: guild.id })
    expect(r.status).toBe(200)
    const back = new URL(r.body.location)
    expect([back.searchParams.get('guild_id'), back.searchParams.get('permissions')]).toEqual([guild.id, `${ASKED}`])
    expect(back.searchParams.get('state')).toBe('st')
    const token = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'authorization_code', code: back.searchParams.get('code')! },
      [app.id, app.client_secret],
    )
    expect(token.status).toBe(200)
    expect(token.body.scope).toBe('bot identify')
    expect(token.body.guild).toMatchObject({ id: guild.id, name: 'Coded', owner_id: owner.id })
    expect(token.body.guild.roles.some((x: { managed: boolean }) => x.managed)).toBe(true)
    // A plain code answers no guild.
    const plain = await consent(owner, botQuery(app, { scope: 'identify', response_type: 'code' }), { authorize: true })
    const plainToken = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'authorization_code', code: new URL(plain.body.location).searchParams.get('code')! },
      [app.id, app.client_secret],
    )
    expect([plainToken.status, plainToken.body.guild]).toEqual([200, undefined])
  })

  test('a bot that could not be added gets no code; client credentials never carry the bot scopes', async () => {
    const app = await makeApp()
    const { owner, guild, channelId } = await makeGuild()
    const plain = await join(channelId, owner)
    const q = botQuery(app, { scope: 'bot identify', response_type: 'code' })
    const refused = await consent(plain, q, { authorize: true, guild_id: guild.id })
    expect([refused.status, refused.body.code, refused.body.location]).toEqual([403, 50013, undefined])
    for (const scope of ['bot', 'identify applications.commands']) {
      const cc = await tokenRequest('/oauth2/token', { grant_type: 'client_credentials', scope }, [
        app.id,
        app.client_secret,
      ])
      expect([cc.status, cc.body.error]).toEqual([400, 'invalid_scope'])
    }
  })
})

describe("the bot's managed role and its leaving", () => {
  test('not deleted, given or taken by hand (400 50028); kicking the bot removes it and its role', async () => {
    const app = await makeApp()
    const bot = await botUser(app)
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    expect((await consent(owner, botQuery(app), { authorize: true, guild_id: guild.id })).status).toBe(200)
    const role = (await api('GET', `/guilds/${guild.id}/roles`, { token: owner.token })).body.find(
      (x: { managed: boolean }) => x.managed,
    )
    for (const [method, path] of [
      ['DELETE', `/guilds/${guild.id}/roles/${role.id}`],
      ['PUT', `/guilds/${guild.id}/members/${member.id}/roles/${role.id}`],
      ['DELETE', `/guilds/${guild.id}/members/${bot.id}/roles/${role.id}`],
    ]) {
      const r = await api(method, path, { token: owner.token })
      expect([method, r.status, r.body.code]).toEqual([method, 400, 50028])
    }
    // Edited like any role.
    const renamed = await api('PATCH', `/guilds/${guild.id}/roles/${role.id}`, {
      token: owner.token,
      body: { color: 5 },
    })
    expect([renamed.status, renamed.body.managed]).toEqual([200, true])

    const botSocket = await sockets.identified(`Bot ${app.bot_token}`)
    const watcher = await sockets.identified(owner.token)
    const kick = await api('DELETE', `/guilds/${guild.id}/members/${bot.id}`, { token: owner.token })
    expect(kick.status).toBe(204)
    expect((await botSocket.waitFor('GUILD_DELETE')).d).toEqual({ id: guild.id })
    expect((await watcher.waitFor('GUILD_ROLE_DELETE')).d).toEqual({ guild_id: guild.id, role_id: role.id })
    expect((await watcher.waitFor('GUILD_MEMBER_REMOVE')).d.user.id).toBe(bot.id)
    const roles = (await api('GET', `/guilds/${guild.id}/roles`, { token: owner.token })).body
    expect(roles.some((x: { id: string }) => x.id === role.id)).toBe(false)

    // Added again: a new managed role.
    expect((await consent(owner, botQuery(app), { authorize: true, guild_id: guild.id })).status).toBe(200)
    const again = (await api('GET', `/guilds/${guild.id}/roles`, { token: owner.token })).body
    expect(again.filter((x: { managed: boolean }) => x.managed).length).toBe(1)
  })
})
