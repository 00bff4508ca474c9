// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Issue 40, finding 1, on several nodes: every node runs the event webhooks worker on the one outbox, and a node
// claims a row before it sends it (claimed_by, claimed_until), so each event is sent by one node: exactly once while
// the nodes live, in order per lobby. A node killed while its call is out leaves its claim, which runs out
// (EVENT_WEBHOOK_TIMEOUT_MS + 5 s) and another node sends the event. Before, every node sent every due event.
import { describe, expect, test } from 'bun:test'
import { cli } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

// A timeout of 1 s: a claim runs out 6 s after it was taken.
const NODE_ENV = { EVENT_WEBHOOKS_ALLOW_PRIVATE: 'true', EVENT_WEBHOOK_TIMEOUT_MS: '1000' }
const cluster = await useNodes(2, NODE_ENV)

/** An endpoint that answers the PING, then takes each event after `delayMs` (or holds those `hold` names). */
function endpoint(delayMs: number) {
  const got: { id: string; lobby: string; content: string }[] = []
  let hold: (content: string) => boolean = () => false
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    async fetch(request) {
      const body = JSON.parse(await request.text())
      if (body.type === 0) return new Response(null, { status: 204 })
      const data = body.event.data
      got.push({ id: data.id, lobby: data.lobby_id, content: data.content })
      if (hold(data.content)) await new Promise(() => {})
      await Bun.sleep(delayMs)
      return new Response(null, { status: 204 })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/events`,
    got,
    hold: (fn: typeof hold) => (hold = fn),
    stop: () => server.stop(true),
  }
}

/** An application whose event webhooks go to `url` (set with the CLI: PINGed first). */
async function hookedApp(url: string) {
  const app = await cluster.newApp()
  const set = await cli({ ...cluster.env, ...NODE_ENV }, ['app', 'set', '--id', app.id, '--event-webhook-url', url])
  expect(set.code).toBe(0)
  return app
}

async function waitFor(check: () => boolean, withinMs: number, what: string) {
  for (const until = Date.now() + withinMs; !check(); await Bun.sleep(50))
    if (Date.now() > until) throw new Error(`never: ${what}`)
}

describe.skipIf(!present)('event webhooks on two nodes', () => {
  test('each event is sent by one node: every message once, in order per lobby', async () => {
    // A slow endpoint (200 ms a call): a node that sent what another already sends would show here.
    const r = endpoint(200)
    try {
      const app = await hookedApp(r.url)
      const [a, b] = cluster.nodes
      const lobbies: string[] = []
      for (let i = 0; i < 4; i++) lobbies.push((await call(a, 'POST', '/lobbies', app.bot, {})).body.id)
      const sent = new Map<string, string[]>(lobbies.map((id) => [id, []]))
      for (let n = 0; n < 6; n++)
        await Promise.all(
          lobbies.map(async (id, i) => {
            const posted = await call((n + i) % 2 ? a : b, 'POST', `/lobbies/${id}/messages`, app.bot, {
              content: `m${n}`,
            })
            expect(posted.status).toBe(201)
            sent.get(id)!.push(posted.body.id)
          }),
        )
      const all = [...sent.values()].flat()
      await waitFor(() => all.every((id) => r.got.some((g) => g.id === id)), 30_000, 'every message')
      await Bun.sleep(1500) // a second node's copy would have come by now
      const counts = new Map<string, number>()
      for (const g of r.got) counts.set(g.id, (counts.get(g.id) ?? 0) + 1)
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
      expect(r.got).toHaveLength(all.length)
      for (const id of lobbies) expect(r.got.filter((g) => g.lobby === id).map((g) => g.id)).toEqual(sent.get(id)!)
      expect(await cluster.database.sql`SELECT id FROM lobby_event_deliveries`).toHaveLength(0)
    } finally {
      r.stop()
    }
  }, 90_000)

  test('a node killed while its call is out: its claim runs out and another node sends the event', async () => {
    const r = endpoint(0)
    try {
      const app = await hookedApp(r.url)
      const [a, b] = cluster.nodes
      const lobby = (await call(a, 'POST', '/lobbies', app.bot, {})).body.id
      // Only node a is left to send: b stops (its sockets and work go elsewhere) and a third node comes later.
      cluster.nodes.splice(1, 1)
      await b.stop()
      r.hold((content) => content === 'held')
      expect((await call(a, 'POST', `/lobbies/${lobby}/messages`, app.bot, { content: 'held' })).status).toBe(201)
      await waitFor(() => r.got.length === 1, 10_000, "node a's call")
      const [claim] = await cluster.database.sql`SELECT claimed_by, claimed_until FROM lobby_event_deliveries`
      expect(claim.claimed_by).not.toBeNull()
      a.proc.kill('SIGKILL')
      await a.proc.exited
      cluster.nodes.splice(0, 1)
      r.hold(() => false)
      const c = await cluster.start(NODE_ENV)
      cluster.nodes.push(c)
      // The claim holds until it runs out; then node c sends the event (the one call that was answered).
      await waitFor(() => r.got.length === 2, 20_000, 'the event sent again by node c')
      expect(Date.now()).toBeGreaterThanOrEqual(Number(claim.claimed_until) - 1000)
      expect(r.got.map((g) => g.content)).toEqual(['held', 'held'])
      for (let i = 0; i < 100; i++) {
        if ((await cluster.database.sql`SELECT id FROM lobby_event_deliveries`).length === 0) break
        await Bun.sleep(50)
      }
      expect(await cluster.database.sql`SELECT id FROM lobby_event_deliveries`).toHaveLength(0)
    } finally {
      r.stop()
    }
  }, 90_000)
})
