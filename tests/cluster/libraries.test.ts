// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Real client libraries, unchanged, on three nodes behind one load balancer (balancer.ts, a round-robin TCP one in this
// process), as an operator runs them: every node's PUBLIC_URL is the balancer's address, so GET /gateway/bot and
// READY's resume_gateway_url send the library back through it. A guild's member posts messages through the balancer
// one after another throughout (each a new connection, so they spread over the nodes; a post cut off by a dying node
// is sent again, safe with its nonce and enforce_nonce). The node the bot's Gateway socket is on (the balancer knows)
// is then stopped (`Stop`): by SIGTERM as an upgrade does (taken out of the rotation first; op 7 and close 4000 to its
// sockets), by SIGTERM with the balancer not told, or by SIGKILL (a crash; left in the rotation, as until a balancer's
// health check notices: it refuses connections, or while it dies closes them unanswered, and the balancer tries the
// next node). Checked: the library resumes its one session (Resume and RESUMED, never an Identify, an op 9 or a second
// READY) on another node, and hands the bot every acknowledged message once, in the order they were posted, with
// growing `s`. The node is then replaced by a new one, as an upgrade does. discord.js, discord.py and Discordeno.
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createBot, GatewayIntents } from '@discordeno/bot'
import { Client, Events, GatewayIntentBits, type Message } from 'discord.js'
import { freePort } from '../ops/process-helpers'
import { type Balancer, startBalancer } from './balancer'
import { call, present, useNodes } from './harness'

// The balancer's port is chosen before the nodes start: it is their PUBLIC_URL.
const balancer: Balancer | undefined = present ? startBalancer() : undefined
const nodeEnv = () => ({ PUBLIC_URL: balancer!.url, PORT: String(freePort()) })
const world = await useNodes(3, nodeEnv)
if (balancer) balancer.rotation = world.nodes.map((n) => n.port)

