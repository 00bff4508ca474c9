// Registrations racing for one username, e-mail or phone: one wins, every other gets the form error (400), never a
// 500 — on SQLite (the UNIQUE index's message) and on PostgreSQL (its unique violation).
import { afterEach, describe, expect, test } from 'bun:test'
import { api, resetWorld } from '../helpers'
import { PASSWORD, uniqueEmail, uniqueName } from './helpers'

afterEach(resetWorld)

const register = (body: Record<string, unknown>, i: number) =>
  api('POST', '/auth/register', {
    body: { password: PASSWORD, date_of_birth: '1990-01-01', consent: true, ...body },
    headers: { 'x-forwarded-for': `10.77.${i >> 8}.${i & 255}` },
  })

describe('parallel registrations', () => {
  test('one username, 20 at once: one account, 19 answers of 400 naming the username', async () => {
    const username = uniqueName('race')
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => register({ username, email: uniqueEmail() }, i)))
    expect(all.filter((r) => r.status === 200)).toHaveLength(1)
    const lost = all.filter((r) => r.status !== 200)
    expect(lost.map((r) => r.status)).toEqual(Array(19).fill(400))
    for (const r of lost) expect(r.body.errors.username._errors[0].code).toBe('USERNAME_ALREADY_TAKEN')
  })

  test('one e-mail, 20 at once: one account, 19 answers of 400 naming the e-mail', async () => {
    const email = uniqueEmail()
    const all = await Promise.all(
      Array.from({ length: 20 }, (_, i) => register({ username: uniqueName('mail'), email }, i)),
    )
    expect(all.filter((r) => r.status === 200)).toHaveLength(1)
    const lost = all.filter((r) => r.status !== 200)
    expect(lost.map((r) => r.status)).toEqual(Array(19).fill(400))
    for (const r of lost) expect(r.body.errors.email._errors[0].code).toBe('EMAIL_ALREADY_REGISTERED')
  })
})
