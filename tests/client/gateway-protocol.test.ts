// suite: one pass
// The SDK's Gateway against a scripted fake Gateway (a Bun WebSocket server in the test), for what a real server does
// only on cue: the first heartbeat inside the interval (jitter); no ack → the socket dropped and the session resumed;
// op 7 → resume at once; op 9 d:false → identify anew, d:true → resume; an event the server sends twice is handed on
// once; zlib-stream frames whose inflated text splits and joins messages arbitrarily; the send window (frames past
// the limit wait, in order); a frame that is not JSON → reconnect.
import { afterAll, afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { constants, createDeflate, type Deflate } from 'node:zlib'
import type { ServerWebSocket } from 'bun'
import { Client, type GatewayOptions, Lobby } from '../../client/src/index'

type Conn = {
  ws: ServerWebSocket<{ id: number; compress: boolean; zlib?: Deflate }>
  frames: any[]
  chain: Promise<void>
}
let conns: Conn[] = []
let onFrame: (conn: Conn, frame: any) => void = () => undefined
let heartbeatInterval = 10_000
/** The path of each upgrade request. */
let paths: string[] = []
let resumeUrl = ''
beforeEach(() => {
  conns = []
  paths = []
  resumeUrl = ''
  heartbeatInterval = 10_000
})

/** Send a frame (deflated on a zlib-stream socket, with a sync flush: one binary frame per payload), in order. */
function send(conn: Conn, frame: unknown): Promise<void> {
  conn.chain = conn.chain.then(() => sendNow(conn, frame))
  return conn.chain
}

async function sendNow(conn: Conn, frame: unknown): Promise<void> {
  const text = JSON.stringify(frame)
  const zlib = conn.ws.data.zlib
  if (!zlib) return void conn.ws.send(text)
  const chunks: Buffer[] = []
  const collect = (c: Buffer) => chunks.push(c)
  zlib.on('data', collect)
  zlib.write(text)
  await new Promise<void>((resolve) => zlib.flush(constants.Z_SYNC_FLUSH, () => resolve()))
  zlib.off('data', collect)
  conn.ws.send(Buffer.concat(chunks))
}

const ready = (sessionId: string, s = 1) => ({
  op: 0,
  t: 'READY',
  s,
  d: { v: 10, user: { id: '1' }, session_id: sessionId, session_type: 'oauth', resume_gateway_url: resumeUrl || url },
})
const message = (s: number, content: string) => ({
  op: 0,
  t: 'LOBBY_MESSAGE_CREATE',
  s,
  d: { id: String(s), lobby_id: 'L', content },
})

const fake = Bun.serve<{ id: number; compress: boolean; zlib?: Deflate }>({
  port: 0,
  hostname: '127.0.0.1',
  fetch(req, server) {
    paths.push(new URL(req.url).pathname)
    const compress = new URL(req.url).searchParams.get('compress') === 'zlib-stream'
    if (server.upgrade(req, { data: { id: 0, compress } })) return undefined
    return new Response('no', { status: 400 })
  },
  websocket: {
    open(ws) {
      if (ws.data.compress) ws.data.zlib = createDeflate()
      const conn: Conn = { ws, frames: [], chain: Promise.resolve() }
      conns.push(conn)
      // Numbered within the test (sessions s1, s2, … by connection).
      ws.data.id = conns.length
      void send(conn, { op: 10, d: { heartbeat_interval: heartbeatInterval } })
    },
    message(ws, text) {
      const conn = conns.find((c) => c.ws === ws)
      if (!conn) return // a socket of an earlier test
      const frame = JSON.parse(String(text))
      conn.frames.push(frame)
      onFrame(conn, frame)
    },
  },
})
const url = `ws://127.0.0.1:${fake.port}/gateway`
afterAll(() => fake.stop(true))

const clients: Client[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()))
})
function client(gateway: GatewayOptions = {}) {
  const c = new Client({
    baseUrl: `http://127.0.0.1:${fake.port}`,
    token: 'Bearer t',
    gateway: { backoff: 20, ...gateway },
  })
  clients.push(c)
  return c
}

/** The fake's default: READY for Identify (session sN), RESUMED for Resume, an ack for each heartbeat. */
function standard(extra: (conn: Conn, frame: any) => void = () => undefined) {
  onFrame = (conn, frame) => {
    if (frame.op === 2) void send(conn, ready(`s${conn.ws.data.id}`))
    else if (frame.op === 6) void send(conn, { op: 0, t: 'RESUMED', s: null, d: {} })
    else if (frame.op === 1) void send(conn, { op: 11 })
    extra(conn, frame)
  }
}

