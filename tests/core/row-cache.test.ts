import { afterEach, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { transaction } from '../../src/db/client'
import { cachedLobby, updateLobbyMetadata } from '../../src/lobbies/store'
import { join, makeGuild } from '../guilds/helpers'
import { api, makeUser, resetWorld, server } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'
import { newReceiver, stopReceivers } from '../lobbies/webhook-receiver'
import { findApplication } from '../../src/oauth2/store'
import { addPhone, elevated, SoftAuthenticator, totpCode, userWithTotp } from '../mfa/helpers'
import { GatewayClient } from '../gateway-client'
import { clock } from '../../src/core/clock'
import { foreignWrite } from '../db/raw'
import { rowCache } from '../../src/db/cache'

afterEach(resetWorld)

async function readTimes<T>(n: number, read: () => Promise<T>): Promise<T> {
  let last: T
  for (let i = 0; i < n; i++) last = await read()
  return last!
}

const lobbyGet = (bot: string, id: string) => api('GET', `/lobbies/${id}`, { token: bot })
const me = (token: string) => api('GET', '/users/@me', { token })

describe('lobby rows and members', () => {
  test('metadata, members and deletion show on the next GET', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { metadata: { round: '1' }, members: [{ id: players[0].id }] })
    await readTimes(3, () => lobbyGet(bot, lobby.id))

    expect(
      (await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: { round: '2' } } })).status,
    ).toBe(200)
    expect((await lobbyGet(bot, lobby.id)).body.metadata).toEqual({ round: '2' })

    const put = await api('PUT', `/lobbies/${lobby.id}/members/${players[1].id}`, { token: bot, body: {} })
    expect(put.status).toBe(200)
    expect((await lobbyGet(bot, lobby.id)).body.members.map((m: { id: string }) => m.id)).toEqual([
      players[0].id,
      players[1].id,
    ])

    expect((await api('DELETE', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot })).status).toBe(204)
    await readTimes(3, () => lobbyGet(bot, lobby.id))
    expect((await lobbyGet(bot, lobby.id)).body.members.map((m: { id: string }) => m.id)).toEqual([players[1].id])

    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(204)
    const gone = await lobbyGet(bot, lobby.id)
    expect(gone.status).toBe(404)
    expect(gone.body.code).toBe(10031)
  })

  test('a member the bearer was removed from no longer reads the lobby', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const asMember = () => api('GET', `/lobbies/${lobby.id}`, { token: players[0].bearer })
    expect((await readTimes(3, asMember)).status).toBe(200)
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot })).status).toBe(204)
    expect((await asMember()).status).toBe(404)
  })

  test('a write another process commits is read within milliseconds', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot, { metadata: { from: 'api' } })
    await readTimes(3, () => lobbyGet(bot, lobby.id))
    await foreignWrite('UPDATE lobbies SET metadata = ? WHERE id = ?', JSON.stringify({ from: 'cli' }), lobby.id)
    expect((await lobbyGet(bot, lobby.id)).body.metadata).toEqual({ from: 'cli' })
  })

  test('a row read inside a write transaction that rolls back is not kept', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot, { metadata: { kept: 'yes' } })
    await readTimes(3, () => lobbyGet(bot, lobby.id))
    await expect(
      transaction(async () => {
        await updateLobbyMetadata(lobby.id, { kept: 'no' })
        expect((await cachedLobby(lobby.id))?.metadata).toEqual({ kept: 'no' }) // read after the write, before the rollback
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect((await cachedLobby(lobby.id))?.metadata).toEqual({ kept: 'yes' })
    expect((await lobbyGet(bot, lobby.id)).body.metadata).toEqual({ kept: 'yes' })
  })
})

