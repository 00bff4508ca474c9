import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { setGuildAttributes } from '../../src/guilds/public'
import { tracked } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { join, makeGuild } from './helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

describe('guilds', () => {
  test('create: the caller owns it, with @everyone and default channels', async () => {
    const { owner, guild } = await makeGuild('My Server')
    expect(guild).toMatchObject({
      name: 'My Server',
      owner_id: owner.id,
      features: [],
      vanity_url_code: null,
      member_count: 1,
      hub_type: null,
    })
    expect(guild.roles.find((r: { id: string }) => r.id === guild.id)).toMatchObject({ name: '@everyone', position: 0 })
    const mine = await api('GET', '/users/@me/guilds', { token: owner.token })
    expect(mine.body).toContainEqual(expect.objectContaining({ id: guild.id, owner: true }))
  })

  test('name length 2-100', async () => {
    const user = await makeUser()
    expect((await api('POST', '/guilds', { token: user.token, body: { name: 'x' } })).status).toBe(400)
    expect((await api('POST', '/guilds', { token: user.token, body: { name: 'xx' } })).status).toBe(201)
    expect((await api('POST', '/guilds', { token: user.token, body: { name: 'x'.repeat(100) } })).status).toBe(201)
    const r = await api('POST', '/guilds', { token: user.token, body: { name: 'x'.repeat(101) } })
    expect(r.status).toBe(400)
    expect(r.body.errors.name._errors[0].code).toBe('BASE_TYPE_BAD_LENGTH')
  })

  test('non-members get 404 10004; members see it; MANAGE_GUILD renames, only the owner deletes', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const outsider = await makeUser()
    const r = await api('GET', `/guilds/${guild.id}`, { token: outsider.token })
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ message: 'Unknown Guild', code: 10004 })
    expect((await api('GET', `/guilds/999999999999999999`, { token: owner.token })).body.code).toBe(10004)
    const member = await join(channelId, owner)
    expect((await api('GET', `/guilds/${guild.id}`, { token: member.token })).body.member_count).toBe(2)
    const denied = await api('PATCH', `/guilds/${guild.id}`, { token: member.token, body: { name: 'Hijacked' } })
    expect(denied.status).toBe(403)
    expect(denied.body.code).toBe(50013)
    expect((await api('DELETE', `/guilds/${guild.id}`, { token: member.token })).status).toBe(403)
    expect(
      (await api('PATCH', `/guilds/${guild.id}`, { token: owner.token, body: { name: 'Renamed' } })).body.name,
    ).toBe('Renamed')
    // MANAGE_GUILD through a role: renames (GUILD_UPDATE to the members), does not delete.
    const managers = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'managers', permissions: String(1 << 5) },
    })
    await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${managers.body.id}`, { token: owner.token })
    const watcher = await sockets.identified(owner.token)
    const renamed = await api('PATCH', `/guilds/${guild.id}`, { token: member.token, body: { name: 'By a manager' } })
    expect([renamed.status, renamed.body.name]).toEqual([200, 'By a manager'])
    expect((await watcher.waitFor('GUILD_UPDATE')).d).toMatchObject({ id: guild.id, name: 'By a manager' })
    expect((await api('DELETE', `/guilds/${guild.id}`, { token: member.token })).status).toBe(403)
    const del = await api('DELETE', `/guilds/${guild.id}`, { token: owner.token })
    expect(del.status).toBe(204)
    expect((await api('GET', `/guilds/${guild.id}`, { token: owner.token })).status).toBe(404)
  })

  test('leave: members can, the owner cannot; kick needs KICK_MEMBERS', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const a = await join(channelId, owner)
    const b = await join(channelId, owner)
    expect((await api('DELETE', `/users/@me/guilds/${guild.id}`, { token: owner.token })).status).toBe(400)
    expect((await api('DELETE', `/guilds/${guild.id}/members/${b.id}`, { token: a.token })).body.code).toBe(50013)
    expect((await api('DELETE', `/guilds/${guild.id}/members/${b.id}`, { token: owner.token })).status).toBe(204)
    expect((await api('GET', `/guilds/${guild.id}`, { token: b.token })).status).toBe(404)
    expect((await api('DELETE', `/users/@me/guilds/${guild.id}`, { token: a.token })).status).toBe(204)
    expect((await api('GET', `/guilds/${guild.id}`, { token: owner.token })).body.member_count).toBe(1)
  })

  test('members list', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const m = await join(channelId, owner)
    const r = await api('GET', `/guilds/${guild.id}/members?limit=10`, { token: m.token })
    expect(r.body.map((x: { user: { id: string } }) => x.user.id).sort()).toEqual([owner.id, m.id].sort())
    expect((await api('GET', `/guilds/${guild.id}/members?limit=1001`, { token: m.token })).status).toBe(400)
  })

  test('operator-set features, hub type and vanity show on the guild', async () => {
    const { owner, guild } = await makeGuild()
    await setGuildAttributes(guild.id, { features: ['COMMUNITY', 'DISCOVERABLE'], hubType: 1, vanity: `v${guild.id}` })
    const r = await api('GET', `/guilds/${guild.id}`, { token: owner.token })
    expect(r.body).toMatchObject({
      features: ['COMMUNITY', 'DISCOVERABLE'],
      hub_type: 1,
      vanity_url_code: `v${guild.id}`,
    })
  })
})

describe('roles', () => {
  test('a role grants its permissions; taking it back removes them', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const body = { name: 'Mods', permissions: String(1 << 4) } // MANAGE_CHANNELS
    expect((await api('POST', `/guilds/${guild.id}/roles`, { token: member.token, body })).body.code).toBe(50013)
    const role = await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body })
    expect(role.body).toMatchObject({ name: 'Mods', permissions: '16' })
    expect(
      (await api('POST', `/guilds/${guild.id}/channels`, { token: member.token, body: { name: 'new' } })).status,
    ).toBe(403)
    expect(
      (await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${role.body.id}`, { token: owner.token }))
        .status,
    ).toBe(204)
    expect(
      (await api('POST', `/guilds/${guild.id}/channels`, { token: member.token, body: { name: 'new' } })).status,
    ).toBe(201)
    expect(
      (await api('DELETE', `/guilds/${guild.id}/members/${member.id}/roles/${role.body.id}`, { token: owner.token }))
        .status,
    ).toBe(204)
    expect(
      (await api('POST', `/guilds/${guild.id}/channels`, { token: member.token, body: { name: 'again' } })).status,
    ).toBe(403)
  })

  test('a manager cannot grant permissions it lacks or touch roles above it', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const manager = await join(channelId, owner)
    // Each new role goes to the bottom: `high` ends above `managers`.
    const high = await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body: { name: 'high' } })
    const managers = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'managers', permissions: String(1 << 28) },
    })
    await api('PUT', `/guilds/${guild.id}/members/${manager.id}/roles/${managers.body.id}`, { token: owner.token })
    const escalate = await api('POST', `/guilds/${guild.id}/roles`, {
      token: manager.token,
      body: { name: 'admin', permissions: '8' },
    })
    expect(escalate.status).toBe(403)
    expect(
      (
        await api('PATCH', `/guilds/${guild.id}/roles/${high.body.id}`, {
          token: manager.token,
          body: { name: 'mine' },
        })
      ).status,
    ).toBe(403)
    expect(
      (await api('PUT', `/guilds/${guild.id}/members/${manager.id}/roles/${high.body.id}`, { token: manager.token }))
        .status,
    ).toBe(403)
    expect((await api('DELETE', `/guilds/${guild.id}/roles/${guild.id}`, { token: owner.token })).status).toBe(400)
    expect((await api('PATCH', `/guilds/${guild.id}/roles/1`, { token: owner.token, body: {} })).body.code).toBe(10011)
  })
})

