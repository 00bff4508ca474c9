// Lobby call bench: the server's CPU for calls of 2, 5 and 10 fake-microphone peers (werift peers in this process,
// each sending synthetic Opus-sized RTP at 50 packets a second), and from those, the cost per member and per
// forwarded stream (a call of n members forwards n(n-1) streams). The server runs in its own process; its CPU is
// read from /proc (Linux). Run: bun run bench/voice.ts  (BENCH_VOICE_SIZES=2,5,10 BENCH_VOICE_SECONDS=10; with
// BENCH_VOICE_BINARY=dist/lobby-server the compiled binary is measured instead of the sources)
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MediaStreamTrack, RTCPeerConnection, RtpHeader, RtpPacket } from 'werift'
import { opus } from '../src/voice/network'

const SIZES = (process.env.BENCH_VOICE_SIZES ?? '2,5,10').split(',').map(Number)
const SECONDS = Number(process.env.BENCH_VOICE_SECONDS ?? 10)
const TICKS = 100 // USER_HZ on Linux

const dir = mkdtempSync(join(tmpdir(), 'bench-voice-'))
const env = {
  ...process.env,
  DATABASE_PATH: join(dir, 'bench.sqlite'),
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  GATEWAY_HEARTBEAT_MS: '5000',
  NEW_LOGIN_LOCATION_CHECK: 'false',
  VOICE_MAX_PACKETS_PER_SECOND: '200',
}

const serverCommand = process.env.BENCH_VOICE_BINARY
  ? [process.env.BENCH_VOICE_BINARY]
  : [process.execPath, 'run', 'src/main.ts']

