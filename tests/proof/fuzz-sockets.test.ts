// Property-based fuzzing of the two WebSocket doors (issue 19): the Gateway (/gateway) and the remote-auth gateway
// (/remote-auth). fast-check generates sequences of frames — valid ones (heartbeat, identify with good and bad tokens,
// resume with live, stale and odd data, lobby voice states, the handshake), mutated ones (wrong types, unknown ops,
// __proto__ keys, deep nesting), and raw ones (not JSON, binary, huge) — on a fresh socket each. Properties: every
// close code is one the sequence justifies (never 4000 "unknown error", 1006 or 1011: an exception or a crash),
// nothing is logged at error level, and the server stays healthy. Same target process as fuzz-rest.test.ts.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { constants, createHash, generateKeyPairSync, privateDecrypt } from 'node:crypto'
import { ACCEPTED_NOOP_OPS, Close, Op, QOS_HEARTBEAT } from '../../src/gateway/protocol'
import { anyString, deepJson, nastyValue } from './arbitraries'
import { startTarget, type Target } from './target-client'

const SEED = Number(process.env.FUZZ_SEED ?? 19_19_19)
const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 0)
const GATEWAY_RUNS = TOTAL_RUNS > 0 ? Math.ceil(TOTAL_RUNS / 20) : 150
const REMOTE_RUNS = TOTAL_RUNS > 0 ? Math.ceil(TOTAL_RUNS / 40) : 60
const SETTLE_MS = 2_000
/** FUZZ_STATS=1 prints how the sessions ended. */
const STATS = Boolean(process.env.FUZZ_STATS)
const endings: Record<string, number> = {}
const count = (door: string, code: number | 'open') =>
  STATS && (endings[`${door} ${code}`] = (endings[`${door} ${code}`] ?? 0) + 1)

let target: Target
/** The opcodes the running server's domains registered (17, 100, 101): with protocol.ts, the server's own op table. */
let registeredOps: Set<number>
beforeAll(async () => {
  target = await startTarget()
  registeredOps = new Set(await target.call<number[]>('opcodes'))
}, 60_000)
afterAll(() => {
  if (STATS) console.log(endings)
  return target?.stop()
})

type Out = { kind: 'json'; value: unknown } | { kind: 'text'; text: string } | { kind: 'binary'; bytes: Uint8Array }
type Step = { out: Out; justifies: number[] }

/** Bun refuses a frame over 20 KiB (app-wide WebSocket limit) with 1009 before any handler sees it. */
function sizeCodes(steps: Step[], ownLimit: number, ownCode: number): number[] {
  const sizes = steps.map(({ out }) =>
    out.kind === 'json'
      ? Buffer.byteLength(JSON.stringify(out.value) ?? '')
      : out.kind === 'text'
        ? Buffer.byteLength(out.text)
        : out.bytes.length,
  )
  return [...(sizes.some((n) => n > 20 * 1024) ? [1009] : []), ...(sizes.some((n) => n > ownLimit) ? [ownCode] : [])]
}
type World = { token: string; bearer: string; narrowBearer: string; lobby: string }

/** Open a socket; collect frames; resolve the close (code) or 'open' when the sequence settled. */
async function session(
  path: string,
  steps: Step[],
  settled: (frames: any[]) => boolean,
): Promise<{ code: number | 'open'; frames: any[] }> {
  const ws = new WebSocket(`${target.url.replace('http', 'ws')}${path}`)
  ws.binaryType = 'arraybuffer'
  const frames: any[] = []
  let closedWith: number | undefined
  const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve((closedWith = e.code))))
  ws.onmessage = (e) => {
    try {
      frames.push(JSON.parse(String(e.data)))
    } catch {
      frames.push({ raw: String(e.data) })
    }
  }
  const opened = await Promise.race([
    new Promise<boolean>((resolve) => (ws.onopen = () => resolve(true))),
    closed.then(() => false),
  ])
  if (!opened) return { code: closedWith ?? 1006, frames }
  for (const { out } of steps) {
    if (ws.readyState !== WebSocket.OPEN) break
    if (out.kind === 'json') ws.send(JSON.stringify(out.value))
    else if (out.kind === 'text') ws.send(out.text)
    else ws.send(out.bytes)
    await Bun.sleep(1)
  }
  const deadline = Date.now() + SETTLE_MS
  while (closedWith === undefined && Date.now() < deadline && !settled(frames)) await Bun.sleep(10)
  if (closedWith !== undefined) return { code: closedWith, frames }
  ws.close(1000)
  await Promise.race([closed, Bun.sleep(500)])
  return { code: 'open', frames }
}

