// The remote-auth gateway v2 as a desktop client sees it: hello, the RSA handshake with both proof forms,
// heartbeats, every close code, deadlines by moving the clock, and the socket limits.
import { afterEach, describe, expect, test } from 'bun:test'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { remoteAuthStats, startRemoteAuthGateway, sweepRemoteAuth } from '../../src/remote-auth/desktop'
import { insertDesktop } from '../../src/remote-auth/store'
import { withConfig } from '../auth/helpers'
import { resetWorld } from '../helpers'
import { DesktopClient } from './desktop-client'
import { desktopRow, serverForgot } from './helpers'

const open: DesktopClient[] = []
async function connect(options: Parameters<typeof DesktopClient.connect>[0] = {}) {
  const c = await DesktopClient.connect(options)
  open.push(c)
  return c
}
async function ready(form: 'nonce' | 'proof' = 'nonce', options: Parameters<typeof DesktopClient.connect>[0] = {}) {
  const c = await DesktopClient.ready(form, options)
  open.push(c)
  return c
}

afterEach(async () => {
  for (const c of open.splice(0)) c.close()
  await Bun.sleep(20)
  resetWorld()
})

describe('handshake', () => {
  for (const form of ['nonce', 'proof'] as const) {
    test(`hello, init, nonce_proof, {${form}} → pending_remote_init with the SPKI fingerprint`, async () => {
      const c = await connect()
      expect(c.frames[0]).toEqual({
        op: 'hello',
        heartbeat_interval: config().remoteAuthHeartbeatMs,
        timeout_ms: config().remoteAuthTimeoutMs,
      })
      c.send({ op: 'init', encoded_public_key: c.encodedPublicKey })
      const challenge = await c.waitFor('nonce_proof')
      expect(Object.keys(challenge).sort()).toEqual(['encrypted_nonce', 'op'])
      expect(challenge.encrypted_nonce).toMatch(/^[A-Za-z0-9+/]+={0,2}$/)
      const nonce = c.decrypt(challenge.encrypted_nonce)
      expect(nonce).toHaveLength(32)
      if (form === 'nonce') c.send({ op: 'nonce_proof', nonce: nonce.toString('base64url') })
      else c.send({ op: 'nonce_proof', proof: createHash('sha256').update(nonce).digest('base64url') })
      const init = await c.waitFor('pending_remote_init')
      expect(init).toEqual({ op: 'pending_remote_init', fingerprint: c.fingerprint })
      expect(init.fingerprint).toMatch(/^[A-Za-z0-9_-]{43}$/)
      // The row a mobile request needs, with the socket's deadline.
      const row = (await desktopRow(c.fingerprint))!
      expect(row.publicKey).toBe(c.encodedPublicKey)
      expect(row.userId).toBeNull()
      expect(row.expiresAt - row.createdAt).toBeLessThanOrEqual(config().remoteAuthTimeoutMs)
      expect(c.closed).toBeNull()
    })
  }

  test('each socket gets its own nonce', async () => {
    const keys = DesktopClient.newKeys()
    const a = await connect({ keys })
    const b = await connect({ keys })
    for (const c of [a, b]) c.send({ op: 'init', encoded_public_key: c.encodedPublicKey })
    const [na, nb] = await Promise.all(
      [a, b].map(async (c) => c.decrypt((await c.waitFor('nonce_proof')).encrypted_nonce).toString('hex')),
    )
    expect(na).not.toBe(nb)
  })

  test('heartbeat → heartbeat_ack, before and after the handshake', async () => {
    const c = await connect()
    c.send({ op: 'heartbeat' })
    expect(await c.waitFor('heartbeat_ack')).toEqual({ op: 'heartbeat_ack' })
    await c.handshake()
    c.send({ op: 'heartbeat' })
    await c.waitForCount('heartbeat_ack', 2)
  })
})

