// The smallest reproductions of what the fuzzing, crash and concurrency proofs of issue 19 found, one per fix.
import { afterEach, expect, test } from 'bun:test'
import { api, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

afterEach(resetWorld)

test('an object with its own "toString" key where a string or integer is expected: 400 form error, not 500', async () => {
  // Found by fuzz-rest: Elysia's validation message interpolates the value (`${value}`), and so did ours
  // (String(value)); an object whose own toString is not a function cannot be turned into a string.
  const user = await makeUser()
  const hand = await api('POST', '/auth/handoff/exchange', { raw: '{"key":{"toString":false},"handoff_token":""}' })
  expect(hand.status).toBe(400)
  expect(hand.body.errors.key._errors[0].code).toBe('BASE_TYPE_STRING')
  const logout = await api('POST', '/auth/sessions/logout', { token: user.token, raw: '{"session_id_hashes":[{"toString":0}]}' })
  expect(logout.status).toBe(400)
  const escaped = await api('POST', '/auth/handoff/exchange', { raw: '{"key":"k","handoff_token":{"valueOf":1,"toStr\\u0069ng":2}}' })
  expect(escaped.status).toBe(400)
  const { bot } = await setup(0)
  const lobby = await api('POST', '/lobbies', { token: bot, raw: '{"idle_timeout_seconds":{"toString":"x","valueOf":"y"}}' })
  expect(lobby.status).toBe(400)
  expect(lobby.body.errors.idle_timeout_seconds._errors[0].code).toBe('NUMBER_TYPE_COERCE')
  // The keys are still data: a metadata map with them is stored and read back as sent.
  const created = await createLobby(bot, { metadata: { toString: 'a', valueOf: 'b' } })
  expect(created.metadata).toEqual({ toString: 'a', valueOf: 'b' })
  const read = await api('GET', `/lobbies/${created.id}`, { token: bot })
  expect(read.body.metadata).toEqual({ toString: 'a', valueOf: 'b' })
})
