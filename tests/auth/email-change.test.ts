// An e-mail change: the new address gets a verification e-mail (verified stays false until it is followed), the old
// address gets the revert link, which keeps working.
import { afterEach, expect, test } from 'bun:test'
import { readOutbox } from '../../src/delivery'
import { api, makeUser, resetWorld } from '../helpers'
import { changeEmail } from '../mfa/helpers'
import { lastLinkToken, uniqueEmail } from './helpers'

afterEach(resetWorld)

test('the new address gets a verification link; following it verifies the address', async () => {
  const user = await makeUser()
  const next = uniqueEmail('new')
  const changed = await changeEmail(user, next)
  expect(changed.body).toMatchObject({ email: next, verified: false })
  const [mail] = await readOutbox(next)
  expect(mail.subject).toBe('Verify your new e-mail address')
  const token = (await lastLinkToken(next, 'verify'))!
  expect(token).toBeString()
  // The old address is told, with the revert link, and gets no verification link.
  expect(await lastLinkToken(user.email, 'wasntme')).toBeString()
  expect(await lastLinkToken(user.email, 'verify')).toBeUndefined()

  const verified = await api('POST', '/auth/verify', { body: { token } })
  expect(verified.status).toBe(200)
  expect((await api('GET', '/users/@me', { token: user.token })).body).toMatchObject({ email: next, verified: true })
  expect((await api('POST', '/auth/verify', { body: { token } })).status).toBe(400) // once
})

test("the revert link still works after the new address is verified; the new address's link dies with the revert", async () => {
  const user = await makeUser()
  const next = uniqueEmail('new')
  await changeEmail(user, next)
  const verify = (await lastLinkToken(next, 'verify'))!
  const revert = (await lastLinkToken(user.email, 'wasntme'))!
  expect((await api('POST', '/auth/verify', { body: { token: verify } })).status).toBe(200)
  const reverted = await api('POST', '/auth/revert', {
    body: { token: revert, password: 'a completely new passphrase' },
  })
  expect(reverted.status).toBe(200)
  expect(reverted.body).toEqual({ email: user.email })

  // A second change, reverted before its link is followed: that link no longer verifies anything.
  const login = await api('POST', '/auth/login', {
    body: { login: user.email, password: 'a completely new passphrase' },
  })
  const again = { ...user, token: login.body.token, password: 'a completely new passphrase' }
  const other = uniqueEmail('other')
  await changeEmail(again, other)
  const stale = (await lastLinkToken(other, 'verify'))!
  const secondRevert = (await lastLinkToken(user.email, 'wasntme'))!
  expect(
    (await api('POST', '/auth/revert', { body: { token: secondRevert, password: 'yet another new passphrase' } }))
      .status,
  ).toBe(200)
  expect((await api('POST', '/auth/verify', { body: { token: stale } })).status).toBe(400)
})
