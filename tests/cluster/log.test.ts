// The Gateway log (src/cluster/log.ts) on a real redis-server (tests/cluster/redis.ts): one sequence however many
// connections append, a relayed event appended once, ranges that say when the stream no longer reaches back, and a
// reader that delivers every entry once, in order, across a SIGKILL of Redis and over a connection gone silent.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net'
import {
  type Consumer,
  type Draft,
  GatewayLog,
  LOG_KEY,
  type LogEntry,
  SEQ_KEY,
  startConsumer,
} from '../../src/cluster/log'
import { openRedis, type Redis } from '../../src/cluster/redis'
import { frame, Op, Serialized } from '../../src/gateway/protocol'
import { type RedisServer, startRedis } from './redis'

let server: RedisServer
const clients: Redis[] = []
const consumers: Consumer[] = []
const connection = () => {
  const client = openRedis(server.url, 'test')
  client.on('error', () => {}) // the kill test makes every connection fail for a moment
  clients.push(client)
  return client
}
let admin: Redis

beforeAll(async () => {
  server = await startRedis()
  admin = connection()
})
afterEach(async () => {
  await Promise.all(consumers.splice(0).map((c) => c.stop()))
})
afterAll(() => {
  for (const client of clients) client.disconnect()
  server?.stop()
})
beforeEach(async () => {
  await admin.flushall()
})

const message = (n: number): Draft => ({
  kind: 'dispatch',
  topics: ['lobby:1', `channel:${n % 3}`],
  type: 'LOBBY_MESSAGE_CREATE',
  data: JSON.stringify({ n, content: `message ${n}` }),
})

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  for (const deadline = Date.now() + ms; !(await check()); await Bun.sleep(5))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
}

function collect(after = 0, extra: Partial<Parameters<typeof startConsumer>[0]> = {}) {
  const seen: { seq: number; entry: LogEntry }[] = []
  const breaks: [number, number][] = []
  const consumer = startConsumer({
    url: server.url,
    after,
    deliver: (seq, entry) => seen.push({ seq, entry }),
    onBreak: (applied, seq) => breaks.push([applied, seq]),
    ...extra,
  })
  consumers.push(consumer)
  return { seen, breaks, consumer }
}

const sequence = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