describe("a lobby's event webhooks override (the lobby row and the cached REST text)", () => {
  test('set, changed, cleared, and written by another process: the next GET shows it (to the Bot only)', async () => {
    setConfig({ ...config(), eventWebhooksAllowPrivate: true })
    try {
      const { app, bot, players } = await setup(1)
      const r = newReceiver()
      r.trust((await findApplication(app.id))!.verifyKey!)
      const lobby = await createLobby(bot, { metadata: { n: '1' }, members: [{ id: players[0].id }] })
      const asPlayer = () => api('GET', `/lobbies/${lobby.id}`, { token: players[0].bearer })
      const field = (reply: { body: Record<string, unknown> }) => reply.body.override_event_webhooks_url
      expect(field(await readTimes(3, () => lobbyGet(bot, lobby.id)))).toBeUndefined()
      expect(field(await readTimes(3, asPlayer))).toBeUndefined()

      const patch = (body: object) => api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body })
      expect((await patch({ override_event_webhooks_url: r.url })).status).toBe(200)
      expect(field(await lobbyGet(bot, lobby.id))).toBe(r.url)
      expect(field(await readTimes(3, asPlayer))).toBeUndefined()
      expect((await cachedLobby(lobby.id))?.overrideEventWebhooksUrl).toBe(r.url)

      // Another change of the lobby keeps it; the players' cached text shows the change and still not the URL.
      expect((await patch({ metadata: { n: '2' } })).status).toBe(200)
      expect((await readTimes(3, () => lobbyGet(bot, lobby.id))).body).toMatchObject({
        metadata: { n: '2' },
        override_event_webhooks_url: r.url,
      })
      expect((await asPlayer()).body.metadata).toEqual({ n: '2' })

      expect((await patch({ override_event_webhooks_url: `${r.url}?v=2` })).status).toBe(200)
      expect(field(await lobbyGet(bot, lobby.id))).toBe(`${r.url}?v=2`)
      expect((await patch({ override_event_webhooks_url: null })).status).toBe(200)
      expect(field(await readTimes(3, () => lobbyGet(bot, lobby.id)))).toBeUndefined()

      await foreignWrite(
        'UPDATE lobbies SET override_event_webhooks_url = ? WHERE id = ?',
        'https://example.com/x',
        lobby.id,
      )
      expect(field(await lobbyGet(bot, lobby.id))).toBe('https://example.com/x')
      expect(field(await asPlayer())).toBeUndefined()
    } finally {
      setConfig({ ...config(), eventWebhooksAllowPrivate: false })
      stopReceivers()
    }
  })
})

describe('lobby message pages', () => {
  test('a new message, an author renamed, and the lobby deleted show on the next page', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const page = () => api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })
    const send = (content: string) =>
      api('POST', `/lobbies/${lobby.id}/messages`, { token: players[0].bearer, body: { content } })
    expect((await send('first')).status).toBe(201)
    expect((await readTimes(3, page)).body.map((m: { content: string }) => m.content)).toEqual(['first'])
    expect((await send('second')).status).toBe(201)
    expect((await page()).body.map((m: { content: string }) => m.content)).toEqual(['second', 'first'])

    await readTimes(3, page)
    const renamed = await api('PATCH', '/users/@me', { token: players[0].token, body: { global_name: 'Lobby Name' } })
    expect(renamed.status).toBe(200)
    expect((await page()).body.map((m: { author: { global_name: string } }) => m.author.global_name)).toEqual([
      'Lobby Name',
      'Lobby Name',
    ])

    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(204)
    expect((await page()).status).toBe(404)
  })
})

