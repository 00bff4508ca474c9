// before / after / limit on every paged route: validated at the parameter, and honoured.
import { afterEach, describe, expect, test } from 'bun:test'
import { api, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

afterEach(resetWorld)

describe('GET /lobbies/{id}/messages', () => {
  test('before and after page through the whole history; limit 1-200 at its edges', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const ids: string[] = []
    for (let i = 0; i < 7; i++)
      ids.push((await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: `m${i}` } })).body.id)
    const read = (q: string) => api('GET', `/lobbies/${lobby.id}/messages?${q}`, { token: players[0].bearer })
    const first = await read('limit=3')
    expect(first.body.map((m: any) => m.content)).toEqual(['m6', 'm5', 'm4'])
    const second = await read(`limit=3&before=${first.body[2].id}`)
    expect(second.body.map((m: any) => m.content)).toEqual(['m3', 'm2', 'm1'])
    const third = await read(`limit=3&before=${second.body[2].id}`)
    expect(third.body.map((m: any) => m.content)).toEqual(['m0'])
    const newer = await read(`limit=2&after=${ids[1]}`)
    expect(newer.body.map((m: any) => m.content)).toEqual(['m3', 'm2'])
    expect((await read('limit=200')).status).toBe(200)
    for (const [q, field, code] of [
      ['limit=201', 'limit', 'NUMBER_TYPE_MAX'],
      ['limit=0', 'limit', 'NUMBER_TYPE_MIN'],
      ['limit=-1', 'limit', 'NUMBER_TYPE_MIN'],
      ['limit=abc', 'limit', 'NUMBER_TYPE_COERCE'],
      ['before=abc', 'before', 'NUMBER_TYPE_COERCE'],
      ['after=-5', 'after', 'NUMBER_TYPE_COERCE'],
    ]) {
      const r = await read(q)
      expect(r.status).toBe(400)
      expect(r.body.errors[field]._errors[0].code).toBe(code)
    }
  })
})

describe('GET /channels/{id}/messages and /users/@me/guilds', () => {
  test('channel messages: limit errors land on errors.limit; 100 passes, 101 fails', async () => {
    const owner = await makeUser()
    const guild = await api('POST', '/guilds', { token: owner.token, body: { name: 'Paging' } })
    const channel = await api('POST', `/guilds/${guild.body.id}/channels`, {
      token: owner.token,
      body: { name: 'general' },
    })
    const read = (q: string) => api('GET', `/channels/${channel.body.id}/messages?${q}`, { token: owner.token })
    expect((await read('limit=100')).status).toBe(200)
    for (const q of ['limit=101', 'limit=-1', 'limit=0', 'limit=1.5']) {
      const r = await read(q)
      expect(r.status).toBe(400)
      expect(r.body.errors.limit._errors).toHaveLength(1)
      expect(r.body.errors._errors).toBeUndefined()
    }
  })

  test('guilds of the caller: limit 1-200 validated; before/after/limit honoured in id order', async () => {
    const user = await makeUser()
    const ids: string[] = []
    for (let i = 0; i < 4; i++)
      ids.push((await api('POST', '/guilds', { token: user.token, body: { name: `g${i}` } })).body.id)
    const list = (q: string) => api('GET', `/users/@me/guilds?${q}`, { token: user.token })
    expect((await list('')).body.map((g: any) => g.id)).toEqual(ids)
    expect((await list('limit=2')).body.map((g: any) => g.id)).toEqual(ids.slice(0, 2))
    expect((await list(`after=${ids[0]}&limit=2`)).body.map((g: any) => g.id)).toEqual(ids.slice(1, 3))
    expect((await list(`before=${ids[3]}&limit=2`)).body.map((g: any) => g.id)).toEqual(ids.slice(1, 3))
    expect((await list('limit=200')).status).toBe(200)
    for (const q of ['limit=-1', 'limit=abc', 'limit=201', 'before=x']) {
      const r = await list(q)
      expect(r.status).toBe(400)
      expect(r.body.code).toBe(50035)
    }
  })
})
