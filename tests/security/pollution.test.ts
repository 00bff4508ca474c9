// Client-supplied keys are data: a crafted metadata or body key never reaches Object.prototype or a shared object.
import { afterEach, expect, test } from 'bun:test'
import { api, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

afterEach(resetWorld)

const prototypeKeys = () => Object.getOwnPropertyNames(Object.prototype).sort()
const before = prototypeKeys()

const attackKeys = [
  '__proto__.limit',
  '__proto__',
  'constructor.prototype.x',
  'headers',
  'query',
  'params',
  'cookie',
  'offset',
  'orderBy',
  'joins',
  'returning',
  'set',
  'body',
  'response',
  '_errors',
  'a.b.c',
]

test('metadata keys that look like paths stay whole keys in the error tree and pollute nothing', async () => {
  const { bot, players } = await setup(1)
  for (const key of attackKeys) {
    const created = await api('POST', '/lobbies', { token: bot, body: { metadata: { [key]: 1 } } })
    expect(created.status).toBe(400)
    expect(created.body.code).toBe(50035)
    expect(Object.keys(created.body.errors.metadata)).toEqual([key])
    const joined = await api('PUT', '/lobbies', {
      token: players[0].bearer,
      body: { secret: 's', lobby_metadata: { [key]: 1 } },
    })
    expect(joined.status).toBe(400)
    expect(Object.keys(joined.body.errors.lobby_metadata)).toEqual([key])
  }
  expect(prototypeKeys()).toEqual(before)
  expect(({} as Record<string, unknown>).limit).toBeUndefined()
  expect(({} as Record<string, unknown>)._errors).toBeUndefined()
  // Every route still works, and a later form error keeps its details.
  const lobby = await createLobby(bot, { metadata: { ok: 'yes' } })
  const read = await api('GET', `/lobbies/${lobby.id}`, { token: bot })
  expect(read.status).toBe(200)
  expect(read.body.metadata).toEqual({ ok: 'yes' })
  const bad = await api('POST', '/lobbies', { token: bot, body: { idle_timeout_seconds: 'x' } })
  expect(bad.status).toBe(400)
  expect(bad.body.errors.idle_timeout_seconds._errors[0].code).toBe('NUMBER_TYPE_COERCE')
  expect(bad.body.errors._errors).toBeUndefined()
})

test('a valid "__proto__" metadata key is stored and returned as a plain key', async () => {
  const { bot } = await setup(0)
  const created = await api('POST', '/lobbies', { token: bot, raw: '{"metadata":{"__proto__":"v","a.b":"w"}}' })
  expect(created.status).toBe(201)
  expect(created.body.metadata).toEqual(JSON.parse('{"__proto__":"v","a.b":"w"}'))
  const read = await api('GET', `/lobbies/${created.body.id}`, { token: bot })
  expect(Object.keys(read.body.metadata).sort()).toEqual(['__proto__', 'a.b'])
  expect(prototypeKeys()).toEqual(before)
})

test('unknown body keys named like prototype paths pollute nothing (TypeBox error paths)', async () => {
  const { bot } = await setup(0)
  const r = await api('POST', '/lobbies', {
    token: bot,
    raw: '{"members":[{"id":"x","__proto__":{"polluted":1}}],"metadata":{"constructor":{"prototype":1}}}',
  })
  expect(r.status).toBe(400)
  expect(prototypeKeys()).toEqual(before)
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
})