describe('users and MFA', () => {
  test('a changed display name shows on the next /users/@me', async () => {
    const user = await makeUser()
    await readTimes(3, () => me(user.token))
    const r = await api('PATCH', '/users/@me', { token: user.token, body: { global_name: 'Renamed' } })
    expect(r.status).toBe(200)
    expect((await me(user.token)).body.global_name).toBe('Renamed')
  })

  test('mfa_enabled follows TOTP on and off at once', async () => {
    const user = await makeUser()
    expect((await readTimes(3, () => me(user.token))).body.mfa_enabled).toBe(false)
    const totp = await userWithTotp()
    expect((await readTimes(3, () => me(totp.token))).body.mfa_enabled).toBe(true)
    const { retry } = await elevated('POST', '/users/@me/mfa/totp/disable', totp.token, undefined, 'totp', () =>
      totpCode(totp.secret),
    )
    expect(retry.status).toBe(200)
    expect((await me(retry.body.token)).body.mfa_enabled).toBe(false)
  })

  test('authenticator_types follows TOTP, SMS and a security key on and off at once, in /users/@me and READY', async () => {
    const user = await userWithTotp()
    const types = async (token: string) => (await readTimes(3, () => me(token))).body.authenticator_types
    const readyAuth = async (token: string) => {
      const { client, ready } = await GatewayClient.identified(token)
      client.close()
      expect(ready.user).not.toHaveProperty('authenticator_types') // as Discord: READY says it in `auth` only
      return ready.auth
    }
    expect(await types(user.token)).toEqual([2])
    expect(await readyAuth(user.token)).toEqual({ authenticator_types: [2] })

    await addPhone(user)
    expect(await types(user.token)).toEqual([2])
    const sms = { token: user.token, body: { password: user.password } }
    expect((await api('POST', '/users/@me/mfa/sms/enable', sms)).status).toBe(204)
    expect(await types(user.token)).toEqual([2, 3])
    expect(await readyAuth(user.token)).toEqual({ authenticator_types: [2, 3] })
    clock.advance(30_000)
    const off = await elevated('POST', '/users/@me/mfa/sms/disable', user.token, sms.body, 'totp', () =>
      totpCode(user.secret),
    )
    expect(off.retry.status).toBe(204)
    expect(await types(user.token)).toEqual([2])

    const key = new SoftAuthenticator()
    const start = await api('POST', '/users/@me/mfa/webauthn/credentials', { token: user.token })
    const added = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: { ticket: start.body.ticket, name: 'Key', credential: key.register(start.body.challenge) },
    })
    expect(added.status).toBe(200)
    expect(await types(user.token)).toEqual([1, 2])

    clock.advance(30_000)
    const totpOff = await elevated('POST', '/users/@me/mfa/totp/disable', user.token, undefined, 'totp', () =>
      totpCode(user.secret),
    )
    expect(totpOff.retry.status).toBe(200)
    const token = totpOff.retry.body.token as string
    expect(await types(token)).toEqual([1])
    const { retry } = await elevated(
      'DELETE',
      `/users/@me/mfa/webauthn/credentials/${added.body.id}`,
      token,
      undefined,
      'webauthn',
      (mfa) => key.assert(mfa.methods.find((m: { type: string }) => m.type === 'webauthn').challenge),
    )
    expect(retry.status).toBe(204)
    const last = await readTimes(3, () => me(token))
    expect(last.body.authenticator_types).toEqual([])
    expect(last.body.mfa_enabled).toBe(false)
    expect(await readyAuth(token)).toEqual({ authenticator_types: [] })
  })

  test('a user row another process changes is read within milliseconds', async () => {
    const user = await makeUser()
    await readTimes(3, () => me(user.token))
    await foreignWrite('UPDATE users SET global_name = ? WHERE id = ?', 'Set by the CLI', user.id)
    expect((await me(user.token)).body.global_name).toBe('Set by the CLI')
  })
})