const until = async (check: () => boolean, ms = 3000) => {
  for (const by = Date.now() + ms; !check(); await Bun.sleep(5)) if (Date.now() > by) throw new Error('timed out')
}

describe('heartbeats', () => {
  test('the first beat comes within the interval; without an ack the socket is dropped and the session resumed', async () => {
    heartbeatInterval = 200
    let acking = true
    onFrame = (conn, frame) => {
      if (frame.op === 2) void send(conn, ready('s1'))
      else if (frame.op === 6) void send(conn, { op: 0, t: 'RESUMED', s: null, d: {} })
      else if (frame.op === 1 && acking) void send(conn, { op: 11 })
    }
    const c = client({ compress: false })
    const reasons: string[] = []
    c.gateway.on('reconnecting', (info) => reasons.push(info.reason))
    const started = Date.now()
    await c.gateway.connect()
    await until(() => conns[0].frames.some((f) => f.op === 1))
    expect(Date.now() - started).toBeLessThan(400)
    acking = false
    await until(() => conns.length === 2 && conns[1].frames.some((f) => f.op === 6), 3000)
    expect(reasons).toEqual(['no heartbeat ack'])
    expect(conns[1].frames.find((f) => f.op === 6).d).toEqual({ token: 'Bearer t', session_id: 's1', seq: 1 })
  })
})

describe('reconnect and resume', () => {
  test('op 7: resumed at once with the last seq', async () => {
    standard((conn, frame) => {
      if (frame.op === 2) void send(conn, message(2, 'a')).then(() => send(conn, { op: 7, d: null }))
    })
    const c = client()
    const lifecycle: string[] = []
    c.gateway.on('resumed', () => lifecycle.push('resumed'))
    c.gateway.on('ready', () => lifecycle.push('ready'))
    await c.gateway.connect()
    await until(() => lifecycle.includes('resumed'))
    expect(conns[1].frames[0]).toEqual({ op: 6, d: { token: 'Bearer t', session_id: 's1', seq: 2 } })
    expect(lifecycle).toEqual(['ready', 'resumed'])
  })

  test('op 9 d:false identifies anew; d:true resumes', async () => {
    let invalidated = 0
    onFrame = (conn, frame) => {
      if (frame.op === 2) void send(conn, ready(`s${conn.ws.data.id}`))
      else if (frame.op === 6 && invalidated++ === 0) void send(conn, { op: 9, d: false })
      else if (frame.op === 6) void send(conn, { op: 0, t: 'RESUMED', s: null, d: {} })
    }
    const c = client({ compress: false })
    const lifecycle: string[] = []
    c.gateway.on('ready', (r) => lifecycle.push(`ready ${r.session_id}`))
    c.gateway.on('resumed', () => lifecycle.push('resumed'))
    await c.gateway.connect()
    conns[0].ws.close(4000) // a drop: resume, refused (d:false), identify
    await until(() => lifecycle.length === 2, 4000)
    expect(conns.map((k) => k.frames.find((f) => f.op === 2 || f.op === 6)?.op)).toEqual([2, 6, 2])
    const last = conns.at(-1)!
    void send(last, { op: 9, d: true })
    await until(() => lifecycle.includes('resumed'), 4000)
    expect(conns.at(-1)!.frames[0].op).toBe(6)
    expect(lifecycle).toEqual(['ready s1', 'ready s3', 'resumed'])
  })

  test('an event sent twice (a replay overlapping what came) is handed on once; a frame that is not JSON reconnects', async () => {
    standard((conn, frame) => {
      if (frame.op === 2)
        void send(conn, message(2, 'a'))
          .then(() => send(conn, message(3, 'b')))
          .then(() => send(conn, message(3, 'b')))
          .then(() => send(conn, message(2, 'a')))
          .then(() => send(conn, message(4, 'c')))
    })
    const c = client({ compress: false })
    const got: string[] = []
    c.gateway.on('LOBBY_MESSAGE_CREATE', (m) => got.push(m.content as string))
    const reasons: string[] = []
    c.gateway.on('reconnecting', (info) => reasons.push(info.reason))
    await c.gateway.connect()
    await until(() => got.length >= 3)
    await Bun.sleep(50)
    expect(got).toEqual(['a', 'b', 'c'])
    conns[0].ws.send('{not json')
    await until(() => reasons.length === 1)
    expect(reasons).toEqual(['unreadable frame'])
  })
})