describe('close codes', () => {
  test('4000: a version other than 2, or none', async () => {
    for (const query of ['?v=1', '?v=3', '', '?v=2x']) {
      const c = await DesktopClient.open({ query })
      expect(await c.waitForClose()).toEqual({ code: 4000, reason: 'Invalid version' })
      expect(c.frames).toEqual([])
    }
  })

  test('4001: undecodable frames, frames without an op, unknown ops', async () => {
    const cases: unknown[] = [
      'not json',
      '{"op":',
      '[1,2]',
      '42',
      '{}',
      { op: 7 },
      { op: 'identify' },
      { op: 'pending_login' },
    ]
    for (const frame of cases) {
      const c = await connect()
      c.send(frame)
      expect((await c.waitForClose()).code).toBe(4001)
    }
    const binary = await connect()
    binary.ws.send(new Uint8Array([1, 2, 3]))
    expect((await binary.waitForClose()).code).toBe(4001)
  })

  test('4001: a frame over 4096 bytes; exactly 4096 is fine', async () => {
    const frame = (bytes: number) => {
      const base = JSON.stringify({ op: 'heartbeat', pad: '' })
      return JSON.stringify({ op: 'heartbeat', pad: 'x'.repeat(bytes - base.length) })
    }
    expect(frame(4096)).toHaveLength(4096)
    const c = await connect()
    c.send(frame(4096))
    await c.waitFor('heartbeat_ack')
    c.send(frame(4097))
    expect(await c.waitForClose()).toEqual({ code: 4001, reason: 'Frame too large' })
  })

  test('4002: keys that are not RSA-2048 SPKI in standard base64', async () => {
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'der',
    })
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' })
    const e3 = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 }).publicKey.export({
      type: 'spki',
      format: 'der',
    })
    const good = DesktopClient.newKeys().publicKey.export({ type: 'spki', format: 'der' })
    const cases: unknown[] = [
      rsa1024.toString('base64'),
      ec.toString('base64'),
      e3.toString('base64'),
      good.toString('base64url'), // not standard base64
      good.toString('base64').replace(/=+$/, '') + '!',
      Buffer.from('not a key').toString('base64'),
      '',
      123,
      undefined,
    ]
    for (const encoded_public_key of cases) {
      const c = await connect()
      c.send({ op: 'init', encoded_public_key })
      expect(await c.waitForClose()).toEqual({ code: 4002, reason: 'Invalid public key' })
      expect(c.ops()).toEqual(['hello'])
    }
  })

  test('4002: a wrong nonce, a wrong proof, a proof before init or twice, a second init', async () => {
    const wrongNonce = await connect()
    wrongNonce.send({ op: 'init', encoded_public_key: wrongNonce.encodedPublicKey })
    await wrongNonce.waitFor('nonce_proof')
    wrongNonce.send({ op: 'nonce_proof', nonce: Buffer.alloc(32).toString('base64url') })
    expect(await wrongNonce.waitForClose()).toEqual({ code: 4002, reason: 'Invalid nonce proof' })

    const wrongProof = await connect()
    wrongProof.send({ op: 'init', encoded_public_key: wrongProof.encodedPublicKey })
    const nonce = wrongProof.decrypt((await wrongProof.waitFor('nonce_proof')).encrypted_nonce)
    // The hash form sent as the nonce form does not pass, nor the nonce sent as the proof.
    wrongProof.send({ op: 'nonce_proof', proof: nonce.toString('base64url') })
    expect((await wrongProof.waitForClose()).code).toBe(4002)

    const empty = await connect()
    empty.send({ op: 'init', encoded_public_key: empty.encodedPublicKey })
    await empty.waitFor('nonce_proof')
    empty.send({ op: 'nonce_proof' })
    expect((await empty.waitForClose()).code).toBe(4002)

    const early = await connect()
    early.send({ op: 'nonce_proof', nonce: 'AAAA' })
    expect(await early.waitForClose()).toEqual({ code: 4002, reason: 'Unexpected nonce proof' })

    const twiceInit = await connect()
    twiceInit.send({ op: 'init', encoded_public_key: twiceInit.encodedPublicKey })
    await twiceInit.waitFor('nonce_proof')
    twiceInit.send({ op: 'init', encoded_public_key: twiceInit.encodedPublicKey })
    expect(await twiceInit.waitForClose()).toEqual({ code: 4002, reason: 'Already initialized' })

    const afterProof = await ready()
    afterProof.send({ op: 'init', encoded_public_key: afterProof.encodedPublicKey })
    expect((await afterProof.waitForClose()).code).toBe(4002)
    expect(await desktopRow(afterProof.fingerprint)).toBeUndefined()

    const proofAgain = await ready()
    proofAgain.send({ op: 'nonce_proof', nonce: 'AAAA' })
    expect((await proofAgain.waitForClose()).code).toBe(4002)
  })

  test('4002: a second socket proving the same key while the first waits', async () => {
    const keys = DesktopClient.newKeys()
    const first = await ready('nonce', { keys })
    const second = await connect({ keys })
    second.send({ op: 'init', encoded_public_key: second.encodedPublicKey })
    const nonce = second.decrypt((await second.waitFor('nonce_proof')).encrypted_nonce)
    second.send({ op: 'nonce_proof', nonce: nonce.toString('base64url') })
    expect(await second.waitForClose()).toEqual({ code: 4002, reason: 'Fingerprint in use' })
    expect(first.closed).toBeNull()
    expect(await desktopRow(first.fingerprint)).toBeDefined()
  })

  test('4003: timeout_ms after hello, by moving the clock; the row goes with the socket', async () => {
    // Heartbeats due far apart, so only the lifetime can end this socket.
    await withConfig({ remoteAuthHeartbeatMs: 600_000 }, async () => {
      const c = await ready()
      expect(c.frames[0].heartbeat_interval).toBe(600_000)
      clock.advance(config().remoteAuthTimeoutMs - 2000)
      await sweepRemoteAuth()
      await Bun.sleep(50)
      expect(c.closed).toBeNull()
      clock.advance(2000)
      await sweepRemoteAuth()
      expect(await c.waitForClose()).toEqual({ code: 4003, reason: 'Timed out' })
      expect(await desktopRow(c.fingerprint)).toBeUndefined()
    })
  })

  test('4003: no init within the init deadline; a socket that sent init stays', async () => {
    // idle's deadline is its opening plus the init time: its opening lies between these two readings.
    const opening = clock.now()
    const idle = await connect()
    const opened = clock.now()
    const busy = await connect()
    busy.send({ op: 'init', encoded_public_key: busy.encodedPublicKey })
    await busy.waitFor('nonce_proof')
    // A second short of the earliest deadline, then past the latest, whatever real time the steps above took (under
    // load, more than the second a fixed move of the clock left).
    clock.advance(opening + config().remoteAuthInitMs - 1000 - clock.now())
    await sweepRemoteAuth()
    await Bun.sleep(50)
    expect(idle.closed).toBeNull()
    clock.advance(opened + config().remoteAuthInitMs - clock.now())
    await sweepRemoteAuth()
    expect(await idle.waitForClose()).toEqual({ code: 4003, reason: 'Init timed out' })
    await Bun.sleep(50)
    expect(busy.closed).toBeNull()
  })

  test('4003: missed heartbeats (1.5 intervals without one)', async () => {
    const c = await ready()
    const interval = config().remoteAuthHeartbeatMs
    clock.advance(interval)
    c.send({ op: 'heartbeat' })
    await c.waitFor('heartbeat_ack')
    clock.advance(interval * 1.5 - 1000)
    await sweepRemoteAuth()
    await Bun.sleep(50)
    expect(c.closed).toBeNull()
    clock.advance(1000)
    await sweepRemoteAuth()
    expect(await c.waitForClose()).toEqual({ code: 4003, reason: 'Heartbeat timed out' })
  })

  test('the sweeper runs on its own too', async () => {
    const c = await connect()
    clock.advance(config().remoteAuthTimeoutMs)
    expect((await c.waitForClose(2500)).code).toBe(4003)
  })
})