function cli(...args: string[]) {
  const r = Bun.spawnSync([...serverCommand, ...args], { env })
  if (r.exitCode !== 0) throw new Error(`cli ${args.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout.toString())
}

const app = cli('app', 'create', '--name', 'voice-bench')
const maxSize = Math.max(...SIZES)
const users: { id: string; token: string }[] = []
for (let i = 0; i < maxSize; i++)
  users.push(cli('user', 'create', '--email', `v${i}@bench.test`, '--password', 'bench password 123'))

const server = Bun.spawn(serverCommand, { env, stdout: 'pipe', stderr: 'inherit' })
let url = ''
{
  const reader = server.stdout.getReader()
  let seen = ''
  while (!/listening url=(\S+)/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  url = /listening url=(\S+)/.exec(seen)![1]!
}

/** utime + stime of the server process, in seconds. */
function serverCpu(): number {
  const fields = readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS
}

async function cpuOver(seconds: number): Promise<number> {
  const c0 = serverCpu()
  const t0 = performance.now()
  await Bun.sleep(seconds * 1000)
  return (serverCpu() - c0) / ((performance.now() - t0) / 1000)
}

class Peer {
  pc = new RTCPeerConnection({ codecs: { audio: [opus()], video: [] }, iceUseIpv6: false })
  mic = new MediaStreamTrack({ kind: 'audio' })
  ws!: WebSocket
  received = 0
  sent = 0
  private seq = 0
  private ts = 0
  private ssrc = Math.floor(Math.random() * 2 ** 32)
  private micSet = false
  private chain = Promise.resolve()
  private beat?: Timer

  constructor(readonly user: { id: string; token: string }) {
    this.pc.onTrack.subscribe((track) => track.onReceiveRtp.subscribe(() => (this.received += 1)))
  }

  async connect(lobbyId: string) {
    this.ws = new WebSocket(`${url.replace(/^http/, 'ws')}/gateway?v=10&encoding=json`)
    const ready = new Promise<void>((resolve) => {
      this.ws.onmessage = (event) => {
        const f = JSON.parse(String(event.data))
        if (f.op === 10) {
          this.beat = setInterval(() => this.ws.send(JSON.stringify({ op: 1, d: null })), 4000)
          this.ws.send(
            JSON.stringify({
              op: 2,
              d: { token: this.user.token, properties: { os: 'linux', browser: 'bench', device: 'bench' }, intents: 0 },
            }),
          )
        }
        if (f.t === 'READY') resolve()
        if (f.t === 'LOBBY_VOICE_SERVER_OFFER') this.chain = this.chain.then(() => this.answer(f.d))
        if (f.t === 'LOBBY_VOICE_SERVER_CLOSE') console.error('closed', f.d)
      }
    })
    await ready
    this.ws.send(JSON.stringify({ op: 17, d: [{ lobby_id: lobbyId, self_mute: false, self_deaf: false }] }))
  }

  private async answer(d: any) {
    await this.pc.setRemoteDescription({ type: 'offer', sdp: d.sdp })
    if (!this.micSet) {
      const t = this.pc.getTransceivers().find((x) => x.mid === d.mic_mid)!
      t.setDirection('sendonly')
      await t.sender.replaceTrack(this.mic)
      this.micSet = true
    }
    await this.pc.setLocalDescription(await this.pc.createAnswer())
    for (const t of this.pc.iceTransports)
      for (const p of (t.connection as any).protocols ?? []) p.transport?.socket?.on?.('error', () => {})
    this.ws.send(
      JSON.stringify({
        op: 100,
        d: { lobby_id: d.lobby_id, revision: d.revision, sdp: this.pc.localDescription!.sdp },
      }),
    )
  }

  send() {
    this.sent += 1
    this.seq = (this.seq + 1) & 0xffff
    this.ts = (this.ts + 960) >>> 0
    this.mic.writeRtp(
      new RtpPacket(
        new RtpHeader({ payloadType: 111, sequenceNumber: this.seq, timestamp: this.ts, ssrc: this.ssrc }),
        Buffer.alloc(80, 0x5a),
      ),
    )
  }

  async close() {
    clearInterval(this.beat)
    this.ws.close(1000)
    await this.pc.close().catch(() => {})
  }
}

type Row = { members: number; streams: number; cpu: number; loss: number; peersCpu: number }
const rows: Row[] = []
const idle = await cpuOver(3)

for (const n of SIZES) {
  const lobby = await fetch(`${url}/api/v9/lobbies`, {
    method: 'POST',
    headers: { authorization: `Bot ${app.bot_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ members: users.slice(0, n).map((u) => ({ id: u.id })) }),
  }).then((r) => r.json() as Promise<{ id: string }>)
  const peers = users.slice(0, n).map((u) => new Peer(u))
  for (const p of peers) await p.connect(lobby.id)
  // One clock for all: every 20 ms each peer sends one packet.
  const sender = setInterval(() => peers.forEach((p) => p.send()), 20)
  const deadline = Date.now() + 20_000
  while (peers.some((p) => p.received < 50 * (n - 1))) {
    if (Date.now() > deadline) throw new Error(`call of ${n} did not start`)
    await Bun.sleep(100)
  }
  await Bun.sleep(2000) // settle
  const received0 = peers.map((p) => p.received)
  const sent0 = peers.map((p) => p.sent)
  const own0 = process.cpuUsage()
  const t0 = performance.now()
  const cpu = await cpuOver(SECONDS)
  const elapsed = (performance.now() - t0) / 1000
  const own = process.cpuUsage(own0)
  const got = peers.reduce((sum, p, i) => sum + p.received - received0[i]!, 0)
  // Every packet a peer sent should reach the n-1 others (packets in flight at the edges make this approximate).
  const expected = peers.reduce((sum, p, i) => sum + (p.sent - sent0[i]!) * (n - 1), 0)
  clearInterval(sender)
  for (const p of peers) await p.close()
  rows.push({
    members: n,
    streams: n * (n - 1),
    cpu: cpu - idle,
    loss: Math.max(0, 1 - got / expected),
    peersCpu: (own.user + own.system) / 1e6 / elapsed,
  })
  await Bun.sleep(1000)
}
server.kill()

// cpu ≈ a·members + b·streams, least squares over the calls measured (idle subtracted).
const s = (f: (r: Row) => number) => rows.reduce((sum, r) => sum + f(r), 0)
const mm = s((r) => r.members ** 2),
  ss = s((r) => r.streams ** 2),
  ms = s((r) => r.members * r.streams)
const mc = s((r) => r.members * r.cpu),
  sc = s((r) => r.streams * r.cpu)
const det = mm * ss - ms * ms
const perMember = (mc * ss - sc * ms) / det
const perStream = (mm * sc - ms * mc) / det

const pct = (x: number) => `${(x * 100).toFixed(1)} %`
console.log(`Server idle: ${pct(idle)} of a core\n`)
console.log(
  '| members | forwarded streams | server CPU (above idle) | packets lost | CPU of the peers (this process) |',
)
console.log('|---|---|---|---|---|')
for (const r of rows)
  console.log(`| ${r.members} | ${r.streams} | ${pct(r.cpu)} | ${(r.loss * 100).toFixed(2)} % | ${pct(r.peersCpu)} |`)
console.log(
  `\nFit: ${pct(perMember)} of a core per member + ${pct(perStream)} per forwarded stream (50 packets/s each).`,
)
process.exit(0)
