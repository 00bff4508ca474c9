// The lobby page in real browsers with fake microphones: two and then three members join the lobby's call from their
// pages and each page's RTCPeerConnection receives audio packets from every other member; mute stops a member's
// packets reaching the others; a member who leaves stops receiving and is no longer forwarded; the member list
// shows who is in the call and the chat shows messages as they are sent; a non-member's page has no call to join.
import { describe, expect } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { requestReconnect } from '../../src/gateway/dispatch'
import { sessionsOfUser } from '../../src/gateway/sessions'
import { stopAllCalls } from '../../src/voice/calls'
import { api, makeUser } from '../helpers'
import { createLobby, type Player, setup } from '../lobbies/helpers'
import { browserTest, expectText, FAKE_MEDIA, otherContext, signIn, useBrowser } from './browser'
import { expectKeyboardWalk } from './keyboard'

const web = await useBrowser(FAKE_MEDIA)

/**
 * Every RTCPeerConnection the page makes is kept in window.__pcs for the test to read its statistics; the Gateway
 * sockets it opens are counted in window.__sockets.
 */
const RECORD_PEER_CONNECTIONS = () => {
  const w = globalThis as any
  w.__pcs = []
  w.__sockets = 0
  const Original = w.RTCPeerConnection
  w.RTCPeerConnection = class extends Original {
    constructor(...args: any[]) {
      super(...args)
      w.__pcs.push(this)
    }
  }
  const OriginalSocket = w.WebSocket
  w.WebSocket = class extends OriginalSocket {
    // window.__offline: new sockets fail (a path that is no WebSocket), as with the network down.
    constructor(url: string, ...args: any[]) {
      super(w.__offline ? `ws://${w.location.host}/offline` : url, ...args)
      w.__sockets += 1
    }
    // window.__loseAnswer: the next answer (op 100) is lost, as on a socket that dies with it unread.
    send(data: any) {
      if (w.__loseAnswer && typeof data === 'string' && data.startsWith('{"op":100,')) {
        w.__loseAnswer = false
        return
      }
      super.send(data)
    }
  }
}

type Stream = { user: string | null; packets: number }
/** The page's latest peer connection: packets received per mid, with the member (msid stream id) an active mid carries. */
type Stats = { state: string; connections: number; mids: Record<string, Stream> } | null

async function stats(page: Page): Promise<Stats> {
  return page.evaluate(async () => {
    const pcs = (globalThis as any).__pcs as any[]
    const pc = pcs.at(-1)
    if (!pc) return null
    const mids: Record<string, { user: string | null; packets: number }> = {}
    if (pc.connectionState === 'closed') return { state: 'closed', connections: pcs.length, mids }
    for (const section of (pc.remoteDescription?.sdp ?? '').split('\r\nm=').slice(1)) {
      const mid = /\r\na=mid:(\S+)/.exec(section)?.[1]
      if (!mid) continue
      const active = !/\r\na=(inactive|recvonly)\b/.test(section)
      mids[mid] = { user: active ? (/\r\na=msid:(\S+)/.exec(section)?.[1] ?? null) : null, packets: 0 }
    }
    const midOfTrack = new Map(pc.getTransceivers().map((t: any) => [t.receiver.track.id, t.mid]))
    ;(await pc.getStats()).forEach((r: any) => {
      if (r.type !== 'inbound-rtp' || r.kind !== 'audio') return
      const mid = r.mid ?? midOfTrack.get(r.trackIdentifier)
      if (mid && mids[mid]) mids[mid].packets = r.packetsReceived
    })
    return { state: pc.connectionState, connections: pcs.length, mids }
  })
}

/** Packets received from each member (by the member its mid carries now). */
function byUser(s: Stats): Map<string, number> {
  const out = new Map<string, number>()
  for (const stream of Object.values(s?.mids ?? {}))
    if (stream.user) out.set(stream.user, (out.get(stream.user) ?? 0) + stream.packets)
  return out
}

type Member = { id: string; page: Page }

/**
 * Within `ms`, every page receives at least `min` packets from every other member listed (Opus every 20 ms is 50 a
 * second; a third of that leaves room for a slow machine), counted on all pages from the same start. Done as soon as
 * every count is there; a count still short when `ms` has passed fails.
 */
