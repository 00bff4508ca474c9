// Under load (issue 19): a bounded soak of mixed REST traffic and 1000 Gateway sockets against a server in its own
// process. Properties: no error answers, no socket dropped, every lobby message reaches every socket of every member,
// and the server's memory flat (bounded growth after warm-up). SOAK_SECONDS (10 here) and SOAK_SOCKETS (1000) for the
// long run.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTarget, type Target } from './target-client'

const SECONDS = Number(process.env.SOAK_SECONDS ?? 10)
const SOCKETS = Number(process.env.SOAK_SOCKETS ?? 1000)
const USERS = 20

let target: Target
beforeAll(async () => {
  target = await startTarget({ GATEWAY_HEARTBEAT_MS: '5000' })
}, 60_000)
afterAll(() => target?.stop())

type Socket = { ws: WebSocket; user: number; messages: Set<string>; closed?: number; beat?: Timer }

async function call(method: string, path: string, token: string, body?: unknown) {
  const r = await fetch(`${target.url}/api/v9${path}`, {
    method,
    headers: { authorization: token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await r.text()
  return { status: r.status, body: text ? JSON.parse(text) : null }
}

function open(token: string, user: number, index: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    // Each socket from its own address (the server trusts X-Forwarded-For here), as a thousand clients would be.
    const ws = new WebSocket(`${target.url.replace('http', 'ws')}/gateway?v=10&encoding=json`, {
      headers: { 'x-forwarded-for': `10.77.${index >> 8}.${index & 255}` },
    } as never)
    const socket: Socket = { ws, user, messages: new Set() }
    ws.onmessage = (e) => {
      const f = JSON.parse(String(e.data))
      if (f.op === 10) {
        ws.send(JSON.stringify({ op: 2, d: { token, properties: { os: 'linux', browser: 'soak', device: 'soak' } } }))
        socket.beat = setInterval(
          () => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ op: 1, d: null })),
          f.d.heartbeat_interval / 2,
        )
      }
      if (f.t === 'READY') resolve(socket)
      if (f.t === 'LOBBY_MESSAGE_CREATE') socket.messages.add(f.d.id)
    }
    ws.onclose = (e) => {
      clearInterval(socket.beat)
      socket.closed = e.code
      reject(new Error(`socket ${index} closed ${e.code} before READY`))
    }
  })
}

test(
  `${SOCKETS} Gateway sockets and mixed REST traffic for ${SECONDS} s: no error answer, no socket dropped, every event delivered, memory flat`,
  async () => {
    await target.call<{ token: string; bearer: string; lobby: string; channel: string }>('world')
    const users = await target.call<{ id: string; token: string; bearer: string }[]>(`soakUsers:${USERS}`)
    const bot = target.fixtures.game.bot
    // One lobby of the game with every soak user in it.
    const lobby = await call('POST', '/lobbies', bot, { members: users.map((u) => ({ id: u.id })) })
    expect(lobby.status).toBe(201)

    const sockets: Socket[] = []
    for (let i = 0; i < SOCKETS; i += 50) {
      sockets.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(50, SOCKETS - i) }, (_, j) =>
            open(users[(i + j) % USERS].token, (i + j) % USERS, i + j),
          ),
        )),
      )
    }
    expect(sockets).toHaveLength(SOCKETS)

    const failures: string[] = []
    const sent: string[] = []
    let requests = 0
    const samples: number[] = []
    const until = Date.now() + SECONDS * 1000
    const sampler = setInterval(async () => samples.push((await target.call<any>('health')).rss), 1000)
    const worker = async (n: number) => {
      for (let k = 0; Date.now() < until; k++) {
        const u = users[(n + k) % USERS]
        const step = k % 4
        const r =
          step === 0
            ? await call('POST', `/lobbies/${lobby.body.id}/messages`, u.bearer, { content: `soak ${n}.${k}` })
            : step === 1
              ? await call('GET', '/users/@me', u.token)
              : step === 2
                ? await call('PATCH', `/lobbies/${lobby.body.id}`, bot, { metadata: { round: String(k) } })
                : await call('GET', `/lobbies/${lobby.body.id}/messages?limit=5`, bot)
        requests += 1
        if (r.status >= 400) failures.push(`${step}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`)
        else if (step === 0) sent.push(r.body.id)
      }
    }
    await Promise.all(Array.from({ length: 6 }, (_, n) => worker(n)))
    clearInterval(sampler)
    // Let the last dispatches arrive.
    const deadline = Date.now() + 5000
    while (Date.now() < deadline && sockets.some((s) => s.messages.size < sent.length)) await Bun.sleep(50)

    expect(failures).toEqual([])
    expect(requests).toBeGreaterThan(SECONDS * 20)
    expect(sockets.filter((s) => s.closed !== undefined).map((s) => s.closed)).toEqual([])
    const missing = sockets.filter((s) => sent.some((id) => !s.messages.has(id))).length
    expect(missing).toBe(0)
    // Flat: after the first sample (sockets open, warm), growth stays bounded.
    const warm = samples[Math.min(1, samples.length - 1)]
    expect(Math.max(...samples.slice(1))).toBeLessThan(warm + 128 * 1024 * 1024)
    console.log(
      `soak: ${SOCKETS} sockets, ${requests} requests, ${sent.length} lobby messages x ${SOCKETS} deliveries, RSS ${(warm / 2 ** 20).toFixed(0)} → ${(samples[samples.length - 1] / 2 ** 20).toFixed(0)} MiB`,
    )
    for (const s of sockets) {
      clearInterval(s.beat)
      s.ws.onclose = null
      s.ws.close(1000)
    }
  },
  (SECONDS + 60) * 1000,
)
