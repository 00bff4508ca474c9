// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The game client SDK (client/) on two nodes behind a load balancer (balancer.ts), every node's PUBLIC_URL the
// balancer's: the node its Gateway socket is on is SIGKILLed, and the SDK resumes its one session on the other node
// (RESUMED, never a second READY) with every message posted meanwhile, once each, in order.
import { expect, test } from 'bun:test'
import { Client } from '../../client/src/index'
import { grant, REDIRECT } from '../client/server'
import { cli, freePort } from '../ops/process-helpers'
import { type Balancer, startBalancer } from './balancer'
import { present, useNodes } from './harness'

const balancer: Balancer | undefined = present ? startBalancer() : undefined
const nodeEnv = () => ({ PUBLIC_URL: balancer!.url, PORT: String(freePort()) })
const world = await useNodes(2, nodeEnv)
if (balancer) balancer.rotation = world.nodes.map((n) => n.port)

async function until(what: string, check: () => boolean, ms = 20_000) {
  for (const end = Date.now() + ms; !check(); await Bun.sleep(20))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
}

test.skipIf(!present)(
  'SIGKILL of its node: the SDK resumes on the other node with nothing lost',
  async () => {
    const b = balancer!
    const made = await cli(world.env, [
      'app',
      'create',
      '--name',
      `SDK cluster ${Date.now()}`,
      '--redirect-uri',
      REDIRECT,
    ])
    const created = JSON.parse(made.stdout)
    const app = { id: created.id, bot: created.bot_token, clientSecret: created.client_secret }
    const [alice, bob] = await Promise.all([world.newUser(), world.newUser()])
    const [aliceTokens, bobTokens] = await Promise.all([
      grant(world.nodes[0].url, alice.token, app),
      grant(world.nodes[0].url, bob.token, app),
    ])
    const a = new Client({ baseUrl: b.url, token: `Bearer ${aliceTokens.access_token}`, gateway: { backoff: 100 } })
    const lifecycle: string[] = []
    a.gateway.on('ready', () => lifecycle.push('ready'))
    a.gateway.on('resumed', () => lifecycle.push('resumed'))
    try {
      await a.gateway.connect()
      const secret = `cluster-${Date.now()}`
      const lobby = await a.lobbies.createOrJoin({ secret })
      const got: string[] = []
      lobby.on('message', (m) => got.push(m.content))
      await until('the socket at the balancer', () => b.gatewayLinks().length === 1)
      const index = world.nodes.findIndex((n) => n.port === b.gatewayLinks()[0].port)
      const survivor = world.nodes[1 - index]
      // The poster talks to the node that stays.
      const poster = new Client({ baseUrl: survivor.url, token: `Bearer ${bobTokens.access_token}` })
      const theirs = await poster.lobbies.createOrJoin({ secret })
      await theirs.send('before')
      await until('the first message', () => got.length === 1)

      b.hold()
      world.nodes[index].proc.kill('SIGKILL')
      try {
        await until("the SDK's new Gateway connection", () => b.held().length > 0)
        for (const content of ['m1', 'm2', 'm3']) await theirs.send(content)
      } finally {
        b.release()
      }
      await until('RESUMED', () => lifecycle.includes('resumed'))
      await theirs.send('after')
      await until('the message after', () => got.includes('after'))
      await Bun.sleep(200)
      expect(got).toEqual(['before', 'm1', 'm2', 'm3', 'after'])
      expect(lifecycle).toEqual(['ready', 'resumed'])
    } finally {
      await a.close()
      b.stop()
    }
  },
  60_000,
)