// ---- Gateway ----

/**
 * The close codes a frame with this `op` may cause, read from the server's own op table (gateway/protocol.ts and the
 * ops the domains registered), never from a list of our own: not a number, 4002; a heartbeat (1, or QoS 40) nothing;
 * Identify and Resume, a failed or repeated authentication; an op neither registered nor accepted as a no-op, 4001
 * (the server-sent ones, 0, 7, 9, 10, 11, included); any other before Identify, 4003.
 */
function opCodes(op: unknown): number[] {
  if (typeof op !== 'number') return [Close.DecodeError]
  if (op === Op.Heartbeat || op === QOS_HEARTBEAT) return []
  if (op === Op.Identify || op === Op.Resume) return [Close.AuthenticationFailed, Close.AlreadyAuthenticated]
  if (!registeredOps.has(op) && !ACCEPTED_NOOP_OPS.has(op)) return [Close.UnknownOpcode]
  return [Close.NotAuthenticated]
}

function gatewayStep(world: World, sessions: string[]): fc.Arbitrary<Step> {
  const token = fc.constantFrom(
    world.token,
    target.fixtures.game.bot,
    target.fixtures.game.bot.slice(4),
    world.bearer,
    world.narrowBearer,
    'not-a-token',
    '',
    'Bot ',
  )
  const seq = fc.oneof(
    fc.constant(null),
    fc.nat(50),
    fc.integer({ min: -5, max: -1 }),
    fc.constant(2 ** 53),
    fc.constant(1.5),
    fc.constant('3'),
  )
  const json = (op: unknown, d: fc.Arbitrary<unknown>, justifies: (op: unknown) => number[]) =>
    d.map((value) => ({ out: { kind: 'json' as const, value: { op, d: value } }, justifies: justifies(op) }))
  return fc.oneof(
    { weight: 4, arbitrary: json(1, seq, opCodes) },
    {
      weight: 4,
      arbitrary: json(
        2,
        fc.record(
          {
            token,
            properties: fc.constant({ os: 'linux', browser: 'fuzz', device: 'fuzz' }),
            intents: fc.oneof(fc.nat(), fc.constant(-1)),
            capabilities: fc.nat(),
          },
          { requiredKeys: ['token'] },
        ),
        opCodes,
      ),
    },
    { weight: 2, arbitrary: json(2, nastyValue, opCodes) },
    {
      weight: 3,
      arbitrary: json(
        6,
        fc.record({ token, session_id: fc.oneof(fc.constantFrom(...sessions), anyString), seq }, { requiredKeys: [] }),
        opCodes,
      ),
    },
    {
      weight: 1,
      arbitrary: json(
        17,
        fc.oneof(
          fc.constant([]),
          fc.constant([{ lobby_id: world.lobby, self_mute: true, self_deaf: false }]),
          fc.array(fc.record({ lobby_id: anyString, self_mute: fc.boolean() }), { maxLength: 3 }),
          nastyValue,
        ),
        opCodes,
      ),
    },
    {
      weight: 1,
      arbitrary: json(
        100,
        fc.oneof(fc.record({ lobby_id: fc.constant(world.lobby), revision: fc.nat(), sdp: anyString }), nastyValue),
        opCodes,
      ),
    },
    {
      weight: 1,
      arbitrary: json(
        101,
        fc.oneof(
          fc.record({
            lobby_id: fc.constant(world.lobby),
            candidate: fc.oneof(fc.constant(null), fc.record({ candidate: anyString })),
          }),
          nastyValue,
        ),
        opCodes,
      ),
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom(...ACCEPTED_NOOP_OPS, QOS_HEARTBEAT, ...registeredOps)
        .chain((op) => json(op, nastyValue, opCodes)),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(fc.integer({ min: -3, max: 200 }), fc.constantFrom(0, 7, 9, 10, 11, 1.5, '1', null, true, 2 ** 40))
        .chain((op) => json(op, nastyValue, opCodes)),
    },
    {
      weight: 1,
      arbitrary: fc.constant<Step>({
        out: { kind: 'text', text: '{"op":1,"d":null,"__proto__":{"polluted":1}}' },
        justifies: [],
      }),
    },
    {
      weight: 1,
      arbitrary: fc.constant<Step>({
        out: { kind: 'text', text: '{"op":2,"d":{"token":"x","constructor":{"prototype":{"polluted":1}}}}' },
        justifies: [4004],
      }),
    },
    {
      weight: 1,
      arbitrary: anyString.map<Step>((text) => ({ out: { kind: 'text', text: text || ' ' }, justifies: [4002] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constant([1, 2]), fc.constant(5), fc.constant('x'), fc.constant(null))
        .map<Step>((value) => ({ out: { kind: 'json', value }, justifies: [4002] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 64 })
        .map<Step>((bytes) => ({ out: { kind: 'binary', bytes }, justifies: [4002] })),
    },
    {
      weight: 1,
      arbitrary: deepJson.map<Step>((deep) => ({
        out: { kind: 'text', text: `{"op":1,"d":${deep}}` },
        justifies: [4002, 1009],
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(15 * 1024 + 10, 19 * 1024, 64 * 1024)
        .map<Step>((n) => ({ out: { kind: 'json', value: { op: 1, d: 'x'.repeat(n) } }, justifies: [4002, 1009] })),
    },
  )
}

test('the oracle agrees with the server on every op a fresh socket may send before Identify', async () => {
  // Every op the fuzzer can generate (-3..200 and the odd ones), each alone on a fresh socket: the close code (or none)
  // is the one opCodes names. Before the oracle read the server's table, op 30 (an accepted no-op) expected 4001.
  const ops: unknown[] = [...Array.from({ length: 204 }, (_, i) => i - 3), 1.5, '1', null, true, 2 ** 40]
  const disagreements: string[] = []
  for (let i = 0; i < ops.length; i += 8)
    await Promise.all(
      ops.slice(i, i + 8).map(async (op) => {
        const step: Step = { out: { kind: 'json', value: { op, d: null } }, justifies: opCodes(op) }
        const { code } = await session('/gateway?v=10&encoding=json', [step], (got) =>
          got.some((f) => f.op === Op.HeartbeatAck || f.op === Op.InvalidSession),
        )
        // 4009: the heartbeat the socket never sent (the target announces 1 s), as in the fuzz below.
        if (code !== 'open' && code !== Close.SessionTimedOut && !step.justifies.includes(code))
          disagreements.push(`op ${JSON.stringify(op)}: closed ${code}, the oracle allows ${step.justifies.join(', ')}`)
      }),
    )
  expect(disagreements).toEqual([])
}, 120_000)

test(
  'Gateway: generated and mutated frame sequences never close with an unexpected code or crash',
  async () => {
    const world = await target.call<World>('world')
    // A live session to resume (then left resumable), and a stale one.
    const live = new WebSocket(`${target.url.replace('http', 'ws')}/gateway?v=10&encoding=json`)
    const sessions: string[] = ['0000', 'f'.repeat(32)]
    await new Promise<void>((resolve) => {
      live.onmessage = (e) => {
        const f = JSON.parse(String(e.data))
        if (f.op === 10) live.send(JSON.stringify({ op: 2, d: { token: world.token, properties: {} } }))
        if (f.t === 'READY') {
          sessions.push(f.d.session_id)
          live.close(4999)
          resolve()
        }
      }
    })
    const errorsBefore = target.errors.length
    const failures: string[] = []
    const result = await fc.check(
      fc.asyncProperty(
        fc.constantFrom('?v=10&encoding=json', '?v=9', '?v=10&encoding=etf', '?v=6', '', '?v=10&compress=zlib-stream'),
        fc.array(gatewayStep(world, sessions), { minLength: 1, maxLength: 8 }),
        async (query, steps) => {
          const auth = steps.filter((s) => s.out.kind === 'json' && [2, 6].includes((s.out.value as any)?.op)).length
          const { code, frames } = await session(
            `/gateway${query}`,
            steps,
            (got) =>
              got.some((f) => f.op === 11) &&
              (auth === 0 || got.some((f) => f.t === 'READY' || f.t === 'RESUMED' || f.op === 9)),
          )
          count('gateway', code)
          if (code === 'open') return
          const allowed = new Set([...steps.flatMap((s) => s.justifies), ...sizeCodes(steps, 15 * 1024, 4002), 4009])
          if (query.includes('v=6')) allowed.add(4012)
          if (query.includes('etf')) allowed.add(4002)
          if (auth >= 2) allowed.add(4005)
          if (!allowed.has(code))
            throw new Error(
              `closed ${code}, which nothing sent justifies (allowed ${[...allowed].join(', ')}); frames back: ${JSON.stringify(frames).slice(0, 300)}`,
            )
        },
      ),
      { seed: SEED, numRuns: GATEWAY_RUNS },
    )
    if (result.failed)
      failures.push(
        `seed ${result.seed}, path "${result.counterexamplePath}": ${String((result.errorInstance as Error)?.message)}\n  frames: ${JSON.stringify(result.counterexample, (_k, v) => (typeof v === 'string' && v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v instanceof Uint8Array ? `<${v.length} bytes>` : v)).slice(0, 1500)}`,
      )
    expect(failures).toEqual([])
    expect(target.errors.slice(errorsBefore).filter((l) => / ERROR /.test(l))).toEqual([])
    const health = await target.call<any>('health')
    expect(health.prototypes).toEqual(health.pristine)
    expect(health.polluted).toEqual([])
    expect((await fetch(`${target.url}/healthz`)).status).toBe(200)
  },
  TOTAL_RUNS > 0 ? Math.max(300_000, TOTAL_RUNS * 20) : 60_000,
)

// ---- Remote-auth gateway ----

const keys = Array.from({ length: 3 }, () => generateKeyPairSync('rsa', { modulusLength: 2048 }))
const weakKey = generateKeyPairSync('rsa', { modulusLength: 1024 })
const ecKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const spki = (k: { publicKey: any }) =>
  (k.publicKey.export({ type: 'spki', format: 'der' }) as Buffer).toString('base64')

type RaStep = Step & { proof?: 'nonce' | 'proof' | 'wrong' }

function remoteStep(): fc.Arbitrary<RaStep> {
  const json = (value: unknown, justifies: number[]): RaStep => ({ out: { kind: 'json', value }, justifies })
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(json({ op: 'heartbeat' }, [])) },
    {
      weight: 3,
      arbitrary: fc.nat(keys.length - 1).map((i) => json({ op: 'init', encoded_public_key: spki(keys[i]) }, [4002])),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(fc.constant(spki(weakKey)), fc.constant(spki(ecKey)), anyString, fc.constant('A'.repeat(5000)))
        .map((k) => json({ op: 'init', encoded_public_key: k }, [4001, 4002])),
    },
    { weight: 1, arbitrary: nastyValue.map((k) => json({ op: 'init', encoded_public_key: k }, [4001, 4002])) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom<'nonce' | 'proof' | 'wrong'>('nonce', 'proof', 'wrong')
        .map((proof) => ({ ...json({ op: 'nonce_proof' }, [4002]), proof })),
    },
    {
      weight: 1,
      arbitrary: fc
        .record(
          { nonce: fc.oneof(anyString, nastyValue), proof: fc.oneof(anyString, nastyValue) },
          { requiredKeys: [] },
        )
        .map((f) => json({ op: 'nonce_proof', ...f }, [4001, 4002])),
    },
    {
      weight: 1,
      arbitrary: fc
        .oneof(anyString, fc.constant('__proto__'), fc.constant('constructor'), fc.constant('toString'))
        .map((op) => json({ op }, [4001])),
    },
    { weight: 1, arbitrary: fc.oneof(nastyValue, fc.constant({ op: 5 })).map((value) => json(value, [4001])) },
    {
      weight: 1,
      arbitrary: fc.constant<RaStep>({
        out: { kind: 'text', text: '{"op":"heartbeat","__proto__":{"polluted":1}}' },
        justifies: [],
      }),
    },
    {
      weight: 1,
      arbitrary: anyString.map<RaStep>((text) => ({ out: { kind: 'text', text: text || ' ' }, justifies: [4001] })),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 64 })
        .map<RaStep>((bytes) => ({ out: { kind: 'binary', bytes }, justifies: [4001] })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(5000, 19 * 1024, 40 * 1024).map<RaStep>((n) => ({
        out: { kind: 'json', value: { op: 'heartbeat', pad: 'x'.repeat(n) } },
        justifies: [4001, 1009],
      })),
    },
    {
      weight: 1,
      arbitrary: deepJson.map<RaStep>((deep) => ({
        out: { kind: 'text', text: `{"op":"heartbeat","d":${deep}}` },
        justifies: [4001, 1009],
      })),
    },
  )
}

/** A remote-auth session that answers the nonce challenge the way each step says (the proof needs the server's nonce). */
async function remoteSession(query: string, steps: RaStep[]): Promise<{ code: number | 'open'; frames: any[] }> {
  const ws = new WebSocket(`${target.url.replace('http', 'ws')}/remote-auth${query}`)
  const frames: any[] = []
  let closedWith: number | undefined
  const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve((closedWith = e.code))))
  ws.onmessage = (e) => frames.push(JSON.parse(String(e.data)))
  const opened = await Promise.race([
    new Promise<boolean>((resolve) => (ws.onopen = () => resolve(true))),
    closed.then(() => false),
  ])
  if (!opened) return { code: closedWith ?? 1006, frames }
  let key: (typeof keys)[number] | undefined
  for (const step of steps) {
    if (ws.readyState !== WebSocket.OPEN) break
    const value = step.out.kind === 'json' ? (step.out.value as any) : undefined
    if (value?.op === 'init' && typeof value.encoded_public_key === 'string')
      key = keys.find((k) => spki(k) === value.encoded_public_key)
    if (step.proof) {
      // Wait briefly for the challenge; answer it right, in the legacy form, or wrong.
      for (let i = 0; i < 100 && !frames.some((f) => f.op === 'nonce_proof') && closedWith === undefined; i++)
        await Bun.sleep(5)
      const challenge = frames.find((f) => f.op === 'nonce_proof')
      let nonce = Buffer.from('not the nonce')
      if (challenge && key) {
        try {
          nonce = privateDecrypt(
            { key: key.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
            Buffer.from(challenge.encrypted_nonce, 'base64'),
          )
        } catch {}
      }
      const answer =
        step.proof === 'nonce'
          ? { nonce: nonce.toString('base64url') }
          : step.proof === 'proof'
            ? { proof: createHash('sha256').update(nonce).digest('base64url') }
            : { nonce: 'AAAA' }
      ws.send(JSON.stringify({ op: 'nonce_proof', ...answer }))
    } else if (step.out.kind === 'json') ws.send(JSON.stringify(step.out.value))
    else if (step.out.kind === 'text') ws.send(step.out.text)
    else ws.send(step.out.bytes)
    await Bun.sleep(2)
  }
  ws.send(JSON.stringify({ op: 'heartbeat' }))
  const deadline = Date.now() + SETTLE_MS
  while (
    closedWith === undefined &&
    Date.now() < deadline &&
    frames.filter((f) => f.op === 'heartbeat_ack').length === 0
  )
    await Bun.sleep(10)
  await Bun.sleep(20)
  if (closedWith !== undefined) return { code: closedWith, frames }
  ws.close(1000)
  await Promise.race([closed, Bun.sleep(500)])
  return { code: 'open', frames }
}

test(
  'remote-auth gateway: generated and mutated handshakes never close with an unexpected code or crash',
  async () => {
    const errorsBefore = target.errors.length
    const result = await fc.check(
      fc.asyncProperty(
        fc.constantFrom('?v=2', '?v=2', '?v=2', '?v=1', ''),
        fc.array(remoteStep(), { minLength: 1, maxLength: 6 }),
        async (query, steps) => {
          const { code, frames } = await remoteSession(query, steps)
          count('remote-auth', code)
          if (code === 'open') return
          const allowed = new Set([...steps.flatMap((s) => s.justifies), ...sizeCodes(steps, 4096, 4001)])
          if (query !== '?v=2') allowed.add(4000)
          // A proof for a fingerprint another socket holds; a second init; a proof before init: handshake failures.
          allowed.add(4002)
          if (!allowed.has(code))
            throw new Error(
              `closed ${code}, which nothing sent justifies (allowed ${[...allowed].join(', ')}); frames back: ${JSON.stringify(frames).slice(0, 300)}`,
            )
        },
      ),
      { seed: SEED, numRuns: REMOTE_RUNS },
    )
    const failures = result.failed
      ? [
          `seed ${result.seed}, path "${result.counterexamplePath}": ${String((result.errorInstance as Error)?.message)}\n  frames: ${JSON.stringify(result.counterexample, (_k, v) => (typeof v === 'string' && v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v instanceof Uint8Array ? `<${v.length} bytes>` : v)).slice(0, 1500)}`,
        ]
      : []
    expect(failures).toEqual([])
    expect(target.errors.slice(errorsBefore).filter((l) => / ERROR /.test(l))).toEqual([])
    const health = await target.call<any>('health')
    expect(health.prototypes).toEqual(health.pristine)
    expect(health.database.integrity).toEqual(['ok'])
    expect((await fetch(`${target.url}/healthz`)).status).toBe(200)
  },
  TOTAL_RUNS > 0 ? Math.max(300_000, TOTAL_RUNS * 20) : 60_000,
)
