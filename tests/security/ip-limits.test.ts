// Every per-IP limit counts an IPv6 client by its /64 (core/ip-key.ts): two addresses of one /64 share a budget, two
// /64s do not, an IPv4 address counts as itself and an IPv4-mapped IPv6 address as that IPv4 address.
import { afterEach, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { clock } from '../../src/core/clock'
import { ipKey as makeKey } from '../../src/core/ip-key'
import { MAX_PENDING_PER_IP } from '../../src/gateway/protocol'
import { DEFAULT_ROUTE_LIMIT } from '../../src/http/rate-limits'
import { withConfig } from '../auth/helpers'
import { api, resetWorld, server } from '../helpers'
import { DesktopClient } from '../remote-auth/desktop-client'

afterEach(resetWorld)

const ipKey = (ip: string): string => makeKey(ip)

describe('ipKey', () => {
  test('IPv4 as it is; IPv6 by its /64 in every spelling; IPv4-mapped IPv6 as the IPv4 address', () => {
    expect(ipKey('198.51.100.1')).toBe('198.51.100.1')
    expect(ipKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
    expect(ipKey('2001:0DB8:0001:0002:ffff:0:0:1')).toBe('2001:db8:1:2::/64')
    expect(ipKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
    expect(ipKey('[2001:db8:1:2::7]')).toBe('2001:db8:1:2::/64')
    expect(ipKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64')
    expect(ipKey('2001:db8::1')).toBe('2001:db8:0:0::/64')
    expect(ipKey('2001:db8:1:3::1')).not.toBe(ipKey('2001:db8:1:2::1'))
    expect(ipKey('::1')).toBe('0:0:0:0::/64')
    expect(ipKey('::ffff:198.51.100.1')).toBe('198.51.100.1')
    expect(ipKey('::FFFF:c633:6401')).toBe('198.51.100.1')
    expect(ipKey('0:0:0:0:0:ffff:198.51.100.1')).toBe('198.51.100.1')
    // Not an address (a forged header is never one: client-ip.ts drops those): kept, never thrown on.
    expect(ipKey('not:an:address')).toBe('not:an:address')
    expect(ipKey('-')).toBe('-')
  })
})

type Reply = { status: number; body: any }
/** One request from `ip` (the i-th of the run): must not throw, and is refused with 429 past its limit. */
type Send = (ip: string, i: number) => Promise<Reply>

const from = (ip: string) => ({ 'x-forwarded-for': ip })
const post = (path: string, body: unknown) => (ip: string) =>
  api('POST', path, { body, headers: from(ip), rateLimited: 'return' })

let run = 0
/**
 * Use up `budget` from distinct addresses of one /64 (each must pass), then: another address of that /64 is refused,
 * an address of the next /64 is not. Then the same with an IPv4 address and its IPv4-mapped spellings.
 */
async function sharesBudget(budget: number, send: Send) {
  run += 1
  const net = `2001:db8:${run.toString(16)}`
  const statuses: number[] = []
  for (let i = 0; i < budget; i++) statuses.push((await send(`${net}:1::${(i + 1).toString(16)}`, i)).status)
  expect(statuses.filter((s) => s === 429)).toEqual([])
  const sameNet = await send(`${net}:1:ffff:ffff:ffff:ffff`, budget)
  expect(sameNet.status).toBe(429)
  expect(sameNet.body.retry_after).toBeGreaterThan(0)
  expect((await send(`${net}:2::1`, budget + 1)).status).not.toBe(429)

  const v4 = `198.51.${100 + run}.7`
  const [a, b, c, d] = v4.split('.').map(Number)
  const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  const v4statuses: number[] = []
  for (let i = 0; i < budget; i++)
    v4statuses.push((await send(i % 3 === 0 ? v4 : i % 3 === 1 ? `::ffff:${v4}` : hex, budget + 2 + i)).status)
  expect(v4statuses.filter((s) => s === 429)).toEqual([])
  expect((await send(v4, 2 * budget + 2)).status).toBe(429)
  expect((await send(hex, 2 * budget + 3)).status).toBe(429)
  expect((await send(`198.51.${100 + run}.8`, 2 * budget + 4)).status).not.toBe(429)
}

const trusted = (fn: () => Promise<void>) => () =>
  withConfig({ trustProxy: true, newLoginLocationCheck: false }, fn) as Promise<void>

describe('per-IP limits count IPv6 by /64', () => {
  test(
    'failed logins per IP (30)',
    trusted(() =>
      sharesBudget(30, (ip, i) =>
        post('/auth/login', { login: `ghost${run}-${i}@example.test`, password: 'wrong-password' })(ip),
      ),
    ),
    30_000,
  )

  test(
    'failed logins per account and IP (10)',
    trusted(async () => {
      const login = `ghost-pair-${Date.now()}@example.test`
      await sharesBudget(10, (ip) => post('/auth/login', { login, password: 'wrong-password' })(ip))
    }),
    30_000,
  )

  test(
    'registrations per IP (30)',
    // A body its schema lets through: the handler counts the attempt, then refuses it (no username nor global_name,
    // a common password: the look-up, milliseconds of work, comes after the count).
    trusted(() => sharesBudget(30, (ip) => post('/auth/register', { password: 'password123' })(ip))),
    30_000,
  )

  test(
    'forgot-password per IP (10)',
    trusted(() => sharesBudget(10, (ip, i) => post('/auth/forgot', { login: `nobody${run}-${i}@example.test` })(ip))),
    30_000,
  )

  test(
    'texts per IP (10)',
    trusted(() =>
      sharesBudget(10, (ip, i) =>
        post('/auth/register/phone', { phone: `+1555${String(run).padStart(3, '0')}${String(i).padStart(4, '0')}` })(
          ip,
        ),
      ),
    ),
    30_000,
  )

  test(
    'phone code checks per IP (30)',
    trusted(() =>
      sharesBudget(30, (ip) => post('/phone-verifications/verify', { phone: '+15550000000', code: '000000' })(ip)),
    ),
    30_000,
  )

  test(
    'MFA codes, MFA texts and passwordless starts per IP (60 each)',
    trusted(async () => {
      await sharesBudget(60, (ip) => post('/auth/mfa/totp', { ticket: 'no-such-ticket', code: '123456' })(ip))
      await sharesBudget(60, (ip) => post('/auth/mfa/sms/send', { ticket: 'no-such-ticket' })(ip))
      await sharesBudget(60, (ip) => post('/auth/conditional/start', {})(ip))
    }),
    60_000,
  )

  test(
    'remote-auth ticket exchanges per IP (30)',
    trusted(() => sharesBudget(30, (ip) => post('/users/@me/remote-auth/login', { ticket: 'no-such-ticket' })(ip))),
    30_000,
  )

  test(
    `per-route pacing of callers without a token (${DEFAULT_ROUTE_LIMIT.limit} per window)`,
    trusted(async () => {
      setConfig({ ...config(), routeRateLimits: true })
      // A window is a second: the clock stands still meanwhile, so a slow machine cannot cross into a new one.
      const now = clock.now
      const frozen = now()
      clock.now = () => frozen
      try {
        await sharesBudget(DEFAULT_ROUTE_LIMIT.limit, (ip) =>
          api('GET', '/auth/location-metadata', { headers: from(ip), rateLimited: 'return' }),
        )
      } finally {
        clock.now = now
        setConfig({ ...config(), routeRateLimits: false })
      }
    }),
    30_000,
  )
})

describe('per-IP socket counts count IPv6 by /64', () => {
  test(
    'unidentified Gateway sockets per IP',
    trusted(async () => {
      const { port } = await server()
      const open: WebSocket[] = []
      const connect = (ip: string) =>
        new Promise<number | 'hello'>((resolve) => {
          const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway?v=10&encoding=json`, { headers: from(ip) } as never)
          open.push(ws)
          ws.onmessage = () => resolve('hello')
          ws.onclose = (e) => resolve(e.code)
        })
      try {
        const held = await Promise.all(
          Array.from({ length: MAX_PENDING_PER_IP }, (_, i) => connect(`2001:db8:77:1::${(i + 1).toString(16)}`)),
        )
        expect(held.every((r) => r === 'hello')).toBe(true)
        expect(await connect('2001:db8:77:1:ffff::1')).toBe(4008)
        expect(await connect('2001:db8:77:2::1')).toBe('hello')
      } finally {
        for (const ws of open) ws.close()
      }
    }),
    30_000,
  )

  test(
    'remote-auth sockets per IP',
    trusted(async () => {
      const limit = config().remoteAuthSocketsPerIp
      const open: DesktopClient[] = []
      try {
        for (let i = 0; i < limit; i++)
          open.push(await DesktopClient.connect({ headers: from(`2001:db8:78:1::${(i + 1).toString(16)}`) }))
        const extra = await DesktopClient.open({ headers: from('2001:db8:78:1:ffff::1') })
        open.push(extra)
        expect((await extra.waitForClose()).code).toBe(1013)
        open.push(await DesktopClient.connect({ headers: from('2001:db8:78:2::1') }))
        // IPv4-mapped: the IPv4 address's count.
        for (let i = 0; i < limit; i++) open.push(await DesktopClient.connect({ headers: from('::ffff:198.51.99.1') }))
        const mapped = await DesktopClient.open({ headers: from('198.51.99.1') })
        open.push(mapped)
        expect((await mapped.waitForClose()).code).toBe(1013)
      } finally {
        for (const c of open) c.close()
      }
    }),
    30_000,
  )
})