describe('channel message pages', () => {
  test('a new message, and an author renamed, show on the next page', async () => {
    const { owner, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const page = () => api('GET', `/channels/${channelId}/messages`, { token: owner.token })
    const send = (content: string) =>
      api('POST', `/channels/${channelId}/messages`, { token: member.token, body: { content } })
    expect((await send('first')).status).toBe(200)
    expect((await readTimes(3, page)).body.map((m: { content: string }) => m.content)).toEqual(['first'])

    expect((await send('second')).status).toBe(200)
    expect((await page()).body.map((m: { content: string }) => m.content)).toEqual(['second', 'first'])

    await readTimes(3, page)
    const renamed = await api('PATCH', '/users/@me', { token: member.token, body: { global_name: 'New Name' } })
    expect(renamed.status).toBe(200)
    expect((await page()).body.map((m: { author: { global_name: string } }) => m.author.global_name)).toEqual([
      'New Name',
      'New Name',
    ])
  })

  test('an edit, a pin, a reaction (per reader), a deletion and a bulk deletion show on the next page', async () => {
    const { owner, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const page = (token = owner.token) => api('GET', `/channels/${channelId}/messages`, { token })
    const send = async (content: string) =>
      (await api('POST', `/channels/${channelId}/messages`, { token: member.token, body: { content } })).body.id
    const [a, b, c] = [await send('a'), await send('b'), await send('c')]
    const path = `/channels/${channelId}/messages/${a}`
    const oldest = async (token?: string) => (await page(token)).body.at(-1)
    await readTimes(3, page)
    await api('PATCH', path, { token: member.token, body: { content: 'a, edited' } })
    expect((await oldest()).content).toBe('a, edited')
    await readTimes(3, page)
    await api('PUT', `/channels/${channelId}/pins/${a}`, { token: owner.token })
    expect((await oldest()).pinned).toBe(true)
    await readTimes(3, page)
    await readTimes(3, () => page(member.token))
    await api('PUT', `${path}/reactions/${encodeURIComponent('👍')}/@me`, { token: member.token })
    expect((await oldest()).reactions).toMatchObject([{ count: 1, me: false }])
    expect((await oldest(member.token)).reactions).toMatchObject([{ count: 1, me: true }])
    await api('DELETE', `${path}/reactions/${encodeURIComponent('👍')}/@me`, { token: member.token })
    expect((await oldest(member.token)).reactions).toBeUndefined()
    expect((await oldest()).reactions).toBeUndefined()
    await api('DELETE', `/channels/${channelId}/messages/${c}`, { token: member.token })
    expect((await page()).body.map((m: { id: string }) => m.id)).toEqual([b, a])
    await readTimes(3, page)
    await api('POST', `/channels/${channelId}/messages/bulk-delete`, { token: owner.token, body: { messages: [a, b] } })
    expect((await page()).body).toEqual([])
  })

  test('a deleted channel has no page left; another channel keeps its own', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const other = await api('POST', `/guilds/${guild.id}/channels`, { token: owner.token, body: { name: 'other' } })
    expect(other.status).toBe(201)
    for (const id of [channelId, other.body.id])
      expect(
        (await api('POST', `/channels/${id}/messages`, { token: owner.token, body: { content: id } })).status,
      ).toBe(200)
    const page = (id: string) => api('GET', `/channels/${id}/messages`, { token: owner.token })
    await readTimes(3, () => page(other.body.id))
    expect((await api('DELETE', `/channels/${other.body.id}`, { token: owner.token })).status).toBe(200)
    expect((await page(other.body.id)).status).toBe(404)
    expect((await page(channelId)).body.map((m: { content: string }) => m.content)).toEqual([channelId])
  })
})

describe('channel access', () => {
  test('a role change, a role given and taken, and a kick decide the very next read', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const read = () => api('GET', `/channels/${channelId}/messages`, { token: member.token })
    const everyone = (await api('GET', `/guilds/${guild.id}/roles`, { token: owner.token })).body.find(
      (r: { id: string }) => r.id === guild.id,
    )
    const withHistory = BigInt(everyone.permissions)
    const withoutHistory = withHistory & ~(1n << 16n) // READ_MESSAGE_HISTORY
    const setEveryone = async (permissions: bigint) =>
      expect(
        (
          await api('PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
            token: owner.token,
            body: { permissions: permissions.toString() },
          })
        ).status,
      ).toBe(200)

    expect((await readTimes(3, read)).status).toBe(200)
    await setEveryone(withoutHistory)
    expect((await read()).status).toBe(403)

    // A role with the permission, given and taken.
    const role = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'readers', permissions: (1n << 16n).toString() },
    })
    expect(role.status).toBe(200)
    const memberRole = `/guilds/${guild.id}/members/${member.id}/roles/${role.body.id}`
    expect((await api('PUT', memberRole, { token: owner.token })).status).toBe(204)
    expect((await readTimes(3, read)).status).toBe(200)
    expect((await api('DELETE', memberRole, { token: owner.token })).status).toBe(204)
    expect((await read()).status).toBe(403)

    await setEveryone(withHistory)
    expect((await readTimes(3, read)).status).toBe(200)
    expect((await api('DELETE', `/guilds/${guild.id}/members/${member.id}`, { token: owner.token })).status).toBe(204)
    expect((await read()).status).toBe(404)
  })
})

describe('loads under way (reads that await, as every read on PostgreSQL)', () => {
  let made = 0
  const cache = () => rowCache<string, string>(`shared-loads-${++made}`, 16)
  const pending = () => {
    let resolve!: (value: string) => void
    const promise = new Promise<string>((r) => (resolve = r))
    return { promise, resolve }
  }

  test('reads that miss while a load of their key runs share it: one statement, not one per request', async () => {
    const rows = cache()
    const first = pending()
    let loads = 0
    const load = () => (++loads === 1 ? first.promise : Promise.resolve('other'))
    const reads = [rows.read('k', load), rows.read('k', load), rows.read('k', load)]
    first.resolve('row')
    expect(await Promise.all(reads)).toEqual(['row', 'row', 'row'])
    expect(loads).toBe(1)
    expect(await rows.read('k', load)).toBe('row') // kept
  })

  test('a read after the key was forgotten (a write) does not share a load begun before it', async () => {
    const rows = cache()
    const before = pending()
    const early = rows.read('k', () => before.promise)
    rows.forget('k')
    const late = rows.read('k', () => Promise.resolve('new'))
    before.resolve('old')
    expect(await early).toBe('old')
    expect(await late).toBe('new')
    // Nor is the old row kept once it arrives: the next read loads again.
    expect(await rows.read('k', () => Promise.resolve('newer'))).toBe('new')
  })

  test('a write scope that wrote the key reads its own row, never a load under way', async () => {
    await server()
    const rows = cache()
    const outside = pending()
    const early = rows.read('k', () => outside.promise)
    const own = await transaction(async () => {
      rows.forget('k') // the scope writes k
      return rows.read('k', () => Promise.resolve('uncommitted'))
    })
    outside.resolve('committed')
    expect(await early).toBe('committed')
    expect(own).toBe('uncommitted')
  })
})