async function everyoneHears(members: Member[], ms = 3000, min = ms / 20 / 3) {
  const before = (await Promise.all(members.map((m) => stats(m.page)))).map(byUser)
  const deadline = Date.now() + ms
  for (;;) {
    const late = Date.now() >= deadline
    const now = await Promise.all(members.map((m) => stats(m.page)))
    const short = members.flatMap((m, i) =>
      members
        .filter((other) => other !== m)
        .map((other) => ({
          pair: `${m.id} from ${other.id}: ${JSON.stringify(now[i])}`,
          grew: (byUser(now[i]!).get(other.id) ?? 0) - (before[i]!.get(other.id) ?? 0),
        }))
        .filter(({ grew }) => grew < min),
    )
    if (!short.length) return
    if (late) for (const { pair, grew } of short) expect(grew, pair).toBeGreaterThanOrEqual(min)
    await Bun.sleep(100)
  }
}

/** The mid that carries `userId` on `page` now. */
async function midOf(page: Page, userId: string): Promise<string> {
  const s = await stats(page)
  const entry = Object.entries(s?.mids ?? {}).find(([, stream]) => stream.user === userId)
  if (!entry) throw new Error(`no stream of ${userId}: ${JSON.stringify(s)}`)
  return entry[0]
}

/** The packets on `mid` stop growing (a short settle for packets in flight, then a second of silence). */
async function silentOn(page: Page, mid: string) {
  await Bun.sleep(300)
  const before = (await stats(page))?.mids[mid]?.packets ?? 0
  await Bun.sleep(1000)
  expect((await stats(page))?.mids[mid]?.packets ?? 0).toBe(before)
}

async function openLobby(page: Page, token: string, lobbyId: string) {
  await page.addInitScript(RECORD_PEER_CONNECTIONS)
  await signIn(page, token)
  await page.goto(`/lobbies/${lobbyId}`)
  await expectText(page.locator('#connection'), 'Connected.')
}

async function join(page: Page) {
  await page.getByRole('button', { name: 'Join voice' }).click()
  await page.locator('#call-state[data-state="connected"]').waitFor({ timeout: 15_000 })
}

const row = (page: Page, userId: string) => page.locator(`#members li[data-user="${userId}"]`)

async function pageIn(context: BrowserContext): Promise<Page> {
  return (await otherContext(context)).newPage()
}

