// Fingerprints past the per-IP limit are returned but leave no row; expired ones are purged.
import { afterEach, expect, test } from 'bun:test'
import { count, eq } from 'drizzle-orm'
import { fingerprints } from '../../src/accounts/tables'
import { clock } from '../../src/core/clock'
import { db } from '../../src/db/client'
import { runHousekeeping } from '../../src/housekeeping'
import { api, resetWorld, server } from '../helpers'
import { registerUser, withConfig } from '../auth/helpers'

afterEach(resetWorld)

const rows = async () => (await db().select({ n: count() }).from(fingerprints).get())!.n
const fingerprint = (ip: string) => api('POST', '/auth/fingerprint', { headers: { 'x-forwarded-for': ip } })

test('a flood of fingerprint requests writes 3 rows per IP per 2 minutes, however many are answered', async () => {
  await server()
  await withConfig({ trustProxy: true }, async () => {
    const before = await rows()
    const replies = await Promise.all(Array.from({ length: 200 }, () => fingerprint('198.51.100.77')))
    expect(replies.every((r) => r.status === 200 && /^\d+\.[\w-]+$/.test(r.body.fingerprint))).toBe(true)
    expect((await rows()) - before).toBe(3)
    // IPv6 addresses of one /64 share the allowance.
    const v6 = await Promise.all(Array.from({ length: 10 }, (_, i) => fingerprint(`2001:db8:1:2::${i + 1}`)))
    expect(v6).toHaveLength(10)
    expect((await rows()) - before).toBe(6)
  })
})

test('valid fingerprints expire after 30 days: no longer honoured, and purged by housekeeping', async () => {
  await withConfig({ trustProxy: true }, async () => {
    const value = (await fingerprint('198.51.100.78')).body.fingerprint as string
    const id = value.split('.')[0]
    expect(await db().select().from(fingerprints).where(eq(fingerprints.id, id)).get()).toBeDefined()
    clock.advance(30 * 24 * 3600_000)
    const { r } = await registerUser({ fingerprint: value })
    expect(r.status).toBe(200)
    const me = await api('GET', '/users/@me', { token: r.body.token })
    expect(me.body.id).not.toBe(id)
    await runHousekeeping()
    expect(await db().select().from(fingerprints).where(eq(fingerprints.id, id)).get()).toBeUndefined()
  })
})
