// Gateway load through the game client SDK (client/): COUNT clients in this one process (CONCURRENCY connecting at
// once), each its own Client with its own token, timed from connect() to READY; then held (the SDK heartbeats) and
// driven by the commands bench/clients/ws.ts takes on stdin (fanout, status, exit), answering in the same lines, so
// bench/gateway-sdk.ts compares the two in one run. BENCH_SDK_COMPRESS=1 has the SDK ask for zlib-stream (the raw
// clients do not).
// Usage: bun bench/clients/sdk.ts BASE_URL TOKENS.json COUNT CONCURRENCY
import { Client } from '../../client/src/index'

const [baseUrl, tokensFile, countArg, concurrencyArg] = process.argv.slice(2)
const tokens = (await Bun.file(tokensFile).json()) as string[]
const count = Number(countArg)
const concurrency = Number(concurrencyArg)
const compress = process.env.BENCH_SDK_COMPRESS === '1'
if (tokens.length < count) throw new Error(`${count} clients need ${count} tokens, got ${tokens.length}`)

const clients: Client[] = []
let received = 0
let lastFrame = ''
let onReceive: (() => void) | undefined
let closed = 0

async function open(token: string): Promise<number> {
  const client = new Client({ baseUrl, token, gateway: { compress } })
  client.gateway.on('LOBBY_MESSAGE_CREATE', (message) => {
    received += 1
    if (!lastFrame) lastFrame = JSON.stringify(message)
    onReceive?.()
  })
  client.gateway.on('closed', () => {
    closed += 1
  })
  const started = performance.now()
  await client.gateway.connect()
  clients.push(client)
  return performance.now() - started
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

const latencies: number[] = []
const started = performance.now()
let next = 0
await Promise.all(
  Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) latencies.push(await open(tokens[next++]))
  }),
)
const seconds = (performance.now() - started) / 1000
latencies.sort((a, b) => a - b)
console.log(
  JSON.stringify({
    event: 'ready',
    count: clients.length,
    seconds,
    rate: count / seconds,
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    hello: '',
    ready: '',
  }),
)

async function fanout(cmd: { url: string; authorization: string; rounds: number; warm: number }) {
  const times: number[] = []
  for (let round = 0; round < cmd.warm + cmd.rounds; round++) {
    const want = received + clients.length
    const all = new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`round ${round}: ${want - received} clients did not receive the message`)),
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
      body: JSON.stringify({ content: `fan-out round ${round}: gg, next round on harbor?`, nonce: `sdk${round}` }),
    })
    if (response.status >= 300) throw new Error(`POST answered ${response.status}: ${await response.text()}`)
    await response.arrayBuffer()
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
    }),
  )
}

for await (const line of console) {
  if (!line.trim()) continue
  const cmd = JSON.parse(line) as { cmd: string }
  try {
    if (cmd.cmd === 'fanout') await fanout(cmd as never)
    else if (cmd.cmd === 'status')
      console.log(JSON.stringify({ event: 'status', open: clients.filter((c) => c.gateway.connected).length, closed }))
    else if (cmd.cmd === 'exit') break
  } catch (error) {
    console.log(JSON.stringify({ event: 'error', message: String(error) }))
  }
}
await Promise.all(clients.map((c) => c.close()))
await Bun.sleep(200)
process.exit(0)