describe('lobby page', () => {
  browserTest(
    web,
    'members join the call from their pages, hear each other, mute, leave; chat arrives live; a non-member cannot join',
    async (first, context) => {
      const { bot, players } = await setup(3)
      const lobby = await createLobby(bot, { members: players.map((p) => ({ id: p.id })) })
      const [a, b, c] = [
        { id: players[0]!.id, page: first },
        { id: players[1]!.id, page: await pageIn(context) },
        { id: players[2]!.id, page: await pageIn(context) },
      ]
      try {
        await Promise.all([
          openLobby(a.page, players[0]!.token, lobby.id),
          openLobby(b.page, players[1]!.token, lobby.id),
          openLobby(c.page, players[2]!.token, lobby.id),
        ])

        // Two members.
        await Promise.all([join(a.page), join(b.page)])
        await everyoneHears([a, b])
        await row(a.page, b.id).and(a.page.locator('[data-connected="true"]')).waitFor()

        // A's Gateway connection drops (op 7 here; a server too busy to answer a heartbeat in time closes it the same
        // way): the page resumes its session on a new socket and the call goes on, on the same peer connection.
        const sockets = await a.page.evaluate(() => (globalThis as any).__sockets)
        requestReconnect(a.id)
        await a.page.waitForFunction((n) => (globalThis as any).__sockets > n, sockets)
        await expectText(a.page.locator('#connection'), 'Connected.')
        await everyoneHears([a, b])
        expect(await a.page.locator('#call-state').getAttribute('data-state')).toBe('connected')
        expect((await stats(a.page))?.connections).toBe(1)

        // A third joins: the server re-offers to the first two, and everyone hears everyone.
        await join(c.page)
        await everyoneHears([a, b, c])
        for (const m of [a, b, c])
          for (const other of [a, b, c])
            await row(m.page, other.id).and(m.page.locator('[data-connected="true"]')).waitFor()
        // The speaking indicator follows the (beeping) fake microphones: the member's own and the others'.
        for (const other of [a, b, c])
          await row(a.page, other.id).and(a.page.locator('[data-speaking="true"]')).waitFor({ timeout: 5000 })

        // The chat: a message a member sends (from the game, with its OAuth2 token) shows on every page at once.
        const sent = await api('POST', `/lobbies/${lobby.id}/messages`, {
          token: players[1]!.bearer,
          body: { content: 'ready when you are' },
        })
        expect(sent.status).toBe(201)
        for (const m of [a, b, c])
          await expectText(
            m.page.locator(`#messages li[data-message="${sent.body.id}"] .content`),
            'ready when you are',
          )
        await expectText(
          a.page.locator(`#messages li[data-message="${sent.body.id}"] .author`),
          sent.body.author.username,
        )
        expect(sent.body.author.id).toBe(b.id)

        // From the page's own box (the first-party token): Enter sends, markdown and links rendered, never HTML.
        await a.page.locator('#message-input').fill('**gg** <b>x</b> https://example.com/a')
        await a.page.locator('#message-input').press('Enter')
        for (const m of [a, b, c]) {
          const item = m.page.locator('#messages li', { hasText: 'gg' }).last()
          await expectText(item.locator('.content strong'), 'gg')
          expect(await item.locator('.content a').getAttribute('href')).toBe('https://example.com/a')
          expect(await item.locator('.content b').count()).toBe(0)
        }
        expect(await a.page.locator('#message-input').inputValue()).toBe('')

        // Mute: the others stop receiving the muted member, who still hears them; the lists say so.
        const cOnA = await midOf(a.page, c.id)
        const cOnB = await midOf(b.page, c.id)
        await c.page.getByRole('button', { name: 'Mute' }).click()
        expect(await c.page.getByRole('button', { name: 'Unmute' }).getAttribute('aria-pressed')).toBe('true')
        await row(a.page, c.id).and(a.page.locator('[data-muted="true"]')).waitFor()
        await Promise.all([silentOn(a.page, cOnA), silentOn(b.page, cOnB)])
        expect(await row(a.page, c.id).getAttribute('data-speaking')).toBe('false')
        const cHears = byUser(await stats(c.page))
        await Bun.sleep(1000)
        const cHearsLater = byUser(await stats(c.page))
        for (const other of [a, b])
          expect((cHearsLater.get(other.id) ?? 0) - (cHears.get(other.id) ?? 0)).toBeGreaterThan(10)

        // Unmute: forwarded again.
        await c.page.getByRole('button', { name: 'Unmute' }).click()
        await everyoneHears([a, c], 1000)

        // B leaves: B's connection is closed (it receives nothing more) and A and C stop receiving B.
        const bOnA = await midOf(a.page, b.id)
        const bOnC = await midOf(c.page, b.id)
        await b.page.getByRole('button', { name: 'Leave' }).click()
        await expectText(b.page.locator('#call-state'), 'You left the call.')
        const left = await stats(b.page)
        expect(left?.state).toBe('closed')
        await row(a.page, b.id).and(a.page.locator('[data-connected="false"]')).waitFor()
        await Promise.all([silentOn(a.page, bOnA), silentOn(c.page, bOnC)])
        expect((await stats(b.page))?.connections).toBe(left?.connections) // no new connection either
        await everyoneHears([a, c], 1000)
      } finally {
        await stopAllCalls()
      }
    },
    60_000,
  )

  browserTest(
    web,
    'an answer lost with a dying Gateway socket is sent again once the session resumes',
    async (first, context) => {
      const { bot, players } = await setup(2)
      const lobby = await createLobby(bot, { members: players.map((p) => ({ id: p.id })) })
      const [a, b] = [
        { id: players[0]!.id, page: first },
        { id: players[1]!.id, page: await pageIn(context) },
      ]
      try {
        await openLobby(a.page, players[0]!.token, lobby.id)
        await openLobby(b.page, players[1]!.token, lobby.id)
        await join(a.page)
        // B's joining re-offers to A; A's answer is lost, then A's socket drops and the session resumes.
        await a.page.evaluate(() => ((globalThis as any).__loseAnswer = true))
        await join(b.page)
        await a.page.waitForFunction(() => (globalThis as any).__loseAnswer === false)
        const sockets = await a.page.evaluate(() => (globalThis as any).__sockets)
        requestReconnect(a.id)
        await a.page.waitForFunction((n) => (globalThis as any).__sockets > n, sockets)
        await everyoneHears([a, b])
      } finally {
        await stopAllCalls()
      }
    },
    45_000,
  )

  browserTest(
    web,
    'a Gateway session the page could not resume ends its call: a new session has none',
    async (page) => {
      const { bot, players } = await setup(1)
      const me = players[0]!
      const lobby = await createLobby(bot, { members: [{ id: me.id }] })
      try {
        await openLobby(page, me.token, lobby.id)
        await join(page)
        // The page's reconnects go nowhere for a while (it would resume at once, op 7 asking for it).
        await page.evaluate(() => {
          ;(globalThis as any).__offline = true
        })
        requestReconnect(me.id)
        // Once the socket is closed, the session waits for a resume; past the resume window it is gone.
        while (sessionsOfUser(me.id).some((s) => s.ws)) await Bun.sleep(20)
        clock.advance(config().gatewayResumeWindowMs + 1000)
        await page.evaluate(() => {
          ;(globalThis as any).__offline = false
        })
        await expectText(
          page.locator('#call-state'),
          'The connection to the server dropped. Join again when it is back.',
        )
        expect((await stats(page))?.state).toBe('closed')
        await expectText(page.locator('#connection'), 'Connected.')
      } finally {
        await stopAllCalls()
      }
    },
  )

  browserTest(web, 'a non-member opens the lobby page: told so, with no call to join', async (page) => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0]!.id }] })
    const outsider = await makeUser()
    await page.addInitScript(RECORD_PEER_CONNECTIONS)
    await signIn(page, outsider.token)
    await page.goto(`/lobbies/${lobby.id}`)
    await expectText(
      page.locator('#lobby-notice'),
      'This lobby does not exist (it may have closed after being idle), or you are not one of its members.',
    )
    expect(await page.getByRole('button', { name: 'Join voice' }).isVisible()).toBe(false)
    // Not a dead end (UX-T4 finding 22): a way home, and the navigation.
    expect(await page.getByRole('link', { name: 'Go to your lobbies' }).getAttribute('href')).toBe('/app')
    expect(await page.getByRole('navigation').getByRole('link', { name: 'Home' }).isVisible()).toBe(true)
    // No media was ever set up for it (the server's refusal of a stranger's op 17: tests/voice/calls.test.ts).
    expect(await page.evaluate(() => (globalThis as any).__pcs.length)).toBe(0)
  })
})

