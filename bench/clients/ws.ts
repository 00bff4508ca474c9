// Gateway load: opens COUNT sockets (CONCURRENCY identifies in flight), identifies each with its own token, times
// Identify → READY, then holds them (heartbeating) and takes commands on stdin, one JSON object a line:
//   {"cmd":"fanout","url":"http://…/messages","authorization":"Bot …","rounds":40,"warm":5}
//       POST a message `rounds` times; each time, the ms from sending the POST to the last socket receiving
//       LOBBY_MESSAGE_CREATE. Prints the times, the last dispatch frame and the POST's answer.
//   {"cmd":"presence","hubUrl":"ws://…","hubToken":"…","sessions":10,"rounds":40,"warm":5}
//       Opens `sessions` sockets of the hub user (a friend of every socket here); each round one of them sends op 3
//       with a new status and an activity named for the round (op 3 is limited to 5 per 20 s per session); the ms from
//       the op 3 to the last socket receiving that PRESENCE_UPDATE. With "publishUrl" instead (the bare baseline), a
//       POST there publishes "payload" (our round 0 frame, the round's name put in) and no hub socket is opened.
//   {"cmd":"exit"}  closes every socket with 1000 and exits.
// Prints one JSON object a line on stdout. Run pinned to the load CPU, in its own process.
// Usage: bun bench/clients/ws.ts WS_URL TOKENS.json COUNT CONCURRENCY
const [url, tokensFile, countArg, concurrencyArg] = process.argv.slice(2)
const tokens = (await Bun.file(tokensFile).json()) as string[]
const count = Number(countArg)
const concurrency = Number(concurrencyArg)
if (tokens.length < count) throw new Error(`${count} sockets need ${count} tokens, got ${tokens.length}`)

const sockets: WebSocket[] = []
let hello = ''
let ready = ''
let closedEarly = 0
const closeCodes: Record<string, number> = {}
// Fan-out bookkeeping: every LOBBY_MESSAGE_CREATE (or, in a presence run, its round's PRESENCE_UPDATE) a socket
// receives bumps `received`.
let watching = '"LOBBY_MESSAGE_CREATE"'
let received = 0
let lastFrame = ''
let onReceive: (() => void) | undefined

function open(token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url)
    let sentAt = 0
    let done = false
    ws.onmessage = (event) => {
      const data = String(event.data)
      if (!done) {
        if (data.includes('"op":10')) {
          if (!hello) hello = data
          sentAt = performance.now()
          ws.send(
            JSON.stringify({
              op: 2,
              d: { token, properties: { os: 'linux', browser: 'bench', device: 'bench' }, intents: 0 },
            }),
          )
        } else if (data.includes('"t":"READY"')) {
          done = true
          if (!ready) ready = data
          sockets.push(ws)
          resolve(performance.now() - sentAt)
        }
        return
      }
      if (data.includes(watching)) {
        received += 1
        lastFrame = data
        onReceive?.()
      }
    }
    ws.onclose = (event) => {
      if (!done) reject(new Error(`socket closed before READY: ${event.code} ${event.reason}`))
      else {
        closedEarly += 1
        closeCodes[event.code] = (closeCodes[event.code] ?? 0) + 1
      }
    }
    ws.onerror = () => {
      if (!done) reject(new Error('socket error before READY'))
    }
  })
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

const latencies: number[] = []
const started = performance.now()
let next = 0
await Promise.all(
  Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++
      latencies.push(await open(tokens[i]))
    }
  }),
)
const seconds = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
console.log(
  JSON.stringify({
    event: 'ready',
    count: sockets.length,
    seconds,
    rate: count / seconds,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    hello,
    ready,
  }),
)

const heartbeat = JSON.stringify({ op: 1, d: null })
const beat = setInterval(() => {
  for (const ws of sockets) if (ws.readyState === WebSocket.OPEN) ws.send(heartbeat)
}, 20_000)

