// scripts/check-structure.ts as a test: the source keeps its rules, and the ip-keys rule catches a limit that counts
// a raw client address (each snippet below is how a limit was written before every per-IP limit went through ipKey).
import { describe, expect, test } from 'bun:test'
import { apartFindings, check, circles, ipKeyFindings } from '../../scripts/check-structure'

test('src/ keeps its floors, errors, queries and ip-keys rules', () => {
  const { findings, edges } = check()
  expect(findings).toEqual([])
  expect(circles(edges)).toEqual([])
})

describe('ip-keys', () => {
  const raw = [
    "consume('register-ip', client.ip, REGISTRATIONS_PER_IP)",
    "reserve(['forgot-ip', ip, FORGOT_PER_IP], ['forgot-login', login, FORGOT_PER_LOGIN])",
    "reserve(['sms-ip', ip, SMS_PER_IP], ['sms-phone', phone, SMS_PER_PHONE])",
    "consume('mfa-sms-ip', ipOf(ctx), MFA_PER_IP)",
    "consume('phone-verify-ip', clientIp(ctx.request, ctx.server), { limit: 30, windowMs: 3600_000 })",
    "const slots: Slot[] = [\n  ['login-ip', ip, LOGIN_FAILURES_PER_IP],\n  ['login-account-ip', pair, X],\n]",
    "clear('login-account-ip', pair)",
    "tryConsume('fingerprint', rateSubject(ip), FINGERPRINT_LIMIT)",
    'const pendingByIp = new Map<string, number>()',
    'const perIp = new Map<string, number>()',
    'const knownIps = new Set()',
    'return `${groups.slice(0, 4).join(":")}::/64`',
  ]
  for (const snippet of raw)
    test(`finds: ${snippet.split('\n')[0]}`, () => {
      expect(ipKeyFindings('auth/example.ts', snippet).length).toBeGreaterThan(0)
    })

  const fine = [
    "reserve(perIp('forgot-ip', ip, FORGOT_PER_IP), ['forgot-login', login.trim().toLowerCase(), FORGOT_PER_LOGIN])",
    "const pair = perIp('login-account-ip', ip, LIMIT, accountKey)\nclear(pair[0], pair[1])",
    "tryConsume(...perIp('fingerprint-ip', ip, FINGERPRINT_LIMIT))",
    "consume('verify-resend', userId, { limit: 3, windowMs: 3600_000 })",
    'const socketsByIp = new Map<IpKey, number>()',
    'rows.clear()\nthis.dirty.clear()',
  ]
  for (const snippet of fine)
    test(`passes: ${snippet.split('\n')[0]}`, () => {
      expect(ipKeyFindings('auth/example.ts', snippet)).toEqual([])
    })
})

describe('the PostgreSQL and cluster sides are loaded only through import()', () => {
  const found = [
    ['gateway/server.ts', "import { Redis } from 'ioredis'", 'cluster'],
    ['gateway/server.ts', "import { startConsumer } from '../cluster/log'", 'cluster'],
    ['server.ts', "export { GatewayLog } from './cluster/log'", 'cluster'],
    ['db/pg/migrate.ts', "import { openRedis } from '../../cluster/redis'", 'cluster'],
    ['accounts/store.ts', "import postgres from 'postgres'", 'postgresql'],
    ['db/client.ts', "import { applyPgMigrations } from './pg/migrate'", 'postgresql'],
  ]
  for (const [rel, snippet, rule] of found)
    test(`finds in ${rel}: ${snippet}`, () => {
      expect(apartFindings(rel, snippet).map((f) => f.rule)).toEqual([rule])
    })

  const fine = [
    ['server.ts', "const { startCluster } = await import('./cluster/log')"],
    ['gateway/server.ts', "import type { LogEntry } from '../cluster/log'"],
    ['cluster/log.ts', "import { Redis } from 'ioredis'"],
    ['cluster/log.ts', "import { openRedis } from './redis'"],
    ['cluster/nodes.ts', "import postgres from 'postgres'"],
    ['db/pg/migrate.ts', "import postgres from 'postgres'"],
  ]
  for (const [rel, snippet] of fine)
    test(`passes in ${rel}: ${snippet}`, () => {
      expect(apartFindings(rel, snippet)).toEqual([])
    })
})
