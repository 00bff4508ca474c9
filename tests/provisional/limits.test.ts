// The bot endpoint's own rate limit (issue 44): 500 calls a second per application, then 429 with Discord's body and
// headers; another application keeps its own count. Route limits on (tests/preload.ts turns them off elsewhere), the
// clock frozen so that the 501 calls fall in one window whatever the machine's load.
import { afterAll, beforeAll, expect, setSystemTime, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { api, makeApp, resetWorld, server } from '../helpers'

beforeAll(async () => {
  await server()
  setConfig({ ...config(), routeRateLimits: true })
})
afterAll(() => {
  setSystemTime()
  setConfig({ ...config(), routeRateLimits: false })
  resetWorld()
})

const ask = (app: { bot_token: string }, id: string) =>
  api('POST', '/partner-sdk/token/bot', {
    token: `Bot ${app.bot_token}`,
    body: { external_user_id: id },
    rateLimited: 'return',
  })

test('500 calls a second per application, the 501st 429 with retry_after; another application unaffected', async () => {
  const [app, other] = [await makeApp(), await makeApp()]
  resetWorld()
  // The start of a second: the window of the first call holds all of them.
  setSystemTime(new Date(Math.ceil(Date.now() / 1000) * 1000 + 5000))
  for (let i = 0; i < 500; i++) {
    const r = await ask(app, `p${i % 7}`)
    if (r.status !== 200) throw new Error(`call ${i + 1}: ${r.status} ${JSON.stringify(r.body)}`)
  }
  const over = await ask(app, 'p0')
  expect(over.status).toBe(429)
  expect(over.body).toMatchObject({ message: 'You are being rate limited.', global: false })
  expect(over.body.retry_after).toBeGreaterThan(0)
  expect(over.body.retry_after).toBeLessThanOrEqual(1)
  expect(over.headers.get('x-ratelimit-limit')).toBe('500')
  expect(over.headers.get('retry-after')).toBe('1')
  expect((await ask(other, 'p0')).status).toBe(200)
}, 60_000)
