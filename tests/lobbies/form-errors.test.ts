// Issue 28: a wrong type is one 50035 error at its path, at any depth, on the real lobby routes (Elysia routes and
// the lane alike): `POST /lobbies {"members":"not-an-array"}` used to answer one error per character.
import { afterEach, expect, test } from 'bun:test'
import { api, resetWorld } from '../helpers'
import { createLobby, setup } from './helpers'

afterEach(resetWorld)

/** Every path of a Discord error tree with its codes. */
function paths(tree: unknown, prefix = ''): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const [key, value] of Object.entries(tree ?? {})) {
    if (key === '_errors') out[prefix || '(body)'] = (value as { code: string }[]).map((e) => e.code)
    else Object.assign(out, paths(value, prefix ? `${prefix}.${key}` : key))
  }
  return out
}

test('one error per wrong-typed field, at its path, on POST, PATCH, PUT, bulk and messages', async () => {
  const { bot, players } = await setup(1)
  const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
  const cases: [method: string, path: string, token: string, body: unknown, errors: Record<string, string[]>][] = [
    ['POST', '/lobbies', bot, { members: 'not-an-array' }, { members: ['LIST_TYPE_CONVERT'] }],
    ['POST', '/lobbies', bot, { members: { 0: { id: '1' } } }, { members: ['LIST_TYPE_CONVERT'] }],
    ['POST', '/lobbies', bot, { members: ['not-an-object'] }, { 'members.0': ['DICT_TYPE_CONVERT'] }],
    ['POST', '/lobbies', bot, { members: [{ id: ['1', '2'] }] }, { 'members.0.id': ['NUMBER_TYPE_COERCE'] }],
    ['POST', '/lobbies', bot, { metadata: 'text' }, { metadata: ['DICT_TYPE_CONVERT'] }],
    ['POST', '/lobbies', bot, { metadata: { a: ['x'] } }, { 'metadata.a': ['BASE_TYPE_STRING'] }],
    [
      'POST',
      '/lobbies',
      bot,
      { members: [{ id: players[0].id, metadata: 'abc' }] },
      { 'members.0.metadata': ['DICT_TYPE_CONVERT'] },
    ],
    [
      'POST',
      '/lobbies',
      bot,
      { members: [{ id: players[0].id, metadata: { k: { v: 1 } } }] },
      { 'members.0.metadata.k': ['BASE_TYPE_STRING'] },
    ],
    ['PATCH', `/lobbies/${lobby.id}`, bot, { members: 'abcdef' }, { members: ['LIST_TYPE_CONVERT'] }],
    ['PUT', '/lobbies', players[0].bearer, { secret: ['a', 'b'] }, { secret: ['BASE_TYPE_STRING'] }],
    [
      'POST',
      `/lobbies/${lobby.id}/members/bulk`,
      bot,
      ['x', 'y'],
      { '0': ['DICT_TYPE_CONVERT'], '1': ['DICT_TYPE_CONVERT'] },
    ],
    ['POST', `/lobbies/${lobby.id}/members/bulk`, bot, [{ id: { a: 1 } }], { '0.id': ['NUMBER_TYPE_COERCE'] }],
    ['POST', `/lobbies/${lobby.id}/messages`, bot, { content: ['h', 'i'] }, { content: ['BASE_TYPE_STRING'] }],
    ['POST', `/lobbies/${lobby.id}/messages`, bot, { content: 'hi', tts: 'abc' }, { tts: ['BOOLEAN_TYPE_CONVERT'] }],
  ]
  for (const [method, path, token, body, errors] of cases) {
    const r = await api(method, path, { token, body })
    expect({ method, path, body, status: r.status, code: r.body?.code, errors: paths(r.body?.errors) }).toEqual({
      method,
      path,
      body,
      status: 400,
      code: 50035,
      errors,
    })
  }
})
