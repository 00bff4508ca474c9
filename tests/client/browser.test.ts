// suite: one pass
// The built SDK in Chromium (playwright-core, Debian's chromium, fake microphones): a page that loads
// client/dist/index.js as a game's page would, from the game's own site (the API on the server's origin), for each of two players; they chat in
// a lobby (each send seen by the other as a `message` event) and join its voice call, each ending `connected` with
// the other as its participant and receiving the other's audio.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, chromium, type Page } from 'playwright-core'
import { buildClient } from '../../scripts/build-client'
import { startServer } from './server'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const present = existsSync(CHROMIUM)
const dist = mkdtempSync(join(tmpdir(), 'sdk-browser-'))
await buildClient({ quiet: true, declarations: false, outdir: dist })
const PAGE = `<!doctype html><meta charset="utf-8"><title>SDK game</title>
<script type="module">
import { Client } from './index.js'
window.sdk = { Client }
document.title = 'ready'
</script>`

// The game's own site: its page and the built SDK (localhost: Chromium's local network checks want the page local too).
const site = Bun.serve({
  port: 0,
  hostname: 'localhost',
  fetch(request) {
    const name = new URL(request.url).pathname.split('/').pop()!
    if (name === 'game.html') return new Response(PAGE, { headers: { 'content-type': 'text/html' } })
    const file = join(dist, name)
    if (!name.endsWith('.js') || !existsSync(file)) return new Response('', { status: 404 })
    return new Response(Bun.file(file), { headers: { 'content-type': 'text/javascript' } })
  },
})
afterAll(() => site.stop(true))
// The API answers the game's origin (CORS), as a server whose WEB_URL is the game's site.
const server = await startServer({ WEB_URL: `http://localhost:${site.port}` })
const app = await server.newApp()
const [alice, bob] = await Promise.all([server.player(app), server.player(app)])

// Launched at the file's top level (tests/web/browser.ts says why: bun test 1.4.5 and processes hooks start).
const browser: Browser | undefined = present
  ? await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        '--allow-loopback-in-peer-connection',
      ],
    })
  : undefined
afterAll(async () => {
  await browser?.close()
})

/** A page of the game (on the game's own origin, the API on the server's) with the built SDK, for `token`. */
async function gamePage(token: string): Promise<Page> {
  const context = await browser!.newContext()
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(String(e)))
  await page.goto(`${site.url}game.html`)
  await page.waitForFunction(() => (globalThis as any).document.title === 'ready')
  await page.evaluate(
    async ([bearer, baseUrl]) => {
      const w = globalThis as any
      w.client = new w.sdk.Client({ baseUrl, token: `Bearer ${bearer}` })
      w.got = []
      await w.client.gateway.connect()
    },
    [token, `http://localhost:${server.port}`],
  )
  expect(problems).toEqual([])
  return page
}

describe.skipIf(!present)('the built SDK in Chromium', () => {
  let a: Page
  let b: Page
  const secret = `browser-${Date.now()}`

  test('two pages chat in a lobby', async () => {
    ;[a, b] = await Promise.all([gamePage(alice.bearer), gamePage(bob.bearer)])
    for (const page of [a, b])
      await page.evaluate(async (s) => {
        const w = globalThis as any
        w.lobby = await w.client.lobbies.createOrJoin({ secret: s })
        w.lobby.on('message', (m: any) => w.got.push(`${m.author.id}: ${m.content}`))
      }, secret)
    await a.evaluate(() => (globalThis as any).lobby.send('hello from a'))
    await b.evaluate(() => (globalThis as any).lobby.send('hello from b'))
    const expected = [`${alice.id}: hello from a`, `${bob.id}: hello from b`]
    for (const page of [a, b]) {
      await page.waitForFunction((n) => (globalThis as any).got.length >= n, expected.length)
      expect(await page.evaluate(() => (globalThis as any).got)).toEqual(expected)
    }
    expect(
      await a.evaluate(async () => (await (globalThis as any).lobby.history()).map((m: any) => m.content)),
    ).toEqual(['hello from b', 'hello from a'])
  }, 30_000)

  test("both join the lobby's voice call and hear each other", async () => {
    for (const page of [a, b])
      await page.evaluate(async () => {
        const w = globalThis as any
        w.states = []
        w.lobby.voice.on('state', (s: string) => w.states.push(s))
        await w.lobby.voice.join()
      })
    for (const [page, other] of [
      [a, bob.id],
      [b, alice.id],
    ] as const) {
      await page.waitForFunction(
        (id) => {
          const v = (globalThis as any).lobby.voice
          return v.state === 'connected' && v.participants.includes(id)
        },
        other,
        { timeout: 20_000 },
      )
      // Audio packets from the other member arrive on the call's connection.
      await page.waitForFunction(
        async () => {
          const pc = (globalThis as any).lobby.voice.peerConnection
          let packets = 0
          ;(await pc?.getStats())?.forEach((r: any) => {
            if (r.type === 'inbound-rtp' && r.kind === 'audio') packets += r.packetsReceived
          })
          return packets > 0
        },
        undefined,
        { timeout: 20_000, polling: 200 },
      )
    }
    await a.evaluate(() => (globalThis as any).lobby.voice.setMuted(true))
    expect(await a.evaluate(() => (globalThis as any).lobby.voice.muted)).toBe(true)
    await a.evaluate(() => (globalThis as any).lobby.voice.leave())
    expect(await a.evaluate(() => (globalThis as any).lobby.voice.state)).toBe('idle')
    await b.waitForFunction(() => (globalThis as any).lobby.voice.participants.length === 0, undefined, {
      timeout: 20_000,
    })
  }, 60_000)
})