describe('limits', () => {
  test('sockets per IP: the limit gets hello, one more is closed 1013; a closed one frees its place', async () => {
    await withConfig({ trustProxy: true }, async () => {
      const headers = { 'x-forwarded-for': '198.51.100.77' }
      const limit = config().remoteAuthSocketsPerIp
      const before = remoteAuthStats().sockets
      const sockets: DesktopClient[] = []
      for (let i = 0; i < limit; i++) sockets.push(await connect({ headers }))
      const extra = await DesktopClient.open({ headers })
      expect(await extra.waitForClose()).toEqual({ code: 1013, reason: 'Too many connections' })
      expect(extra.frames).toEqual([])
      // Another IP is not affected.
      await connect({ headers: { 'x-forwarded-for': '198.51.100.78' } })
      expect(remoteAuthStats().sockets).toBe(before + limit + 1)
      sockets[0].close()
      await serverForgot(sockets[0], before + limit + 1)
      await connect({ headers })
    })
  })

  test('frames per socket: the budget passes, one more closes 1008', async () => {
    const { frameBudget } = await import('../../src/remote-auth/limits')
    const budget = frameBudget(config().remoteAuthTimeoutMs, config().remoteAuthHeartbeatMs)
    const c = await connect()
    for (let i = 0; i < budget; i++) c.send({ op: 'heartbeat' })
    await c.waitForCount('heartbeat_ack', budget)
    expect(c.closed).toBeNull()
    c.send({ op: 'heartbeat' })
    expect(await c.waitForClose()).toEqual({ code: 1008, reason: 'Too many frames' })
  })

  test('a restart keeps no desktop rows (their sockets are gone)', async () => {
    await insertDesktop({
      fingerprint: 'Z'.repeat(43),
      publicKey: 'AAAA',
      ip: '203.0.113.9',
      createdAt: clock.now(),
      expiresAt: clock.now() + 60_000,
    })
    expect(await desktopRow('Z'.repeat(43))).toBeDefined()
    await startRemoteAuthGateway() // what start-up does; the sweeper is already running and is not doubled
    expect(await desktopRow('Z'.repeat(43))).toBeUndefined()
  })
})
