// A real Discord client library against our REST API.
import { afterEach, expect, test } from 'bun:test'
import { DiscordAPIError, REST } from '@discordjs/rest'
import { makeApp, resetWorld, server } from '../helpers'

afterEach(resetWorld)

async function rest(token: string) {
  const { url } = await server()
  return new REST({ api: `${url}/api`, version: '10', retries: 0 }).setToken(token)
}

test('@discordjs/rest performs authenticated calls with a bot token', async () => {
  const app = await makeApp()
  const me = (await (await rest(app.bot_token)).get('/users/@me')) as { bot: boolean; username: string }
  expect(me.bot).toBe(true)
})

test('errors surface as DiscordAPIError with our code and status', async () => {
  const client = await rest('not-a-token')
  const error: any = await client.get('/users/@me').catch((e) => e)
  expect(error).toBeInstanceOf(DiscordAPIError)
  expect(error.status).toBe(401)
  expect(error.code).toBe(0)
  const app = await makeApp()
  const missing: any = await (await rest(app.bot_token)).get('/no/such/route').catch((e) => e)
  expect(missing).toBeInstanceOf(DiscordAPIError)
  expect(missing.status).toBe(404)
})