describe('append', () => {
  test('32 parallel appends on each of 3 connections: sequences 1..96, each once, the frame carrying its own', async () => {
    const writers = [connection(), connection(), connection()].map((c) => new GatewayLog(c))
    const n = 96
    const seqs = await Promise.all(sequence(1, n).map((i) => writers[i % 3].append(`event-${i}`, message(i))))
    expect([...seqs].sort((a, b) => a - b)).toEqual(sequence(1, n))
    expect(await writers[0].seq()).toBe(n)

    const range = await writers[1].range(0, n)
    if (range.trimmed) throw new Error('trimmed')
    expect(range.entries.map((e) => e.seq)).toEqual(sequence(1, n))
    for (const { seq, entry } of range.entries) {
      if (entry.kind !== 'dispatch') throw new Error(entry.kind)
      const i = JSON.parse(entry.frame).d.n as number
      // The seq an append answered is the one its entry holds, and the frame is the Gateway's own.
      expect(seqs[i - 1]).toBe(seq)
      expect(entry.frame).toBe(
        frame(
          Op.Dispatch,
          new Serialized(JSON.stringify({ n: i, content: `message ${i}` })),
          seq,
          'LOBBY_MESSAGE_CREATE',
        ),
      )
      expect(entry.topics).toEqual(['lobby:1', `channel:${i % 3}`])
    }
  })

  test('an event relayed again, even by several nodes at once, is appended once and answers its first sequence', async () => {
    const writers = [connection(), connection(), connection()].map((c) => new GatewayLog(c))
    expect(await writers[0].append('before', message(0))).toBe(1)
    const relays = await Promise.all(sequence(1, 12).map((i) => writers[i % 3].append('the-event', message(1))))
    expect(new Set(relays)).toEqual(new Set([2]))
    expect(await writers[1].append('the-event', message(1))).toBe(2)
    expect(await writers[2].append('after', message(2))).toBe(3)
    expect(await admin.xlen(LOG_KEY)).toBe(3)
  })

  test('every kind of entry reads back as it was written', async () => {
    const log = new GatewayLog(connection())
    const drafts: Draft[] = [
      {
        kind: 'user-dispatch',
        userId: '7',
        audience: { kind: 'lobby', applicationId: '9' },
        type: 'LOBBY_UPDATE',
        data: '{"id":"1"}',
      },
      { kind: 'subscribe-user', userId: '7', topic: 'lobby:1', audience: { kind: 'lobby', applicationId: '9' } },
      { kind: 'unsubscribe-user', userId: '7', topic: 'lobby:1' },
      {
        kind: 'subscribe-users',
        userIds: ['7', '8', '9'],
        topics: ['guild:1', 'channel:2', 'channel:3'],
        audience: { kind: 'guild-activity' },
      },
      { kind: 'unsubscribe-users', userIds: ['7', '8'], topics: ['channel:2'] },
      { kind: 'close-auth-session', authSessionId: 'abc', code: 4004, reason: 'Authentication failed' },
      { kind: 'close-user', userId: '7', code: 4004 },
      { kind: 'close-grants', userId: '7', which: { familyId: 'f' }, code: 4004 },
      {
        kind: 'change-auth-session',
        oldAuthSessionId: 'abc',
        next: { kind: 'user', userId: '7', sessionId: 'def', sessionIdHash: 'h' },
      },
      { kind: 'presence', node: '3:owner', key: 'u:7', delta: -1 },
      { kind: 'invalidate', cache: 'lobbies', keys: ['1', '2'] },
      { kind: 'invalidate', cache: 'users', keys: null },
      { kind: 'forget-callers' },
    ]
    for (const [i, draft] of drafts.entries()) await log.append(`e${i}`, draft)
    const range = await log.range(0, drafts.length)
    if (range.trimmed) throw new Error('trimmed')
    expect(range.entries.map((e) => e.entry)).toEqual([
      {
        kind: 'user-dispatch',
        userId: '7',
        audience: { kind: 'lobby', applicationId: '9' },
        frame: '{"op":0,"d":{"id":"1"},"s":1,"t":"LOBBY_UPDATE"}',
      },
      ...(drafts.slice(1) as LogEntry[]),
    ])
  })
})

describe('range', () => {
  test('says when the stream was trimmed past the asked sequence, and reads what it still holds', async () => {
    const log = new GatewayLog(connection(), { maxLength: 100 })
    for (let i = 1; i <= 1000; i += 50)
      await Promise.all(sequence(i, i + 49).map((n) => log.append(`e${n}`, message(n))))
    const length = await admin.xlen(LOG_KEY)
    const first = 1000 - length + 1
    expect(length).toBeGreaterThanOrEqual(100)
    expect(length).toBeLessThan(1000)

    expect(await log.range(0, 1000)).toEqual({ trimmed: true })
    expect(await log.range(first - 2, 1000)).toEqual({ trimmed: true })
    const held = await log.range(first - 1, 1000)
    if (held.trimmed) throw new Error('trimmed')
    expect(held.entries.map((e) => e.seq)).toEqual(sequence(first, 1000))
    const tail = await log.range(990, 995)
    expect(tail.trimmed ? [] : tail.entries.map((e) => e.seq)).toEqual(sequence(991, 995))
    // Past the end is not trimming: nothing yet.
    expect(await log.range(1000, 1010)).toEqual({ trimmed: false, entries: [] })
    const straddling = await log.range(998, 1010)
    expect(straddling.trimmed ? [] : straddling.entries.map((e) => e.seq)).toEqual([999, 1000])
  })
})