describe('members: PATCH /guilds/{id}/members/{id} and /members/@me', () => {
  const MANAGE_NICKNAMES = 1 << 27
  const MANAGE_ROLES = 1 << 28
  const CHANGE_NICKNAME = 1 << 26
  const patch = (token: string, guildId: string, who: string, body: unknown) =>
    api('PATCH', `/guilds/${guildId}/members/${who}`, { token, body })
  const role = async (token: string, guildId: string, name: string, permissions = 0) =>
    (await api('POST', `/guilds/${guildId}/roles`, { token, body: { name, permissions: String(permissions) } })).body

  test('a nickname: up to 32 characters, empty or null removes it; GUILD_MEMBER_UPDATE; the member answered', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const watcher = await sockets.identified(member.token)
    const r = await patch(owner.token, guild.id, member.id, { nick: 'n'.repeat(32) })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ user: { id: member.id }, nick: 'n'.repeat(32), roles: [] })
    const event = (await watcher.waitFor('GUILD_MEMBER_UPDATE')).d
    expect(event).toEqual({ guild_id: guild.id, ...r.body })
    expect((await api('GET', `/guilds/${guild.id}/members/${member.id}`, { token: member.token })).body.nick).toBe(
      'n'.repeat(32),
    )
    const long = await patch(owner.token, guild.id, member.id, { nick: 'n'.repeat(33) })
    expect([long.status, long.body.code, Object.keys(long.body.errors)]).toEqual([400, 50035, ['nick']])
    expect((await patch(owner.token, guild.id, member.id, { nick: '' })).body.nick).toBeNull()
    await watcher.waitFor((f) => f.t === 'GUILD_MEMBER_UPDATE' && f.d.nick === null)
    // Nothing to change: answered, no event.
    const before = watcher.dispatches('GUILD_MEMBER_UPDATE').length
    expect((await patch(owner.token, guild.id, member.id, { nick: null })).status).toBe(200)
    expect((await patch(owner.token, guild.id, member.id, {})).body.nick).toBeNull()
    await watcher.expectNo('GUILD_MEMBER_UPDATE', 50)
    expect(watcher.dispatches('GUILD_MEMBER_UPDATE')).toHaveLength(before)
  })

  test("nicknames: CHANGE_NICKNAME for one's own (@me), MANAGE_NICKNAMES and a higher role for another's", async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const other = await join(channelId, owner)
    // @everyone has CHANGE_NICKNAME by default: one's own nickname, not another's.
    const mine = await api('PATCH', `/guilds/${guild.id}/members/@me`, { token: member.token, body: { nick: 'me' } })
    expect([mine.status, mine.body.nick, mine.body.user.id]).toEqual([200, 'me', member.id])
    expect((await patch(member.token, guild.id, member.id, { nick: 'me too' })).body.nick).toBe('me too')
    // Encoded (discord.js sends `%40me`), the same route: one's own nickname only, the roles passed over.
    const encoded = await patch(member.token, guild.id, '%40me', { nick: 'encoded', roles: [guild.id, '1'] })
    expect([encoded.status, encoded.body.nick, encoded.body.user.id]).toEqual([200, 'encoded', member.id])
    expect((await patch(member.token, guild.id, other.id, { nick: 'you' })).body.code).toBe(50013)
    await api('PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { token: owner.token, body: { permissions: '1024' } })
    const denied = await api('PATCH', `/guilds/${guild.id}/members/@me`, { token: member.token, body: { nick: 'x' } })
    expect([denied.status, denied.body.code]).toEqual([403, 50013])
    // A moderator: the members below it, not the owner, not an equal.
    const mods = await role(owner.token, guild.id, 'mods', MANAGE_NICKNAMES)
    await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${mods.id}`, { token: owner.token })
    expect((await patch(member.token, guild.id, other.id, { nick: 'renamed' })).body.nick).toBe('renamed')
    expect((await patch(member.token, guild.id, owner.id, { nick: 'boss' })).body.code).toBe(50013)
    await api('PUT', `/guilds/${guild.id}/members/${other.id}/roles/${mods.id}`, { token: owner.token })
    expect((await patch(member.token, guild.id, other.id, { nick: 'again' })).body.code).toBe(50013)
    // Unknown member 10007; not in the guild 10004; a body of the wrong type 50035.
    expect((await patch(owner.token, guild.id, (await makeUser()).id, { nick: 'x' })).body.code).toBe(10007)
    expect((await patch((await makeUser()).token, guild.id, member.id, { nick: 'x' })).body.code).toBe(10004)
    expect((await patch(owner.token, guild.id, member.id, { nick: 5 })).body.errors.nick._errors[0].code).toBe(
      'BASE_TYPE_STRING',
    )
  })

  test("the role list: MANAGE_ROLES, roles added or removed below the caller's highest; @everyone passed over", async () => {
    const { owner, guild, channelId } = await makeGuild()
    const manager = await join(channelId, owner)
    const member = await join(channelId, owner)
    // New roles go to the bottom: high, then managers, then low.
    const high = await role(owner.token, guild.id, 'high')
    const managers = await role(owner.token, guild.id, 'managers', MANAGE_ROLES | CHANGE_NICKNAME)
    const low = await role(owner.token, guild.id, 'low')
    expect((await patch(member.token, guild.id, member.id, { roles: [low.id] })).body.code).toBe(50013)
    await api('PUT', `/guilds/${guild.id}/members/${manager.id}/roles/${managers.id}`, { token: owner.token })
    const watcher = await sockets.identified(member.token)
    const r = await patch(manager.token, guild.id, member.id, { roles: [low.id, guild.id, low.id] })
    expect([r.status, r.body.roles]).toEqual([200, [low.id]])
    expect((await watcher.waitFor('GUILD_MEMBER_UPDATE')).d).toMatchObject({ guild_id: guild.id, roles: [low.id] })
    // A role at or above the manager's highest, added or removed: 50013, nothing changed.
    for (const roles of [
      [low.id, high.id],
      [low.id, managers.id],
    ])
      expect((await patch(manager.token, guild.id, member.id, { roles })).body.code).toBe(50013)
    await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${high.id}`, { token: owner.token })
    expect((await patch(manager.token, guild.id, member.id, { roles: [] })).body.code).toBe(50013)
    // Keeping a role above is no change to it.
    expect((await patch(manager.token, guild.id, member.id, { roles: [high.id] })).body.roles).toEqual([high.id])
    expect((await patch(owner.token, guild.id, member.id, { roles: ['1'] })).body.code).toBe(10011)
    const bad = await patch(owner.token, guild.id, member.id, { roles: ['x'] })
    expect(bad.body.errors.roles['0']._errors[0].code).toBe('NUMBER_TYPE_COERCE')
    // Nickname and roles in one edit.
    const both = await patch(owner.token, guild.id, member.id, { nick: 'both', roles: [low.id] })
    expect(both.body).toMatchObject({ nick: 'both', roles: [low.id] })
  })

  test('GET /members/search: username or nickname prefix, any case, limit 1-1000 (default 1), members only', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const a = await join(channelId, owner)
    const b = await join(channelId, owner)
    await patch(owner.token, guild.id, b.id, { nick: 'Zed' })
    const search = (query: string) => api('GET', `/guilds/${guild.id}/members/search?${query}`, { token: a.token })
    const ids = (r: { body: { user: { id: string } }[] }) => r.body.map((m) => m.user.id)
    expect(ids(await search(`query=${a.username.toUpperCase()}&limit=10`))).toEqual([a.id])
    expect(ids(await search('query=zE&limit=10'))).toEqual([b.id])
    const one = await search(`query=${b.username}`)
    expect(one.body).toEqual([(await api('GET', `/guilds/${guild.id}/members/${b.id}`, { token: a.token })).body])
    // Every member starts with "": the default limit is 1, at most 1000.
    expect(ids(await search('query=')).length).toBe(1)
    expect(ids(await search('query=&limit=1000')).sort()).toEqual([owner.id, a.id, b.id].sort())
    expect((await search('query=nobody&limit=5')).body).toEqual([])
    for (const [query, code] of [
      ['query=x&limit=0', 'NUMBER_TYPE_MIN'],
      ['query=x&limit=1001', 'NUMBER_TYPE_MAX'],
    ] as const) {
      const r = await search(query)
      expect([r.status, r.body.errors.limit._errors[0].code]).toEqual([400, code])
    }
    const missing = await search('limit=5')
    expect([missing.status, missing.body.code, Object.keys(missing.body.errors)]).toEqual([400, 50035, ['query']])
    const outsider = await api('GET', `/guilds/${guild.id}/members/search?query=a`, { token: (await makeUser()).token })
    expect(outsider.body.code).toBe(10004)
  })

  test('a timeout (communication_disabled_until, MODERATE_MEMBERS): the member only reads until it ends', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const mod = await join(channelId, owner)
    const member = await join(channelId, owner)
    const until = (ms: number) => new Date(clock.now() + ms).toISOString()
    const timeout = (token: string, who: string, value: string | null) =>
      patch(token, guild.id, who, { communication_disabled_until: value })
    const post = (content: string) =>
      api('POST', `/channels/${channelId}/messages`, { token: member.token, body: { content } })
    expect((await timeout(mod.token, member.id, until(60_000))).body.code).toBe(50013)
    const mods = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'mods', permissions: String(1n << 40n) }, // MODERATE_MEMBERS
    })
    await api('PUT', `/guilds/${guild.id}/members/${mod.id}/roles/${mods.body.id}`, { token: owner.token })
    const watcher = await sockets.identified(owner.token)
    const end = until(60_000)
    const r = await timeout(mod.token, member.id, end)
    expect([r.status, r.body.communication_disabled_until]).toEqual([200, end])
    expect((await watcher.waitFor('GUILD_MEMBER_UPDATE')).d.communication_disabled_until).toBe(end)
    // Reading stays; sending and typing do not.
    expect((await post('muted')).body.code).toBe(50013)
    expect((await api('GET', `/channels/${channelId}/messages`, { token: member.token })).status).toBe(200)
    expect((await api('POST', `/channels/${channelId}/typing`, { token: member.token })).body.code).toBe(50013)
    // It ends by itself, or by null.
    clock.advance(61_000)
    expect((await post('back')).status).toBe(200)
    await timeout(mod.token, member.id, until(60_000))
    expect((await post('again')).body.code).toBe(50013)
    expect((await timeout(mod.token, member.id, null)).body.communication_disabled_until).toBeNull()
    expect((await post('free')).status).toBe(200)
    // At most 28 days ahead, ISO 8601; never the owner, an equal or an administrator.
    for (const value of [until(28 * 86_400_000 + 60_000), 'tomorrow']) {
      const bad = await timeout(mod.token, member.id, value)
      expect([bad.status, bad.body.errors.communication_disabled_until._errors[0].code]).toEqual([
        400,
        'INVALID_COMMUNICATION_DISABLED_TIMESTAMP',
      ])
    }
    expect((await timeout(mod.token, member.id, until(28 * 86_400_000 - 60_000))).status).toBe(200)
    expect((await timeout(mod.token, owner.id, until(60_000))).body.code).toBe(50013)
    await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${mods.body.id}`, { token: owner.token })
    expect((await timeout(mod.token, member.id, null)).body.code).toBe(50013) // now an equal
    const admins = await role(owner.token, guild.id, 'admins', 8)
    const admin = await join(channelId, owner)
    await api('PUT', `/guilds/${guild.id}/members/${admin.id}/roles/${admins.id}`, { token: owner.token })
    expect((await timeout(owner.token, admin.id, until(60_000))).body.code).toBe(50013)
  })
})

describe('bans', () => {
  const BAN_MEMBERS = 1 << 2

  test('PUT /bans/{id}: the member leaves, its recent messages go, GUILD_BAN_ADD; it cannot join again (40007) until unbanned', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const target = await join(channelId, owner)
    const kept = (
      await api('POST', `/channels/${channelId}/messages`, { token: target.token, body: { content: 'old' } })
    ).body.id
    clock.advance(2 * 3600_000)
    const recent = (
      await api('POST', `/channels/${channelId}/messages`, { token: target.token, body: { content: 'spam' } })
    ).body.id
    const theirs = await sockets.identified(target.token)
    const watcher = await sockets.identified(owner.token)
    const reason = 'spam, and more spam'
    const r = await api('PUT', `/guilds/${guild.id}/bans/${target.id}`, {
      token: owner.token,
      body: { delete_message_seconds: 3600 },
      headers: { 'x-audit-log-reason': encodeURIComponent(reason) },
    })
    expect(r.status).toBe(204)
    expect((await watcher.waitFor('MESSAGE_DELETE_BULK')).d).toEqual({
      ids: [recent],
      channel_id: channelId,
      guild_id: guild.id,
    })
    expect((await watcher.waitFor('GUILD_MEMBER_REMOVE')).d.user.id).toBe(target.id)
    const added = (await watcher.waitFor('GUILD_BAN_ADD')).d
    expect(added).toEqual({
      guild_id: guild.id,
      user: expect.objectContaining({ id: target.id, username: target.username }),
    })
    expect((await theirs.waitFor('GUILD_DELETE')).d).toEqual({ id: guild.id })
    expect((await api('GET', `/channels/${channelId}/messages/${kept}`, { token: owner.token })).status).toBe(200)
    expect((await api('GET', `/channels/${channelId}/messages/${recent}`, { token: owner.token })).body.code).toBe(
      10008,
    )
    expect((await api('GET', `/guilds/${guild.id}/members/${target.id}`, { token: owner.token })).body.code).toBe(10007)
    // The ban as GET answers it, in the list and alone; banning again changes nothing.
    const ban = { reason, user: added.user }
    expect((await api('GET', `/guilds/${guild.id}/bans/${target.id}`, { token: owner.token })).body).toEqual(ban)
    expect((await api('GET', `/guilds/${guild.id}/bans`, { token: owner.token })).body).toEqual([ban])
    expect((await api('PUT', `/guilds/${guild.id}/bans/${target.id}`, { token: owner.token })).status).toBe(204)
    await watcher.expectNo('GUILD_BAN_ADD', 50)
    expect(watcher.dispatches('GUILD_BAN_ADD')).toHaveLength(1)

    // Banned: the invite refuses it; unbanned (GUILD_BAN_REMOVE), it joins again.
    const invite = (await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body: {} })).body.code
    const refused = await api('POST', `/invites/${invite}`, { token: target.token })
    expect([refused.status, refused.body]).toEqual([
      403,
      { message: 'The user is banned from this guild.', code: 40007 },
    ])
    expect((await api('DELETE', `/guilds/${guild.id}/bans/${target.id}`, { token: owner.token })).status).toBe(204)
    expect((await watcher.waitFor('GUILD_BAN_REMOVE')).d).toEqual({ guild_id: guild.id, user: added.user })
    expect((await api('POST', `/invites/${invite}`, { token: target.token })).status).toBe(200)
    for (const [method, path] of [
      ['DELETE', `/guilds/${guild.id}/bans/${target.id}`],
      ['GET', `/guilds/${guild.id}/bans/${target.id}`],
    ] as const) {
      const r = await api(method, path, { token: owner.token })
      expect([r.status, r.body]).toEqual([404, { message: 'Unknown Ban', code: 10026 }])
    }
  })

  test('BAN_MEMBERS and a higher role; never the owner; a user who is not a member; limits and pages', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const mod = await join(channelId, owner)
    const peer = await join(channelId, owner)
    const ban = (token: string, userId: string, body?: unknown) =>
      api('PUT', `/guilds/${guild.id}/bans/${userId}`, { token, body })
    expect((await ban(mod.token, peer.id)).body.code).toBe(50013)
    expect((await api('GET', `/guilds/${guild.id}/bans`, { token: mod.token })).body.code).toBe(50013)
    const mods = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'mods', permissions: String(BAN_MEMBERS) },
    })
    for (const id of [mod.id, peer.id])
      await api('PUT', `/guilds/${guild.id}/members/${id}/roles/${mods.body.id}`, { token: owner.token })
    expect((await ban(mod.token, peer.id)).body.code).toBe(50013) // an equal
    expect((await ban(mod.token, owner.id)).body.code).toBe(50013)
    expect((await ban(owner.token, owner.id)).body.code).toBe(50013)
    // Anyone who is a user can be banned before joining; an unknown user 10013.
    const strangers = [await makeUser(), await makeUser(), await makeUser()]
    for (const s of strangers) expect((await ban(mod.token, s.id)).status).toBe(204)
    expect((await ban(mod.token, '1')).body.code).toBe(10013)
    // delete_message_seconds up to 7 days, delete_message_days up to 7.
    expect((await ban(owner.token, peer.id, { delete_message_seconds: 604_801 })).body.code).toBe(50035)
    expect((await ban(owner.token, peer.id, { delete_message_days: 8 })).body.code).toBe(50035)
    expect((await ban(owner.token, peer.id, { delete_message_days: 7 })).status).toBe(204)
    // Pages in user id order.
    const ids = [...strangers.map((s) => s.id), peer.id].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))
    const page = (query: string) =>
      api('GET', `/guilds/${guild.id}/bans?${query}`, { token: mod.token }).then((r) =>
        r.body.map((b: { user: { id: string } }) => b.user.id),
      )
    expect(await page('')).toEqual(ids)
    expect(await page('limit=2')).toEqual(ids.slice(0, 2))
    expect(await page(`after=${ids[1]}`)).toEqual(ids.slice(2))
    expect(await page(`before=${ids[3]}&limit=2`)).toEqual(ids.slice(1, 3))
    const bad = await api('GET', `/guilds/${guild.id}/bans?limit=1001`, { token: mod.token })
    expect(bad.body.errors.limit._errors[0].code).toBe('NUMBER_TYPE_MAX')
  })
})

describe('role positions', () => {
  const positions = async (token: string, guildId: string) =>
    Object.fromEntries(
      (await api('GET', `/guilds/${guildId}/roles`, { token })).body.map((r: { name: string; position: number }) => [
        r.name,
        r.position,
      ]),
    )

  test('a new role goes to the bottom (position 1); the roles above move up, each with GUILD_ROLE_UPDATE', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const first = await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body: { name: 'first' } })
    expect(first.body.position).toBe(1)
    const watcher = await sockets.identified(member.token)
    const second = await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body: { name: 'second' } })
    expect(second.body.position).toBe(1)
    expect((await watcher.waitFor('GUILD_ROLE_CREATE')).d.role).toEqual(second.body)
    expect((await watcher.waitFor('GUILD_ROLE_UPDATE')).d).toEqual({
      guild_id: guild.id,
      role: { ...first.body, position: 2 },
    })
    expect(await positions(owner.token, guild.id)).toEqual({ '@everyone': 0, second: 1, first: 2 })
  })

  test("PATCH /guilds/{id}/roles moves roles: the others keep their order; below the caller's highest only", async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const role = async (name: string, permissions = '0') =>
      (await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body: { name, permissions } })).body.id
    const d = await role('d')
    const c = await role('c', String(1 << 28)) // MANAGE_ROLES
    const b = await role('b')
    const a = await role('a')
    expect(await positions(owner.token, guild.id)).toEqual({ '@everyone': 0, a: 1, b: 2, c: 3, d: 4 })
    const move = (token: string, body: unknown) => api('PATCH', `/guilds/${guild.id}/roles`, { token, body })
    const watcher = await sockets.identified(member.token)
    const moved = await move(owner.token, [{ id: a, position: 3 }])
    expect(moved.status).toBe(200)
    expect(moved.body.map((r: { name: string }) => r.name)).toEqual(['@everyone', 'b', 'c', 'a', 'd'])
    // a, b and c moved; d did not.
    const updates = () => watcher.dispatches('GUILD_ROLE_UPDATE').map((f) => f.d.role.name)
    for (const deadline = Date.now() + 3000; updates().length < 3 && Date.now() < deadline; ) await Bun.sleep(5)
    expect(updates().sort()).toEqual(['a', 'b', 'c'])
    await watcher.expectNo('GUILD_ROLE_UPDATE', 50)
    // Several at once, @everyone and null positions passed over, past the end clamped to the top.
    const again = await move(owner.token, [
      { id: d, position: 1 },
      { id: b, position: 99 },
      { id: guild.id, position: 3 },
      { id: c, position: null },
    ])
    expect(again.body.map((r: { name: string }) => r.name)).toEqual(['@everyone', 'd', 'c', 'a', 'b'])

    // A manager (c, now at 2) moves what lies below its highest, and only below it.
    await api('PUT', `/guilds/${guild.id}/members/${member.id}/roles/${c}`, { token: owner.token })
    expect((await move(member.token, [{ id: d, position: 2 }])).body.code).toBe(50013) // onto c's place: c drops
    expect((await move(member.token, [{ id: a, position: 1 }])).body.code).toBe(50013) // a is above c
    expect((await move(member.token, [{ id: d, position: 1 }])).status).toBe(200) // no change at all
    // Without MANAGE_ROLES 50013; an unknown role 10011; not a list 50035.
    const plain = await join(channelId, owner)
    expect((await move(plain.token, [{ id: d, position: 1 }])).body.code).toBe(50013)
    expect((await move(owner.token, [{ id: '1', position: 1 }])).body.code).toBe(10011)
    const bad = await move(owner.token, [{ id: d, position: -1 }])
    expect([bad.status, bad.body.code]).toEqual([400, 50035])
    expect((await move(owner.token, { id: d, position: 1 })).status).toBe(400)
  })
})

describe('channels', () => {
  test('create needs MANAGE_CHANNELS; non-members get 404 10003', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const outsider = await makeUser()
    const created = await api('POST', `/guilds/${guild.id}/channels`, {
      token: owner.token,
      body: { name: 'voice', type: 2 },
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ type: 2, name: 'voice', guild_id: guild.id })
    expect(
      (await api('POST', `/guilds/${guild.id}/channels`, { token: owner.token, body: { name: 'bad', type: 4 } }))
        .status,
    ).toBe(400)
    expect(
      (await api('POST', `/guilds/${guild.id}/channels`, { token: member.token, body: { name: 'x' } })).body.code,
    ).toBe(50013)
    const hidden = await api('GET', `/channels/${channelId}`, { token: outsider.token })
    expect(hidden.status).toBe(404)
    expect(hidden.body.code).toBe(10003)
    expect(
      (await api('PATCH', `/channels/${channelId}`, { token: member.token, body: { name: 'renamed' } })).status,
    ).toBe(403)
    expect(
      (await api('PATCH', `/channels/${channelId}`, { token: owner.token, body: { name: 'renamed' } })).body.name,
    ).toBe('renamed')
    expect((await api('DELETE', `/channels/${created.body.id}`, { token: member.token })).status).toBe(403)
    expect((await api('DELETE', `/channels/${created.body.id}`, { token: owner.token })).status).toBe(200)
    expect((await api('GET', `/channels/${created.body.id}`, { token: owner.token })).status).toBe(404)
  })

  test('PATCH /guilds/{id}/channels moves channels (MANAGE_CHANNELS): 204, CHANNEL_UPDATE for each one moved', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const channels = (await api('GET', `/guilds/${guild.id}/channels`, { token: owner.token })).body
    const voice = channels.find((c: { type: number }) => c.type === 2)
    expect([channels[0].position, voice.position]).toEqual([0, 1])
    const watcher = await sockets.identified(member.token)
    const move = (token: string, body: unknown) => api('PATCH', `/guilds/${guild.id}/channels`, { token, body })
    const r = await move(owner.token, [
      { id: channelId, position: 1 },
      { id: voice.id, position: 0, lock_permissions: false, parent_id: null },
    ])
    expect(r.status).toBe(204)
    const updates = () => watcher.dispatches('CHANNEL_UPDATE').map((f) => [f.d.id, f.d.position])
    for (const deadline = Date.now() + 3000; updates().length < 2 && Date.now() < deadline; ) await Bun.sleep(5)
    expect(updates().sort()).toEqual(
      [
        [channelId, 1],
        [voice.id, 0],
      ].sort(),
    )
    const after = (await api('GET', `/guilds/${guild.id}/channels`, { token: owner.token })).body
    expect(Object.fromEntries(after.map((c: { id: string; position: number }) => [c.id, c.position]))).toEqual({
      [channelId]: 1,
      [voice.id]: 0,
    })
    // Unchanged or without a position: nothing sent.
    expect((await move(owner.token, [{ id: channelId, position: 1 }, { id: voice.id }])).status).toBe(204)
    await watcher.expectNo('CHANNEL_UPDATE', 50)
    expect((await move(member.token, [{ id: channelId, position: 0 }])).body.code).toBe(50013)
    expect((await move(owner.token, [{ id: '1', position: 0 }])).body.code).toBe(10003)
    expect((await move(owner.token, [{ id: channelId, position: -1 }])).body.code).toBe(50035)
    expect((await move(owner.token, { id: channelId, position: 0 })).status).toBe(400)
  })
})

describe('messages', () => {
  test('content 1-2000, SEND_MESSAGES, newest first with limit and cursors', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const outsider = await makeUser()
    expect(
      (await api('POST', `/channels/${channelId}/messages`, { token: member.token, body: { content: '' } })).body,
    ).toEqual({ message: 'Cannot send an empty message', code: 50006 })
    expect(
      (
        await api('POST', `/channels/${channelId}/messages`, {
          token: member.token,
          body: { content: 'x'.repeat(2001) },
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api('POST', `/channels/${channelId}/messages`, {
          token: member.token,
          body: { content: 'x'.repeat(2000) },
        })
      ).status,
    ).toBe(200)
    expect(
      (await api('POST', `/channels/${channelId}/messages`, { token: outsider.token, body: { content: 'hi' } })).body
        .code,
    ).toBe(10003)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const r = await api('POST', `/channels/${channelId}/messages`, {
        token: owner.token,
        body: { content: `m${i}`, nonce: `n${i}` },
      })
      expect(r.body).toMatchObject({
        content: `m${i}`,
        channel_id: channelId,
        nonce: `n${i}`,
        author: { id: owner.id },
      })
      ids.push(r.body.id)
    }
    const all = await api('GET', `/channels/${channelId}/messages?limit=5`, { token: member.token })
    expect(all.body.map((m: { content: string }) => m.content)).toEqual(['m4', 'm3', 'm2', 'm1', 'm0'])
    const before = await api('GET', `/channels/${channelId}/messages?before=${ids[2]}&limit=1`, { token: member.token })
    expect(before.body.map((m: { content: string }) => m.content)).toEqual(['m1'])
    const after = await api('GET', `/channels/${channelId}/messages?after=${ids[2]}`, { token: member.token })
    expect(after.body.map((m: { content: string }) => m.content)).toEqual(['m4', 'm3'])
    const around = await api('GET', `/channels/${channelId}/messages?around=${ids[2]}&limit=3`, { token: member.token })
    expect(around.body.map((m: { content: string }) => m.content)).toEqual(['m3', 'm2', 'm1'])
    for (const limit of [0, 101])
      expect((await api('GET', `/channels/${channelId}/messages?limit=${limit}`, { token: member.token })).status).toBe(
        400,
      )
    expect((await api('GET', `/channels/${channelId}/messages?limit=100`, { token: member.token })).status).toBe(200)
    // Take SEND_MESSAGES and READ_MESSAGE_HISTORY away from @everyone: 403 50013 for the member.
    await api('PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
      token: owner.token,
      body: { permissions: String(1 << 10) },
    })
    expect(
      (await api('POST', `/channels/${channelId}/messages`, { token: member.token, body: { content: 'hi' } })).body
        .code,
    ).toBe(50013)
    expect((await api('GET', `/channels/${channelId}/messages`, { token: member.token })).body.code).toBe(50013)
  })
})

describe('invites', () => {
  test('join, use counts honoured under 20 parallel joins', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const invite = await api('POST', `/channels/${channelId}/invites`, {
      token: owner.token,
      body: { max_uses: 3, max_age: 3600, unique: true },
    })
    expect(invite.body).toMatchObject({
      max_uses: 3,
      max_age: 3600,
      uses: 0,
      guild: { id: guild.id },
      channel: { id: channelId },
    })
    const joiners = await Promise.all(Array.from({ length: 20 }, () => makeUser()))
    const results = await Promise.all(
      joiners.map((u) => api('POST', `/invites/${invite.body.code}`, { token: u.token })),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(3)
    expect(results.filter((r) => r.status === 404).every((r) => r.body.code === 10006)).toBe(true)
    expect((await api('GET', `/guilds/${guild.id}`, { token: owner.token })).body.member_count).toBe(4)
  })

  test('a targeted invite works only for its target; expiry is honoured', async () => {
    const { owner, channelId } = await makeGuild()
    const target = await makeUser()
    const other = await makeUser()
    const invite = await api('POST', `/channels/${channelId}/invites`, {
      token: owner.token,
      body: { max_age: 60, target_user_id: target.id, target_type: 1 },
    })
    expect(invite.body.target_user.id).toBe(target.id)
    expect((await api('POST', `/invites/${invite.body.code}`, { token: other.token })).body.code).toBe(10006)
    expect((await api('POST', `/invites/${invite.body.code}`, { token: target.token })).status).toBe(200)
    const timed = await api('POST', `/channels/${channelId}/invites`, {
      token: owner.token,
      body: { max_age: 60, unique: true },
    })
    expect((await api('GET', `/invites/${timed.body.code}`)).status).toBe(200)
    clock.advance(61_000)
    expect((await api('GET', `/invites/${timed.body.code}`)).status).toBe(404)
    expect((await api('POST', `/invites/${timed.body.code}`, { token: other.token })).body.code).toBe(10006)
  })

  test('limits, deletion and permission', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    for (const body of [{ max_age: 604801 }, { max_uses: 101 }, { max_age: -1 }]) {
      expect((await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body })).status).toBe(400)
    }
    expect(
      (
        await api('POST', `/channels/${channelId}/invites`, {
          token: owner.token,
          body: { max_age: 604800, max_uses: 100 },
        })
      ).status,
    ).toBe(200)
    const invite = await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body: { unique: true } })
    expect((await api('DELETE', `/invites/${invite.body.code}`, { token: member.token })).status).toBe(403)
    expect((await api('DELETE', `/invites/${invite.body.code}`, { token: owner.token })).status).toBe(200)
    expect((await api('GET', `/invites/${invite.body.code}`)).status).toBe(404)
    await api('PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
      token: owner.token,
      body: { permissions: String(1 << 10) },
    })
    expect((await api('POST', `/channels/${channelId}/invites`, { token: member.token, body: {} })).body.code).toBe(
      50013,
    )
  })

  test('GET /guilds/{id}/invites (MANAGE_GUILD) and /channels/{id}/invites (MANAGE_CHANNELS): the usable ones, with counts', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const other = (await api('POST', `/guilds/${guild.id}/channels`, { token: owner.token, body: { name: 'other' } }))
      .body.id
    const create = (channel: string, body: Record<string, unknown>) =>
      api('POST', `/channels/${channel}/invites`, { token: owner.token, body: { unique: true, ...body } })
    const once = (await create(channelId, { max_uses: 1 })).body.code
    const here = (await create(channelId, { max_age: 0 })).body.code
    const there = (await create(other, { max_age: 60 })).body.code
    const member = await join(channelId, owner) // through an invite of its own
    expect((await api('POST', `/invites/${once}`, { token: (await makeUser()).token })).status).toBe(200) // used up
    clock.advance(61_000) // `there` expired
    const codes = async (path: string, token = owner.token) => {
      const r = await api('GET', path, { token })
      return r.status === 200 ? r.body.map((i: { code: string }) => i.code) : r.body.code
    }
    const all = await codes(`/guilds/${guild.id}/invites`)
    expect(all).toContain(here)
    expect(all).not.toContain(once)
    expect(all).not.toContain(there)
    expect(await codes(`/channels/${channelId}/invites`)).toEqual(all)
    expect(await codes(`/channels/${other}/invites`)).toEqual([])
    const listed = (await api('GET', `/guilds/${guild.id}/invites`, { token: owner.token })).body
    expect(listed.find((i: { code: string }) => i.code === here)).toMatchObject({
      code: here,
      uses: 0,
      max_uses: 0,
      max_age: 0,
      inviter: { id: owner.id },
    })
    expect(await codes(`/guilds/${guild.id}/invites`, member.token)).toBe(50013)
    expect(await codes(`/channels/${channelId}/invites`, member.token)).toBe(50013)
    expect(await codes(`/guilds/${guild.id}/invites`, (await makeUser()).token)).toBe(10004)
  })
})