describe('keyboard', () => {
  browserTest(
    web,
    'Tab walks login, home and lobby in reading order, reaching every action, each with a visible focus ring',
    async (page) => {
      const NAV = ['Lobby server', 'Home', 'Settings', 'Log out']
      await page.goto('/login')
      await page.getByLabel('E-mail or phone number').waitFor()
      // The e-mail field has the focus on arrival (UX-T4 finding 29): typing goes where it is meant to.
      expect(await page.evaluate('document.activeElement.id')).toBe('login')
      await expectKeyboardWalk(page, [
        'Lobby server',
        'E-mail or phone number',
        'Password',
        'Forgot your password?',
        'Log in',
        'Sign in with a passkey',
        'Register',
      ])

      const { bot, players } = await setup(3)
      const [me, friend, asker] = players as [Player, Player, Player]
      const named = async (p: Player) => (await api('GET', '/users/@me', { token: p.token })).body.username as string
      await api('PUT', `/users/@me/relationships/${me.id}`, { token: friend.token, body: {} })
      await api('PUT', `/users/@me/relationships/${friend.id}`, { token: me.token, body: {} })
      await api('PUT', `/users/@me/relationships/${me.id}`, { token: asker.token, body: {} })
      const lobby = await createLobby(bot, { members: [{ id: me.id }, { id: friend.id }], metadata: { name: 'Squad' } })
      await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'hello' } })
      await signIn(page, me.token)
      await page.goto('/app')
      await page.locator(`#friends li[data-user="${friend.id}"]`).waitFor()
      const [friendName, askerName] = [await named(friend), await named(asker)]
      // Home: the navigation, the lobbies, then friends (add, requests, the list), then the account.
      await expectKeyboardWalk(page, [
        ...NAV,
        'Squad',
        'Add a friend by their username',
        'Send friend request',
        `Accept ${askerName}'s friend request`,
        `Decline ${askerName}'s friend request`,
        `Remove ${friendName} from your friends`,
        `Block ${friendName}`,
        'Security settings',
      ])
      // Accepting from the keyboard: Enter on the focused button.
      await page.getByRole('button', { name: `Accept ${askerName}'s friend request` }).focus()
      await page.keyboard.press('Enter')
      await page.locator(`#friends li[data-user="${asker.id}"]`).waitFor()

      // The lobby: the navigation, the call, the chat (its scrollable list, the box, Send).
      await page.goto(`/lobbies/${lobby.id}`)
      await expectText(page.locator('#connection'), 'Connected.')
      await expectKeyboardWalk(page, [...NAV, 'Join voice', 'Messages', 'Message', 'Send'])
    },
  )
})