describe('the reader', () => {
  test('delivers every entry once, in sequence order, from where it starts', async () => {
    const writers = [connection(), connection(), connection()].map((c) => new GatewayLog(c))
    await Promise.all(sequence(1, 10).map((i) => writers[0].append(`e${i}`, message(i))))
    const { seen, breaks } = collect(4)
    await Promise.all(sequence(11, 300).map((i) => writers[i % 3].append(`e${i}`, message(i))))
    await until(() => seen.length === 296, 'the reader')
    await Bun.sleep(50)
    expect(seen.map((e) => e.seq)).toEqual(sequence(5, 300))
    expect(breaks).toEqual([])
  })

  test('an entry this version cannot read (a newer node wrote it) is skipped, and delivery goes on', async () => {
    const log = new GatewayLog(connection())
    const { seen, breaks, consumer } = collect(0)
    await log.append('a', message(1))
    await admin.multi().incr(SEQ_KEY).xadd(LOG_KEY, '2-0', 'k', 'teleport', 'd', '{}').exec()
    await admin.multi().incr(SEQ_KEY).xadd(LOG_KEY, '3-0', 'k', 'close-user', 'd', '{not json').exec()
    await log.append('b', message(4))
    await until(() => consumer.applied() === 4, 'the last entry')
    expect(seen.map((e) => e.seq)).toEqual([1, 4])
    expect(breaks).toEqual([])
  })

  test('SIGKILL of redis-server under appends: every acknowledged append kept, delivery goes on, nothing twice', async () => {
    const log = new GatewayLog(connection())
    const { seen, breaks, consumer } = collect(0)
    const acknowledged = new Map<string, number>()
    let stop = false
    let killed = false
    let afterRestart = 0
    // Four writers, each relaying its events one after the other, again with the same id until one is acknowledged
    // (as the outbox relay does): an append whose answer was lost may be in the log, and must then not be twice.
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `w${w}-${i}`
        for (;;) {
          try {
            acknowledged.set(id, await log.append(id, message(w * 100_000 + i)))
            if (killed) afterRestart += 1
            break
          } catch {
            if (stop) return
            await Bun.sleep(20)
          }
        }
      }
    }
    const writing = Promise.all([0, 1, 2, 3].map(writer))
    let resumedMs = 0
    try {
      await until(() => acknowledged.size >= 200, 'appends before the kill')
      server.kill()
      killed = true
      await Bun.sleep(300)
      await server.restart()
      const restarted = performance.now()
      const kept = await admin.xlen(LOG_KEY)
      await until(() => seen.length > kept, 'the reader after the restart', 10_000)
      resumedMs = performance.now() - restarted
      await until(() => afterRestart >= 200, 'appends after the restart')
    } finally {
      stop = true
      await writing
    }

    const last = await log.seq()
    await until(() => consumer.applied() === last, 'the reader to catch up')
    await Bun.sleep(50)
    // The log holds every sequence up to the last once, and every acknowledged event, each once.
    expect(await admin.xlen(LOG_KEY)).toBe(last)
    const range = await log.range(0, last)
    if (range.trimmed) throw new Error('trimmed')
    const events = range.entries.map((e) =>
      e.entry.kind === 'dispatch' ? (JSON.parse(e.entry.frame).d.n as number) : -1,
    )
    expect(new Set(events).size).toBe(events.length)
    for (const [id, seq] of acknowledged) {
      const [w, i] = id.slice(1).split('-').map(Number)
      expect(events[seq - 1]).toBe(w * 100_000 + i)
    }
    // The reader saw exactly that, in order, once each.
    expect(seen.map((e) => e.seq)).toEqual(sequence(1, last))
    expect(seen.map((e) => e.entry)).toEqual(range.entries.map((e) => e.entry))
    expect(breaks).toEqual([])
    expect(resumedMs).toBeLessThan(5000)
    console.log(
      `redis kill: ${last} in the log, ${acknowledged.size} acknowledged, reader resumed ${resumedMs.toFixed(0)} ms after the restart (${server.startMs.toFixed(0)} ms to PONG)`,
    )
  }, 30_000)

  test('a connection gone silent (no answer, no close) is replaced by the watchdog, and delivery goes on', async () => {
    const proxy = await silenceableProxy(server.port)
    try {
      const log = new GatewayLog(connection())
      const { seen, consumer } = collect(0, { url: `redis://127.0.0.1:${proxy.port}`, blockMs: 200, watchdogMs: 1000 })
      await log.append('a', message(1))
      await until(() => seen.length === 1, 'the first entry')
      proxy.silence()
      const silenced = performance.now()
      await Promise.all(sequence(2, 20).map((i) => log.append(`e${i}`, message(i))))
      await until(() => seen.length === 20, 'the entries after the silence', 10_000)
      const ms = performance.now() - silenced
      expect(seen.map((e) => e.seq)).toEqual(sequence(1, 20))
      expect(consumer.connections()).toBe(2)
      expect(ms).toBeGreaterThanOrEqual(900)
    } finally {
      proxy.close()
    }
  })

  test('a reader behind the trimmed stream says where delivery broke, then goes on from the oldest entry kept', async () => {
    const log = new GatewayLog(connection(), { maxLength: 100 })
    for (let i = 1; i <= 500; i += 50)
      await Promise.all(sequence(i, i + 49).map((n) => log.append(`e${n}`, message(n))))
    const first = 500 - (await admin.xlen(LOG_KEY)) + 1
    const { seen, breaks } = collect(0)
    await until(() => seen.length === 500 - first + 1, 'the entries kept')
    expect(breaks).toEqual([[0, first - 1]])
    expect(seen.map((e) => e.seq)).toEqual(sequence(first, 500))
  })

  test('a Redis that came back without its last writes (sequence below the applied one) is a break, then delivery goes on', async () => {
    const log = new GatewayLog(connection())
    const { seen, breaks, consumer } = collect(0)
    await Promise.all(sequence(1, 10).map((i) => log.append(`e${i}`, message(i))))
    await until(() => consumer.applied() === 10, 'the first entries')
    // What a machine crash under appendfsync everysec can do: the last writes gone, and the reader's connection too.
    await admin.multi().del(LOG_KEY).set(SEQ_KEY, 7).xadd(LOG_KEY, '7-0', 'k', 'forget-callers', 'd', '{}').exec()
    const clientList = String(await admin.call('CLIENT', 'LIST'))
    const reader = clientList.split('\n').find((line) => line.includes('name=gw-log-reader'))!
    await admin.client('KILL', 'ID', reader.match(/\bid=(\d+)/)![1])
    await until(() => breaks.length === 1, 'the break')
    expect(breaks).toEqual([[10, 7]])
    expect(await log.append('new', message(11))).toBe(8)
    await until(() => consumer.applied() === 8, 'the entry after the break')
    expect(seen.map((e) => e.seq)).toEqual([...sequence(1, 10), 8])
  })
})

/** A TCP proxy to Redis whose open connections can be made silent: nothing passes either way, nothing is closed. */
async function silenceableProxy(to: number): Promise<{ port: number; silence(): void; close(): void }> {
  const pairs: { silent: boolean; sockets: Socket[] }[] = []
  const proxy: Server = createServer((client) => {
    const upstream = netConnect({ port: to, host: '127.0.0.1' })
    const pair = { silent: false, sockets: [client, upstream] }
    pairs.push(pair)
    client.on('data', (chunk) => pair.silent || upstream.write(chunk))
    upstream.on('data', (chunk) => pair.silent || client.write(chunk))
    for (const socket of pair.sockets) {
      socket.on('error', () => {})
      socket.on('close', () => pair.sockets.forEach((s) => s.destroy()))
    }
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  return {
    port: (proxy.address() as { port: number }).port,
    silence: () => pairs.forEach((pair) => (pair.silent = true)),
    close() {
      for (const pair of pairs) pair.sockets.forEach((s) => s.destroy())
      proxy.close()
    },
  }
}
