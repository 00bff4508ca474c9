// TRUST_PROXY: parsing, and the client address picked from X-Forwarded-For at the edges (spoofed leading entries,
// fewer entries than hops, untrusted peers, garbage, IPv6, ports), then end to end through a login's recorded IP.
import { describe, expect, test } from 'bun:test'
import { ConfigError, loadConfig } from '../../src/config'
import { pickClient } from '../../src/http/client-ip'
import { api, makeUser, server } from '../helpers'
import { withConfig } from '../auth/helpers'

describe('TRUST_PROXY values', () => {
  test.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['0', false],
    ['true', 1],
    ['yes', 1],
    ['1', 1],
    ['2', 2],
    ['32', 32],
    ['127.0.0.1', ['127.0.0.1']],
    ['loopback, 10.0.0.0/8, 2001:db8::/32, fd00::1', ['loopback', '10.0.0.0/8', '2001:db8::/32', 'fd00::1']],
    ['private', ['private']],
  ])('TRUST_PROXY=%p is %p', (raw, expected) => {
    expect(loadConfig(raw === undefined ? {} : { TRUST_PROXY: raw }).trustProxy).toEqual(expected)
  })

  test.each(['maybe', '33', '10.0.0.0/33', '::1/129', '10.0.0.1/8/1', 'proxy.example', '10.0.0.0/', '1.2.3'])(
    'TRUST_PROXY=%p is refused naming the variable',
    (raw) => {
      expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow(ConfigError)
      expect(() => loadConfig({ TRUST_PROXY: raw })).toThrow('TRUST_PROXY')
    },
  )
})

describe('the client address', () => {
  const SOCKET = '127.0.0.1'

  test('no TRUST_PROXY: the socket address, whatever the header says', () => {
    expect(pickClient(SOCKET, '81.2.69.160', false)).toBe(SOCKET)
  })

  test('one hop (true): the right-most entry, the one the proxy wrote; entries the client sent are ignored', () => {
    expect(pickClient(SOCKET, '198.51.100.23', 1)).toBe('198.51.100.23')
    expect(pickClient(SOCKET, '81.2.69.160, 198.51.100.23', true)).toBe('198.51.100.23')
    // The case: the client claims 81.2.69.160; nginx appended the real peer.
    expect(pickClient(SOCKET, '81.2.69.160, 127.0.0.1', 1)).toBe('127.0.0.1')
    expect(pickClient(SOCKET, '1.1.1.1, 2.2.2.2, 3.3.3.3, 198.51.100.23', 1)).toBe('198.51.100.23')
  })

  test('no header behind a trusted proxy: the socket address', () => {
    expect(pickClient(SOCKET, null, 1)).toBe(SOCKET)
    expect(pickClient(SOCKET, '', 1)).toBe(SOCKET)
  })

  test('N hops: the N-th address from the right; fewer entries than hops: the left-most', () => {
    const chain = 'spoofed.garbage, 203.0.113.5, 198.51.100.1, 10.0.0.2'
    expect(pickClient(SOCKET, chain, 1)).toBe('10.0.0.2')
    expect(pickClient(SOCKET, chain, 2)).toBe('198.51.100.1')
    expect(pickClient(SOCKET, chain, 3)).toBe('203.0.113.5')
    // The 4th entry is not an address: the walk stops at the last one read.
    expect(pickClient(SOCKET, chain, 4)).toBe('203.0.113.5')
    expect(pickClient(SOCKET, '203.0.113.5', 3)).toBe('203.0.113.5')
  })

  test('a list: proxies are skipped from the right; the first address not in it is the client', () => {
    const proxies = ['127.0.0.1', '10.0.0.0/8']
    expect(pickClient(SOCKET, '81.2.69.160, 203.0.113.5, 10.1.2.3', proxies)).toBe('203.0.113.5')
    expect(pickClient(SOCKET, '203.0.113.5, 10.0.0.0', proxies)).toBe('203.0.113.5')
    // 11.0.0.1 is just outside 10.0.0.0/8: it is the client even though a trusted-looking address is left of it.
    expect(pickClient(SOCKET, '10.9.9.9, 11.0.0.1, 10.255.255.255', proxies)).toBe('11.0.0.1')
    // Every entry is a proxy: the left-most.
    expect(pickClient(SOCKET, '10.0.0.5, 10.0.0.6', proxies)).toBe('10.0.0.5')
  })

  test('a list whose socket peer is not a proxy: the header is ignored', () => {
    expect(pickClient('203.0.113.77', '81.2.69.160', ['127.0.0.1'])).toBe('203.0.113.77')
    expect(pickClient('10.0.0.1', '81.2.69.160', ['loopback'])).toBe('10.0.0.1')
  })

  test('named ranges: loopback, private / uniquelocal, linklocal', () => {
    expect(pickClient(SOCKET, '198.51.100.9, 192.168.1.1, 172.16.0.1', ['loopback', 'private'])).toBe('198.51.100.9')
    expect(pickClient(SOCKET, '198.51.100.9, 172.32.0.1', ['loopback', 'uniquelocal'])).toBe('172.32.0.1')
    expect(pickClient('169.254.1.1', '198.51.100.9', ['linklocal'])).toBe('198.51.100.9')
    expect(pickClient('::1', '2001:db8::5', ['loopback'])).toBe('2001:db8::5')
  })

  test('IPv6, IPv4-mapped, bracketed and port-suffixed entries are read as addresses', () => {
    expect(pickClient(SOCKET, '2001:DB8::5', 1)).toBe('2001:db8::5')
    expect(pickClient(SOCKET, '[2001:db8::6]:443', 1)).toBe('2001:db8::6')
    expect(pickClient(SOCKET, '198.51.100.4:5678', 1)).toBe('198.51.100.4')
    expect(pickClient(SOCKET, '::ffff:198.51.100.3', 1)).toBe('198.51.100.3')
    expect(pickClient(SOCKET, '2001:db8::7, fd00::1', ['loopback', 'fd00::/8'])).toBe('2001:db8::7')
  })

  test('an entry that is not an address is never the client: the last address read is', () => {
    expect(pickClient(SOCKET, 'evil', 1)).toBe(SOCKET)
    expect(pickClient(SOCKET, '198.51.100.23, ', 1)).toBe(SOCKET)
    expect(pickClient(SOCKET, 'unknown, 10.0.0.2', ['loopback', '10.0.0.0/8'])).toBe('10.0.0.2')
    expect(pickClient(SOCKET, '<script>', ['loopback'])).toBe(SOCKET)
  })
})

describe('end to end', () => {
  test('behind one proxy, a login records the address the proxy saw, not the one the client claimed', async () => {
    await server()
    const { db } = await import('../../src/db/client')
    const { knownIps } = await import('../../src/accounts/tables')
    const { eq } = await import('drizzle-orm')
    await withConfig({ trustProxy: 1 }, async () => {
      const user = await makeUser()
      const r = await api('POST', '/auth/login', {
        body: { login: user.email, password: user.password },
        headers: { 'x-forwarded-for': '81.2.69.160, 198.51.100.61' },
      })
      expect(r.status).toBe(200)
      const ips = (await db().select().from(knownIps).where(eq(knownIps.userId, user.id)).all()).map((row) => row.ip)
      expect(ips).toEqual(['198.51.100.61'])
    })
  })
})
