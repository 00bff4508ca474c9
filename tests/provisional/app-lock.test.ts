// A locked application (issue 44, part 3: `app lock`): at once its Bot token, its OAuth2 tokens (its provisional
// players' included) and its token endpoints stop, and its bot's and players' sockets close; unlocked, its tokens work
// again. From the CLI (another process) the server sees the commit: REST at once, and its bot's and players' sockets
// within the second (the Gateway re-checks credentials at its next sweep after another process's commit).
import { afterEach, expect, test } from 'bun:test'
import { setApplicationLock } from '../../src/oauth2/revocation'
import { GatewayClient } from '../gateway-client'
import { api, databaseEnv, makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
import { cli } from '../ops/process-helpers'
import { botToken, player } from './helpers'

const open: GatewayClient[] = []
afterEach(() => {
  for (const c of open.splice(0)) c.close()
  resetWorld()
})
async function socket(token: string) {
  const { client } = await GatewayClient.identified(token)
  open.push(client)
  return client
}

test("a lock ends the bot, its players and its full accounts' grants at once; an unlock brings the tokens back", async () => {
  const app = await makeApp()
  const other = await makeApp()
  const guest = await player(app, 'locked-out')
  const person = await makeUser()
  const personBearer = await bearerFor(person, app, 'identify lobbies.write gateway.connect')
  const otherGuest = await player(other, 'unaffected')
  const botSocket = await socket(app.bot_token)
  const guestSocket = await socket(guest.bearer)
  const personSocket = await socket(personBearer)
  const personSession = await socket(person.token)
  const untouched = await socket(otherGuest.bearer)

  expect(await setApplicationLock(app.id, true)).toBe(true)
  for (const s of [botSocket, guestSocket, personSocket]) expect((await s.waitForClose(1500)).code).toBe(4004)
  for (const token of [`Bot ${app.bot_token}`, guest.bearer, personBearer])
    expect((await api('GET', '/users/@me', { token })).status).toBe(401)
  expect((await botToken(app.bot_token, 'locked-out')).status).toBe(401)
  const exchange = await api('POST', '/partner-sdk/token', {
    body: {
      client_id: app.id,
      external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
      external_auth_token: guest.token.access_token,
    },
  })
  expect([exchange.status, exchange.body.code]).toEqual([404, 10002])
  // The person's own session, and another application's player, are untouched.
  await Bun.sleep(100)
  expect(personSession.closed).toBeNull()
  expect(untouched.closed).toBeNull()
  expect((await api('GET', '/users/@me', { token: otherGuest.bearer })).status).toBe(200)

  expect(await setApplicationLock(app.id, false)).toBe(true)
  expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(200)
  expect((await botToken(app.bot_token, 'locked-out')).status).toBe(200)
  expect(await setApplicationLock('1234567890123456789', true)).toBe(false)
}, 20_000)

test("`app lock` from the CLI: tokens stop at once, the bot's and a player's sockets close within the second; `app unlock`", async () => {
  const app = await makeApp()
  const other = await makeApp()
  const guest = await player(app, 'cli-locked')
  const guestSocket = await socket(guest.bearer)
  const botSocket = await socket(app.bot_token)
  const otherBot = await socket(other.bot_token)
  const env = { ...process.env, ...databaseEnv(), LOG_LEVEL: 'silent' }
  const locked = await cli(env, ['app', 'lock', '--id', app.id])
  const committed = Date.now()
  expect(locked.code).toBe(0)
  expect(JSON.parse(locked.stdout)).toEqual({ id: app.id, locked: true })
  // Not the 5 s periodic re-check: the sweep after the commit (once a second), with room for a loaded machine.
  for (const s of [guestSocket, botSocket]) expect((await s.waitForClose(4000)).code).toBe(4004)
  expect(Date.now() - committed).toBeLessThan(4000)
  // Asked once the server has seen the commit (the sockets closed): on PostgreSQL the CLI's NOTIFY reaches it on its
  // own connection, and a request sent the moment the CLI exits can be answered before it arrives.
  expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(401)
  expect(otherBot.closed).toBeNull()
  const listed = JSON.parse((await cli(env, ['app', 'list'])).stdout)
  expect(listed.find((a: { id: string }) => a.id === app.id).locked).toBe(true)
  expect((await cli(env, ['app', 'unlock', '--id', app.id])).code).toBe(0)
  expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(200)
}, 30_000)