test('zlib-stream: one context; frames whose text splits and joins messages anywhere', async () => {
  standard()
  const c = client({ compress: true })
  const got: string[] = []
  c.gateway.on('LOBBY_MESSAGE_CREATE', (m) => got.push(m.content as string))
  await c.gateway.connect()
  expect(conns[0].ws.data.compress).toBe(true)
  const conn = conns[0]
  const zlib = conn.ws.data.zlib!
  // Three messages (one with braces and quotes in a string) deflated as one stream, sent in odd slices.
  const texts = [message(2, 'x { "y" } \\" }'), message(3, 'second'), message(4, 'third')].map((m) => JSON.stringify(m))
  const chunks: Buffer[] = []
  zlib.on('data', (b: Buffer) => chunks.push(b))
  for (const t of texts) {
    zlib.write(t)
    await new Promise<void>((resolve) => zlib.flush(constants.Z_SYNC_FLUSH, () => resolve()))
  }
  const bytes = Buffer.concat(chunks)
  const cuts = [0, 3, 17, 40, bytes.length]
  for (let i = 1; i < cuts.length; i++) conn.ws.send(bytes.subarray(cuts[i - 1], cuts[i]))
  await until(() => got.length === 3)
  expect(got).toEqual(['x { "y" } \\" }', 'second', 'third'])
})

test('the send window: frames past the limit wait and go in order', async () => {
  standard()
  const c = client({ compress: false, sendLimit: 3 })
  await c.gateway.connect()
  for (let i = 0; i < 5; i++) expect(c.gateway.send(3, { n: i })).toBe(true)
  await Bun.sleep(100)
  const sent = () => conns[0].frames.filter((f) => f.op === 3).map((f) => f.d.n)
  expect(sent()).toEqual([0, 1, 2])
  // Without a session, nothing is queued.
  expect(client().gateway.send(3, {})).toBe(false)
})

test("resumes go to READY's resume_gateway_url, or where it identified with followResumeUrl: false", async () => {
  resumeUrl = `ws://127.0.0.1:${fake.port}/resume-here`
  standard()
  for (const followResumeUrl of [true, false]) {
    const c = client({ compress: false, followResumeUrl })
    const resumed = new Promise<void>((resolve) => c.gateway.once('resumed', resolve))
    await c.gateway.connect()
    conns.at(-1)!.ws.close(4000)
    await resumed
  }
  expect(paths).toEqual(['/gateway', '/resume-here', '/gateway', '/gateway'])
})

test('a live lobby takes the Gateway events of its call and of other kinds without failing', async () => {
  const c = client({ compress: false })
  const lobby = new Lobby(c.lobbies, c, { id: 'L', application_id: 'A', metadata: null, members: [], flags: 0 })
  const problems: unknown[] = []
  const report = (globalThis as { reportError?: unknown }).reportError
  ;(globalThis as { reportError?: unknown }).reportError = (e: unknown) => problems.push(e)
  try {
    for (const type of ['LOBBY_VOICE_SERVER_OFFER', 'LOBBY_VOICE_SERVER_CLOSE', 'LOBBY_SOMETHING_NEW'])
      lobby.handle(type, { lobby_id: 'L', sdp: '', reason: 'left' })
    lobby.handle('LOBBY_MEMBER_ADD', { lobby_id: 'L', member: { id: 'm', metadata: null, flags: 0 } })
  } finally {
    ;(globalThis as { reportError?: unknown }).reportError = report
  }
  expect(problems).toEqual([])
  expect([...lobby.members.keys()]).toEqual(['m'])
})

test('connect() gives up after connectTimeout without READY, and says so once', async () => {
  onFrame = () => undefined // Hello, then silence
  const c = client({ compress: false, connectTimeout: 300 })
  const closed: string[] = []
  c.gateway.on('closed', (info) => closed.push(info.reason))
  const error = await c.gateway.connect().catch((e) => e)
  expect(error.name).toBe('ConnectionError')
  expect(error.message).toContain('no READY within 300 ms')
  await Bun.sleep(100)
  expect(closed).toEqual(['no READY within 300 ms'])
  expect(c.gateway.connected).toBe(false)
})