async function fanout(cmd: { url: string; authorization: string; rounds: number; warm: number }) {
  const times: number[] = []
  let post: { status: number; headers: [string, string][]; bodyBase64: string } | undefined
  for (let round = 0; round < cmd.warm + cmd.rounds; round++) {
    const want = received + sockets.length
    const all = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`round ${round}: ${want - received} sockets did not receive the message`)),
        15_000,
      )
      onReceive = () => {
        if (received >= want) {
          clearTimeout(timer)
          resolve(performance.now())
        }
      }
    })
    const t0 = performance.now()
    const response = await fetch(cmd.url, {
      method: 'POST',
      headers: { authorization: cmd.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ content: `fan-out round ${round}: gg, next round on harbor?`, nonce: String(round) }),
    })
    const body = new Uint8Array(await response.arrayBuffer())
    if (response.status >= 300) throw new Error(`POST answered ${response.status}: ${new TextDecoder().decode(body)}`)
    post = {
      status: response.status,
      headers: [...response.headers].filter(
        ([k]) => !['date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'].includes(k),
      ),
      bodyBase64: Buffer.from(body).toString('base64'),
    }
    const last = await all
    if (round >= cmd.warm) times.push(last - t0)
    await Bun.sleep(20)
  }
  onReceive = undefined
  const sorted = [...times].sort((a, b) => a - b)
  console.log(
    JSON.stringify({
      event: 'fanout',
      rounds: times.length,
      p50: pct(sorted, 50),
      p99: pct(sorted, 99),
      payload: lastFrame,
      post,
    }),
  )
}

/** A socket of the hub user, identified (its READY received). */
function hubSocket(hubUrl: string, token: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(hubUrl)
    ws.onmessage = (event) => {
      const data = String(event.data)
      if (data.includes('"op":10'))
        ws.send(JSON.stringify({ op: 2, d: { token, properties: { os: 'linux', browser: 'bench', device: 'bench' } } }))
      else if (data.includes('"t":"READY"')) resolve(ws)
    }
    ws.onclose = (event) => reject(new Error(`hub socket closed: ${event.code} ${event.reason}`))
  })
}

async function presence(cmd: {
  hubUrl?: string
  hubToken?: string
  publishUrl?: string
  payload?: string
  sessions: number
  rounds: number
  warm: number
}) {
  const hubs: WebSocket[] = []
  if (cmd.hubUrl && cmd.hubToken)
    for (let i = 0; i < cmd.sessions; i++) hubs.push(await hubSocket(cmd.hubUrl, cmd.hubToken))
  const times: number[] = []
  for (let round = 0; round < cmd.warm + cmd.rounds; round++) {
    const name = `bench round ${round}`
    watching = `"${name}"`
    const want = received + sockets.length
    const all = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`round ${round}: ${want - received} sockets did not receive the update`)),
        15_000,
      )
      onReceive = () => {
        if (received >= want) {
          clearTimeout(timer)
          resolve(performance.now())
        }
      }
    })
    const status = round % 2 ? 'idle' : 'dnd'
    const t0 = performance.now()
    if (cmd.publishUrl)
      await fetch(cmd.publishUrl, { method: 'POST', body: (cmd.payload ?? '').replaceAll('bench round 0', name) })
    else
      hubs[round % hubs.length].send(
        JSON.stringify({ op: 3, d: { status, since: null, afk: false, activities: [{ name, type: 0 }] } }),
      )
    const last = await all
    if (round >= cmd.warm) times.push(last - t0)
    if (round === 0 && !cmd.publishUrl) firstFrame = lastFrame
    await Bun.sleep(20)
  }
  onReceive = undefined
  for (const ws of hubs) ws.close(1000)
  const sorted = [...times].sort((a, b) => a - b)
  const total = times.reduce((a, b) => a + b, 0)
  console.log(
    JSON.stringify({
      event: 'presence',
      rounds: times.length,
      p50: pct(sorted, 50),
      p99: pct(sorted, 99),
      deliveriesPerSecond: (sockets.length * times.length) / (total / 1000),
      payload: firstFrame,
    }),
  )
}
let firstFrame = ''

for await (const line of console) {
  if (!line.trim()) continue
  const cmd = JSON.parse(line) as { cmd: string }
  try {
    if (cmd.cmd === 'fanout') await fanout(cmd as never)
    else if (cmd.cmd === 'presence') await presence(cmd as never)
    else if (cmd.cmd === 'status')
      console.log(
        JSON.stringify({
          event: 'status',
          open: sockets.filter((s) => s.readyState === WebSocket.OPEN).length,
          closedEarly,
          closeCodes,
        }),
      )
    else if (cmd.cmd === 'exit') break
  } catch (error) {
    console.log(JSON.stringify({ event: 'error', message: String(error) }))
  }
}
clearInterval(beat)
for (const ws of sockets) ws.close(1000)
await Bun.sleep(200)
process.exit(0)

export {}
