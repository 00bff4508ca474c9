// Application commands as a bot's library depends on them: PUT of the whole list (discord.py's tree.sync()), POST
// by name, PATCH, DELETE, GET, global and per guild, with Discord's rules and limits at their edges.
import { afterEach, describe, expect, test } from 'bun:test'
import { addMember } from '../../src/guilds/lifecycle'
import { getGuild } from '../../src/guilds/store'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { makeGuild } from '../guilds/helpers'

afterEach(resetWorld)

type App = Awaited<ReturnType<typeof makeApp>>
const bot = (app: App) => `Bot ${app.bot_token}`
const global = (app: App) => `/applications/${app.id}/commands`

const ping = { name: 'ping', description: 'Pong back' }
const queue = {
  name: 'lineup',
  description: 'Pick a team size',
  options: [
    { type: 4, name: 'size', description: 'Team size', required: true, min_value: 1, max_value: 5 },
    { type: 5, name: 'public', description: 'Open to all' },
  ],
}

describe('global commands', () => {
  test('PUT replaces the list: the same type and name keep their id (and version when unchanged), the others go', async () => {
    const app = await makeApp()
    const first = await api('PUT', global(app), { token: bot(app), body: [ping, queue] })
    expect(first.status).toBe(200)
    expect(first.body).toEqual([
      {
        id: expect.any(String),
        type: 1,
        application_id: app.id,
        name: 'ping',
        name_localizations: null,
        description: 'Pong back',
        description_localizations: null,
        default_member_permissions: null,
        dm_permission: true,
        default_permission: true,
        nsfw: false,
        version: expect.any(String),
      },
      expect.objectContaining({ name: 'lineup', options: queue.options }),
    ])
    const [pingCmd, queueCmd] = first.body
    const second = await api('PUT', global(app), {
      token: bot(app),
      body: [
        { ...ping, description: 'Pong!' },
        { name: 'Report', type: 2, description: 'ignored' },
      ],
    })
    expect(second.body.map((c: { id: string }) => c.id)[0]).toBe(pingCmd.id)
    expect(second.body[0].version).not.toBe(pingCmd.version)
    expect(second.body[1]).toMatchObject({ name: 'Report', type: 2, description: '' })
    expect(second.body[1].options).toBeUndefined()
    const listed = await api('GET', global(app), { token: bot(app) })
    expect(listed.body.map((c: { name: string }) => c.name)).toEqual(['ping', 'Report'])
    expect((await api('GET', `${global(app)}/${queueCmd.id}`, { token: bot(app) })).body).toEqual({
      message: 'Unknown application command',
      code: 10063,
    })
    // Sent again unchanged: same versions.
    const again = await api('PUT', global(app), { token: bot(app), body: second.body })
    expect(again.body.map((c: { version: string }) => c.version)).toEqual(
      second.body.map((c: { version: string }) => c.version),
    )
    expect((await api('PUT', global(app), { token: bot(app), body: [] })).body).toEqual([])
    expect((await api('GET', global(app), { token: bot(app) })).body).toEqual([])
  })

  test('POST creates (201) or replaces the command of its type and name (200); GET, PATCH, DELETE one', async () => {
    const app = await makeApp()
    const created = await api('POST', global(app), { token: bot(app), body: ping })
    expect(created.status).toBe(201)
    const replaced = await api('POST', global(app), { token: bot(app), body: { ...ping, description: 'Again' } })
    expect([replaced.status, replaced.body.id, replaced.body.description]).toEqual([200, created.body.id, 'Again'])
    // A USER command may share the name.
    expect((await api('POST', global(app), { token: bot(app), body: { name: 'ping', type: 2 } })).status).toBe(201)
    const path = `${global(app)}/${created.body.id}`
    expect((await api('GET', path, { token: bot(app) })).body).toMatchObject({ id: created.body.id, name: 'ping' })
    const patched = await api('PATCH', path, {
      token: bot(app),
      body: { description: 'Patched', default_member_permissions: '8192', dm_permission: false },
    })
    expect(patched.body).toMatchObject({
      name: 'ping',
      description: 'Patched',
      default_member_permissions: '8192',
      dm_permission: false,
    })
    const other = await api('POST', global(app), { token: bot(app), body: queue })
    const clash = await api('PATCH', `${global(app)}/${other.body.id}`, { token: bot(app), body: { name: 'ping' } })
    expect(clash.body.errors.name._errors[0].code).toBe('APPLICATION_COMMANDS_DUPLICATE_NAME')
    expect((await api('DELETE', path, { token: bot(app) })).status).toBe(204)
    expect((await api('DELETE', path, { token: bot(app) })).body.code).toBe(10063)
    expect((await api('PATCH', path, { token: bot(app), body: { description: 'x' } })).body.code).toBe(10063)
  })

  test("only the application's own bot: another application's bot 50001, a user 20002", async () => {
    const app = await makeApp()
    const other = await makeApp()
    const r = await api('GET', global(app), { token: bot(other) })
    expect([r.status, r.body]).toEqual([403, { message: 'Missing Access', code: 50001 }])
    const user = await api('PUT', global(app), { token: (await makeUser()).token, body: [] })
    expect([user.status, user.body.code]).toEqual([403, 20002])
  })

  test("Discord's rules: CHAT_INPUT names and descriptions, required options first, unique names, at their edges", async () => {
    const app = await makeApp()
    const put = (body: unknown) => api('PUT', global(app), { token: bot(app), body })
    const name32 = 'a'.repeat(32)
    expect((await put([{ name: name32, description: 'd'.repeat(100) }])).status).toBe(200)
    const long = await put([{ name: 'a'.repeat(33), description: 'd' }])
    expect(long.body.errors['0'].name._errors[0].code).toBe('BASE_TYPE_BAD_LENGTH')
    const desc = await put([{ name: 'ok', description: 'd'.repeat(101) }])
    expect(desc.body.errors['0'].description._errors[0].code).toBe('BASE_TYPE_MAX_LENGTH')
    const noDesc = await put([{ name: 'ok' }])
    expect(noDesc.body.errors['0'].description._errors[0].code).toBe('BASE_TYPE_BAD_LENGTH')
    for (const bad of ['Ping', 'two words', 'ping!']) {
      const r = await put([{ name: bad, description: 'd' }])
      expect(r.body.errors['0'].name._errors, bad).toEqual([
        { code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' },
      ])
    }
    // Context menus take any name.
    expect((await put([{ name: 'Report This', type: 3 }])).status).toBe(200)
    const order = await put([
      {
        name: 'q',
        description: 'd',
        options: [
          { type: 3, name: 'a', description: 'd' },
          { type: 3, name: 'b', description: 'd', required: true },
        ],
      },
    ])
    expect(order.body.errors['0'].options._errors[0].code).toBe('APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID')
    const twice = await put([ping, ping])
    expect(twice.body.errors).toEqual({
      1: {
        _errors: [{ code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: 'Application command names must be unique' }],
      },
    })
    const options = Array.from({ length: 26 }, (_, i) => ({ type: 3, name: `o${i}`, description: 'd' }))
    expect((await put([{ ...ping, options: options.slice(0, 25) }])).status).toBe(200)
    expect((await put([{ ...ping, options }])).body.errors['0'].options._errors[0].code).toBe('BASE_TYPE_MAX_LENGTH')
    const perms = await put([{ ...ping, default_member_permissions: String(1n << 60n) }])
    expect(perms.body.errors['0'].default_member_permissions._errors[0].code).toBe('BASE_TYPE_INVALID')
  })

  test('100 CHAT_INPUT and 15 USER commands per scope: one more is 30032', async () => {
    const app = await makeApp()
    const chat = Array.from({ length: 100 }, (_, i) => ({ name: `c${i}`, description: 'd' }))
    const users = Array.from({ length: 15 }, (_, i) => ({ name: `U ${i}`, type: 2 }))
    expect((await api('PUT', global(app), { token: bot(app), body: [...chat, ...users] })).status).toBe(200)
    const over = { message: 'Maximum number of application commands reached', code: 30032 }
    const more = await api('PUT', global(app), {
      token: bot(app),
      body: [...chat, ...users, { name: 'U 15', type: 2 }],
    })
    expect([more.status, more.body]).toEqual([400, over])
    const post = await api('POST', global(app), { token: bot(app), body: { name: 'c100', description: 'd' } })
    expect([post.status, post.body]).toEqual([400, over])
    // Replacing one by its name is not one more.
    expect((await api('POST', global(app), { token: bot(app), body: { name: 'c99', description: 'e' } })).status).toBe(
      200,
    )
  })
})

describe('guild commands', () => {
  test('in a guild the bot is in: its own list, guild_id on each; elsewhere 50001; gone with the guild', async () => {
    const app = await makeApp()
    const botUser = (await api('GET', '/users/@me', { token: bot(app) })).body
    const { owner, guild } = await makeGuild()
    const path = `/applications/${app.id}/guilds/${guild.id}/commands`
    const outside = await api('PUT', path, { token: bot(app), body: [ping] })
    expect([outside.status, outside.body.code]).toEqual([403, 50001])
    await addMember((await getGuild(guild.id))!, botUser.id)
    const put = await api('PUT', path, { token: bot(app), body: [ping] })
    expect(put.body).toEqual([expect.objectContaining({ name: 'ping', guild_id: guild.id })])
    expect(put.body[0].dm_permission).toBeUndefined()
    expect((await api('GET', global(app), { token: bot(app) })).body).toEqual([])
    expect((await api('GET', `${path}/${put.body[0].id}`, { token: bot(app) })).body.guild_id).toBe(guild.id)
    // A global command's id is unknown under the guild, and the other way round.
    const g = await api('POST', global(app), { token: bot(app), body: queue })
    expect((await api('GET', `${path}/${g.body.id}`, { token: bot(app) })).body.code).toBe(10063)
    expect((await api('GET', `${global(app)}/${put.body[0].id}`, { token: bot(app) })).body.code).toBe(10063)
    await api('DELETE', `/guilds/${guild.id}`, { token: owner.token })
    expect((await api('GET', path, { token: bot(app) })).body.code).toBe(50001)
  })
})