/** Until `check` holds, `ms` at most (then an error saying what was awaited, and `state`). */
async function until(what: string, check: () => boolean, ms = 20_000, state: () => unknown = () => '') {
  for (const end = Date.now() + ms; !check(); await Bun.sleep(20))
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} ${JSON.stringify(state())}`)
}

type World = Awaited<ReturnType<typeof makeGuild>>

/** A guild the bot made (it owns it), with a member who posts; every call through the balancer. */
async function makeGuild(name: string) {
  const lb = { url: balancer!.url }
  const app = await world.newApp()
  const poster = await world.newUser()
  const guild = await call(lb, 'POST', '/guilds', app.bot, { name })
  expect(guild.status).toBe(201)
  const channels = await call(lb, 'GET', `/guilds/${guild.body.id}/channels`, app.bot)
  const channelId = channels.body.find((c: { type: number }) => c.type === 0).id as string
  const invite = await call(lb, 'POST', `/channels/${channelId}/invites`, app.bot, { max_age: 0 })
  expect((await call(lb, 'POST', `/invites/${invite.body.code}`, poster.token)).status).toBe(200)
  return { app, poster, guildId: guild.body.id as string, channelId }
}

/**
 * The member's posts, one after another through the balancer until stopped, each on a new connection (the next node
 * of the rotation). A connection refused or cut is retried (the nonce makes a retry of a stored message answer it
 * again); any other answer than 200 is an error.
 */
function startWriter(w: World, prefix: string) {
  const acknowledged: string[] = []
  const errors: { status: number; body: unknown }[] = []
  let retries = 0
  let writing = true
  const post = async (content: string) => {
    for (;;) {
      try {
        const r = await fetch(`${balancer!.url}/api/v10/channels/${w.channelId}/messages`, {
          method: 'POST',
          keepalive: false,
          headers: { authorization: w.poster.token, 'content-type': 'application/json' },
          body: JSON.stringify({ content, nonce: content, enforce_nonce: true }),
        })
        const body = await r.json()
        if (r.status === 200) acknowledged.push(content)
        else errors.push({ status: r.status, body })
        return
      } catch {
        retries += 1
        await Bun.sleep(20)
      }
    }
  }
  const running = (async () => {
    for (let i = 0; writing; i++) {
      await post(`${prefix}${i}`)
      await Bun.sleep(10) // a steady stream, not a flood on a small machine
    }
  })()
  return {
    acknowledged,
    errors,
    retries: () => retries,
    /** Stop, then post a last message (the test waits for it to know the rest has come). */
    async stop(): Promise<string> {
      writing = false
      await running
      await post(`${prefix}end`)
      return `${prefix}end`
    },
  }
}

/** How the node of the library's socket is stopped. */
type Stop = {
  name: string
  signal: 'SIGTERM' | 'SIGKILL'
  /** Taken out of the balancer's rotation first, as an operator does before an upgrade. */
  outOfRotation: boolean
  /**
   * The library's next Gateway upgrade held by the balancer until three more messages are acknowledged: something to
   * replay for sure. Not when the balancer is not told: that checks the library on its own timing.
   */
  hold: boolean
}
const UPGRADE: Stop = { name: 'SIGTERM', signal: 'SIGTERM', outOfRotation: true, hold: true }
const UNTOLD: Stop = { name: 'SIGTERM, the balancer not told', signal: 'SIGTERM', outOfRotation: false, hold: false }
const CRASH: Stop = { name: 'SIGKILL', signal: 'SIGKILL', outOfRotation: false, hold: true }

/** Stop the node the only Gateway socket through the balancer is on, then start a new one in its place; its port. */
async function stopNodeOfSocket(stop: Stop, writer: ReturnType<typeof startWriter>) {
  const b = balancer!
  await until(
    'one Gateway socket through the balancer',
    () => b.gatewayLinks().length === 1,
    20_000,
    () => [...b.links].map((l) => [l.gateway, l.port, l.closed]),
  )
  const index = world.nodes.findIndex((n) => n.port === b.gatewayLinks()[0].port)
  expect(index).toBeGreaterThanOrEqual(0)
  const node = world.nodes[index]
  if (stop.hold) b.hold()
  if (stop.outOfRotation) b.rotation = b.rotation.filter((p) => p !== node.port)
  const exited = stop.signal === 'SIGTERM' ? node.stop().then((r) => r.code) : node.proc.exited
  if (stop.signal === 'SIGKILL') node.proc.kill('SIGKILL')
  try {
    if (stop.hold) {
      await until('the library’s new Gateway connection', () => b.held().length > 0)
      const before = writer.acknowledged.length
      await until('three messages acknowledged while it is away', () => writer.acknowledged.length >= before + 3)
      // One connection for its one session (not a second Resume beside the first).
      expect(b.held()).toHaveLength(1)
    }
  } finally {
    b.release()
  }
  const code = await exited
  if (stop.signal === 'SIGTERM') expect(code).toBe(0)
  // The replacement (an upgrade's new version, or the crashed node restarted).
  const fresh = await world.start(nodeEnv())
  world.nodes[index] = fresh
  b.rotation = [...b.rotation.filter((p) => p !== node.port), fresh.port]
  return node.port
}

afterAll(() => balancer?.stop())

/** What a library did and got, as the test follows it. */
type Observed = {
  /** The member's messages as the library handed them to the bot, in order. */
  messages: string[]
  /** The dispatches it received: their type and `s`. */
  dispatches: { t: string; s: number }[]
  /** What it sent to open a session, in order: 2 (Identify), 6 (Resume). */
  opened: number[]
  /** What it was told besides dispatches and heartbeats: 7 (Reconnect), 9 (Invalid Session). */
  told: number[]
  /** Errors it reported. */
  problems: string[]
}
const observing = (): Observed => ({ messages: [], dispatches: [], opened: [], told: [], problems: [] })

/**
 * One stop of the node the library's socket is on, as the library lives it: it resumes its one session on another
 * node through the balancer (told 7 first when the node drains; only Resumes, each answered RESUMED: none refused
 * with op 9, no Identify, no second READY), and hands the bot every acknowledged message once, in the order posted.
 */
async function survives(name: string, o: Observed, w: World, stop: Stop, prefix: string, state: () => unknown) {
  const count = (t: string) => o.dispatches.filter((d) => d.t === t).length
  const resumedBefore = count('RESUMED')
  const [openedBefore, toldBefore] = [o.opened.length, o.told.length]
  const mine = () => o.messages.filter((m) => m.startsWith(prefix))
  const look = () => ({ ...o, dispatches: o.dispatches.length, library: state() })
  const writer = startWriter(w, prefix)
  await until('the first messages', () => mine().length >= 3, 20_000, look)
  const stopped = await stopNodeOfSocket(stop, writer)
  await until('RESUMED', () => count('RESUMED') > resumedBefore, 20_000, look)
  // A few more once it is back, then the last one.
  const back = writer.acknowledged.length
  await until('messages after the resume', () => writer.acknowledged.length >= back + 3, 20_000, look)
  const last = await writer.stop()
  await until(
    `the last message (${last})`,
    () => mine().includes(last),
    20_000,
    () => ({
      missing: writer.acknowledged.filter((m) => !mine().includes(m)),
      ...look(),
    }),
  )

  expect(writer.errors).toEqual([])
  expect(mine()).toEqual(writer.acknowledged)
  expect(writer.acknowledged.at(-1)).toBe(last)
  // Its socket goes to another node now.
  const links = balancer!.gatewayLinks()
  expect(links.map((l) => l.port !== stopped)).toEqual([true])
  // One session throughout: identified once, one READY ever; since the stop, Resumes only, each answered RESUMED.
  expect([o.opened[0], count('READY')]).toEqual([2, 1])
  const resumes = o.opened.slice(openedBefore)
  expect([...new Set(resumes)]).toEqual([6])
  expect(count('RESUMED') - resumedBefore).toBe(resumes.length)
  const told = o.told.slice(toldBefore)
  expect(told.filter((op) => op !== 7)).toEqual([]) // no op 9
  expect(told.slice(0, 1)).toEqual(stop.signal === 'SIGTERM' ? [7] : [])
  // Its `s` never goes back, and grows from message to message: nothing replayed twice or out of order. (READY and
  // the GUILD_CREATE sent with it carry one `s`, the last the node applied: cluster mode sends them outside the log.)
  const s = o.dispatches.map((d) => d.s)
  for (let i = 1; i < s.length; i++) expect(s[i]).toBeGreaterThanOrEqual(s[i - 1])
  const created = o.dispatches.filter((d) => d.t === 'MESSAGE_CREATE').map((d) => d.s)
  for (let i = 1; i < created.length; i++) expect(created[i]).toBeGreaterThan(created[i - 1])
  expect(o.problems).toEqual([])
  console.log(
    `${name}, ${stop.name}: ${writer.acknowledged.length} messages (${writer.retries()} posts retried), ` +
      `${resumes.length} resume(s), from the node on ${stopped} to the one on ${links[0].port}`,
  )
}

describe.skipIf(!present)('discord.js behind a load balancer, its node stopped', () => {
  let w: World
  let client: Client | undefined
  const o = observing()
  const debug: string[] = []
  afterAll(async () => {
    await client?.destroy()
  })

  /** Logged in once, by the first test that runs. */
  let login: Promise<void> | undefined
  const loggedIn = () =>
    (login ??= (async () => {
      w = await makeGuild('discord.js across nodes')
      client = new Client({
        intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent],
        rest: { api: `${balancer!.url}/api` },
      })
      client.on(Events.Raw, (packet: { t: string; s: number }) => o.dispatches.push({ t: packet.t, s: packet.s }))
      client.on(Events.MessageCreate, (m: Message) => {
        if (m.author.id === w.poster.id && m.channelId === w.channelId) o.messages.push(m.content)
      })
      // @discordjs/ws says in its debug lines what it sends and what it was told (WebSocketShard).
      client.on(Events.Debug, (m) => {
        debug.push(m)
        if (/\] Identifying/.test(m)) o.opened.push(2)
        if (/\] Resuming session/.test(m)) o.opened.push(6)
        if (m.includes('Told to reconnect by Discord')) o.told.push(7)
        if (m.includes('Invalid session')) o.told.push(9)
      })
      client.on(Events.Error, (e) => o.problems.push(`error: ${e}`))
      client.on(Events.ShardError, (e) => o.problems.push(`shard error: ${e}`))
      client.on(Events.Invalidated, () => o.problems.push('invalidated'))
      const ready = new Promise((resolve) => client!.once(Events.ClientReady, resolve))
      await client.login(w.app.bot.slice('Bot '.length))
      await ready
      // The Gateway's address is the balancer's, as GET /gateway/bot gives it.
      expect(client.ws.gateway).toBe(`${balancer!.url.replace('http', 'ws')}/gateway/`)
    })())

  test('SIGTERM (an upgrade): op 7, a Resume through the balancer on another node, every message once and in order', async () => {
    await loggedIn()
    await survives('discord.js', o, w, UPGRADE, 'term-', () => debug.slice(-12))
  }, 60_000)

  test('SIGTERM with the balancer not told: the same', async () => {
    await loggedIn()
    await survives('discord.js', o, w, UNTOLD, 'untold-', () => debug.slice(-12))
  }, 60_000)

  test('SIGKILL (a crash): the library reconnects and resumes on another node with exactly what it missed', async () => {
    await loggedIn()
    await survives('discord.js', o, w, CRASH, 'kill-', () => debug.slice(-12))
  }, 60_000)
})

// discord.py as tests/libraries/discordpy.test.ts runs it: Debian's python3-discord under /usr/bin/python3, skipped
// (saying so) where it cannot be imported, except in CI.
const PYTHON = process.env.DISCORDPY_PYTHON ?? '/usr/bin/python3'
const pythonDiscord = existsSync(PYTHON) && Bun.spawnSync([PYTHON, '-c', 'import discord']).exitCode === 0
const skipPython = !pythonDiscord && process.env.CI !== 'true'
if (present && skipPython) console.warn(`discord.py across nodes skipped: ${PYTHON} cannot import discord`)

describe.skipIf(!present || skipPython)('discord.py behind a load balancer, its node stopped', () => {
  let w: World
  let bot: Bun.Subprocess<'pipe', 'pipe', 'pipe'> | undefined
  const o = observing()
  let stderr = ''
  let stdout = ''
  let ready = false
  afterAll(async () => {
    if (!bot) return
    bot.stdin.write('quit\n')
    await bot.stdin.end()
    const timer = setTimeout(() => bot?.kill('SIGKILL'), 10_000)
    await bot.exited
    clearTimeout(timer)
  })

  /** Its JSON lines (discordpy_nodes_bot.py), as they come. */
  function follow(line: string) {
    const e = JSON.parse(line)
    if (e.e === 'receive' && e.op === 0) o.dispatches.push({ t: e.t, s: e.s })
    if (e.e === 'receive' && (e.op === 7 || e.op === 9)) o.told.push(e.op)
    if (e.e === 'send' && (e.op === 2 || e.op === 6)) o.opened.push(e.op)
    if (e.e === 'message') o.messages.push(e.content)
    if (e.e === 'error') o.problems.push(e.error)
    if (e.e === 'ready') ready = true
  }

  let login: Promise<void> | undefined
  const loggedIn = () =>
    (login ??= (async () => {
      if (!pythonDiscord) throw new Error(`CI runs discord.py, but ${PYTHON} cannot import discord`)
      w = await makeGuild('discord.py across nodes')
      const proc = Bun.spawn([PYTHON, join(import.meta.dir, 'discordpy_nodes_bot.py')], {
        env: {
          ...process.env,
          BASE_URL: balancer!.url,
          BOT_TOKEN: w.app.bot.slice('Bot '.length),
          POSTER_ID: w.poster.id,
          CHANNEL_ID: w.channelId,
        },
        stdin: 'pipe',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      bot = proc
      void (async () => {
        const decoder = new TextDecoder()
        for await (const chunk of proc.stdout) {
          stdout += decoder.decode(chunk, { stream: true })
          const lines = stdout.split('\n')
          stdout = lines.pop()!
          for (const line of lines) if (line.trim()) follow(line)
        }
      })()
      void (async () => {
        const decoder = new TextDecoder()
        for await (const chunk of proc.stderr) {
          const before = stderr.length
          stderr += decoder.decode(chunk, { stream: true })
          // Its logged errors, such as "Attempting a reconnect" after a connection that failed (whole lines only).
          const start = stderr.lastIndexOf('\n', before - 1) + 1
          const lines = stderr.slice(start, stderr.lastIndexOf('\n') + 1).split('\n')
          for (const line of lines) if (/^discord\.\S+ (ERROR|CRITICAL) /.test(line)) o.problems.push(line)
        }
      })()
      await until(
        'on_ready',
        () => ready,
        30_000,
        () => ({
          exited: proc.exitCode,
          stderr: stderr.slice(-2000),
        }),
      )
    })())
  const state = () => ({ exited: bot?.exitCode, log: stderr.split('\n').slice(-15) })

  test('SIGTERM (an upgrade): op 7, a Resume through the balancer on another node, every message once and in order', async () => {
    await loggedIn()
    await survives('discord.py', o, w, UPGRADE, 'term-', state)
  }, 60_000)

  test('SIGTERM with the balancer not told: the same', async () => {
    await loggedIn()
    await survives('discord.py', o, w, UNTOLD, 'untold-', state)
  }, 60_000)

  test('SIGKILL (a crash): the library reconnects and resumes on another node with exactly what it missed', async () => {
    await loggedIn()
    await survives('discord.py', o, w, CRASH, 'kill-', state)
  }, 60_000)
})

describe.skipIf(!present)('Discordeno behind a load balancer, its node stopped', () => {
  let w: World
  let bot: { shutdown(): Promise<void> } | undefined
  const o = observing()
  const logs: string[] = []
  afterAll(async () => {
    await bot?.shutdown()
  })

  let login: Promise<void> | undefined
  const loggedIn = () =>
    (login ??= (async () => {
      w = await makeGuild('Discordeno across nodes')
      const keep = (...args: unknown[]) => {
        const line = args.map(String).join(' ')
        logs.push(line)
        // Its shard logs what it sends to open a session (an Identify shows as its READY) and what it was told.
        if (line.includes('[Shard] Resuming Shard #0 connected')) o.opened.push(6)
        if (line.includes('[Shard] Received a Reconnect')) o.told.push(7)
        if (line.includes('[Shard] Received Invalid Session')) o.told.push(9)
      }
      // Such as its "error connecting" (a Resume's connection that failed: it identifies anew after it).
      const failed = (...args: unknown[]) => {
        keep(...args)
        o.problems.push(args.map(String).join(' '))
      }
      const made = createBot({
        token: w.app.bot.slice('Bot '.length),
        intents: GatewayIntents.Guilds | GatewayIntents.GuildMessages | GatewayIntents.MessageContent,
        desiredProperties: {
          user: { id: true },
          message: { id: true, content: true, channelId: true, author: true },
        },
        events: {
          raw: (packet) => {
            if (packet.op !== 0) return
            o.dispatches.push({ t: packet.t!, s: packet.s! })
            if (packet.t === 'READY') o.opened.push(2)
          },
          messageCreate: (m) => {
            if (String(m.author.id) === w.poster.id && String(m.channelId) === w.channelId) o.messages.push(m.content)
          },
        },
        loggerFactory: () => ({ debug: keep, info: keep, warn: keep, error: failed, fatal: failed }) as never,
      })
      bot = made
      // Its REST manager at the balancer, pacing itself as against Discord (tests/libraries/discordeno.test.ts).
      made.rest.baseUrl = `${balancer!.url}/api`
      made.gateway.spawnShardDelay = 0
      await made.start()
      expect(made.gateway.connection.url).toBe(`${balancer!.url.replace('http', 'ws')}/gateway`)
    })())
  const state = () => logs.filter((l) => !l.includes('eartbeat')).slice(-20)

  test('SIGTERM (an upgrade): op 7, a Resume through the balancer on another node, every message once and in order', async () => {
    await loggedIn()
    await survives('Discordeno', o, w, UPGRADE, 'term-', state)
  }, 60_000)

  test('SIGTERM with the balancer not told: the same', async () => {
    await loggedIn()
    await survives('Discordeno', o, w, UNTOLD, 'untold-', state)
  }, 60_000)

  test('SIGKILL (a crash): the library reconnects and resumes on another node with exactly what it missed', async () => {
    await loggedIn()
    await survives('Discordeno', o, w, CRASH, 'kill-', state)
  }, 60_000)
})
