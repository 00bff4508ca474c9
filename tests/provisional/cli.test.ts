// The operators' side of provisional accounts (issue 44, part 5), as child processes on the test server's database:
// `app auth-provider add|list|remove`, `user list --provisional`, `user delete` (its token and socket end).
import { afterEach, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import { api, databaseEnv, makeApp, makeUser, resetWorld } from '../helpers'
import { cli as run } from '../ops/process-helpers'
import { player } from './helpers'

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
